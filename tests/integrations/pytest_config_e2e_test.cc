// End to end: pytest's read of pyproject.toml as the view ste-pytest-ini
// (docs/concepts.md, "Views"): a pytest suite whose configuration is the
// [tool.pytest.ini_options] table of its pyproject.toml, recorded with the
// generic per-file runner and with kind = "pytest" (pytest's setup shared
// in the root scope), at file and definition granularity. Each edit of
// pyproject.toml is made, selected, and undone:
//   - the version, a dependency, another tool's table: only the test that
//     reads the file itself (tomllib.load(open(...))) is selected;
//   - pytest's table, a TOML syntax error: every test;
// and the ground truth: every test run alone with plain pytest after the
// edit; one whose outcome changed must be selected.
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::ReadFile;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);
const std::string kIntegrations = STE_INTEGRATIONS_DIR;
const std::string kPython = "/usr/bin/python3";  // Debian's, with pytest

struct Setup {
  std::string name;
  std::string runner;     // the [runner] table's lines
  std::string selection;  // the [selection] table's lines
};
void PrintTo(const Setup& s, std::ostream* os) { *os << s.name; }

const std::string kGenericRunner = "command = \"" + kPython + " -m pytest -p no:cacheprovider {test}\"\n";
const std::string kPytestRunner = "kind = \"pytest\"\ncommand = \"" + kPython + " -m pytest -p ste_pytest {tests}\"\n";
const Setup kGeneric = {"Generic", kGenericRunner, "granularity = \"file\"\n"};
const Setup kPytest = {"Pytest", kPytestRunner, "granularity = \"file\"\n"};
const Setup kPytestDefinitions = {"PytestDefinitions", kPytestRunner, "granularity = \"definition\"\n"};

const char kPyproject[] =
    "[project]\n"
    "name = \"geo\"\n"
    "version = \"1.0\"\n"
    "dependencies = [\"attrs>=22\"]\n"
    "\n"
    "[tool.pytest.ini_options]\n"
    "addopts = \"-q\"\n"
    "markers = [\"slow: the slow ones\"]\n"
    "\n"
    "[tool.ruff]\n"
    "line-length = 100\n";

const std::vector<std::string> kTests = {"tests/test_area.py", "tests/test_slow.py", "tests/test_version.py"};

struct Edit {
  std::string name, from, to;
  std::set<std::string> expected;  // selected
  bool outcome_changes;            // some test fails alone after it
};

class PytestConfig : public ::testing::TestWithParam<Setup> {
 protected:
  void SetUp() override {
    W("pyproject.toml", kPyproject);
    W("src/geo.py", "def area(w, h):\n    return w * h\n");
    W("tests/conftest.py",
      "import os, sys\n"
      "sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), \"src\"))\n");
    W("tests/test_area.py", "import geo\n\n\ndef test_area():\n    assert geo.area(2, 3) == 6\n");
    // --strict-markers is not set: an unknown marker only warns, a known
    // one nothing. Filter warnings into errors to give the marker teeth.
    W("tests/test_slow.py",
      "import pytest\n\n\n@pytest.mark.slow\ndef test_slow(pytestconfig):\n"
      "    assert 'slow: the slow ones' in pytestconfig.getini('markers')\n");
    W("tests/test_version.py",
      "import os, tomllib\n\n\ndef test_version():\n"
      "    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n"
      "    with open(os.path.join(root, 'pyproject.toml'), 'rb') as f:\n"
      "        assert tomllib.load(f)['project']['version'] == '1.0'\n");
    W("ste.toml", "[tests]\ninclude = [\"tests/test_*.py\"]\n[runner]\n" + GetParam().runner +
                      "[inventory]\nignore = [\"**/__pycache__/**\"]\n[selection]\n" + GetParam().selection);
    ::ste::testing::InitGitRepo(root_);
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "suite"});
    Spawned r = Ste({"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    ASSERT_NE(r.out.find("3 tests, 3 passed"), std::string::npos) << r.out << r.err;
  }

  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  void Git(const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(root_, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {"STE_INTEGRATIONS=" + kIntegrations, "PYTHONDONTWRITEBYTECODE=1"}, root_);
  }
  // Edits pyproject.toml, selects, runs every test alone (plain pytest),
  // and puts the file back.
  std::set<std::string> Apply(const Edit& e, std::set<std::string>* failing, std::string* explain) {
    const std::string path = root_ + "/pyproject.toml";
    std::string text = ReadFile(path);
    const size_t at = text.find(e.from);
    EXPECT_NE(at, std::string::npos) << e.from;
    if (at != std::string::npos) text.replace(at, e.from.size(), e.to);
    WriteFile(path, text);
    Spawned s = Ste({"select", "--explain"});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    *explain = s.out + s.err;
    for (const std::string& t : kTests) {
      Spawned alone = Spawn({kPython, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", t},
                            {"PYTHONDONTWRITEBYTECODE=1"}, root_);
      if (alone.exit_code != 0) failing->insert(t);
    }
    WriteFile(path, kPyproject);
    return ::ste::testing::SelectedTests(s.out);
  }

  std::string root_ = MakeTempDir();
};

TEST_P(PytestConfig, OnlyPytestsTableSelectsEveryTest) {
  const std::set<std::string> all(kTests.begin(), kTests.end());
  const std::vector<Edit> edits = {
      {"the version", "version = \"1.0\"", "version = \"1.1\"", {"tests/test_version.py"}, true},
      {"a dependency", "attrs>=22", "attrs>=23", {"tests/test_version.py"}, false},
      {"another tool's table", "line-length = 100", "line-length = 88", {"tests/test_version.py"}, false},
      {"pytest's table", "markers = [\"slow: the slow ones\"]", "markers = [\"slow: slow\"]", all, true},
      {"a syntax error", "[tool.ruff]", "[tool.ruff", all, true},
  };
  for (const Edit& e : edits) {
    SCOPED_TRACE(e.name);
    std::set<std::string> failing;
    std::string explain;
    const std::set<std::string> selected = Apply(e, &failing, &explain);
    EXPECT_EQ(selected, e.expected) << explain;
    for (const std::string& t : failing) EXPECT_EQ(selected.count(t), 1u) << t << " fails but was not selected";
    EXPECT_EQ(!failing.empty(), e.outcome_changes) << "the edit was meant " << (e.outcome_changes ? "" : "not ")
                                                   << "to fail a test";
    if (e.expected == all && e.name == "pytest's table") {
      EXPECT_NE(explain.find("pyproject.toml: its [tool.pytest] table (what pytest reads of it) changed"),
                std::string::npos)
          << explain;
    }
  }
  // The test that reads the file depends on all of it; the others on the
  // view alone.
  Spawned deps = Ste({"deps", "tests/test_area.py"});
  EXPECT_NE(deps.out.find("pyproject.toml/\\x01ste-pytest-ini"), std::string::npos) << deps.out;
  EXPECT_EQ(deps.out.find("content\tpyproject.toml\n"), std::string::npos) << deps.out;
  deps = Ste({"deps", "tests/test_version.py"});
  EXPECT_NE(deps.out.find("content\tpyproject.toml\n"), std::string::npos) << deps.out;
}

INSTANTIATE_TEST_SUITE_P(Python, PytestConfig, ::testing::Values(kGeneric, kPytest, kPytestDefinitions),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ste
