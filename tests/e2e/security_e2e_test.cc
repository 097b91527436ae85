// The claims of docs/SECURITY.md that a test can hold, with the real
// binary on real temporary git repositories:
//   - `ste select` on a change of ste.toml runs nothing the change names:
//     not the runner command, not `ctest -N` in a build tree it names;
//   - what `ctest -N` still evaluates when ste.toml is unchanged (the
//     documented limit of kind "ctest");
//   - git's configuration cannot make select's git commands run programs;
//   - a store the change's ste.toml names can forge a narrower selection,
//     and one the job names (--store) cannot;
//   - a token file group or others can access is refused by every command
//     that reads one.
#include <sys/stat.h>
#include <unistd.h>

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

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

class SecurityRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    marker_ = MakeTempDir() + "/ran";  // outside the tree: no inventory change
    outside_ = MakeTempDir();          // this test's files outside the tree
    ::ste::testing::InitGitRepo(root_);
  }
  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  void Commit(const std::string& message) {
    ASSERT_EQ(::ste::testing::Git(root_, {"add", "-A"}).exit_code, 0);
    Spawned c = ::ste::testing::Git(root_, {"commit", "-q", "-m", message});
    ASSERT_EQ(c.exit_code, 0) << c.err;
  }
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, root_);
  }
  void Record() {
    Spawned r = Ste({"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  // A command that leaves the marker file when it runs.
  std::string Touch() const { return "/bin/sh -c 'echo ran >> " + marker_ + "'"; }

  std::string root_, marker_, outside_;
};

TEST_F(SecurityRepo, AChangedRunnerCommandIsNotRunBySelect) {
  W("tests/test_a.sh", "exit 0\n");
  W("tests/test_b.sh", "exit 0\n");
  W("ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
  Commit("init");
  Record();
  ASSERT_FALSE(Exists(marker_));

  // The pull request: its runner command would leave the marker.
  W("ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"" + Touch() +
                    "; sh {test}\"\n");
  Commit("a pull request");
  for (const char* format : {"text", "json", "runner", "github"}) {
    Spawned s = Ste({"select", "--format", format});
    EXPECT_EQ(s.exit_code, 0) << format << s.err;
    EXPECT_NE(s.err.find("mode all: ste.toml (the configuration) changed"), std::string::npos)
        << format << s.err;
  }
  Spawned text = Ste({"select"});
  EXPECT_EQ(::ste::testing::SelectedTests(text.out),
            (std::set<std::string>{"tests/test_a.sh", "tests/test_b.sh"}));
  EXPECT_FALSE(Exists(marker_)) << "ste select ran the pull request's runner command";
}

class SecurityCTest : public SecurityRepo {
 protected:
  // A build tree written by hand: what `cmake` would generate for two
  // add_test() calls (ctest reads only CTestTestfile.cmake).
  void SetUp() override {
    SecurityRepo::SetUp();
    W("build/CTestTestfile.cmake", Tests());
    W("ste.toml", "[runner]\nkind = \"ctest\"\nbuild_dir = \"build\"\n");
    Commit("init");
    Record();
    ASSERT_FALSE(Exists(marker_));
  }
  static std::string Tests() {
    return "add_test(alpha \"/bin/sh\" \"-c\" \"exit 0\")\n"
           "add_test(beta \"/bin/sh\" \"-c\" \"exit 0\")\n";
  }
  // CMake code that runs a program whenever ctest reads the file, as
  // gtest_discover_tests(DISCOVERY_MODE PRE_TEST) does through
  // TEST_INCLUDE_FILES.
  std::string Evil() const {
    return "execute_process(COMMAND /bin/sh -c \"echo ran >> " + marker_ + "\")\n";
  }
};

TEST_F(SecurityCTest, ABuildTreeNamedByAChangedSteTomlIsNotListed) {
  // The pull request adds CMake code of its own and points build_dir at it.
  W("evil/CTestTestfile.cmake", Evil() + Tests() + "add_test(gamma \"/bin/sh\" \"-c\" \"exit 0\")\n");
  W("ste.toml", "[runner]\nkind = \"ctest\"\nbuild_dir = \"evil\"\n");
  Commit("a pull request");
  Spawned s = Ste({"select"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.err.find("mode all: ste.toml (the configuration) changed"), std::string::npos) << s.err;
  // The baseline's tests are the list (gamma is the pull request's word only).
  EXPECT_EQ(::ste::testing::SelectedTests(s.out), (std::set<std::string>{"alpha", "beta"}));
  Spawned runner = Ste({"select", "--format", "runner"});
  EXPECT_EQ(runner.out, "-R '^(alpha|beta)$'\n");
  EXPECT_FALSE(Exists(marker_)) << "ste select ran the pull request's CMake code";
}

TEST_F(SecurityCTest, WithSteTomlUnchangedCTestEvaluatesTheBuildTree) {
  // The documented limit: the build tree is the (pull request's) build's
  // output, and `ctest -N` evaluates it. A select job of kind "ctest" runs
  // the pull request's code by building it anyway: it must hold no secret.
  W("build/CTestTestfile.cmake", Evil() + Tests());
  Commit("a pull request");
  Spawned s = Ste({"select"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_TRUE(Exists(marker_)) << s.err;
}

TEST_F(SecurityRepo, TokenFilesOthersCanAccessAreRefused) {
  W("tests/test_a.sh", "exit 0\n");
  W("ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
  Commit("init");
  const std::string token = outside_ + "/token";
  WriteFile(token, "s3cret\n");
  const std::string store = "sqlite:" + MakeTempDir() + "/s.db";
  const std::string nowhere = "unix:" + MakeTempDir() + "/no.sock";
  struct Use {
    std::vector<std::string> args;
    int exit_code;
  };
  const std::vector<Use> uses = {
      {{"scheduler", "--listen", "127.0.0.1:0", "--store", store, "--token-file", token}, 1},
      {{"worker", "--scheduler", nowhere, "--wait", "0", "--token-file", token}, 2},
      {{"record", "--scheduler", nowhere, "--token-file", token}, 2},
      {{"select", "--scheduler", nowhere, "--token-file", token}, 2},
  };
  for (mode_t mode : {0644, 0640, 0604, 0660, 0700 | 0020}) {
    ASSERT_EQ(chmod(token.c_str(), mode), 0);
    for (const Use& use : uses) {
      Spawned s = Ste(use.args);
      EXPECT_EQ(s.exit_code, use.exit_code) << use.args[0] << " " << s.err;
      EXPECT_NE(s.err.find("token file " + token + " is accessible by group or others"),
                std::string::npos)
          << use.args[0] << " " << s.err;
      EXPECT_NE(s.err.find("chmod 600 " + token), std::string::npos) << s.err;
    }
    // $STE_TOKEN_FILE is the same file, read the same way.
    Spawned env = Spawn({kSte, "select", "--scheduler", nowhere}, {"STE_TOKEN_FILE=" + token}, root_);
    EXPECT_EQ(env.exit_code, 2) << env.err;
    EXPECT_NE(env.err.find("chmod 600"), std::string::npos) << env.err;
  }
  // 0600 (and 0400) are taken: the select gets past the token and finds no
  // scheduler there (mode all, with the reason).
  for (mode_t mode : {0600, 0400}) {
    ASSERT_EQ(chmod(token.c_str(), mode), 0);
    Spawned s = Ste({"select", "--scheduler", nowhere, "--token-file", token});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    EXPECT_NE(s.err.find("mode all: the scheduler did not answer"), std::string::npos) << s.err;
  }
}

TEST_F(SecurityRepo, GitConfiguredProgramsAreNotRunBySelect) {
  W("tests/test_a.sh", "exit 0\n");
  W("ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
  W("tests/test_b.sh", "exit 0\n");
  W(".gitattributes", "* filter=x diff=x\n");
  Commit("init");
  Record();
  // The change: a commit carrying a signature (a pull request's commits
  // can), written as an object so no gpg is needed to make it.
  W("tests/test_a.sh", "exit 0\n# changed\n");
  ASSERT_EQ(::ste::testing::Git(root_, {"add", "-A"}).exit_code, 0);
  const std::string tree = ::ste::testing::Git(root_, {"write-tree"}).out;
  const std::string parent = ::ste::testing::Git(root_, {"rev-parse", "HEAD"}).out;
  WriteFile(outside_ + "/commit",
            "tree " + tree.substr(0, 40) + "\nparent " + parent.substr(0, 40) +
                "\nauthor a <a@example.com> 1700000000 +0000\n"
                "committer a <a@example.com> 1700000000 +0000\n"
                "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQ==\n -----END PGP SIGNATURE-----\n"
                "\nsigned change\n");
  Spawned object = ::ste::testing::Git(
      root_, {"hash-object", "-t", "commit", "-w", outside_ + "/commit"});
  ASSERT_EQ(object.exit_code, 0) << object.err;
  ASSERT_EQ(::ste::testing::Git(root_, {"update-ref", "HEAD", object.out.substr(0, 40)}).exit_code, 0);

  // Every program this checkout's configuration can name, each leaving the
  // marker with its arguments.
  const std::string prog = outside_ + "/prog";
  WriteFile(prog, "#!/bin/sh\necho \"$0 $*\" >> " + marker_ + "\nexit 1\n");
  ASSERT_EQ(chmod(prog.c_str(), 0700), 0);
  for (const char* key : {"core.fsmonitor", "core.pager", "diff.external", "gpg.program",
                          "gpg.ssh.program", "gpg.x509.program", "filter.x.clean", "filter.x.smudge",
                          "filter.x.process", "diff.x.textconv", "diff.x.command", "core.editor"}) {
    ASSERT_EQ(::ste::testing::Git(root_, {"config", key, prog}).exit_code, 0) << key;
  }
  ASSERT_EQ(::ste::testing::Git(root_, {"config", "log.showSignature", "true"}).exit_code, 0);
  // Without ste's options `git log` runs gpg.program on the signed commit.
  ::ste::testing::Git(root_, {"log", "-1", "--format=%B", "HEAD"});
  ASSERT_TRUE(Exists(marker_));
  ASSERT_EQ(unlink(marker_.c_str()), 0);

  Spawned s = Ste({"select"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(::ste::testing::SelectedMode(s.err), "subset") << s.err;
  EXPECT_FALSE(Exists(marker_)) << ::ste::testing::ReadFile(marker_);
  // ...nor by one that reads the whole change's messages (force tags).
  Spawned all = Ste({"select", "--format", "json"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_FALSE(Exists(marker_)) << ::ste::testing::ReadFile(marker_);
}

TEST_F(SecurityRepo, AStoreTheChangeNamesIsNotTrustedWhenTheJobNamesItsOwn) {
  W(".gitignore", ".ste/\n");
  W("tests/test_a.sh", "exit 0\n");
  W("tests/test_b.sh", "exit 0\n");
  W("ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
  Commit("init");
  Record();
  // main's record job exports its baseline (to the CI cache).
  const std::string exported = MakeTempDir() + "/baseline.steb";
  Spawned e = Ste({"baseline", "export", "latest", "-o", exported});
  ASSERT_EQ(e.exit_code, 0) << e.err;

  // The pull request breaks test_a and ships a store of its own: a
  // baseline it recorded of its own tree, named by its ste.toml.
  W("tests/test_a.sh", "exit 1\n");
  W("ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n"
                "[store]\nurl = \"sqlite:forged/ste.db\"\n");
  Spawned forged = Ste({"record", "--progress", "none"});
  ASSERT_TRUE(forged.exit_code == 0 || forged.exit_code == 1) << forged.err;  // stored either way
  ASSERT_EQ(::ste::testing::Git(root_, {"add", "-f", "forged"}).exit_code, 0);
  Commit("a pull request");

  // Trusting the tree's store.url, the forged baseline says nothing
  // changed but its own files... and test_a failed in it, so it is kept:
  // narrower than all, the forger's choice.
  Spawned trusting = Ste({"select"});
  EXPECT_NE(::ste::testing::SelectedMode(trusting.err), "all") << trusting.err;

  // The job names its own store, imported from main's export.
  const std::string store = "sqlite:" + MakeTempDir() + "/ste.db";
  Spawned i = Ste({"baseline", "import", exported, "--store", store});
  ASSERT_EQ(i.exit_code, 0) << i.err;
  Spawned s = Ste({"select", "--store", store});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.err.find("mode all: ste.toml (the configuration) changed"), std::string::npos) << s.err;
  EXPECT_EQ(::ste::testing::SelectedTests(s.out),
            (std::set<std::string>{"tests/test_a.sh", "tests/test_b.sh"}));
}

}  // namespace
}  // namespace ste
