// End to end: test cases as the unit of selection (`[tests] unit = "case"`,
// docs/concepts.md "Test cases", issue 24 item 4) on a small suite recorded
// with kind = "pytest" and kind = "unittest" at definition granularity.
//
// Each change below is made, selected, and undone; the selection must be
// exactly the expected one: a function only one case ran selects that
// case, and every case that ran after it in its file (they see the state
// it leaves: an lru_cache'd helper that ran in one case and is only looked
// up in the next); module-level code, a module-wide fixture (pytest's
// module-scoped fixture, unittest's setUpModule), a class's setup
// (setup_class, setUpClass), and a new
// case select whole files, as does every change when a plugin reorders
// the cases (the next run's order may differ). Then the ground truth: every case run alone,
// without ste (pytest with its node id), after the change; a case that
// fails must be selected, as itself or with its whole file. And the
// `--format runner` line runs the selected cases under the runner.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "definition_suite.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;

const std::string kIntegrations = STE_INTEGRATIONS_DIR;
const std::string kPython = "/usr/bin/python3";  // Debian's, with pytest

struct Setup {
  std::string name;
  std::string runner;  // the [runner] table's lines
  bool unittest = false;
};
void PrintTo(const Setup& s, std::ostream* os) { *os << s.name; }

const Setup kPytest = {"Pytest",
                       "kind = \"pytest\"\ncommand = \"" + kPython + " -m pytest -q -p ste_pytest {tests}\"\n"};
const Setup kUnittest = {"Unittest",
                         "kind = \"unittest\"\ncommand = \"" + kPython +
                             " $STE_INTEGRATIONS/python/ste_unittest.py {tests}\"\n",
                         true};

const char kHelpers[] =
    "import functools\n"
    "\n"
    "BASE = 0\n"
    "\n"
    "\n"
    "def zero():\n"
    "    return BASE\n"
    "\n"
    "\n"
    "@functools.lru_cache(maxsize=None)\n"
    "def cached():\n"
    "    return 10\n"
    "\n"
    "\n"
    "def fixture_value():\n"
    "    return 5\n"
    "\n"
    "\n"
    "def class_value():\n"
    "    return 7\n"
    "\n"
    "\n"
    "def own():\n"
    "    return 1\n"
    "\n"
    "\n"
    "def j_only():\n"
    "    return 8\n";

const char kLazy[] =
    "def _seed():\n"
    "    return 5\n"
    "\n"
    "\n"
    "SEED = _seed()  # run by the import, in the case that imports first\n"
    "\n"
    "\n"
    "def value():\n"
    "    return 3\n";

// The cases of each file in the order they run (unittest sorts a class's
// methods by name, pytest keeps the file's order: the names agree).
const char kPytestOne[] =
    "import pytest\n"
    "from lib import helpers\n"
    "\n"
    "\n"
    "@pytest.fixture(scope=\"module\")\n"
    "def modfix():\n"
    "    return helpers.fixture_value()\n"
    "\n"
    "\n"
    "def test_a_zero():\n"
    "    assert helpers.zero() == 0\n"
    "\n"
    "\n"
    "def test_b_cached():\n"
    "    assert helpers.cached() == 10\n"
    "\n"
    "\n"
    "def test_c_lookup():\n"  // only a cache hit: cached() does not run here
    "    assert helpers.cached() == 10\n"
    "\n"
    "\n"
    "def test_d_mod(modfix):\n"
    "    assert modfix == 5\n"
    "\n"
    "\n"
    "def test_e_own():\n"
    "    assert helpers.own() == 1\n";

const char kPytestTwo[] =
    "from lib import helpers\n"
    "\n"
    "\n"
    "class TestK:\n"
    "    @classmethod\n"
    "    def setup_class(cls):\n"
    "        cls.k = helpers.class_value()\n"
    "\n"
    "    def test_a_k(self):\n"
    "        assert self.k == 7\n"
    "\n"
    "    def test_b_j(self):\n"
    "        assert helpers.j_only() == 8\n";

const char kUnittestOne[] =
    "import unittest\n"
    "from lib import helpers\n"
    "\n"
    "\n"
    "def setUpModule():\n"
    "    global MOD\n"
    "    MOD = helpers.fixture_value()\n"
    "\n"
    "\n"
    "class TestOne(unittest.TestCase):\n"
    "    def test_a_zero(self):\n"
    "        self.assertEqual(helpers.zero(), 0)\n"
    "\n"
    "    def test_b_cached(self):\n"
    "        self.assertEqual(helpers.cached(), 10)\n"
    "\n"
    "    def test_c_lookup(self):\n"
    "        self.assertEqual(helpers.cached(), 10)\n"
    "\n"
    "    def test_d_mod(self):\n"
    "        self.assertEqual(MOD, 5)\n"
    "\n"
    "    def test_e_own(self):\n"
    "        self.assertEqual(helpers.own(), 1)\n";

const char kUnittestTwo[] =
    "import unittest\n"
    "from lib import helpers\n"
    "\n"
    "\n"
    "class TestK(unittest.TestCase):\n"
    "    @classmethod\n"
    "    def setUpClass(cls):\n"
    "        cls.k = helpers.class_value()\n"
    "\n"
    "    def test_a_k(self):\n"
    "        self.assertEqual(self.k, 7)\n"
    "\n"
    "    def test_b_j(self):\n"
    "        self.assertEqual(helpers.j_only(), 8)\n";

// test_b_imports imports lib.lazy first (its module code runs there, and
// _seed(): both are cached for test_c_uses, which reads SEED only).
const char kPytestThree[] =
    "def test_a_before():\n"
    "    assert True\n"
    "\n"
    "\n"
    "def test_b_imports():\n"
    "    from lib import lazy\n"
    "    assert lazy.value() == 3\n"
    "\n"
    "\n"
    "def test_c_uses():\n"
    "    from lib import lazy\n"
    "    assert lazy.SEED == 5\n";

const char kUnittestThree[] =
    "import unittest\n"
    "\n"
    "\n"
    "class TestL(unittest.TestCase):\n"
    "    def test_a_before(self):\n"
    "        pass\n"
    "\n"
    "    def test_b_imports(self):\n"
    "        from lib import lazy\n"
    "        self.assertEqual(lazy.value(), 3)\n"
    "\n"
    "    def test_c_uses(self):\n"
    "        from lib import lazy\n"
    "        self.assertEqual(lazy.SEED, 5)\n";

class Cases : public ::ste::testing::DefinitionSuiteTest<Setup> {
 protected:
  void SetUp() override {
    const bool u = GetParam().unittest;
    W("lib/__init__.py", "");
    W("lib/helpers.py", kHelpers);
    W("lib/lazy.py", kLazy);
    W("tests/test_one.py", u ? kUnittestOne : kPytestOne);
    W("tests/test_two.py", u ? kUnittestTwo : kPytestTwo);
    W("tests/test_three.py", u ? kUnittestThree : kPytestThree);
    all_ = {"tests/test_one.py", "tests/test_two.py", "tests/test_three.py"};
    for (const char* c : {"test_a_zero", "test_b_cached", "test_c_lookup", "test_d_mod", "test_e_own"}) {
      cases_.push_back(Case("tests/test_one.py", u ? "TestOne" : "", c));
    }
    for (const char* c : {"test_a_k", "test_b_j"}) cases_.push_back(Case("tests/test_two.py", "TestK", c));
    for (const char* c : {"test_a_before", "test_b_imports", "test_c_uses"}) {
      cases_.push_back(Case("tests/test_three.py", u ? "TestL" : "", c));
    }
    ::ste::testing::InitGitRepo(root_);
    ste_env_ = {"STE_INTEGRATIONS=" + kIntegrations, "PYTHONDONTWRITEBYTECODE=1"};
    Configure("[tests]\ninclude = [\"tests/test_*.py\"]\nunit = \"case\"\n[runner]\n" + GetParam().runner +
              "[inventory]\nignore = [\"**/__pycache__/**\"]\n[selection]\ngranularity = \"definition\"\n");
  }

  // A case as `ste select` prints it: pytest's node id, or ste_unittest's
  // <file>::<Class.test>.
  std::string Case(const std::string& file, const std::string& cls, const std::string& test) const {
    if (cls.empty()) return file + "::" + test;
    return file + "::" + cls + (GetParam().unittest ? "." : "::") + test;
  }
  // Its pytest node id (pytest runs unittest's cases too).
  static std::string NodeId(std::string c) {
    const size_t sep = c.find("::");
    for (size_t dot = c.find('.', sep); dot != std::string::npos; dot = c.find('.', dot)) c.replace(dot, 1, "::");
    return c;
  }

  Spawned RunAlone(const std::string& test) override {
    return Spawn({kPython, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", NodeId(test)},
                 {"PYTHONDONTWRITEBYTECODE=1"}, root_);
  }

  // Makes the change, selects, checks the ground truth (every case that
  // fails alone is selected, as itself or with its file), undoes it.
  std::set<std::string> Change(const std::string& name, const std::string& rel, const std::string& from,
                               const std::string& to, bool fails) {
    return EditCases(name, rel, from, to, fails, cases_,
                     [](const std::string& c) { return c.substr(0, c.find("::")); });
  }

  std::vector<std::string> cases_;  // every case, in run order per file
};

TEST_P(Cases, AChangeToWhatOnlyOneCaseRanSelectsThatCase) {
  EXPECT_EQ(Change("own", "lib/helpers.py", "return 1\n", "return 0\n", true),
            std::set<std::string>{cases_[4]})
      << last_err_;
  EXPECT_NE(last_err_.find("ste select: 1 test files selected: 0 whole, 1 as 1 cases\n"), std::string::npos)
      << last_err_;
  EXPECT_EQ(Change("setup's neighbour", "lib/helpers.py", "return 8\n", "return 0\n", true),
            std::set<std::string>{cases_[6]})
      << last_err_;
}

// A distributed record (`ste scheduler`, a `ste worker`, `ste record
// --scheduler`) keeps the cases as the embedded one does: CreateBuild
// asks for them (ste.toml's tests.unit), and the same change selects the
// same one case.
TEST_P(Cases, ADistributedRecordKeepsTheCases) {
  const std::string dir = MakeTempDir();
  ::ste::testing::SchedulerProcess server(ste_, "sqlite:" + root_ + "/.ste/ste.db", dir);
  ASSERT_FALSE(server.address().empty()) << server.process().err();
  ::ste::testing::Process worker({ste_, "worker", "--scheduler", server.address(), "-j", "1"}, ste_env_, root_,
                                 dir + "/worker.out", dir + "/worker.err");
  Spawned r = Ste({"record", "--scheduler", server.address(), "--wait", "--progress", "none"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << worker.err();
  EXPECT_EQ(worker.Wait(60), 0) << worker.err();
  ASSERT_NE(r.out.find("baseline 2 "), std::string::npos) << r.out;
  EXPECT_EQ(Change("own", "lib/helpers.py", "return 1\n", "return 0\n", true),
            std::set<std::string>{cases_[4]})
      << last_err_;
  EXPECT_NE(last_err_.find("(baseline 2, "), std::string::npos) << last_err_;
  // The scheduler's selection hands the same case back.
  const std::string path = root_ + "/lib/helpers.py";
  const std::string before = ::ste::testing::ReadFile(path);
  std::string after = before;
  after.replace(after.find("return 1\n"), 9, "return 0\n");
  ::ste::testing::WriteFile(path, after);
  Spawned local = Ste({"select"});
  Spawned remote = Ste({"select", "--scheduler", server.address()});
  ::ste::testing::WriteFile(path, before);
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(remote.out, local.out) << remote.err;
  EXPECT_EQ(::ste::testing::SelectedTests(remote.out), std::set<std::string>{cases_[4]}) << remote.out;
}

// test_c_lookup finds cached()'s value in the cache test_b_cached filled:
// a change to cached() selects test_b_cached and every case after it.
TEST_P(Cases, AChangeToACaseSelectsTheCasesThatRanAfterIt) {
  EXPECT_EQ(Change("lru_cache", "lib/helpers.py", "return 10\n", "return 11\n", true),
            (std::set<std::string>{cases_[1], cases_[2], cases_[3], cases_[4]}))
      << last_err_;
}

TEST_P(Cases, SharedSetupSelectsTheWholeFile) {
  EXPECT_EQ(Change("module-level code", "lib/helpers.py", "BASE = 0\n", "BASE = 0\nassert BASE == 0\n", false),
            (std::set<std::string>{"tests/test_one.py", "tests/test_two.py"}))
      << last_err_;
  EXPECT_EQ(Change("module-wide fixture", "lib/helpers.py", "return 5\n", "return 6\n", true),
            std::set<std::string>{"tests/test_one.py"})
      << last_err_;
  EXPECT_EQ(Change("class setup", "lib/helpers.py", "return 7\n", "return 0\n", true),
            std::set<std::string>{"tests/test_two.py"})
      << last_err_;
  // test_b_imports imported lazy first: what the import ran (_seed()) is
  // its own, and lazy stays imported for test_c_uses, which reads SEED
  // only. A change to it selects test_b_imports and every case after it
  // (not test_a_before): test_c_uses fails (the ground truth checks it).
  const std::string three = GetParam().unittest ? "tests/test_three.py::TestL." : "tests/test_three.py::";
  EXPECT_EQ(Change("run by an earlier case's import", "lib/lazy.py", "return 5\n", "return 6\n", true),
            (std::set<std::string>{three + "test_b_imports", three + "test_c_uses"}))
      << last_err_;
  EXPECT_EQ(Change("run by the importing case", "lib/lazy.py", "return 3\n", "return 4\n", true),
            (std::set<std::string>{three + "test_b_imports", three + "test_c_uses"}))
      << last_err_;
  // A new case edits its file's module-level code.
  const bool u = GetParam().unittest;
  EXPECT_EQ(Change("new case", "tests/test_one.py", u ? "    def test_a_zero" : "def test_a_zero",
                   u ? "    def test_0_new(self):\n        pass\n\n    def test_a_zero"
                     : "def test_0_new():\n    assert True\n\n\ndef test_a_zero",
                   false),
            std::set<std::string>{"tests/test_one.py"})
      << last_err_;
}

// A plugin that reorders a file's cases (pytest-randomly's shuffle; here
// a conftest.py reversing them) may order them otherwise next run: the
// order ste selects by is not the runner's, so no file has cases.
TEST_P(Cases, ReorderedCasesLeaveTheirFileWhole) {
  if (GetParam().unittest) GTEST_SKIP() << "a pytest plugin's doing";
  W("tests/conftest.py", "def pytest_collection_modifyitems(items):\n    items.reverse()\n");
  Configure(::ste::testing::ReadFile(root_ + "/ste.toml"));
  EXPECT_EQ(Change("own", "lib/helpers.py", "return 1\n", "return 0\n", true),
            std::set<std::string>{"tests/test_one.py"})
      << last_err_;
  EXPECT_EQ(Change("lru_cache", "lib/helpers.py", "return 10\n", "return 11\n", true),
            std::set<std::string>{"tests/test_one.py"})
      << last_err_;
}

// `--format runner` hands the cases to the runner, which runs them.
TEST_P(Cases, TheRunnerLineRunsTheSelectedCases) {
  const std::string path = root_ + "/lib/helpers.py";
  const std::string before = ::ste::testing::ReadFile(path);
  std::string after = before;
  after.replace(after.find("return 10\n"), 10, "return 11\n");
  ::ste::testing::WriteFile(path, after);
  Spawned line = Ste({"select", "--format", "runner"});
  ASSERT_EQ(line.exit_code, 0) << line.err;
  for (size_t i = 1; i <= 4; i++) EXPECT_NE(line.out.find(cases_[i]), std::string::npos) << line.out;
  EXPECT_EQ(line.out.find(cases_[0]), std::string::npos) << line.out;
  const std::string runner = GetParam().unittest ? kPython + " -B " + kIntegrations + "/python/ste_unittest.py "
                                                 : kPython + " -B -m pytest -p no:cacheprovider ";
  Spawned run = Spawn({"/bin/sh", "-c", runner + line.out}, {"PYTHONDONTWRITEBYTECODE=1"}, root_);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const std::string all = run.out + run.err;
  if (GetParam().unittest) {
    EXPECT_NE(all.find("Ran 4 tests"), std::string::npos) << all;
    EXPECT_NE(all.find("FAILED (failures=2)"), std::string::npos) << all;
  } else {
    EXPECT_NE(all.find("2 failed, 2 passed"), std::string::npos) << all;
  }
  ::ste::testing::WriteFile(path, before);
}

INSTANTIATE_TEST_SUITE_P(Python, Cases, ::testing::Values(kPytest, kUnittest),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ste
