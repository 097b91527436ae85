// End to end: definition-level selection for Ruby (`[selection]
// granularity = "definition"`, issue 12) on a generated suite whose
// library loads all of itself (lib/shapes.rb requires every file),
// recorded with the generic per-file runner (`ruby -Ilib test/x_test.rb`,
// minitest/autorun), kind = "minitest" and kind = "rspec" (the forking
// runner, the library preloaded in the root scope).
//
// Each change below is made, selected, and undone. The selection must be
// exactly the expected set: the tests that ran a changed method (for one
// that only moved, those of them that read its lines), for a simple
// constant's value those whose code that ran names it, every
// test when module-level code changed, and the tests whose account is not
// trusted at definition level (a forked child that ends by exit!, a test
// that stops Coverage) whenever anything they loaded changed. Then the
// ground truth: every test run alone, without ste, after the change; a
// test whose outcome changed must be selected. The same suite at file
// level selects every test for any change to the library.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "definition_suite.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::SelectedTests;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;

const std::string kIntegrations = STE_INTEGRATIONS_DIR;

struct Setup {
  std::string name;
  std::string dir, suffix;  // where the tests are: test/*_test.rb, spec/*_spec.rb
  std::string runner;       // the [runner] table's lines
  std::vector<std::string> alone;  // runs one test without ste (+ its path)
};
void PrintTo(const Setup& s, std::ostream* os) { *os << s.name; }

const Setup kGeneric = {"Generic", "test", "_test.rb", "command = \"ruby -Ilib {test}\"\n",
                        {"ruby", "-Ilib"}};
const Setup kMinitest = {"Minitest", "test", "_test.rb",
                         "kind = \"minitest\"\npreload = [\"lib/shapes.rb\"]\njobs = 2\n", {"ruby", "-Ilib"}};
const Setup kRspec = {"Rspec", "spec", "_spec.rb", "kind = \"rspec\"\npreload = [\"lib/shapes.rb\"]\njobs = 2\n",
                      {"rspec"}};

const char kShapes[] =
    "require \"shapes/calc\"\n"
    "require \"shapes/text\"\n"
    "require \"shapes/table\"\n";

const char kCalc[] =
    "# Arithmetic.\n"
    "module Shapes\n"
    "  LIMIT = 100\n"
    "  RATE = 3\n"
    "  BASE = 10\n"
    "\n"
    "  def self.triple(a)\n"
    "    a * RATE\n"
    "  end\n"
    "\n"
    "  def self.add(a, b)\n"
    "    a + b\n"
    "  end\n"
    "\n"
    "  def self.mul(a, b)\n"
    "    a * b\n"
    "  end\n"
    "\n"
    "  def self.sub(a, b)\n"
    "    a - b\n"
    "  end\n"
    "\n"
    "  def self.unused\n"
    "    \"unused\"\n"
    "  end\n"
    "\n"
    "  class Vec\n"
    "    DIMS = 2\n"
    "    attr_reader :x, :y\n"
    "\n"
    "    def initialize(x, y)\n"
    "      @x = x\n"
    "      @y = y\n"
    "    end\n"
    "\n"
    "    def norm1\n"
    "      x.abs + y.abs\n"
    "    end\n"
    "\n"
    "    def limit\n"
    "      LIMIT\n"
    "    end\n"
    "\n"
    "    def scale(k)\n"
    "      Vec.new(x * k, y * k)\n"
    "    end\n"
    "  end\n"
    "\n"
    "  WORDS = %w[a b].map { |n| [n, n.to_sym] }.to_h.freeze\n"
    "\n"
    "  def self.word(s)\n"
    "    WORDS[s]\n"
    "  end\n"
    "end\n";

const char kText[] =
    "module Shapes\n"
    "  def self.shout(s)\n"
    "    \"#{s.upcase}!\"\n"
    "  end\n"
    "\n"
    "  def self.whisper(s)\n"
    "    \"#{s.downcase}...\"\n"
    "  end\n"
    "\n"
    "  def self.line\n"
    "    caller_locations(0, 1).first.lineno\n"
    "  end\n"
    "\n"
    "  def self.fail!\n"
    "    raise ArgumentError, \"no\"\n"
    "  end\n"
    "\n"
    "  # Defs in an if/else and in a block (issue 24): units too.\n"
    "  if RUBY_VERSION >= \"2.0\"\n"
    "    def self.pad(s)\n"
    "      \"[#{s}]\"\n"
    "    end\n"
    "  else\n"
    "    def self.pad(s)\n"
    "      \"(#{s})\"\n"
    "    end\n"
    "  end\n"
    "\n"
    "  Pair = Struct.new(:a, :b) do\n"
    "    def total\n"
    "      a + b\n"
    "    end\n"
    "  end\n"
    "end\n";

const char kTable[] =
    "module Shapes\n"
    "  def self.build_table\n"
    "    { \"a\" => 1, \"b\" => 2 }\n"
    "  end\n"
    "\n"
    "  TABLE = build_table\n"
    "  START = Shapes::BASE + 1\n"
    "end\n";

// Each test: statements, then the expression that must be true.
struct Body {
  std::string pre, check;
};
const std::map<std::string, Body> kTestBodies = {
    {"add", {"", "Shapes.add(2, 3) == 5"}},
    {"mul", {"", "Shapes.mul(2, 3) == 6"}},
    {"sub", {"", "Shapes.sub(5, 3) == 2"}},
    {"norm", {"", "Shapes::Vec.new(1, -2).norm1 == 3"}},
    {"scale", {"", "Shapes::Vec.new(1, 2).scale(3).x == 3"}},
    {"shout", {"", "Shapes.shout(\"a\") == \"A!\""}},
    {"whisper", {"", "Shapes.whisper(\"A\") == \"a...\""}},
    {"table", {"", "Shapes::TABLE[\"b\"] == 2"}},
    {"pad", {"", "Shapes.pad(\"x\") == \"[x]\""}},
    {"pair", {"", "Shapes::Pair.new(1, 2).total == 3"}},
    // Simple constants: one a method names, one read by name at run time,
    // one read at load by another file's module-level code.
    {"triple", {"", "Shapes.triple(2) == 6"}},
    {"dynamic", {"name = \"RA\" + \"TE\"", "Shapes.const_get(name) == 3"}},
    {"start", {"", "Shapes::START == 11"}},
    // The test's own code reads a simple constant (Generic: in the main
    // script, which Coverage does not see).
    {"limit", {"", "Shapes::LIMIT == 100"}},
    // A method reads a constant computed from literals (format 9).
    {"word", {"", "Shapes.word(\"a\") == :a"}},
    // A method of Vec reads LIMIT lexically (Shapes::LIMIT, until Vec binds
    // one); a test lists a module's constants (Module#constants).
    {"vlimit", {"", "Shapes::Vec.new(1, 2).limit == 100"}},
    {"listing", {"", "Shapes.constants.include?(:LIMIT)"}},
    {"probe", {"", "!Shapes.const_defined?(:EXTRA)"}},
    // Loads the standard library's uri, which lists URI::Schemes' constants
    // as it loads: no module of the repository's, so no constant added to
    // one selects it.
    {"uri", {"require \"uri\"", "URI(\"http://x/\").host == \"x\""}},
    // Read the lines of methods they ran (issue 24, the move rule): a
    // method's own caller_locations, an exception's backtrace.
    {"line", {"", "Shapes.line == 11"}},
    {"backtrace", {"e = (Shapes.fail! rescue $!)", "e.backtrace_locations.first.lineno == 15"}},
    // Reads a method's parameters without running it (format 10), through
    // a Method got by a name made at run time.
    {"arity", {"name = \"mu\" + \"l\"", "Shapes.method(name).arity == 2"}},
    // Calls it by a name made at run time with one argument too few: an
    // ArgumentError before it runs (Coverage does not count the call).
    {"toofew", {"e = (Shapes.public_send(\"mu\" + \"l\", 1) rescue $!)", "e.is_a?(ArgumentError)"}},
    // Reads a method's source without running it: file level for calc.rb.
    {"source", {"", "File.read(File.join(ROOT, \"lib/shapes/calc.rb\")).include?('\"unused\"')"}},
    // Runs mul on a thread of its own (Coverage is process-wide).
    {"thread", {"out = []\n    Thread.new { out << Shapes.mul(4, 5) }.join", "out == [20]"}},
    // A forked child runs sub and ends by exit!: its account never ends,
    // so the test falls back to file level.
    {"fork", {"pid = fork { exit!(Shapes.sub(7, 3) == 4 ? 0 : 1) }\n    Process.wait(pid)", "$?.success?"}},
    // A Ruby subprocess, tracked on its own, runs add.
    {"subprocess",
     {"out = IO.popen([RbConfig.ruby, \"-I\", File.join(ROOT, \"lib\"), \"-e\", "
      "\"require 'shapes'; print Shapes.add(1, 1)\"], &:read)",
      "out == \"2\""}},
    // Stops the Coverage it finds running, then runs whisper: file level.
    {"nocoverage",
     {"require \"coverage\"\n    Coverage.result if Coverage.running?", "Shapes.whisper(\"B\") == \"b...\""}},
};

std::string TestFile(const Setup& s, const std::string& name) {
  const Body& b = kTestBodies.at(name);
  std::string head = "ROOT = File.expand_path(\"..\", __dir__)\nrequire \"shapes\"\n";
  if (s.dir == "spec") {
    return head + "\nRSpec.describe \"" + name + "\" do\n  it \"works\" do\n    " + b.pre + "\n    expect(" +
           b.check + ").to be(true)\n  end\nend\n";
  }
  std::string klass = name;
  klass[0] = static_cast<char>(klass[0] - 'a' + 'A');
  return "require \"minitest/autorun\"\n" + head + "\nclass " + klass + "Test < Minitest::Test\n  def test_it\n    " +
         b.pre + "\n    assert(" + b.check + ")\n  end\nend\n";
}

struct Change {
  std::string name;
  std::string file;  // under lib/shapes/
  std::string from, to;
  std::vector<std::string> expected;  // test names beyond kFileLevel (all: every test)
  bool all = false;
  bool outcome_changes = true;  // some test fails after it (the ground truth has teeth)
};

// The tests a change to the library always selects at definition level:
// those whose account is file level.
const std::vector<std::string> kFileLevel = {"fork", "nocoverage"};

std::vector<Change> Changes() {
  return {
      {"add body", "calc.rb", "a + b", "a - b", {"add", "subprocess", "source"}},
      {"mul body", "calc.rb", "a * b", "a * b + 1", {"mul", "thread", "source"}},
      {"sub body", "calc.rb", "a - b", "b - a", {"sub", "source"}},
      {"method body", "calc.rb", "x.abs + y.abs", "x + y", {"norm", "source"}},
      {"unused body", "calc.rb", "\"unused\"", "\"changed\"", {"source"}},
      // Issue 24: the tokens a body's node does not span (a leading `(`,
      // the begin/rescue/end around it) are the method's, not the module's.
      {"body wrapped in begin/rescue and parentheses", "calc.rb", "      Vec.new(x * k, y * k)\n",
       "      begin\n        (Vec.new((x * k) + 1, y * k))\n      rescue ArgumentError\n        nil\n      end\n",
       {"scale", "source"}},
      {"one-line begin/rescue and parentheses", "calc.rb", "    a * b\n",
       "    begin; (a * b) + 1; rescue StandardError; 0; end\n", {"mul", "thread", "source"}},
      // A comment in a body is part of that method's text (its unit).
      {"comment in a body", "text.rb", "\"#{s.upcase}!\"", "\"#{s.upcase}!\" # loud", {"shout"}, false, false},
      {"comment outside", "calc.rb", "# Arithmetic.", "# Sums.", {"source"}, false, false},
      {"shout body", "text.rb", "\"#{s.upcase}!\"", "\"#{s.upcase}?\"", {"shout"}},
      {"whisper body", "text.rb", "\"#{s.downcase}...\"", "\"#{s.downcase}.\"", {"whisper"}},
      // Defs in a branch of an `if` and in a call's block (Struct.new do)
      // are units: a body edit selects the tests that ran them; the `if`
      // itself is module-level code (issue 24, item 1).
      {"a def in an if branch", "text.rb", "\"[#{s}]\"", "\"<#{s}>\"", {"pad"}},
      {"the else branch's def", "text.rb", "\"(#{s})\"", "\"{#{s}}\"", {}, false, false},
      {"a def in a Struct block", "text.rb", "      a + b\n", "      a + b + 1\n", {"pair"}},
      {"the if's condition", "text.rb", "if RUBY_VERSION >= \"2.0\"", "if RUBY_VERSION < \"2.0\"", {}, true},
      {"load-time method", "table.rb", "\"b\" => 2", "\"b\" => 3", {}, true},
      // A simple constant's value: the tests whose code that ran names it,
      // or that read it by a name made at run time (const_get), or all
      // when module-level code read it at load (table.rb's START); none
      // when no code names it.
      // (listing reads the names Shapes.constants answers: LIMIT, RATE.)
      {"module constant", "calc.rb", "LIMIT = 100", "LIMIT = 101", {"source", "limit", "vlimit", "listing"}},
      {"class constant", "calc.rb", "DIMS = 2", "DIMS = 3", {"source"}, false, false},
      {"constant a method names", "calc.rb", "RATE = 3", "RATE = 4", {"triple", "dynamic", "source", "listing"}},
      {"constant read at load", "calc.rb", "BASE = 10", "BASE = 20", {}, true},
      // A simple constant added (format 8: no module-level code): the tests
      // that loaded its file and whose code named it (whatever module
      // binds that name, or none) or listed constants.
      {"constant added", "calc.rb", "  BASE = 10\n", "  BASE = 10\n  MORE = 1\n", {"source", "listing"}, false,
       false},
      {"constant added that a test looked for", "calc.rb", "  BASE = 10\n", "  BASE = 10\n  EXTRA = 7\n",
       {"source", "listing", "probe"}},
      {"constant removed", "calc.rb", "  RATE = 3\n", "", {"triple", "dynamic", "source", "listing"}},
      // A constant computed from literals by core methods (format 9): a
      // part of its own when the fingerprinter's evaluation computes it;
      // one that fails as the file loads is module-level code (every test
      // that loads the file fails).
      {"a constant computed from literals", "calc.rb", "[n, n.to_sym]", "[n, n.to_s]",
       {"word", "source", "listing"}},
      {"a computed constant that fails as the file loads", "calc.rb", "[n, n.to_sym]", "[n, n + 1]", {}, true},
      // A private_constant of simple constants is their parts' (format 9):
      // the tests that named them (a read from outside now fails) and
      // those that listed constants (Module#constants leaves it out).
      {"a private_constant no test minds", "calc.rb", "  def self.word(s)",
       "  private_constant :WORDS\n\n  def self.word(s)", {"word", "listing", "source"}, false, false},
      {"a constant a test reads made private", "calc.rb", "  RATE = 3\n", "  RATE = 3\n  private_constant :LIMIT\n",
       {"limit", "vlimit", "listing", "source"}},
      {"constants reordered", "calc.rb", "  LIMIT = 100\n  RATE = 3\n", "  RATE = 3\n  LIMIT = 100\n",
       {"source", "listing"}, false, false},
      // (its anchor: the statements before it in its body; code there that
      // read it as the file loads would fail before it)
      {"constant moved past a method", "calc.rb",
       "  RATE = 3\n  BASE = 10\n\n  def self.triple(a)\n    a * RATE\n  end\n",
       "  BASE = 10\n\n  def self.triple(a)\n    a * RATE\n  end\n  RATE = 3\n",
       {"triple", "dynamic", "source", "listing"}, false, false},
      {"visibility", "calc.rb", "    def norm1", "    private\n\n    def norm1", {}, true},
      // A method's parameters (format 10: its `sig` part, not module-level
      // code): the tests that ran it, and those whose code that ran holds
      // its name (any receiver's) or got its Method by name (arity, whose
      // outcome changes).
      {"parameters", "calc.rb", "def self.triple(a)", "def self.triple(a, k = 1)", {"triple", "source"}, false,
       false},
      {"a parameter a test reads", "calc.rb", "def self.mul(a, b)", "def self.mul(a, b, c = 1)",
       {"mul", "thread", "arity", "toofew", "source"}},
      // (toofew's call works now: it fails)
      {"a parameter made optional", "calc.rb", "def self.mul(a, b)", "def self.mul(a, b = 2)",
       {"mul", "thread", "arity", "toofew", "source"}},
      // (It moves Shapes.line and Shapes.fail!: the tests that read their
      // lines fail.)
      {"method added", "text.rb", "  def self.whisper(s)", "  def self.extra\n    1\n  end\n\n  def self.whisper(s)",
       {}, true},
      {"syntax error", "text.rb", "def self.shout(s)", "def self.shout(s", {}, true},
      // (the parser takes it, the compiler does not: "Invalid break", and
      // no test can load the file)
      {"a break the compiler rejects", "text.rb", "\"#{s.downcase}...\"", "break", {}, true},
      // Issue 24, the move rule: methods that only moved (lines added
      // above them) select the tests that ran them and read their lines,
      // no other.
      {"methods moved, lines read", "text.rb", "module Shapes\n", "module Shapes\n  # Loud and quiet.\n\n",
       {"line", "backtrace"}},
      {"methods moved, no line read", "calc.rb", "module Shapes\n", "module Shapes\n\n\n", {"source"}, false, false},
  };
}

class RubyDefinitions : public ::ste::testing::DefinitionSuiteTest<Setup> {
 protected:
  void SetUp() override {
    W("lib/shapes.rb", kShapes);
    W("lib/shapes/calc.rb", kCalc);
    W("lib/shapes/text.rb", kText);
    W("lib/shapes/table.rb", kTable);
    for (const auto& [name, body] : kTestBodies) {
      W(Path(name), TestFile(GetParam(), name));
      all_.insert(Path(name));
    }
    ::ste::testing::InitGitRepo(root_);
    ste_env_ = {"STE_INTEGRATIONS=" + kIntegrations};
    select_args_ = {"--explain"};
  }

  std::string Path(const std::string& name) const { return GetParam().dir + "/" + name + GetParam().suffix; }

  void Configure(const std::string& granularity) {
    DefinitionSuiteTest::Configure("[tests]\ninclude = [\"" + GetParam().dir + "/*" + GetParam().suffix +
                                   "\"]\n[runner]\n" + GetParam().runner + "[selection]\ngranularity = \"" +
                                   granularity + "\"\n");
  }
  std::set<std::string> Apply(const Change& c, std::set<std::string>* failing) {
    return Edit(c.name, "lib/shapes/" + c.file, c.from, c.to, failing);
  }
  Spawned RunAlone(const std::string& test) override {
    std::vector<std::string> argv = GetParam().alone;
    argv.push_back(test);
    return Spawn(argv, {}, root_);
  }
};

TEST_P(RubyDefinitions, AChangedMethodSelectsTheTestsThatRanIt) {
  Configure("definition");
  // The minitest files run alone are the same for Generic and Minitest.
  const bool ground_truth = GetParam().name != "Minitest";
  for (const Change& c : Changes()) {
    SCOPED_TRACE(c.name);
    std::set<std::string> failing;
    std::set<std::string> selected = Apply(c, ground_truth ? &failing : nullptr);
    std::set<std::string> expected;
    if (c.all) expected = all_;
    for (const std::string& n : c.expected) expected.insert(Path(n));
    for (const std::string& n : kFileLevel) expected.insert(Path(n));
    EXPECT_EQ(selected, expected) << last_err_;
    if (ground_truth) {
      for (const std::string& t : failing) {
        EXPECT_EQ(selected.count(t), 1u) << t << " fails after the change but was not selected";
      }
      if (c.outcome_changes) {
        EXPECT_FALSE(failing.empty()) << "the change was meant to fail a test";
      } else {
        EXPECT_TRUE(failing.empty()) << "no test was meant to fail: " << *failing.begin();
      }
    }
  }
}

TEST_P(RubyDefinitions, AtFileLevelEveryChangeToTheEagerLibrarySelectsEveryTest) {
  Configure("file");
  for (const Change& c : Changes()) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Apply(c, nullptr), all_);
  }
}

INSTANTIATE_TEST_SUITE_P(Ruby, RubyDefinitions, ::testing::Values(kGeneric, kMinitest, kRspec),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ste
