// End-to-end tests of the Ruby forking runner (integrations/ruby/
// ste_forking_runner.rb) on real minitest and RSpec suites in temporary
// git repositories: run plainly, by the runner alone, under `ste run`, and
// recorded by `ste record` (runner.kind minitest / rspec), then selected.
//
// Each suite (test/ for minitest, spec/ for RSpec) has the same shape:
//   helper   test/test_helper.rb | spec/spec_helper.rb, preloaded in the
//            root scope; requires lib/shared.rb
//   a        requires lib/only_a.rb at load; one case requires
//            lib/common_lazy.rb lazily, inside the test
//   b        uses only what the helper loaded
//   c        one case requires lib/common_lazy.rb lazily, like a's: in one
//            process, whichever of a and c runs first would hide the
//            other's dependency (`require` is cached); forked, both see it
//   failing  one passing and one failing case
//   broken   raises while it is loaded
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runner_e2e_util.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::LogRecord;
using ::ste::testing::ParseResults;
using ::ste::testing::Result;

using ::ste::testing::MakeTempDir;
using ::ste::testing::ReadFile;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);
const std::string kIntegrations = STE_INTEGRATIONS_DIR;
const std::string kRunner = kIntegrations + "/ruby/ste_forking_runner.rb";

struct Framework {
  std::string name;    // runner.kind and --framework
  std::string dir;     // test | spec
  std::string suffix;  // _test.rb | _spec.rb
  std::string helper;  // the preload file
  // The suite run plainly, in one process (no ste, no runner).
  std::vector<std::string> plain_suite;
  // One or more files run plainly: this, then the files.
  std::vector<std::string> plain_files;
  // The case scopes (beneath the file's) of a's and c's lazy cases.
  std::string lazy_case_a, lazy_case_c;
};

const Framework kMinitest = {
    "minitest",
    "test",
    "_test.rb",
    "test/test_helper.rb",
    {"ruby", "-Ilib", "-Itest", "-e", "Dir['test/*_test.rb'].sort.each { |f| require './' + f }"},
    {"ruby", "-Ilib", "-Itest", "-e", "ARGV.each { |f| require './' + f }"},
    "ATest#test_common_lazy",
    "CTest#test_common_lazy",
};

const Framework kRSpec = {
    "rspec",
    "spec",
    "_spec.rb",
    "spec/spec_helper.rb",
    {"rspec"},
    {"rspec"},
    "A uses common_lazy",
    "C uses common_lazy",
};

void PrintTo(const Framework& framework, std::ostream* os) { *os << framework.name; }



// The totals of a plain run's report ("6 runs, 6 assertions, ..." or
// "6 examples, 1 failure"), or of the runner's summary (after "; ").
std::string Totals(const std::string& out) {
  std::istringstream in(out);
  std::string line, totals;
  while (std::getline(in, line)) {
    if (line.rfind("ste_forking_runner: ", 0) == 0 && line.find("; ") != std::string::npos) {
      totals = line.substr(line.find("; ") + 2);
    } else if (line.find(" runs, ") != std::string::npos ||
               line.find(" examples, ") != std::string::npos ||
               line.find(" example, ") != std::string::npos) {
      totals = line;
    }
  }
  return totals;
}



class RubySuite : public ::testing::TestWithParam<Framework> {
 protected:
  void SetUp() override {
    fw_ = GetParam();
    root_ = MakeTempDir();
    W("lib/shared.rb", "module Shared\n  def self.answer\n    42\n  end\nend\n");
    W("lib/only_a.rb", "module OnlyA\n  def self.value\n    \"a\"\n  end\nend\n");
    W("lib/common_lazy.rb", "module CommonLazy\n  def self.double(x)\n    x * 2\n  end\nend\n");
    if (fw_.name == "minitest")
      WriteMinitestSuite();
    else
      WriteRSpecSuite();
    for (const char* name : {"a", "b", "c", "failing", "broken"}) {
      all_.insert(File(name));
    }
    ::ste::testing::InitGitRepo(root_);
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "init"});
  }

  void WriteMinitestSuite() {
    W("test/test_helper.rb", "require \"minitest/autorun\"\nrequire \"shared\"\n");
    W("test/a_test.rb", R"(require "test_helper"
require "only_a"

class ATest < Minitest::Test
  def test_only_a
    assert_equal "a", OnlyA.value
  end

  def test_common_lazy
    require "common_lazy"
    assert_equal 4, CommonLazy.double(2)
  end
end
)");
    W("test/b_test.rb", R"(require "test_helper"

class BTest < Minitest::Test
  def test_shared
    assert_equal 42, Shared.answer
  end
end
)");
    W("test/c_test.rb", R"(require "test_helper"

class CTest < Minitest::Test
  def test_common_lazy
    require "common_lazy"
    assert_equal 6, CommonLazy.double(3)
  end
end
)");
    W("test/failing_test.rb", R"(require "test_helper"

class FailingTest < Minitest::Test
  def test_passes
    assert true
  end

  def test_fails
    assert_equal 1, 2
  end
end
)");
    W("test/broken_test.rb", "require \"test_helper\"\n\nraise \"broken_test.rb cannot load\"\n");
  }

  void WriteRSpecSuite() {
    W(".rspec", "--require spec_helper\n");
    W("spec/spec_helper.rb", "require \"shared\"\n");
    W("spec/a_spec.rb", R"(require "spec_helper"
require "only_a"

RSpec.describe "A" do
  it "uses only_a" do
    expect(OnlyA.value).to eq("a")
  end

  it "uses common_lazy" do
    require "common_lazy"
    expect(CommonLazy.double(2)).to eq(4)
  end
end
)");
    W("spec/b_spec.rb", R"(require "spec_helper"

RSpec.describe "B" do
  it "uses shared" do
    expect(Shared.answer).to eq(42)
  end
end
)");
    W("spec/c_spec.rb", R"(require "spec_helper"

RSpec.describe "C" do
  it "uses common_lazy" do
    require "common_lazy"
    expect(CommonLazy.double(3)).to eq(6)
  end
end
)");
    W("spec/failing_spec.rb", R"(require "spec_helper"

RSpec.describe "Failing" do
  it "passes" do
    expect(true).to be(true)
  end

  it "fails" do
    expect(1).to eq(2)
  end
end
)");
    W("spec/broken_spec.rb", "require \"spec_helper\"\n\nraise \"broken_spec.rb cannot load\"\n");
  }

  std::string File(const std::string& name) const { return fw_.dir + "/" + name + fw_.suffix; }
  std::vector<std::string> Files(const std::vector<std::string>& names) const {
    std::vector<std::string> files;
    for (const std::string& n : names) files.push_back(File(n));
    return files;
  }
  void W(const std::string& rel, const std::string& content) {
    WriteFile(root_ + "/" + rel, content);
  }
  void Git(const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(root_, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }

  // The runner's argv: ruby ste_forking_runner.rb --framework F [extra] files.
  std::vector<std::string> Runner(const std::vector<std::string>& files,
                                  const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> argv = {"ruby",   kRunner,     "--framework",
                                     fw_.name, "--preload", fw_.helper};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), files.begin(), files.end());
    return argv;
  }
  std::vector<std::string> Plain(const std::vector<std::string>& files) const {
    std::vector<std::string> argv = fw_.plain_files;
    argv.insert(argv.end(), files.begin(), files.end());
    return argv;
  }
  Spawned Run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}) {
    return Spawn(argv, env, root_);
  }
  // Runs argv with $STE_RESULTS set; returns the parsed results.
  std::map<std::string, Result> RunWithResults(const std::vector<std::string>& argv, Spawned* run) {
    std::string results = MakeTempDir() + "/results.tsv";
    *run = Run(argv, {"STE_RESULTS=" + results});
    return ParseResults(ReadFile(results));
  }
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {"STE_INTEGRATIONS=" + kIntegrations}, root_);
  }
  std::vector<LogRecord> Dump(const std::string& log_dir) {
    Spawned dump = Ste({"log", "dump", log_dir});
    EXPECT_EQ(dump.exit_code, 0) << dump.err;
    return ::ste::testing::ParseLogDump(dump.out);
  }
  // The scopes in which `rel` (repo-relative) was recorded as content.
  std::set<std::string> ScopesOf(const std::vector<LogRecord>& records, const std::string& rel) {
    return ::ste::testing::ContentScopesOf(records, root_ + "/" + rel);
  }

  void WriteConfig(bool case_scopes) {
    W("ste.toml", "[tests]\ninclude = [\"" + fw_.dir + "/**/*" + fw_.suffix +
                      "\"]\n[runner]\nkind = \"" + fw_.name + "\"\npreload = [\"" + fw_.helper +
                      "\"]\njobs = 2\n" + (case_scopes ? "case_scopes = true\n" : "") +
                      // file level (definitions: ruby_definitions_e2e_test.cc)
                      "[selection]\ngranularity = \"file\"\n");
  }
  void Record() {
    // The suite has a failing and a broken test (RecordedOutcomes... checks
    // record's exit 1 for them).
    Spawned r = Ste({"record", "--progress", "none", "--allow-failures"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  std::set<std::string> Select(std::string* mode = nullptr, std::string* explain = nullptr) {
    Spawned s = Ste({"select", "--explain"});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    if (mode != nullptr) {
      size_t at = s.err.find("mode ");
      *mode = at == std::string::npos ? "" : s.err.substr(at + 5, s.err.find(':', at) - at - 5);
    }
    if (explain != nullptr) *explain = s.err + s.out;
    return ::ste::testing::SelectedTests(s.out);
  }
  // Edits `rel` (repo-relative), selects, and puts the file back as it was.
  std::set<std::string> SelectAfterEditing(const std::string& rel, std::string* mode = nullptr) {
    std::string path = root_ + "/" + rel;
    std::string before = ReadFile(path);
    WriteFile(path, before + "# edited\n");
    std::string explain;
    std::set<std::string> selected = Select(mode, &explain);
    WriteFile(path, before);
    EXPECT_NE(explain.find("<- " + rel + " (content modified)"), std::string::npos) << explain;
    return selected;
  }

  Framework fw_;
  std::string root_;
  std::set<std::string> all_;
};

// ---- (a) the same outcomes with and without ste ------------------------------

TEST_P(RubySuite, OutcomesAndExitCodesMatchAPlainRun) {
  const std::map<std::string, Result> expected = {
      {File("a"), {"passed", 0}},       {File("b"), {"passed", 0}},     {File("c"), {"passed", 0}},
      {File("failing"), {"failed", 1}}, {File("broken"), {"error", 2}},
  };
  const std::vector<std::string> files(all_.begin(), all_.end());
  const std::vector<std::string> loadable = Files({"a", "b", "c", "failing"});

  // Plainly: the whole suite in one process (the broken file aborts it),
  // each file on its own, and the files that load.
  Spawned plain = Run(fw_.plain_suite);
  EXPECT_EQ(plain.exit_code, 1) << plain.out << plain.err;
  for (const auto& [file, result] : expected) {
    Spawned one = Run(Plain({file}));
    EXPECT_EQ(one.exit_code == 0, result.outcome == "passed") << file << "\n" << one.out << one.err;
  }
  Spawned plain_loadable = Run(Plain(loadable));
  EXPECT_EQ(plain_loadable.exit_code, 1);
  const std::string totals = Totals(plain_loadable.out);
  ASSERT_FALSE(totals.empty()) << plain_loadable.out;
  Spawned plain_passing = Run(Plain(Files({"a", "b", "c"})));
  EXPECT_EQ(plain_passing.exit_code, 0) << plain_passing.out << plain_passing.err;

  // The runner alone (not under ste: carries on unscoped), one job and three.
  for (const char* jobs : {"1", "3"}) {
    Spawned alone;
    EXPECT_EQ(RunWithResults(Runner(files, {"--jobs", jobs}), &alone), expected) << jobs;
    EXPECT_EQ(alone.exit_code, 1) << alone.out << alone.err;
    EXPECT_NE(alone.out.find("5 files in "), std::string::npos) << alone.out;
    EXPECT_NE(alone.out.find("3 passed, 1 failed, 1 error"), std::string::npos) << alone.out;
    Spawned alone_loadable = Run(Runner(loadable, {"--jobs", jobs}));
    EXPECT_EQ(alone_loadable.exit_code, 1);
    EXPECT_EQ(Totals(alone_loadable.out), totals) << alone_loadable.out;
    Spawned alone_passing = Run(Runner(Files({"a", "b", "c"}), {"--jobs", jobs}));
    EXPECT_EQ(alone_passing.exit_code, 0) << alone_passing.out << alone_passing.err;
  }

  // Under `ste run`, scoped: the same.
  std::string logs = MakeTempDir();
  std::vector<std::string> traced = {kSte, "run", "--log-dir", logs, "--"};
  std::vector<std::string> runner = Runner(files, {"--jobs", "2"});
  traced.insert(traced.end(), runner.begin(), runner.end());
  Spawned under_ste;
  EXPECT_EQ(RunWithResults(traced, &under_ste), expected);
  EXPECT_EQ(under_ste.exit_code, 1) << under_ste.out << under_ste.err;
  EXPECT_EQ(under_ste.err.find("ste_scope_push"), std::string::npos) << under_ste.err;
  std::set<std::string> scopes;
  for (const LogRecord& r : Dump(logs)) scopes.insert(r.scope);
  for (const std::string& file : files) {
    EXPECT_EQ(scopes.count("//r/" + file), 1u) << file;
  }
}

TEST_P(RubySuite, RecordedOutcomesAreThoseOfThePlainRun) {
  WriteConfig(false);
  Spawned r = Ste({"record", "--progress", "plain"});
  ASSERT_EQ(r.exit_code, 1) << "a test failed: exit 1, as the runner's\n" << r.out << r.err;
  // Nothing the runner did in the root scope made the tests opaque.
  EXPECT_NE(r.out.find("5 tests, 3 passed, 1 failed, 1 errors, 0 opaque"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("error  " + File("broken")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failed " + File("failing")), std::string::npos) << r.out;
  // Unchanged tree: only what did not pass in the baseline is selected.
  std::string mode, explain;
  EXPECT_EQ(Select(&mode, &explain), (std::set<std::string>{File("broken"), File("failing")}))
      << explain;
  EXPECT_EQ(mode, "subset") << explain;
}

// ---- the scopes the runner pushes --------------------------------------------

TEST_P(RubySuite, EachFileSeesItsOwnRequiresAndThePreloadIsShared) {
  std::string logs = MakeTempDir();
  std::vector<std::string> argv = {kSte, "run", "--log-dir", logs, "--"};
  std::vector<std::string> runner = Runner(Files({"a", "b", "c"}));
  argv.insert(argv.end(), runner.begin(), runner.end());
  Spawned run = Run(argv);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::vector<LogRecord> records = Dump(logs);
  EXPECT_EQ(ScopesOf(records, "lib/shared.rb"), std::set<std::string>{"//r"});
  EXPECT_EQ(ScopesOf(records, fw_.helper), std::set<std::string>{"//r"});
  EXPECT_EQ(ScopesOf(records, "lib/only_a.rb"), std::set<std::string>{"//r/" + File("a")});
  // Both files that require it lazily, not only the first to run.
  EXPECT_EQ(ScopesOf(records, "lib/common_lazy.rb"),
            (std::set<std::string>{"//r/" + File("a"), "//r/" + File("c")}));
  EXPECT_EQ(ScopesOf(records, File("b")), std::set<std::string>{"//r/" + File("b")});
}

// (c) A scope per test case, beneath its file's.
TEST_P(RubySuite, CaseScopesNestBeneathTheFileScope) {
  std::string logs = MakeTempDir();
  std::vector<std::string> argv = {kSte, "run", "--log-dir", logs, "--"};
  std::vector<std::string> runner = Runner(Files({"a", "b", "c"}), {"--case-scopes", "-j", "2"});
  argv.insert(argv.end(), runner.begin(), runner.end());
  // minitest's order is the next run's only with a seed ($SEED here).
  Spawned run = Run(argv, {"SEED=1"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.err.find("ste_scope_push"), std::string::npos) << run.err;
  std::vector<LogRecord> records = Dump(logs);
  EXPECT_EQ(ScopesOf(records, "lib/common_lazy.rb"),
            (std::set<std::string>{"//r/" + File("a") + "/" + fw_.lazy_case_a,
                                   "//r/" + File("c") + "/" + fw_.lazy_case_c}));
  // Loaded with the file, outside any case.
  EXPECT_EQ(ScopesOf(records, "lib/only_a.rb"), std::set<std::string>{"//r/" + File("a")});
  EXPECT_EQ(ScopesOf(records, "lib/shared.rb"), std::set<std::string>{"//r"});
  // STE_CASE_SCOPES=1 turns them on too.
  std::string logs2 = MakeTempDir();
  argv = {kSte, "run", "--log-dir", logs2, "--"};
  runner = Runner(Files({"c"}));
  argv.insert(argv.end(), runner.begin(), runner.end());
  ASSERT_EQ(Run(argv, {"STE_CASE_SCOPES=1", "SEED=1"}).exit_code, 0);
  EXPECT_EQ(ScopesOf(Dump(logs2), "lib/common_lazy.rb"),
            std::set<std::string>{"//r/" + File("c") + "/" + fw_.lazy_case_c});
  if (fw_.name != "minitest") return;
  // Without a seed minitest's order may differ next run: no case scope,
  // and the runner says why.
  std::string logs3 = MakeTempDir();
  argv = {kSte, "run", "--log-dir", logs3, "--"};
  argv.insert(argv.end(), runner.begin(), runner.end());
  Spawned unseeded = Run(argv, {"STE_CASE_SCOPES=1"});
  ASSERT_EQ(unseeded.exit_code, 0) << unseeded.err;
  EXPECT_EQ(ScopesOf(Dump(logs3), "lib/common_lazy.rb"), std::set<std::string>{"//r/" + File("c")});
  EXPECT_NE(unseeded.err.find("ste_forking_runner: no case scopes: minitest runs the cases in a random order"),
            std::string::npos)
      << unseeded.err;
}

// ---- (b) selection after `ste record` -----------------------------------------

TEST_P(RubySuite, SelectionFollowsWhatEachFileLoaded) {
  WriteConfig(false);
  Record();
  const std::set<std::string> always = {File("failing"), File("broken")};  // not passed
  auto with_always = [&](std::set<std::string> tests) {
    tests.insert(always.begin(), always.end());
    return tests;
  };
  EXPECT_EQ(SelectAfterEditing("lib/only_a.rb"), with_always({File("a")}));
  EXPECT_EQ(SelectAfterEditing("lib/common_lazy.rb"), with_always({File("a"), File("c")}));
  std::string mode;
  EXPECT_EQ(SelectAfterEditing("lib/shared.rb", &mode), all_);
  EXPECT_EQ(mode, "all");
  EXPECT_EQ(SelectAfterEditing(fw_.helper), all_);
  // A test file's own change selects it.
  EXPECT_EQ(SelectAfterEditing(File("b")), with_always({File("b")}));
  Spawned deps = Ste({"deps", File("c")});
  EXPECT_NE(deps.out.find("content\tlib/common_lazy.rb\n"), std::string::npos) << deps.out;

  // The CI loop: the selection handed back to the runner.
  W("lib/common_lazy.rb", ReadFile(root_ + "/lib/common_lazy.rb") + "# changed\n");
  Spawned loop = Run({"sh", "-c",
                      "set -e; runner=$1; tests=$(\"$0\" select --format runner); "
                      "eval \"set -- $tests\"; exec ruby \"$runner\" --framework " +
                          fw_.name + " --preload " + fw_.helper + " \"$@\"",
                      kSte, kRunner},
                     {"STE_INTEGRATIONS=" + kIntegrations});
  EXPECT_EQ(loop.exit_code, 1) << loop.out << loop.err;  // failing and broken are in it
  EXPECT_NE(loop.out.find("4 files in "), std::string::npos) << loop.out;
  EXPECT_NE(loop.out.find("2 passed, 1 failed, 1 error"), std::string::npos) << loop.out;
}

TEST_P(RubySuite, WithCaseScopesSelectionIsStillPerFile) {
  WriteConfig(true);
  Record();
  const std::set<std::string> always = {File("failing"), File("broken")};
  std::set<std::string> expected = {File("a"), File("c")};
  expected.insert(always.begin(), always.end());
  EXPECT_EQ(SelectAfterEditing("lib/common_lazy.rb"), expected);
  Spawned dump = Ste({"index", "dump", "--json"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(::ste::testing::Lines(dump.out), all_.size()) << dump.out;
}

INSTANTIATE_TEST_SUITE_P(Ruby, RubySuite, ::testing::Values(kMinitest, kRSpec),
                         [](const ::testing::TestParamInfo<Framework>& info) {
                           return info.param.name == "minitest" ? std::string("Minitest")
                                                                : std::string("RSpec");
                         });

}  // namespace
}  // namespace ste
