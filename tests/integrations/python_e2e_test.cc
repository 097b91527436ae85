// End-to-end tests of the Python batch runners (integrations/python/:
// ste_pytest.py, a pytest plugin, and ste_unittest.py) on real pytest and
// unittest suites in temporary git repositories: run plainly, by the
// runner without ste, under `ste run`, and recorded by `ste record`
// (runner.kind pytest / unittest), then selected.
//
// Both suites have the same shape (tests/, src/):
//   shared    tests/conftest.py (pytest: loaded by pytest itself) or
//             tests/helper.py (unittest: runner.preload), in the root
//             scope; puts src/ on sys.path and imports src/shared.py
//   test_a    imports src/only_a.py; one case imports src/common_lazy.py
//             lazily, inside the test
//   test_b    imports src/only_b.py (and runs after test_a)
//   test_c    one case imports src/common_lazy.py lazily, like test_a's:
//             in one process the module cache warmed by test_a would hide
//             test_c's dependency; forked, both see it
//   test_fail one passing and one failing case
//   test_broken imports a module that does not exist (cannot be loaded)
#include <map>
#include <regex>
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
const std::string kPython = "/usr/bin/python3";  // Debian's, with pytest
const std::string kUnittestRunner = kIntegrations + "/python/ste_unittest.py";

struct Kind {
  std::string name;    // runner.kind
  std::string shared;  // the root-scope file of the suite
  // The case scopes (beneath the file's) of test_a's and test_c's lazy cases.
  std::string lazy_case_a, lazy_case_c;
  // Exit codes of plain runs: each file alone, and the whole suite.
  std::map<std::string, int> plain_file_exit;
  int plain_suite_exit = -1;
};

const Kind kPytest = {
    "pytest",
    "tests/conftest.py",
    "test_common_lazy",
    "test_common_lazy",
    // test_broken alone: "Interrupted: 1 error during collection"; in the
    // suite, it interrupts the whole session (nothing runs).
    {{"tests/test_a.py", 0},
     {"tests/test_b.py", 0},
     {"tests/test_c.py", 0},
     {"tests/test_fail.py", 1},
     {"tests/test_broken.py", 2}},
    2,
};

const Kind kUnittest = {
    "unittest",
    "tests/helper.py",
    "TestA.test_common_lazy",
    "TestC.test_common_lazy",
    // test_broken: an ERROR of unittest.loader._FailedTest, the run goes on.
    {{"tests/test_a.py", 0},
     {"tests/test_b.py", 0},
     {"tests/test_c.py", 0},
     {"tests/test_fail.py", 1},
     {"tests/test_broken.py", 1}},
    1,
};

void PrintTo(const Kind& kind, std::ostream* os) { *os << kind.name; }


// The runners' outcomes: every file is run, whatever the others do.
const std::map<std::string, Result> kExpected = {
    {"tests/test_a.py", {"passed", 0}},
    {"tests/test_b.py", {"passed", 0}},
    {"tests/test_c.py", {"passed", 0}},
    {"tests/test_fail.py", {"failed", 1}},
    {"tests/test_broken.py", {"error", 2}},
};


// A report with its timings blanked: pytest's "... in 0.12s", unittest's
// "Ran 9 tests in 0.012s".
std::string Untimed(const std::string& report) {
  static const std::regex kTime(" in [0-9.]+s");
  return std::regex_replace(report, kTime, " in Xs");
}


class PythonSuite : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    kind_ = GetParam();
    root_ = MakeTempDir();
    W("src/shared.py", "ANSWER = 42\n");
    W("src/only_a.py", "VALUE = \"a\"\n");
    W("src/only_b.py", "VALUE = \"b\"\n");
    W("src/common_lazy.py", "def double(x):\n    return 2 * x\n");
    if (kind_.name == "pytest")
      WritePytestSuite();
    else
      WriteUnittestSuite();
    for (const auto& [file, code] : kind_.plain_file_exit) all_.insert(file);
    ::ste::testing::InitGitRepo(root_);
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "init"});
  }

  static constexpr char kSrcOnPath[] =
      "import os\nimport sys\n\n"
      "sys.path.insert(0, "
      "os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))"
      ", "
      "\"src\"))\n"
      "import shared  # noqa: E402\n";

  void WritePytestSuite() {
    W("pytest.ini", "[pytest]\n");
    W("tests/conftest.py", std::string(kSrcOnPath) + R"(
import pytest  # noqa: E402


@pytest.fixture
def answer():
    return shared.ANSWER
)");
    W("tests/test_a.py", R"(import only_a


def test_only_a(answer):
    assert (only_a.VALUE, answer) == ("a", 42)


def test_common_lazy():
    import common_lazy

    assert common_lazy.double(2) == 4
)");
    W("tests/test_b.py", R"(import only_b


def test_only_b():
    assert only_b.VALUE == "b"
)");
    W("tests/test_c.py", R"(def test_common_lazy():
    import common_lazy

    assert common_lazy.double(3) == 6
)");
    W("tests/test_fail.py", R"(def test_passes():
    assert True


def test_fails():
    assert 1 == 2
)");
    W("tests/test_broken.py",
      "import no_such_module  # noqa: F401\n\n\ndef test_never():\n    pass\n");
  }

  void WriteUnittestSuite() {
    W("tests/helper.py",
      std::string(kSrcOnPath) + "\nANSWER = shared.ANSWER\n");
    W("tests/test_a.py", R"(import unittest

from tests import helper
import only_a


class TestA(unittest.TestCase):
    def test_only_a(self):
        self.assertEqual((only_a.VALUE, helper.ANSWER), ("a", 42))

    def test_common_lazy(self):
        import common_lazy

        self.assertEqual(common_lazy.double(2), 4)
)");
    W("tests/test_b.py", R"(import unittest

from tests import helper  # noqa: F401
import only_b


class TestB(unittest.TestCase):
    def test_only_b(self):
        self.assertEqual(only_b.VALUE, "b")
)");
    W("tests/test_c.py", R"(import unittest

from tests import helper  # noqa: F401


class TestC(unittest.TestCase):
    def test_common_lazy(self):
        import common_lazy

        self.assertEqual(common_lazy.double(3), 6)
)");
    W("tests/test_fail.py", R"(import unittest


class TestFail(unittest.TestCase):
    def test_passes(self):
        pass

    def test_fails(self):
        self.assertEqual(1, 2)
)");
    W("tests/test_broken.py", R"(import unittest

import no_such_module  # noqa: F401


class TestBroken(unittest.TestCase):
    def test_never(self):
        pass
)");
  }

  void W(const std::string& rel, const std::string& content) {
    WriteFile(root_ + "/" + rel, content);
  }
  void Git(const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(root_, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  bool IsPytest() const { return kind_.name == "pytest"; }
  std::vector<std::string> Files() const { return {all_.begin(), all_.end()}; }

  // The framework's own command line, without ste or the runner.
  std::vector<std::string> Plain(
      const std::vector<std::string>& args,
      const std::vector<std::string>& options = {}) const {
    std::vector<std::string> argv = {kPython, "-m", kind_.name};
    if (IsPytest()) argv.insert(argv.end(), {"-q", "-p", "no:cacheprovider"});
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  // The runner's: pytest with the plugin, or ste_unittest.py.
  std::vector<std::string> Runner(
      const std::vector<std::string>& args,
      const std::vector<std::string>& options = {}) const {
    std::vector<std::string> argv = {kPython, kUnittestRunner};
    if (IsPytest()) {
      argv = {kPython, "-m", "pytest", "-q"};
      argv.insert(argv.end(), {"-p", "no:cacheprovider", "-p", "ste_pytest"});
    }
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  // The runner's environment: the plugin importable, the preload named.
  std::vector<std::string> RunnerEnv(std::vector<std::string> env = {}) const {
    env.push_back("PYTHONPATH=" + kIntegrations + "/python");
    if (!IsPytest()) env.push_back("STE_PRELOAD_FILES=" + kind_.shared);
    return env;
  }
  // What a run reports: pytest on stdout, unittest on stderr; untimed.
  std::string Report(const Spawned& run) const {
    return Untimed(IsPytest() ? run.out : run.err);
  }

  Spawned Run(const std::vector<std::string>& argv,
              const std::vector<std::string>& env = {}) {
    return Spawn(argv, env, root_);
  }
  // Runs argv with $STE_RESULTS set; returns the parsed results.
  std::map<std::string, Result> RunWithResults(
      const std::vector<std::string>& argv, std::vector<std::string> env,
      Spawned* run) {
    std::string results = MakeTempDir() + "/results.tsv";
    env.push_back("STE_RESULTS=" + results);
    *run = Run(argv, env);
    return ParseResults(ReadFile(results));
  }
  std::vector<std::string> UnderSte(const std::string& log_dir,
                                    const std::vector<std::string>& argv) {
    std::vector<std::string> traced = {kSte, "run", "--log-dir", log_dir, "--"};
    traced.insert(traced.end(), argv.begin(), argv.end());
    return traced;
  }
  // ste itself. PYTHONDONTWRITEBYTECODE is cleared: a record must not leave
  // __pycache__/ behind on its own.
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(
        args, {"STE_INTEGRATIONS=" + kIntegrations, "PYTHONDONTWRITEBYTECODE="},
        root_);
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
    std::string runner =
        "[runner]\nkind = \"" + kind_.name + "\"\njobs = 2\nbatch = 3\n";
    if (IsPytest()) {
      // No -p no:cacheprovider: the plugin keeps .pytest_cache/ away.
      runner +=
          "command = \"" + kPython + " -m pytest -q -p ste_pytest {tests}\"\n";
    } else {
      runner += "command = \"" + kPython +
                " \\\"$STE_INTEGRATIONS/python/ste_unittest.py\\\" {tests}\"\n";
      runner += "preload = [\"" + kind_.shared + "\"]\n";
    }
    if (case_scopes) runner += "case_scopes = true\n";
    // File level (the default is definitions where a tracker runs:
    // definitions_e2e_test.cc): this suite checks what each file's tests
    // recorded.
    W("ste.toml", "[tests]\ninclude = [\"tests/test_*.py\"]\n" + runner + "[selection]\ngranularity = \"file\"\n");
    Git({"add", "ste.toml"});
    Git({"commit", "-q", "-m", "ste.toml"});
  }
  void Record() {
    // The suite has a failing and a broken test (RecordedOutcomes... checks
    // record's exit 1 for them).
    Spawned r = Ste({"record", "--progress", "none", "--allow-failures"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  std::set<std::string> Select(std::string* mode = nullptr,
                               std::string* explain = nullptr) {
    Spawned s = Ste({"select", "--explain"});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    if (mode != nullptr) {
      size_t at = s.err.find("mode ");
      *mode = at == std::string::npos
                  ? ""
                  : s.err.substr(at + 5, s.err.find(':', at) - at - 5);
    }
    if (explain != nullptr) *explain = s.err + s.out;
    return ::ste::testing::SelectedTests(s.out);
  }
  // Edits `rel`, selects, and puts the file back as it was.
  std::set<std::string> SelectAfterEditing(const std::string& rel,
                                           std::string* mode = nullptr) {
    std::string path = root_ + "/" + rel;
    std::string before = ReadFile(path);
    WriteFile(path, before + "# edited\n");
    std::string explain;
    std::set<std::string> selected = Select(mode, &explain);
    WriteFile(path, before);
    EXPECT_NE(explain.find("<- " + rel + " (content modified)"),
              std::string::npos)
        << explain;
    return selected;
  }
  std::set<std::string> WithAlways(std::set<std::string> tests) const {
    tests.insert({"tests/test_fail.py",
                  "tests/test_broken.py"});  // not passed in the baseline
    return tests;
  }

  Kind kind_;
  std::string root_;
  std::set<std::string> all_;
};

// ---- (a) the same outcomes with and without ste
// --------------------------------

TEST_P(PythonSuite, OutcomesAndExitCodesMatchAPlainRun) {
  const std::vector<std::string> files = Files();
  for (const auto& [file, code] : kind_.plain_file_exit) {
    Spawned one = Run(Plain({file}));
    EXPECT_EQ(one.exit_code, code) << file << "\n" << one.out << one.err;
  }
  Spawned plain = Run(Plain(files));
  EXPECT_EQ(plain.exit_code, kind_.plain_suite_exit) << plain.out << plain.err;
  const std::string report = Report(plain);
  ASSERT_FALSE(report.empty());

  // The runner without ste: pytest's plugin does nothing (no symbol, no
  // STE_RESULTS) or forks (--ste-fork=yes); ste_unittest.py forks.
  Spawned alone = Run(Runner(files), RunnerEnv());
  EXPECT_EQ(alone.exit_code, plain.exit_code) << alone.out << alone.err;
  EXPECT_EQ(Report(alone), report);
  if (IsPytest()) {
    Spawned forced = Run(Runner(files, {"--ste-fork=yes"}), RunnerEnv());
    EXPECT_EQ(forced.exit_code, plain.exit_code) << forced.out << forced.err;
    EXPECT_EQ(Report(forced), report);
  }
  // With STE_RESULTS (forking), one job and three: the same report, and
  // every file ran, the broken one notwithstanding.
  for (const char* jobs : {"1", "3"}) {
    Spawned run;
    EXPECT_EQ(
        RunWithResults(Runner(files),
                       RunnerEnv({std::string("STE_JOBS=") + jobs}), &run),
        kExpected)
        << jobs;
    EXPECT_EQ(run.exit_code, plain.exit_code) << run.out << run.err;
    EXPECT_EQ(Report(run), report) << jobs;
  }
  if (IsPytest()) {  // where a collection error does not stop the session
    Spawned plain_all = Run(Plain(files, {"--continue-on-collection-errors"}));
    EXPECT_EQ(plain_all.exit_code, 1);
    EXPECT_NE(plain_all.out.find("1 failed, 5 passed, 1 error in "),
              std::string::npos)
        << plain_all.out;
    Spawned run;
    EXPECT_EQ(RunWithResults(Runner(files, {"--continue-on-collection-errors"}),
                             RunnerEnv(), &run),
              kExpected);
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_EQ(Report(run), Untimed(plain_all.out));
  }
  // The files that load, and those that pass.
  const std::vector<std::string> loadable = {
      "tests/test_a.py", "tests/test_b.py", "tests/test_c.py",
      "tests/test_fail.py"};
  const std::vector<std::string> passing = {
      "tests/test_a.py", "tests/test_b.py", "tests/test_c.py"};
  for (const auto& subset : {loadable, passing}) {
    Spawned plain_subset = Run(Plain(subset));
    Spawned run;
    RunWithResults(Runner(subset), RunnerEnv(), &run);
    EXPECT_EQ(run.exit_code, plain_subset.exit_code) << run.out << run.err;
    EXPECT_EQ(Report(run), Report(plain_subset));
  }

  // Under `ste run`, scoped, two jobs: the same.
  std::string logs = MakeTempDir();
  Spawned under_ste;
  EXPECT_EQ(RunWithResults(UnderSte(logs, Runner(files)),
                           RunnerEnv({"STE_JOBS=2"}), &under_ste),
            kExpected);
  EXPECT_EQ(under_ste.exit_code, plain.exit_code)
      << under_ste.out << under_ste.err;
  EXPECT_EQ(Report(under_ste), report);
  EXPECT_EQ(under_ste.err.find("cannot enter the scope"), std::string::npos)
      << under_ste.err;
  std::set<std::string> scopes;
  for (const LogRecord& r : Dump(logs)) scopes.insert(r.scope);
  for (const std::string& file : files)
    EXPECT_EQ(scopes.count("//r/" + file), 1u) << file;
}

TEST_P(PythonSuite,
       RecordedOutcomesAreThoseOfThePlainRunAndTheTreeIsLeftAlone) {
  WriteConfig(false);
  Spawned r = Ste({"record", "--progress", "plain"});
  ASSERT_EQ(r.exit_code, 1) << "a test failed: exit 1, as the runner's\n" << r.out << r.err;
  EXPECT_NE(r.out.find("5 tests, 3 passed, 1 failed, 1 errors, 0 opaque"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("error  tests/test_broken.py"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("failed tests/test_fail.py"), std::string::npos)
      << r.out;
  // No .pytest_cache/, no __pycache__/: only ste's own store is new.
  Spawned status = Run(
      {"git", "status", "--porcelain", "--ignored", "--untracked-files=all"});
  std::istringstream in(status.out);
  for (std::string line; std::getline(in, line);) {
    EXPECT_NE(line.find(" .ste/"), std::string::npos) << line;
  }
  // Unchanged tree: only what did not pass in the baseline is selected.
  std::string mode, explain;
  EXPECT_EQ(Select(&mode, &explain), WithAlways({})) << explain;
  EXPECT_EQ(mode, "subset") << explain;
  // A second record of the unchanged tree: still nothing new.
  Record();
  EXPECT_EQ(Select(&mode, &explain), WithAlways({})) << explain;
}

// ---- the scopes the runners push
// ----------------------------------------------------

TEST_P(PythonSuite, EachFileSeesItsOwnImportsAndTheSharedSetupIsTheRoots) {
  std::string logs = MakeTempDir();
  Spawned run = Run(UnderSte(logs, Runner({"tests/test_a.py", "tests/test_b.py",
                                           "tests/test_c.py"})),
                    RunnerEnv());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::vector<LogRecord> records = Dump(logs);
  EXPECT_EQ(ScopesOf(records, "src/shared.py"), std::set<std::string>{"//r"});
  EXPECT_EQ(ScopesOf(records, kind_.shared), std::set<std::string>{"//r"});
  EXPECT_EQ(ScopesOf(records, "src/only_a.py"),
            std::set<std::string>{"//r/tests/test_a.py"});
  EXPECT_EQ(ScopesOf(records, "src/only_b.py"),
            std::set<std::string>{"//r/tests/test_b.py"});
  // Both files that import it lazily, not only the first to run.
  EXPECT_EQ(
      ScopesOf(records, "src/common_lazy.py"),
      (std::set<std::string>{"//r/tests/test_a.py", "//r/tests/test_c.py"}));
}

TEST_P(PythonSuite, CaseScopesNestBeneathTheFileScope) {
  std::string logs = MakeTempDir();
  Spawned run = Run(UnderSte(logs, Runner({"tests/test_a.py", "tests/test_b.py",
                                           "tests/test_c.py"})),
                    RunnerEnv({"STE_CASE_SCOPES=1", "STE_JOBS=2"}));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.err.find("cannot enter the scope"), std::string::npos)
      << run.err;
  std::vector<LogRecord> records = Dump(logs);
  EXPECT_EQ(
      ScopesOf(records, "src/common_lazy.py"),
      (std::set<std::string>{"//r/tests/test_a.py/" + kind_.lazy_case_a,
                             "//r/tests/test_c.py/" + kind_.lazy_case_c}));
  // Imported with the file, outside any case.
  EXPECT_EQ(ScopesOf(records, "src/only_a.py"),
            std::set<std::string>{"//r/tests/test_a.py"});
  EXPECT_EQ(ScopesOf(records, "src/shared.py"), std::set<std::string>{"//r"});
}

// ---- (b) selection after `ste record`
// --------------------------------------------------

TEST_P(PythonSuite, SelectionFollowsWhatEachFileImported) {
  WriteConfig(false);
  Record();
  EXPECT_EQ(SelectAfterEditing("src/only_b.py"),
            WithAlways({"tests/test_b.py"}));
  EXPECT_EQ(SelectAfterEditing("src/only_a.py"),
            WithAlways({"tests/test_a.py"}));
  // The forking guarantee: test_c too, though test_a imported it first.
  EXPECT_EQ(SelectAfterEditing("src/common_lazy.py"),
            WithAlways({"tests/test_a.py", "tests/test_c.py"}));
  std::string mode;
  EXPECT_EQ(SelectAfterEditing("src/shared.py", &mode), all_);
  EXPECT_EQ(mode, "all");
  EXPECT_EQ(SelectAfterEditing(kind_.shared, &mode), all_);
  EXPECT_EQ(mode, "all");
  Spawned deps = Ste({"deps", "tests/test_c.py"});
  EXPECT_NE(deps.out.find("content\tsrc/common_lazy.py\n"), std::string::npos)
      << deps.out;
  EXPECT_EQ(deps.out.find("src/only_a.py"), std::string::npos) << deps.out;
}

TEST_P(PythonSuite, EditingATestFileSelectsIt) {
  // pytest stats its arguments before any plugin runs (rootdir, initial
  // conftests, collection), in the root scope: RunBatch gives those
  // records of a test file to that test alone.
  WriteConfig(false);
  Record();
  EXPECT_EQ(SelectAfterEditing("tests/test_b.py"),
            WithAlways({"tests/test_b.py"}));
}

TEST_P(PythonSuite, WithCaseScopesSelectionIsStillPerFile) {
  WriteConfig(true);
  Record();
  EXPECT_EQ(SelectAfterEditing("src/common_lazy.py"),
            WithAlways({"tests/test_a.py", "tests/test_c.py"}));
  Spawned dump = Ste({"index", "dump", "--json"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(::ste::testing::Lines(dump.out), all_.size()) << dump.out;
}

// ---- (c) the selection handed back to the runner
// ------------------------------------

TEST_P(PythonSuite, SelectFormatRunnerIsWhatTheRunnerTakesBack) {
  WriteConfig(false);
  Record();
  W("src/only_b.py", ReadFile(root_ + "/src/only_b.py") + "# changed\n");
  Spawned runner = Ste({"select", "--format", "runner"});
  ASSERT_EQ(runner.exit_code, 0) << runner.err;
  EXPECT_EQ(runner.out,
            "tests/test_b.py tests/test_broken.py tests/test_fail.py\n")
      << runner.err;

  // The CI loop: ste select, then the runner (outside ste: plain behaviour)
  // and the framework itself on what it printed.
  const std::vector<std::string> selected = {
      "tests/test_b.py", "tests/test_broken.py", "tests/test_fail.py"};
  // (No bytecode: what one run would write would change the next selection.)
  Spawned plain = Run(Plain(selected), {"PYTHONDONTWRITEBYTECODE=1"});
  auto through_select = [&](const std::vector<std::string>& command) {
    // ste select in the environment the baseline was recorded in (Ste()'s:
    // the runner's PYTHONPATH and PYTHONDONTWRITEBYTECODE=1 are variables
    // the tests' Python read, and would select them).
    std::string script =
        "set -e; tests=$(env -u PYTHONPATH PYTHONDONTWRITEBYTECODE= \"$0\" select --format runner "
        "2>/dev/null); eval \"set -- $tests\"; exec";
    for (const std::string& word : command) script += " '" + word + "'";
    script += " \"$@\"";
    return Run({"sh", "-c", script, kSte},
               RunnerEnv({"STE_INTEGRATIONS=" + kIntegrations,
                          "PYTHONDONTWRITEBYTECODE=1"}));
  };
  for (const auto& command : {Plain({}), Runner({})}) {
    Spawned ran = through_select(command);
    EXPECT_EQ(ran.exit_code, plain.exit_code) << ran.out << ran.err;
    EXPECT_EQ(Report(ran), Report(plain));
  }
}

INSTANTIATE_TEST_SUITE_P(Python, PythonSuite,
                         ::testing::Values(kPytest, kUnittest),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                           return info.param.name == "pytest"
                                      ? std::string("Pytest")
                                      : std::string("Unittest");
                         });

}  // namespace
}  // namespace ste
