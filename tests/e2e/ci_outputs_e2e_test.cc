// End-to-end: what a CI reads from ste, with the real binary on real git
// repositories. The outputs a pull request could forge (a file name it
// chose, written into $GITHUB_OUTPUT and the step summary), the change's
// own text for force tags (--change-text), test lists a shell cannot
// mangle (--null), record's exit codes as test runners have them, and a
// base commit whose baseline is missing (main's record lags).
#include <unistd.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "github_files.h"
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

class CiOutputs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    W("lib/a.sh", "a() { echo A; }\n");
    W("lib/b.sh", "b() { echo B; }\n");
    W("tests/test_a.sh", ". lib/a.sh\n[ \"$(a)\" = A ]\n");
    W("tests/test_b.sh", ". lib/b.sh\n[ \"$(b)\" = B ]\n");
    W("tests/test_c.sh", "true\n");  // reads no library: never selected by them
    W("cfg/base.cfg", "x\n");
    W("ste.toml",
      "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n"
      "[selection]\nrun_all = [\"cfg/**\"]\n");
    W(".gitignore", ".ste/\n");
    ::ste::testing::InitGitRepo(root_);
    Commit("init");
  }
  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  void Git(const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(root_, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  void Commit(const std::string& message) {
    Git({"add", "-A"});
    Git({"commit", "-q", "--allow-empty", "-m", message});
  }
  std::string Head() { return ::ste::testing::Git(root_, {"rev-parse", "HEAD"}).out.substr(0, 40); }
  Spawned Ste(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), kSte);
    return Spawn(args, env, root_);
  }
  void Record() {
    Spawned r = Ste({"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  // `select --format github` and its $GITHUB_OUTPUT as GitHub reads it.
  std::map<std::string, std::string> GithubSelect(std::vector<std::string> extra = {},
                                                  std::string* summary = nullptr) {
    const std::string gh = MakeTempDir();
    std::vector<std::string> args = {"select", "--format", "github"};
    args.insert(args.end(), extra.begin(), extra.end());
    Spawned s = Ste(args, {"GITHUB_OUTPUT=" + gh + "/out", "GITHUB_STEP_SUMMARY=" + gh + "/summary"});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    std::optional<std::map<std::string, std::string>> out = testing::ParseGithubFile(ReadFile(gh + "/out"));
    EXPECT_TRUE(out.has_value()) << "GitHub would fail the step on:\n" << ReadFile(gh + "/out");
    if (summary) *summary = ReadFile(gh + "/summary");
    return out.value_or(std::map<std::string, std::string>{});
  }
  std::string root_;
};

TEST_F(CiOutputs, AFileNamedToForgeTheOutputsCannot) {
  Record();
  // Names a pull request can add under a run_all glob: each one alone must
  // leave mode all, and nothing else, in what GitHub reads.
  const std::vector<std::string> forged = {
      "cfg/a\nmode=none\nz=.cfg",
      "cfg/x<<EOF\nmode=none\nEOF",
      "cfg/pipe|`tick`|<b>|%0A|",
      std::string("cfg/bad\xff\xfe") + "\nmode=none",
  };
  for (const std::string& name : forged) {
    W(name, "forged\n");
    std::string summary;
    std::map<std::string, std::string> out = GithubSelect({}, &summary);
    EXPECT_EQ(out["mode"], "all") << ::testing::PrintToString(name);
    EXPECT_EQ(out.size(), 3u) << "mode, reason, tests_file and nothing else";
    EXPECT_TRUE(absl::StrContains(out["reason"], "matches selection.run_all")) << out["reason"];
    EXPECT_EQ(out["reason"].find('\n'), std::string::npos) << "the reason is one line";
    // The summary: the same rows as tests, no line a name started.
    EXPECT_TRUE(absl::StrContains(summary, "### ste select: all")) << summary;
    for (absl::string_view line : absl::StrSplit(summary, '\n')) {
      EXPECT_FALSE(absl::StartsWith(line, "mode=")) << summary;
      if (absl::StartsWith(line, "| <code>")) {
        EXPECT_TRUE(absl::EndsWith(line, " |")) << line;
      }
    }
    ASSERT_EQ(unlink((root_ + "/" + name).c_str()), 0);
  }
}

TEST_F(CiOutputs, TheSummaryIsCappedBelowGithubsLimit) {
  // 6,000 tests whose rows would pass 1 MiB (a file name stays under 255).
  for (int i = 0; i < 6000; ++i) {
    W("tests/test_" + std::string(200, 'x') + std::to_string(i) + ".sh", "true\n");
  }
  Commit("many");
  std::string summary;
  std::map<std::string, std::string> out = GithubSelect({"--all"}, &summary);
  EXPECT_EQ(out["mode"], "all");
  EXPECT_LT(summary.size(), 1024u * 1024u);
  EXPECT_TRUE(absl::StrContains(summary, "more tests not shown"))
      << summary.substr(summary.size() > 300 ? summary.size() - 300 : 0);
}

TEST_F(CiOutputs, ForceTagsAreLookedForInTheChangeTextWhenGiven) {
  Record();
  W("lib/a.sh", "a() { echo A; }  # edited\n");
  Commit("a is edited");
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/plain", "Edit a\n\nA body without tags.\nlabel: docs\n");
  WriteFile(dir + "/tagged", "Edit a\n\nPlease [test all] this one.\n");
  EXPECT_EQ(GithubSelect({"--change-text", dir + "/plain"})["mode"], "subset");
  std::map<std::string, std::string> tagged = GithubSelect({"--change-text", dir + "/tagged"});
  EXPECT_EQ(tagged["mode"], "all");
  EXPECT_TRUE(absl::StrContains(tagged["reason"], "force tag [test all] in the change's text")) << tagged["reason"];
  // A tag in a commit message git can reach does not count once the CI
  // gives the change's text: the text is the change (the CI script puts
  // every commit's message in it).
  Git({"commit", "-q", "--allow-empty", "-m", "later [no filter]"});
  EXPECT_EQ(GithubSelect({"--change-text", dir + "/plain"})["mode"], "subset");
  EXPECT_EQ(GithubSelect()["mode"], "all");
  // Unreadable: a usage error, never "no tag".
  Spawned missing = Ste({"select", "--change-text", dir + "/missing"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_TRUE(absl::StrContains(missing.err, "--change-text")) << missing.err;
}

TEST_F(CiOutputs, NullSeparatedListsKeepEveryName) {
  Record();
  W("lib/a.sh", "a() { echo A; }  # edited\n");
  W("lib/b.sh", "b() { echo B; }  # edited\n");
  Spawned s = Ste({"select", "--null"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out, std::string("tests/test_a.sh\0tests/test_b.sh\0", 32));
  // Nothing selected: no byte at all (xargs -0 -r runs nothing).
  Git({"checkout", "--", "lib"});
  Spawned none = Ste({"select", "--null"});
  EXPECT_EQ(none.out, "");
  EXPECT_TRUE(absl::StrContains(none.err, "mode none")) << none.err;
}

TEST_F(CiOutputs, RecordExitsAsATestRunnerWouldAndKeepsTheBaseline) {
  W("tests/test_b.sh", "exit 1\n");
  Commit("b fails");
  Spawned failing = Ste({"record", "--progress", "none"});
  EXPECT_EQ(failing.exit_code, 1) << failing.out << failing.err;
  EXPECT_TRUE(absl::StrContains(failing.out, "2 passed, 1 failed")) << failing.out;
  // The baseline is stored and used: the failed test is selected again.
  Spawned s = Ste({"select", "--explain"});
  EXPECT_EQ(s.exit_code, 0);
  EXPECT_EQ(s.out, "tests/test_b.sh\n  <- failed in baseline\n") << s.err;
  EXPECT_TRUE(absl::StrContains(s.err, "(baseline 1,")) << s.err;

  Spawned allowed = Ste({"record", "--progress", "none", "--allow-failures"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  W("tests/test_b.sh", ". lib/b.sh\n[ \"$(b)\" = B ]\n");
  Commit("b passes");
  Spawned passing = Ste({"record", "--progress", "none"});
  EXPECT_EQ(passing.exit_code, 0) << passing.err;
  // Not recorded at all: 3 (here: no test matches the include glob).
  W("ste.toml", "[tests]\ninclude = [\"nothing/*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
  Spawned none = Ste({"record", "--progress", "none"});
  EXPECT_EQ(none.exit_code, 3) << none.err;
}

TEST_F(CiOutputs, ABaseCommitWithoutItsBaselineUsesTheNearestOlderOne) {
  Record();
  const std::string recorded = Head();
  W("lib/b.sh", "b() { echo B; }  # on main, not recorded yet\n");
  Commit("main moves on");
  const std::string base = Head();
  Git({"checkout", "-q", "-b", "feature"});
  W("lib/a.sh", "a() { echo A; }  # the change\n");
  Commit("feature");
  std::string summary;
  std::map<std::string, std::string> out = GithubSelect({"--base-commit", base}, &summary);
  EXPECT_EQ(out["mode"], "subset") << out["reason"];
  EXPECT_TRUE(absl::StrContains(out["reason"], "the base commit " + base.substr(0, 12) +
                                                   " has no baseline yet: compared with baseline 1 of commit " +
                                                   recorded.substr(0, 12)))
      << out["reason"];
  EXPECT_TRUE(absl::StrContains(out["reason"], "1 commit before it")) << out["reason"];
  // Both a's change and main's change to b since the baseline count.
  EXPECT_EQ(ReadFile(out["tests_file"]), "tests/test_a.sh\ntests/test_b.sh\n");
  // A base commit this clone does not have: the newest baseline, saying
  // its place cannot be seen.
  out = GithubSelect({"--base-commit", std::string(40, 'e')});
  EXPECT_EQ(out["mode"], "subset") << out["reason"];
  EXPECT_TRUE(absl::StrContains(out["reason"], "cannot see")) << out["reason"];
}

}  // namespace
}  // namespace ste
