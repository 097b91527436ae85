// End to end: Python imports recorded as the names they looked for
// (runner.python_imports = "names", integrations/python/ste_site): a
// generated pytest suite of 22 test files is recorded with the generic
// per-file runner and with kind = "pytest", files are added, and each
// selection must be the tests whose imports could now resolve differently.
//
// The suite (pytest.ini `pythonpath = . src`: the root is ahead of src/ on
// sys.path, so a module at the root shadows one in src/):
//   src/app/{core,util,fmt,calc,store}.py  imported by every test, one each
//   src/helpers.py        imported by the tests whose number n % 7 == 0 (3)
//   src/nspkg/portion.py  a namespace package (no __init__.py): n % 6 == 0 (3)
//   colorsys (stdlib)     imported by the tests with n % 8 == 5 (3)
//   src/unused_pkg/       a regular package no test imports
//   tests/conftest.py     a fixture every test uses
//   tests/test_*.py (8), tests/sub1/test_*.py (7), tests/sub2/test_*.py (7)
//
// With `python3 -m pytest` the working directory (the root) is sys.path[0]
// when pytest loads its plugins, and importlib.metadata scans it for
// *.dist-info: the hook records that scan as a view (`\x01ste-entry-points:
// pytest11`, `\x01ste-dists`), not as a listing, so a note file at the root
// selects nothing; `python3 -P -m pytest` (3.11: no cwd on sys.path) the
// same. Nothing of the repository is listed in either (`ste deps`).
#include <unistd.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);
const std::string kIntegrations = STE_INTEGRATIONS_DIR;
const std::string kPython = "/usr/bin/python3";  // Debian's, with pytest

struct Setup {
  std::string name;
  std::string runner;     // the [runner] table's lines
  bool batch;             // kind = "pytest": pytest's setup is shared
  bool root_on_sys_path;  // python3 -m: importlib.metadata scans the root (a view)
  bool names;             // runner.python_imports
  std::string selection = "granularity = \"file\"\n";  // the [selection] table's lines
};

void PrintTo(const Setup& s, std::ostream* os) { *os << s.name; }

const Setup kGeneric = {"Generic",
                        "command = \"" + kPython + " -m pytest -q -p no:cacheprovider {test}\"\n",
                        false, true, true};
const Setup kPytest = {"Pytest",
                       "kind = \"pytest\"\ncommand = \"" + kPython +
                           " -m pytest -q -p ste_pytest {tests}\"\n",
                       true, true, true};
const Setup kGenericSafePath = {
    "GenericSafePath",
    "command = \"" + kPython + " -P -m pytest -q -p no:cacheprovider {test}\"\n", false, false,
    true};
const Setup kPytestSafePath = {"PytestSafePath",
                               "kind = \"pytest\"\ncommand = \"" + kPython +
                                   " -P -m pytest -q -p ste_pytest {tests}\"\n",
                               true, false, true};
const Setup kGenericListing = {"GenericListing",
                               "command = \"" + kPython +
                                   " -m pytest -q -p no:cacheprovider {test}\"\n"
                                   "python_imports = \"listing\"\n",
                               false, true, false};
// The same at definition granularity (issue 12): what an added file can
// change does not depend on it.
const Setup kGenericDefinitions = {"GenericDefinitions", kGeneric.runner, false, true, true,
                                   "granularity = \"definition\"\n"};
const Setup kPytestDefinitions = {"PytestDefinitions", kPytest.runner, true, true, true,
                                  "granularity = \"definition\"\n"};

constexpr int kTests = 22;
const char* const kAppModules[] = {"core", "util", "fmt", "calc", "store"};

// Test file number n (1..22): its path.
std::string TestPath(int n) {
  if (n <= 8) return "tests/test_top_" + std::to_string(n) + ".py";
  if (n <= 15) return "tests/sub1/test_one_" + std::to_string(n) + ".py";
  return "tests/sub2/test_two_" + std::to_string(n) + ".py";
}
bool ImportsHelpers(int n) { return n % 7 == 0; }
bool ImportsNspkg(int n) { return n % 6 == 0; }
bool ImportsColorsys(int n) { return n % 8 == 5; }

// `ste select --explain`: each selected test and its reasons ("<path> (<why>)").
using Explained = std::map<std::string, std::set<std::string>>;

Explained ParseExplain(const std::string& out) {
  Explained tests;
  std::istringstream in(out);
  std::string line, current;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] != ' ') {
      current = line;
      tests[current];
    } else if (line.rfind("  <- ", 0) == 0 && !current.empty()) {
      tests[current].insert(line.substr(5));
    }
  }
  return tests;
}

std::set<std::string> Names(const Explained& e) {
  std::set<std::string> out;
  for (const auto& [test, reasons] : e) out.insert(test);
  return out;
}

class PythonImports : public ::testing::TestWithParam<Setup> {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    W("pytest.ini", "[pytest]\npythonpath = . src\n");
    W("src/app/__init__.py", "");
    for (const char* m : kAppModules) W(std::string("src/app/") + m + ".py", std::string("NAME = \"") + m + "\"\n");
    W("src/helpers.py", "def where():\n    return \"src\"\n");
    W("src/nspkg/portion.py", "PORTION = 1\n");
    W("src/unused_pkg/__init__.py", "");
    W("src/unused_pkg/thing.py", "THING = 1\n");
    W("tests/conftest.py", "import pytest\n\n\n@pytest.fixture\ndef one():\n    return 1\n");
    for (int n = 1; n <= kTests; n++) {
      const std::string m = kAppModules[n % 5];
      std::string text = "from app import " + m + "\n";
      std::string checks = "    assert " + m + ".NAME == \"" + m + "\" and one == 1\n";
      if (ImportsHelpers(n)) {
        text += "import helpers\n";
        checks += "    assert helpers.where() == \"src\"\n";
      }
      if (ImportsNspkg(n)) {
        text += "from nspkg import portion\n";
        checks += "    assert portion.PORTION == 1\n";
      }
      if (ImportsColorsys(n)) {
        text += "import colorsys\n";
        checks += "    assert colorsys.rgb_to_hsv(0, 0, 0) == (0, 0, 0)\n";
      }
      W(TestPath(n), text + "\n\ndef test_it(one):\n" + checks);
      all_.insert(TestPath(n));
    }
    // The user's site-packages (PYTHONUSERBASE), where `pip install --user`
    // puts packages: already holding one, as a real one would.
    userbase_ = MakeTempDir();
    user_site_ = userbase_ + "/lib/python" + PythonVersion() + "/site-packages";
    WriteFile(user_site_ + "/already/__init__.py", "");
    WriteFile(user_site_ + "/already-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: already\nVersion: 1.0\n");
    W("ste.toml", "[tests]\ninclude = [\"tests/**/test_*.py\"]\n[runner]\n" + GetParam().runner +
                      "[inventory]\nignore = [\"**/__pycache__/**\"]\n[selection]\n" + GetParam().selection);
    ::ste::testing::InitGitRepo(root_);
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "suite"});
    Spawned r = Ste({"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    ASSERT_NE(r.out.find("22 tests, 22 passed, 0 failed, 0 errors, 0 opaque"), std::string::npos)
        << r.out << r.err;
    ASSERT_EQ(Select(), Explained{}) << "an unchanged tree selects nothing";
  }

  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  void Git(const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(root_, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args,
                 {"STE_INTEGRATIONS=" + kIntegrations, "PYTHONDONTWRITEBYTECODE=",
                  "PYTHONUSERBASE=" + userbase_},
                 root_);
  }
  static std::string PythonVersion() {
    Spawned v = Spawn({kPython, "-c", "import sys; print('%d.%d' % sys.version_info[:2], end='')"});
    return v.out;
  }
  // Writes `files` (path under the user site -> content), selects, removes them.
  Explained SelectAfterInstalling(const std::map<std::string, std::string>& files) {
    for (const auto& [rel, content] : files) WriteFile(user_site_ + "/" + rel, content);
    Explained e = Select();
    for (const auto& [rel, content] : files) {
      EXPECT_EQ(unlink((user_site_ + "/" + rel).c_str()), 0) << rel;
      for (std::string dir = rel; dir.find('/') != std::string::npos;) {
        dir = dir.substr(0, dir.rfind('/'));
        rmdir((user_site_ + "/" + dir).c_str());  // once empty
      }
    }
    return e;
  }
  Explained Select() {
    Spawned s = Ste({"select", "--explain"});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    return ParseExplain(s.out);
  }
  // Adds `rel`, selects, removes it.
  Explained SelectAfterAdding(const std::string& rel, const std::string& content = "X = 1\n") {
    W(rel, content);
    Explained e = Select();
    EXPECT_EQ(unlink((root_ + "/" + rel).c_str()), 0) << rel;
    return e;
  }
  std::set<std::string> Tests(bool (*pred)(int)) const {
    std::set<std::string> out;
    for (int n = 1; n <= kTests; n++) {
      if (pred(n)) out.insert(TestPath(n));
    }
    return out;
  }
  // The root's own listing is what selects `test`, and nothing else does.
  static bool OnlyTheRootListing(const std::set<std::string>& reasons) {
    return reasons == std::set<std::string>{". (listing changed)"};
  }
  // A file that no import could find: with the root listed (python3 -m),
  // only that listing selects, else nothing or next to nothing.
  void ExpectNoImportSelects(const Explained& e, bool in_root) {
    if (in_root && !GetParam().names) {
      for (const auto& [test, reasons] : e) EXPECT_TRUE(OnlyTheRootListing(reasons)) << test;
    } else {
      EXPECT_LE(e.size(), 2u) << ::testing::PrintToString(Names(e));
    }
  }
  // A file an import finds first: every test making that import, because
  // of it; with the root not listed, those tests only.
  void ExpectSelectedFor(const Explained& e, const std::set<std::string>& importers,
                         const std::string& added, bool root_listing_too) {
    for (const std::string& t : importers) {
      ASSERT_EQ(e.count(t), 1u) << t << " not selected for " << added;
      EXPECT_EQ(e.at(t).count(added + " (was absent, now exists)"), 1u)
          << t << ": " << ::testing::PrintToString(e.at(t));
    }
    if (!root_listing_too) {
      EXPECT_EQ(Names(e), importers);
    } else {
      for (const auto& [test, reasons] : e) {
        if (!importers.count(test)) {
          EXPECT_TRUE(OnlyTheRootListing(reasons)) << test;
        }
      }
    }
  }

  std::string root_;
  std::string userbase_, user_site_;
  std::set<std::string> all_;
};

// One test per setup: each records the suite once (in SetUp).
TEST_P(PythonImports, AddedFilesSelectTheTestsWhoseImportsTheyCouldChange) {
  if (!GetParam().names) {
    // CPython's finder: a listing of every sys.path directory it searched.
    for (const char* note : {"NOTES.txt", "src/NOTES.txt", "tests/NOTES.txt"}) {
      EXPECT_EQ(Names(SelectAfterAdding(note)), all_) << note;
    }
    ExpectSelectedFor(SelectAfterAdding("src/nspkg/__init__.py"), Tests(ImportsNspkg),
                      "src/nspkg/__init__.py", false);
    return;
  }
  // The root's scan by importlib.metadata is a view now: never a listing.
  const bool root_listed = false;
  // (a) a note file at the root, in src/ and in tests/ (all on sys.path).
  ExpectNoImportSelects(SelectAfterAdding("NOTES.txt"), true);
  ExpectNoImportSelects(SelectAfterAdding("src/NOTES.txt"), false);
  ExpectNoImportSelects(SelectAfterAdding("tests/NOTES.txt"), false);
  ExpectNoImportSelects(SelectAfterAdding("tests/sub2/NOTES.txt"), false);
  // (b) a new module in a package no test imports; a new package beside.
  ExpectNoImportSelects(SelectAfterAdding("src/unused_pkg/newmod.py"), false);
  ExpectNoImportSelects(SelectAfterAdding("src/app_extra/__init__.py"), false);
  ASSERT_EQ(rmdir((root_ + "/src/app_extra").c_str()), 0);

  // (c) shadowing: the root is ahead of src/ and of the standard library.
  ExpectSelectedFor(SelectAfterAdding("helpers.py", "def where():\n    return \"root\"\n"),
                    Tests(ImportsHelpers), "helpers.py", root_listed);
  ExpectSelectedFor(SelectAfterAdding("colorsys.py"), Tests(ImportsColorsys), "colorsys.py",
                    root_listed);
  // A module in a directory searched before the root: pytest's prepend
  // import mode puts each test file's directory first on sys.path.
  std::set<std::string> sub1, sub1_helpers;
  for (const std::string& t : all_) {
    if (t.rfind("tests/sub1/", 0) == 0) sub1.insert(t);
  }
  for (const std::string& t : Tests(ImportsHelpers)) {
    if (sub1.count(t)) sub1_helpers.insert(t);
  }
  ASSERT_FALSE(sub1_helpers.empty());
  ExpectSelectedFor(SelectAfterAdding("tests/sub1/helpers.py"), sub1_helpers,
                    "tests/sub1/helpers.py", false);
  // A namespace package made a regular one.
  ExpectSelectedFor(SelectAfterAdding("src/nspkg/__init__.py"), Tests(ImportsNspkg),
                    "src/nspkg/__init__.py", false);
  // A conftest.py in a test subdirectory: pytest stats conftest.py in each
  // directory from the test's up to the root. The generic runner does so in
  // the test's own process; the forking runner's parent imports the
  // conftest.py of every argument's directory before it forks (pytest's
  // initial conftests), so there it is shared by the whole batch.
  Explained conftest = SelectAfterAdding("tests/sub1/conftest.py", "");
  if (GetParam().batch) {
    EXPECT_EQ(Names(conftest), all_);
    for (const auto& [test, reasons] : conftest) {
      EXPECT_EQ(reasons, std::set<std::string>{"tests/sub1/conftest.py (was absent, now exists)"})
          << test;
    }
  } else {
    ExpectSelectedFor(conftest, sub1, "tests/sub1/conftest.py", false);
  }

  // What is left of the listings inside the repository (`ste deps`): none;
  // and what the hook records instead: the names the imports looked for,
  // and with python3 -m the views of the root importlib.metadata scanned.
  for (int n : {1, 12}) {
    Spawned deps = Ste({"deps", TestPath(n)});
    ASSERT_EQ(deps.exit_code, 0) << deps.err;
    std::set<std::string> listed;
    std::istringstream in(deps.out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("listing\t", 0) == 0 && line[8] != '/') listed.insert(line.substr(8));
    }
    EXPECT_EQ(listed, root_listed ? std::set<std::string>{"."} : std::set<std::string>{})
        << TestPath(n) << "\n" << deps.out;
    if (GetParam().root_on_sys_path) {
      EXPECT_NE(deps.out.find("ste-entry-points:pytest11"), std::string::npos) << deps.out;
    }
    const std::string m = kAppModules[n % 5];
    // At definition granularity a module the test ran is its module-level
    // code (definitions.h), the rest as at file level.
    const std::string code = GetParam().selection.find("definition") == std::string::npos ? "" : "/\\x01ste-def";
    for (const std::string& dep : std::vector<std::string>{"absent\tapp\n", "absent\tapp.py\n", "content\tsrc/app\n",
                                   "content\tsrc/app/__init__.py" + code + "\n", "absent\tsrc/app/" + m + "\n",
                                   "content\tsrc/app/" + m + ".py" + code + "\n"}) {
      EXPECT_NE(deps.out.find(dep), std::string::npos) << dep << " not in\n" << deps.out;
    }
  }
}

// A package installed where Python finds it (the user site, as `pip
// install --user` would; `apt-get install python3-x` does the same in
// /usr/lib/python3/dist-packages): site.py scans the directory for *.pth,
// importlib.metadata for *.dist-info (pytest enumerates every distribution
// for plugins), imports look for names in it. Only what could change a
// test selects it.
TEST_P(PythonImports, InstalledPackagesSelectOnlyTheTestsTheyCouldChange) {
  const std::string metadata = "Metadata-Version: 2.1\nName: tabl\nVersion: 0.9\n";
  if (!GetParam().names) {
    // CPython's own scans: listings of the user site.
    EXPECT_EQ(Names(SelectAfterInstalling({{"tabl/__init__.py", ""}})), all_);
    return;
  }
  // An unrelated package with a console script (what most are).
  Explained unrelated = SelectAfterInstalling({
      {"tabl/__init__.py", "def main():\n    pass\n"},
      {"tabl-0.9.dist-info/METADATA", metadata},
      {"tabl-0.9.dist-info/RECORD", "tabl/__init__.py,,\n"},
      {"tabl-0.9.dist-info/entry_points.txt", "[console_scripts]\ntabl = tabl:main\n"},
  });
  EXPECT_LE(unrelated.size(), 2u) << ::testing::PrintToString(unrelated);
  // A module of a name no test imports; the same name as an imported
  // module, but behind the directories where it is found (the user site is
  // after src/ and the standard library).
  EXPECT_LE(SelectAfterInstalling({{"lonely.py", ""}}).size(), 2u);
  EXPECT_LE(SelectAfterInstalling({{"helpers.py", ""}, {"colorsys.py", ""}}).size(), 2u);
  // A pytest plugin: pytest loads it in every test.
  Explained plugin = SelectAfterInstalling({
      {"probe_plugin.py", "PROBE = 1\n"},
      {"probe_plugin-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: probe-plugin\nVersion: 1.0\n"},
      {"probe_plugin-1.0.dist-info/entry_points.txt", "[pytest11]\nprobe = probe_plugin\n"},
  });
  EXPECT_EQ(Names(plugin), all_);
  // A .pth file: site.py runs it in every Python process.
  EXPECT_EQ(Names(SelectAfterInstalling({{"zz_extra.pth", "import os\n"}})), all_);
  // A broken entry_points.txt: pytest fails to start.
  EXPECT_EQ(Names(SelectAfterInstalling({
                {"tabl-0.9.dist-info/METADATA", metadata},
                {"tabl-0.9.dist-info/entry_points.txt", "[console_scripts]\nno equals sign\n"},
            })),
            all_);
}

INSTANTIATE_TEST_SUITE_P(Python, PythonImports,
                         ::testing::Values(kGeneric, kPytest, kGenericSafePath, kPytestSafePath,
                                           kGenericListing, kGenericDefinitions, kPytestDefinitions),
                         [](const ::testing::TestParamInfo<Setup>& info) { return info.param.name; });

}  // namespace
}  // namespace ste
