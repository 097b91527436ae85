// Environment variables as dependencies, end to end (indexer's
// ste/environment.h): the real binary records a real repository whose
// tests read variables from C (getenv), Python (os.environ), Ruby (ENV[])
// and Node (process.env); a changed value selects only its reader, a
// per-run CI variable or an unrelated one selects nothing, env_run_all
// selects all, and --env-file stands for the environment (a malformed one
// is exit 2, never a narrower selection).
#include <set>
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
const std::string kGetenv = STE_CASES_DIR "/getenv_case";

struct Selected {
  Spawned run;
  std::string mode;
  std::set<std::string> tests;
};

class EnvRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    W("tests/test_c.sh", "'" + kGetenv + "' APP_MODE\n");
    W("tests/test_py.sh", "/usr/bin/python3 -c 'import os; os.environ.get(\"PY_SETTING\")'\n");
    W("tests/test_rb.sh", "ruby -e 'ENV[\"RB_SETTING\"]'\n");
    W("tests/test_js.sh", "node -e 'process.env.JS_SETTING'\n");
    // Reads a per-run CI variable (selection.env_ignore's default list).
    W("tests/test_ci.sh", "'" + kGetenv + "' GITHUB_RUN_ID CI_PIPELINE_ID\n");
    W("tests/test_none.sh", "echo nothing\n");
    W("ste.toml",
      "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n"
      "[selection]\nenv_run_all = [\"STE_E2E_SHELL_*\"]\n");
    ::ste::testing::InitGitRepo(root_);
    Spawned add = ::ste::testing::Git(root_, {"add", "-A"});
    ASSERT_EQ(add.exit_code, 0) << add.err;
    Spawned commit = ::ste::testing::Git(root_, {"commit", "-q", "-m", "init"});
    ASSERT_EQ(commit.exit_code, 0) << commit.err;
  }

  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  Spawned Ste(std::vector<std::string> args, const std::vector<std::string>& env) {
    args.insert(args.begin(), kSte);
    return Spawn(args, env, root_);
  }
  // What record and each select start from: every variable a test reads
  // set, and one env_run_all names; `changes` replace ("NAME=value") or
  // leave out ("NAME") those of the same name.
  std::vector<std::string> Env(const std::vector<std::string>& changes = {}) {
    std::vector<std::string> env;
    for (const char* base : {"APP_MODE=fast", "PY_SETTING=1", "RB_SETTING=1", "JS_SETTING=1",
                             "GITHUB_RUN_ID=100", "CI_PIPELINE_ID=7", "STE_E2E_SHELL_OPTS=-e"}) {
      const std::string name(base, std::string(base).find('='));
      bool replaced = false;
      for (const std::string& c : changes) replaced |= c.substr(0, c.find('=')) == name;
      if (!replaced) env.push_back(base);
    }
    for (const std::string& c : changes) {
      if (c.find('=') != std::string::npos) env.push_back(c);
    }
    return env;
  }
  void Record() {
    Spawned r = Ste({"record", "--progress", "none"}, Env());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  Selected Select(const std::vector<std::string>& env, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"select", "--explain"};
    args.insert(args.end(), extra.begin(), extra.end());
    Selected s;
    s.run = Ste(args, env);
    s.mode = ::ste::testing::SelectedMode(s.run.err);
    s.tests = ::ste::testing::SelectedTests(s.run.out);
    return s;
  }
  std::string root_;
};

using Tests = std::set<std::string>;

TEST_F(EnvRepo, AChangedVariableSelectsOnlyTheTestThatReadIt) {
  if (Spawn({"sh", "-c", "command -v node && command -v ruby"}).exit_code != 0) {
    GTEST_SKIP() << "needs node and ruby on PATH (make deps installs both)";
  }
  Record();
  Selected same = Select(Env());
  EXPECT_EQ(same.mode, "none") << same.run.err << same.run.out;
  struct Case {
    std::string change;
    std::string test;
  } cases[] = {
      {"APP_MODE=slow", "tests/test_c.sh"},
      {"PY_SETTING=2", "tests/test_py.sh"},
      {"RB_SETTING=2", "tests/test_rb.sh"},
      {"JS_SETTING=2", "tests/test_js.sh"},
  };
  for (const Case& c : cases) {
    Selected s = Select(Env({c.change}));
    EXPECT_EQ(s.mode, "subset") << c.change << "\n" << s.run.err << s.run.out;
    EXPECT_EQ(s.tests, Tests{c.test}) << c.change << "\n" << s.run.err << s.run.out;
    const std::string name = c.change.substr(0, c.change.find('='));
    EXPECT_NE(s.run.out.find("<- the environment variable " + name + " changed"), std::string::npos)
        << s.run.out;
  }
  // Unset since the baseline: a change too.
  Selected unset = Select(Env({"APP_MODE"}));
  EXPECT_EQ(unset.tests, Tests{"tests/test_c.sh"}) << unset.run.err << unset.run.out;
}

TEST_F(EnvRepo, APerRunCiVariableOrAnUnrelatedOneSelectsNothing) {
  Record();
  Selected s = Select(Env({"GITHUB_RUN_ID=101", "CI_PIPELINE_ID=8", "SOMETHING_ELSE=1"}));
  EXPECT_EQ(s.mode, "none") << s.run.err << s.run.out;
  EXPECT_TRUE(s.tests.empty());
  // Without the default list, the CI variable test_ci read is its dependency.
  W("ste.toml",
    "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n"
    "[selection]\nenv_ignore_defaults = false\nenv_ignore = [\"CI_*\"]\n");
  ASSERT_EQ(::ste::testing::Git(root_, {"commit", "-qam", "no default ignores"}).exit_code, 0);
  Record();
  s = Select(Env({"GITHUB_RUN_ID=101", "CI_PIPELINE_ID=8"}));
  EXPECT_EQ(s.tests, Tests{"tests/test_ci.sh"}) << s.run.err << s.run.out;
  s = Select(Env({"CI_PIPELINE_ID=8"}));
  EXPECT_EQ(s.mode, "none") << "CI_* is still ignored: " << s.run.err << s.run.out;
}

TEST_F(EnvRepo, AVariableEnvRunAllNamesSelectsAll) {
  Record();
  Selected s = Select(Env({"STE_E2E_SHELL_OPTS=-eu"}));
  EXPECT_EQ(s.mode, "all") << s.run.err;
  EXPECT_NE(s.run.err.find("the environment variable STE_E2E_SHELL_OPTS changed and matches "
                           "selection.env_run_all 'STE_E2E_SHELL_*'"),
            std::string::npos)
      << s.run.err;
  // One that was not set at the baseline, set now.
  s = Select(Env({"STE_E2E_SHELL_NEW=1"}));
  EXPECT_EQ(s.mode, "all") << s.run.err;
}

TEST_F(EnvRepo, AnEnvFileStandsForTheEnvironmentAndABadOneIsAUsageError) {
  Record();
  // The environment the tests ran in, as `env -0` gives it, selected from
  // a process whose own environment differs.
  Spawned dump = Spawn({"env", "-0"}, Env());
  ASSERT_EQ(dump.exit_code, 0);
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/same.env", dump.out);
  Selected s = Select(Env({"APP_MODE=other", "PY_SETTING=other"}), {"--env-file", dir + "/same.env"});
  EXPECT_EQ(s.mode, "none") << s.run.err << s.run.out;
  std::string changed = dump.out;
  const size_t at = changed.find("APP_MODE=fast");
  ASSERT_NE(at, std::string::npos);
  changed.replace(at, 13, "APP_MODE=slow");
  WriteFile(dir + "/changed.env", changed);
  s = Select(Env(), {"--env-file", dir + "/changed.env"});
  EXPECT_EQ(s.tests, Tests{"tests/test_c.sh"}) << s.run.err << s.run.out;
  // Lines: every variable not named is unset, so the readers of those are
  // selected.
  WriteFile(dir + "/lines.env", "# only these\nAPP_MODE=fast\n");
  s = Select(Env(), {"--env-file", dir + "/lines.env"});
  EXPECT_EQ(s.mode, "all") << "STE_E2E_SHELL_OPTS is unset there: " << s.run.err;
  // Malformed or unreadable: exit 2, saying where; no selection printed.
  WriteFile(dir + "/bad.env", "APP_MODE=fast\njust words\n");
  s = Select(Env(), {"--env-file", dir + "/bad.env"});
  EXPECT_EQ(s.run.exit_code, 2) << s.run.err;
  EXPECT_NE(s.run.err.find(dir + "/bad.env: line 2: no '=' (NAME=VALUE)"), std::string::npos) << s.run.err;
  EXPECT_TRUE(s.run.out.empty()) << s.run.out;
  s = Select(Env(), {"--env-file", dir + "/missing.env"});
  EXPECT_EQ(s.run.exit_code, 2) << s.run.err;
  EXPECT_NE(s.run.err.find("cannot read the environment file " + dir + "/missing.env"), std::string::npos)
      << s.run.err;
}

TEST_F(EnvRepo, APythonBatchRunnerRecordsAVariableInEveryTestThatReadsIt) {
  // unittest's runner runs the files in one process, a scope each: a
  // variable the first file read is read again, and recorded again, in
  // the second's scope (the startup hook forgets what it recorded at
  // every scope change).
  W("ste.toml", "[tests]\ninclude = [\"tests/test_*.py\"]\n[runner]\nkind = \"unittest\"\n");
  const char* reader =
      "import os\nimport unittest\n\n\nclass T(unittest.TestCase):\n"
      "    def test_flag(self):\n        os.environ.get(\"SHARED_FLAG\")\n";
  W("tests/__init__.py", "");
  W("tests/test_one.py", reader);
  W("tests/test_two.py", reader);
  W("tests/test_other.py", "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n"
                          "        pass\n");
  ASSERT_EQ(::ste::testing::Git(root_, {"add", "-A"}).exit_code, 0);
  ASSERT_EQ(::ste::testing::Git(root_, {"commit", "-qm", "python"}).exit_code, 0);
  Record();
  Selected s = Select(Env({"SHARED_FLAG=1"}));
  EXPECT_EQ(s.tests, (Tests{"tests/test_one.py", "tests/test_two.py"})) << s.run.err << s.run.out;
  s = Select(Env({"OTHER_FLAG=1"}));
  EXPECT_EQ(s.mode, "none") << s.run.err << s.run.out;
}

TEST_F(EnvRepo, TheBaselineHoldsAHashOfTheValueNeverTheValue) {
  Record();
  // The store and its blobs (the tests' own output, which printed it, is
  // theirs).
  Spawned find = Spawn({"grep", "-r", "-a", "-l", "fast", root_ + "/.ste/ste.db", root_ + "/.ste/blobs"});
  EXPECT_NE(find.exit_code, 0) << "the value is in: " << find.out;
  Spawned deps = Ste({"deps", "tests/test_c.sh"}, Env());
  EXPECT_NE(deps.out.find("content\t/\\x01ste-env:APP_MODE"), std::string::npos) << deps.out << deps.err;
}

}  // namespace
}  // namespace ste
