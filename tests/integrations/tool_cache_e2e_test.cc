// Issue 11, item 4: the caches tools write into the tree are not changes.
// A real pytest suite (six test files, a src/ package, one module that is
// a sourceless .pyc) recorded with a plain per-file pytest command, caches
// enabled as users have them (no -p no:cacheprovider, bytecode written);
// then pytest run plainly over the whole suite, as developers do between
// commits (it writes .pytest_cache/ and __pycache__/), and selected.
#include <sys/stat.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);
const std::string kPython = "/usr/bin/python3";  // Debian's, with pytest
// Bytecode written wherever this test runs (an empty value is unset for
// CPython), and into __pycache__/ beside the sources.
const std::vector<std::string> kCachesOn = {"PYTHONDONTWRITEBYTECODE=", "PYTHONPYCACHEPREFIX="};

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

class ToolCaches : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    W("src/pkg/__init__.py", "");
    for (int i = 1; i <= 5; i++) {
      std::string n = std::to_string(i);
      W("src/pkg/mod" + n + ".py", absl::StrCat("def f", n, "(x):\n    return x + ", n, "\n"));
      W("tests/test_mod" + n + ".py",
        absl::StrCat("from pkg.mod", n, " import f", n, "\n\n\ndef test_f", n, "():\n    assert f",
                     n, "(1) == ", i + 1, "\n"));
      all_.insert("tests/test_mod" + n + ".py");
    }
    // A sourceless module: src/legacy.pyc, no legacy.py anywhere. It is
    // code, not a cache: a dependency like any source.
    CompileLegacy(1);
    W("tests/test_legacy.py",
      "import legacy\n\n\ndef test_legacy():\n    assert legacy.VALUE > 0\n");
    all_.insert("tests/test_legacy.py");
    W("pytest.ini", "[pytest]\npythonpath = src\n");
    ::ste::testing::InitGitRepo(root_);
    for (std::vector<std::string> git : {std::vector<std::string>{"add", "-A"},
                                         std::vector<std::string>{"commit", "-q", "-m", "init"}}) {
      Spawned s = ::ste::testing::Git(root_, git);
      ASSERT_EQ(s.exit_code, 0) << s.err;
    }
  }

  void W(const std::string& rel, const std::string& content) {
    WriteFile(root_ + "/" + rel, content);
  }
  // src/legacy.pyc with VALUE = value, compiled from a source outside the
  // repository.
  void CompileLegacy(int value) {
    std::string source = MakeTempDir() + "/legacy.py";
    WriteFile(source, absl::StrCat("VALUE = ", value, "\n"));
    Spawned c = Spawn({kPython, "-c",
                       "import py_compile, sys; py_compile.compile(sys.argv[1], "
                       "cfile=sys.argv[2], doraise=True)",
                       source, root_ + "/src/legacy.pyc"});
    ASSERT_EQ(c.exit_code, 0) << c.err;
  }
  // ste.toml (not committed: selection compares the tree): the plain
  // per-file command, and `inventory` as given.
  void Configure(const std::string& inventory) {
    W("ste.toml", "[tests]\ninclude = [\"tests/test_*.py\"]\n[runner]\ncommand = \"" + kPython +
                      " -m pytest -q {test}\"\n" + inventory);
  }
  void Record() {
    Spawned r = Spawn({kSte, "record", "--progress", "none"}, kCachesOn, root_);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  // pytest over the whole suite, as a developer runs it.
  void PlainPytest(int want_exit = 0) {
    Spawned p = Spawn({kPython, "-m", "pytest", "-q"}, kCachesOn, root_);
    ASSERT_EQ(p.exit_code, want_exit) << p.out << p.err;
  }
  // The selected tests; *mode and *explain filled in.
  std::set<std::string> Select(std::string* mode, std::string* explain) {
    Spawned s = Spawn({kSte, "select", "--explain"}, kCachesOn, root_);
    EXPECT_EQ(s.exit_code, 0) << s.err;
    size_t at = s.err.find("mode ");
    *mode = at == std::string::npos ? "" : s.err.substr(at + 5, s.err.find(':', at) - at - 5);
    *explain = s.err + s.out;
    return ::ste::testing::SelectedTests(s.out);
  }

  std::string root_;
  std::set<std::string> all_;
};

TEST_F(ToolCaches, APlainPytestRunChangesNothingAndAnEditSelectsItsTest) {
  Configure("");
  Record();
  // Between commits: a source broken and pytest run (lastfailed written),
  // the source put back and pytest run again (lastfailed rewritten).
  const std::string mod2 = ::ste::testing::ReadFile(root_ + "/src/pkg/mod2.py");
  W("src/pkg/mod2.py", "def f2(x):\n    return x\n");
  PlainPytest(1);
  W("src/pkg/mod2.py", mod2);
  PlainPytest();
  ASSERT_TRUE(Exists(root_ + "/.pytest_cache/v/cache/lastfailed"));
  ASSERT_TRUE(Exists(root_ + "/src/pkg/__pycache__"));
  ASSERT_TRUE(Exists(root_ + "/tests/__pycache__"));

  std::string mode, explain;
  EXPECT_EQ(Select(&mode, &explain), std::set<std::string>{}) << explain;
  EXPECT_EQ(mode, "none") << explain;

  W("src/pkg/mod3.py", "def f3(x):\n    return x + 30\n");
  EXPECT_EQ(Select(&mode, &explain), std::set<std::string>{"tests/test_mod3.py"}) << explain;
  EXPECT_EQ(mode, "subset") << explain;
  EXPECT_NE(explain.find("  <- src/pkg/mod3.py::f3 changed"), std::string::npos)
      << "the default granularity: the function the test ran\n" << explain;
}

TEST_F(ToolCaches, ASourcelessPycIsCodeAndStaysADependency) {
  Configure("");
  Record();
  PlainPytest();
  CompileLegacy(2);
  std::string mode, explain;
  EXPECT_EQ(Select(&mode, &explain), std::set<std::string>{"tests/test_legacy.py"}) << explain;
  EXPECT_NE(explain.find("  <- src/legacy.pyc (content modified)"), std::string::npos) << explain;
}

TEST_F(ToolCaches, TheUsersOwnIgnoreStillWorks) {
  Configure("[inventory]\nignore = [\"reports/**\"]\n");
  Record();
  PlainPytest();
  W("reports/junit.xml", "<testsuite/>\n");
  std::string mode, explain;
  EXPECT_EQ(Select(&mode, &explain), std::set<std::string>{}) << explain;
  EXPECT_EQ(mode, "none") << explain;
  Spawned inventory = Spawn({kSte, "inventory"}, {}, root_);
  ASSERT_EQ(inventory.exit_code, 0) << inventory.err;
  for (const char* hidden : {"reports", ".pytest_cache", "__pycache__"}) {
    EXPECT_EQ(inventory.out.find(hidden), std::string::npos) << hidden << "\n" << inventory.out;
  }
  // What is not ignored still counts: a note at the root selects nothing
  // (no test looked for its name), a conftest.py there every test (pytest
  // looked for it in every test).
  W("notes.txt", "x\n");
  EXPECT_EQ(Select(&mode, &explain), std::set<std::string>{}) << explain;
  W("conftest.py", "");
  EXPECT_EQ(Select(&mode, &explain), all_) << explain;
}

TEST_F(ToolCaches, TurnedOffTheCachesAreChangesAgain) {
  // Today's behaviour before issue 11: a plain run selects every test.
  Configure("[inventory]\ntool_caches = false\n");
  Record();
  PlainPytest();
  std::string mode, explain;
  EXPECT_EQ(Select(&mode, &explain), all_) << explain;
  EXPECT_EQ(mode, "all") << explain;
  EXPECT_NE(explain.find(".pytest_cache"), std::string::npos) << explain;
  // Trimmed to the bytecode: .pytest_cache is inventoried, __pycache__ not.
  Configure("[inventory]\ntool_caches = [\"python\"]\n");
  Spawned inventory = Spawn({kSte, "inventory"}, {}, root_);
  EXPECT_NE(inventory.out.find(".pytest_cache/v/cache/nodeids"), std::string::npos)
      << inventory.out;
  EXPECT_EQ(inventory.out.find("__pycache__"), std::string::npos) << inventory.out;
}

}  // namespace
}  // namespace ste
