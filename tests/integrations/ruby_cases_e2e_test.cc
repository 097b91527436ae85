// End to end: test cases as the unit of selection for Ruby (`[tests] unit =
// "case"`, docs/concepts.md "Test cases", issue 24 item 4), on a small
// suite recorded at definition granularity with kind = "minitest" (the
// forking runner, `-- --seed 1`: minitest's random order, the same at every
// run) and kind = "rspec" (defined order).
//
// Each change below is made, selected, and undone; the selection must be
// exactly the expected one: a method only one case ran selects that case
// and every case that ran after it in its file (they see what it left: a
// memoized value computed in one case, only read in the next); the test
// file's top-level code (a value computed as the file loads) selects its
// file whole, as does every change when the order is not the next run's
// (minitest without a seed). Then the ground truth: every case run alone,
// without ste, after the change; a case that fails must be selected, as
// itself or with its whole file. And the `--format runner` line runs the
// selected cases, and only them, under the forking runner.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "definition_suite.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::Spawn;
using ::ste::testing::Spawned;

const std::string kIntegrations = STE_INTEGRATIONS_DIR;
const std::string kRunner = kIntegrations + "/ruby/ste_forking_runner.rb";

struct Setup {
  std::string name;
  bool rspec = false;
};
void PrintTo(const Setup& s, std::ostream* os) { *os << s.name; }

const Setup kMinitest = {"Minitest", false};
const Setup kRspec = {"Rspec", true};

const char kHelpers[] =
    "module Helpers\n"
    "  def self.zero\n"
    "    0\n"
    "  end\n"
    "\n"
    "  def self.cached\n"
    "    @cached ||= compute\n"
    "  end\n"
    "\n"
    "  def self.compute\n"
    "    10\n"
    "  end\n"
    "\n"
    "  def self.fixture_value\n"
    "    5\n"
    "  end\n"
    "\n"
    "  def self.own\n"
    "    1\n"
    "  end\n"
    "\n"
    "  def self.k_value\n"
    "    7\n"
    "  end\n"
    "\n"
    "  def self.j_only\n"
    "    8\n"
    "  end\n"
    "end\n";

// Required by a case, not by its file: its top-level code runs in the
// case that requires it first; the later ones find it loaded.
const char kLazy[] =
    "module Lazy\n"
    "  def self.seed\n"
    "    5\n"
    "  end\n"
    "\n"
    "  SEED = seed\n"
    "\n"
    "  def self.value\n"
    "    3\n"
    "  end\n"
    "end\n";

// Each file's cases: (name as the test file writes it, body). minitest
// names them test_<name>; RSpec's `it "<name>"`.
const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> kFiles = {
    {"one",
     {{"a_zero", "equal 0, Helpers.zero"},
      {"b_cached", "equal 10, Helpers.cached"},
      {"c_lookup", "equal 10, Helpers.cached"},
      {"d_mod", "equal 5, MOD"},
      {"e_own", "equal 1, Helpers.own"}}},
    {"two", {{"a_k", "equal 7, Helpers.k_value"}, {"b_j", "equal 8, Helpers.j_only"}}},
    {"three",
     {{"a_before", "equal 1, 1"},
      {"b_imports", "equal 3, (require \"lazy\"; Lazy.value)"},
      {"c_uses", "equal 5, (require \"lazy\"; Lazy::SEED)"}}},
};

std::string Capitalized(std::string s) {
  s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

// "equal X, Y" as each framework asserts it.
std::string Assertion(const std::string& check, bool rspec) {
  const size_t comma = check.find(", ");
  const std::string want = check.substr(6, comma - 6), got = check.substr(comma + 2);
  return rspec ? "expect(" + got + ").to eq(" + want + ")" : "assert_equal " + want + ", " + got;
}

std::string TestFile(const std::string& file, const std::vector<std::pair<std::string, std::string>>& cases,
                     bool rspec) {
  std::string out = rspec ? "require \"helpers\"\n" : "require \"minitest/autorun\"\nrequire \"helpers\"\n";
  // The file's top-level code: shared by its cases.
  if (file == "one") out += "\nMOD = Helpers.fixture_value\n";
  out += rspec ? "\nRSpec.describe \"" + Capitalized(file) + "\" do\n"
               : "\nclass " + Capitalized(file) + "Test < Minitest::Test\n";
  for (const auto& [name, check] : cases) {
    out += rspec ? "  it \"" + name + "\" do\n" : "  def test_" + name + "\n";
    out += "    " + Assertion(check, rspec) + "\n  end\n\n";
  }
  out += "end\n";
  return out;
}

class RubyCases : public ::ste::testing::DefinitionSuiteTest<Setup> {
 protected:
  void SetUp() override {
    const bool rspec = GetParam().rspec;
    W("lib/helpers.rb", kHelpers);
    W("lib/lazy.rb", kLazy);
    for (const auto& [file, cases] : kFiles) {
      W(Path(file), TestFile(file, cases, rspec));
      all_.insert(Path(file));
    }
    ::ste::testing::InitGitRepo(root_);
    ste_env_ = {"STE_INTEGRATIONS=" + kIntegrations};
    for (const auto& [file, cases] : kFiles) order_[Path(file)] = RunOrder(file, cases);
  }

  std::string Path(const std::string& file) const {
    return GetParam().rspec ? "spec/" + file + "_spec.rb" : "test/" + file + "_test.rb";
  }

  // The [runner] lines: minitest with a seed unless `seeded` is false.
  std::string Runner(bool seeded = true) const {
    if (GetParam().rspec) return "kind = \"rspec\"\n";
    return std::string("kind = \"minitest\"\ncommand = \"ruby $STE_INTEGRATIONS/ruby/ste_forking_runner.rb "
                       "--framework minitest {tests}") +
           (seeded ? " -- --seed 1" : "") + "\"\n";
  }
  void Configure(bool seeded = true) {
    DefinitionSuiteTest::Configure("[tests]\ninclude = [\"" + std::string(GetParam().rspec ? "spec" : "test") +
                                   "/*.rb\"]\nunit = \"case\"\n[runner]\n" + Runner(seeded) +
                                   "[selection]\ngranularity = \"definition\"\n");
  }

  // A case as `ste select` prints it: <file>::<Class>#test_<name>
  // (minitest), <file>::<Describe> <name> (RSpec's full description).
  std::string Case(const std::string& file, const std::string& name) const {
    return Path(file) + "::" + Capitalized(file) + (GetParam().rspec ? " " : "Test#test_") + name;
  }

  // The cases of `file` in the order they run: RSpec's defined order;
  // minitest's with --seed 1, as a run without ste reports it.
  std::vector<std::string> RunOrder(const std::string& file,
                                    const std::vector<std::pair<std::string, std::string>>& cases) {
    std::vector<std::string> order;
    if (GetParam().rspec) {
      for (const auto& c : cases) order.push_back(Case(file, c.first));
      return order;
    }
    Spawned v = Spawn({"ruby", "-Ilib", "-Itest", Path(file), "--seed", "1", "-v"}, {}, root_);
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
    const std::string prefix = Capitalized(file) + "Test#test_";
    for (absl::string_view line : absl::StrSplit(v.out, '\n')) {
      if (!absl::StartsWith(line, prefix)) continue;
      const size_t end = line.find(" = ");
      if (end != absl::string_view::npos) order.push_back(Path(file) + "::" + std::string(line.substr(0, end)));
    }
    EXPECT_EQ(order.size(), cases.size()) << v.out;
    return order;
  }

  // The cases of `file` from the first of `names` to run to its last case.
  std::set<std::string> From(const std::string& file, const std::set<std::string>& names) const {
    std::set<std::string> out;
    for (const std::string& c : order_.at(Path(file))) {
      bool named = false;
      for (const std::string& n : names) named = named || c == Case(file, n);
      if (named || !out.empty()) out.insert(c);
    }
    return out;
  }

  Spawned RunAlone(const std::string& c) override {
    const size_t sep = c.find(".rb::");
    const std::string file = c.substr(0, sep + 3), name = c.substr(sep + 5);
    if (GetParam().rspec) return Spawn({"rspec", file, "-e", name}, {}, root_);
    return Spawn({"ruby", "-Ilib", "-Itest", file, "-n", "/\\A" + name + "\\z/", "--seed", "1"}, {}, root_);
  }

  // Makes the change, selects, checks the ground truth (every case that
  // fails alone is selected, as itself or with its file), undoes it.
  std::set<std::string> Change(const std::string& name, const std::string& rel, const std::string& from,
                               const std::string& to, bool fails) {
    std::vector<std::string> cases;
    for (const auto& [file, order] : order_) cases.insert(cases.end(), order.begin(), order.end());
    return EditCases(name, rel, from, to, fails, cases,
                     [](const std::string& c) { return c.substr(0, c.find(".rb::") + 3); });
  }

  std::map<std::string, std::vector<std::string>> order_;  // per file, its cases in run order
};

TEST_P(RubyCases, AChangeToWhatOnlyOneCaseRanSelectsItAndTheCasesAfterIt) {
  Configure();
  EXPECT_EQ(Change("own", "lib/helpers.rb", "    1\n", "    0\n", true), From("one", {"e_own"})) << last_err_;
  EXPECT_NE(last_err_.find(" as "), std::string::npos) << last_err_;
  EXPECT_EQ(Change("one case's neighbour", "lib/helpers.rb", "    8\n", "    0\n", true), From("two", {"b_j"}))
      << last_err_;
  // compute() runs in whichever of b_cached and c_lookup runs first; the
  // other finds its value memoized.
  EXPECT_EQ(Change("memoized", "lib/helpers.rb", "    10\n", "    11\n", true), From("one", {"b_cached", "c_lookup"}))
      << last_err_;
  // Lazy is loaded by the first of b_imports and c_uses to run: what its
  // load ran (seed) is that case's own; the later one reads SEED only.
  EXPECT_EQ(Change("run by a case's require", "lib/lazy.rb", "    5\n", "    6\n", true),
            From("three", {"b_imports", "c_uses"}))
      << last_err_;
}

TEST_P(RubyCases, SharedCodeSelectsTheWholeFile) {
  Configure();
  EXPECT_EQ(Change("the file's top-level code", "lib/helpers.rb", "    5\n", "    6\n", true),
            std::set<std::string>{Path("one")})
      << last_err_;
  EXPECT_EQ(Change("a new case", Path("two"), GetParam().rspec ? "  it \"a_k\"" : "  def test_a_k",
                   GetParam().rspec ? "  it(\"a_0\") { }\n\n  it \"a_k\"" : "  def test_a_0; end\n\n  def test_a_k",
                   false),
            std::set<std::string>{Path("two")})
      << last_err_;
}

// An order the next run may change: minitest without a seed (its order
// differs at each run; the runner says why) and RSpec in random order (a
// .rspec's `--order random`). No case scopes: every file is selected whole.
TEST_P(RubyCases, AnOrderTheNextRunMayChangeSelectsWholeFiles) {
  if (GetParam().rspec) W(".rspec", "--order random\n");
  Configure(/*seeded=*/false);
  if (!GetParam().rspec) {
    Spawned log = Spawn({"/bin/sh", "-c", "cat .ste/output/*/%batch-*.log"}, {}, root_);
    EXPECT_NE(log.out.find("ste_forking_runner: no case scopes: minitest runs the cases in a random order"),
              std::string::npos)
        << log.out << log.err;
  }
  EXPECT_EQ(Change("own", "lib/helpers.rb", "    1\n", "    0\n", true), std::set<std::string>{Path("one")})
      << last_err_;
  EXPECT_EQ(Change("memoized", "lib/helpers.rb", "    10\n", "    11\n", true), std::set<std::string>{Path("one")})
      << last_err_;
}

// `--format runner` hands the cases to the forking runner, which runs
// those of each file in one child, and no other.
TEST_P(RubyCases, TheRunnerLineRunsTheSelectedCases) {
  Configure();
  const std::string path = root_ + "/lib/helpers.rb";
  const std::string before = ::ste::testing::ReadFile(path);
  std::string after = before;
  after.replace(after.find("    10\n"), 7, "    11\n");
  ::ste::testing::WriteFile(path, after);
  Spawned line = Ste({"select", "--format", "runner"});
  ASSERT_EQ(line.exit_code, 0) << line.err;
  const std::set<std::string> expected = From("one", {"b_cached", "c_lookup"});
  for (const std::string& c : expected) EXPECT_NE(line.out.find(c), std::string::npos) << line.out;
  const std::string framework = GetParam().rspec ? "rspec" : "minitest";
  Spawned run = Spawn({"/bin/sh", "-c",
                       "ruby " + kRunner + " --framework " + framework + " " +
                           std::string(absl::StripTrailingAsciiWhitespace(line.out)) +
                           (GetParam().rspec ? "" : " -- --seed 1")},
                      {}, root_);
  ::ste::testing::WriteFile(path, before);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const std::string n = std::to_string(expected.size());
  // b_cached and c_lookup fail (11, not 10); whatever ran after them passes.
  EXPECT_NE(run.out.find(GetParam().rspec ? n + " examples, 2 failures" : n + " runs, "), std::string::npos)
      << run.out << run.err;
  if (!GetParam().rspec) {
    EXPECT_NE(run.out.find(" 2 failures, "), std::string::npos) << run.out;
  }
  EXPECT_NE(run.out.find("ste_forking_runner: 1 files in "), std::string::npos) << run.out;
}

INSTANTIATE_TEST_SUITE_P(Ruby, RubyCases, ::testing::Values(kMinitest, kRspec),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ste
