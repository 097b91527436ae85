// `ste select` in the checkouts CI makes: a depth-1 clone of a branch, a
// pull request's merge commit fetched at depth 1 and 2, with the store of
// the full repository copied in (as a CI cache would). Each must select
// what the full clone selects, or all with a reason that says what to pass.
#include <signal.h>
#include <unistd.h>

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

struct Selected {
  Spawned run;
  std::string mode;
  std::set<std::string> tests;
};

class ShallowClone : public ::testing::Test {
 protected:
  void SetUp() override {
    origin_ = MakeTempDir();
    W("lib/a.sh", "a() { echo A; }\n");
    W("lib/b.sh", "b() { echo B; }\n");
    W("tests/test_a.sh", ". lib/a.sh\n[ \"$(a)\" = A ]\n");
    W("tests/test_b.sh", ". lib/b.sh\n[ \"$(b)\" = B ]\n");
    W("tests/test_c.sh", "true\n");
    W("ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
    ::ste::testing::InitGitRepo(origin_);
    Git(origin_, {"add", "-A"});
    Git(origin_, {"commit", "-q", "-m", "main: init"});
    Git(origin_, {"commit", "-q", "--allow-empty", "-m", "main: more history"});
    Spawned r = Ste(origin_, {"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    main_ = Head(origin_);
  }

  void W(const std::string& rel, const std::string& content) { WriteFile(origin_ + "/" + rel, content); }
  void Git(const std::string& dir, const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(dir, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  std::string Head(const std::string& dir) {
    Spawned s = ::ste::testing::Git(dir, {"rev-parse", "HEAD"});
    return s.out.substr(0, 40);
  }
  Spawned Ste(const std::string& dir, std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, dir);
  }
  Selected Select(const std::string& dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"select", "--explain"};
    args.insert(args.end(), extra.begin(), extra.end());
    Selected s;
    s.run = Ste(dir, args);
    s.mode = ::ste::testing::SelectedMode(s.run.err);
    s.tests = ::ste::testing::SelectedTests(s.run.out);
    return s;
  }
  // A clone of `branch` at `depth` with origin's store copied in.
  std::string Clone(const std::string& branch, int depth) {
    std::string dir = MakeTempDir() + "/clone";
    Spawned c = Spawn({"git", "clone", "-q", "--depth", std::to_string(depth), "--branch", branch,
                       "file://" + origin_, dir},
                      {}, "/");
    EXPECT_EQ(c.exit_code, 0) << c.err;
    Spawned cp = Spawn({"cp", "-a", origin_ + "/.ste", dir + "/.ste"}, {}, "/");
    EXPECT_EQ(cp.exit_code, 0) << cp.err;
    return dir;
  }
  // A one-file change on branch `feature`, based on main's recorded tip.
  void Feature() {
    Git(origin_, {"checkout", "-q", "-b", "feature"});
    W("lib/b.sh", "b() { echo B; }  # changed\n");
    Git(origin_, {"commit", "-q", "-a", "-m", "feature: touch b"});
  }
  // GitHub's refs/pull/N/merge: main's tip merged with the PR's head, on
  // branch pr-merge.
  void MergeFeatureIntoMain() {
    Git(origin_, {"checkout", "-q", "-b", "pr-merge", main_});
    Git(origin_, {"merge", "-q", "--no-ff", "-m", "Merge feature into main", "feature"});
  }
  std::string Describe(const Selected& s) { return s.run.err + s.run.out; }

  std::string origin_, main_;
};

TEST_F(ShallowClone, ADepthOneCloneOfABranchSelectsWhatTheFullCloneSelects) {
  Feature();
  Selected full = Select(origin_);
  ASSERT_EQ(full.mode, "subset") << Describe(full);
  ASSERT_EQ(full.tests, std::set<std::string>{"tests/test_b.sh"});
  std::string clone = Clone("feature", 1);
  Selected shallow = Select(clone);
  EXPECT_EQ(shallow.mode, "subset") << Describe(shallow);
  EXPECT_EQ(shallow.tests, full.tests) << Describe(shallow);
  EXPECT_NE(shallow.run.err.find("(baseline 1,"), std::string::npos) << shallow.run.err;
}

TEST_F(ShallowClone, APullRequestMergeCommitAtDepthTwoSelectsWhatTheFullCloneSelects) {
  Feature();
  MergeFeatureIntoMain();
  Selected full = Select(origin_);
  ASSERT_EQ(full.tests, std::set<std::string>{"tests/test_b.sh"}) << Describe(full);
  Selected two = Select(Clone("pr-merge", 2));
  EXPECT_EQ(two.mode, "subset") << Describe(two);
  EXPECT_EQ(two.tests, full.tests) << Describe(two);

  // At depth 1 the PR's own commit is missing: the baseline is found (the
  // merge commit names main's tip), but a force tag in the PR's commit
  // cannot be ruled out, and the reason says so and what to do.
  std::string one = Clone("pr-merge", 1);
  Selected d1 = Select(one);
  EXPECT_EQ(d1.mode, "all") << Describe(d1);
  EXPECT_NE(d1.run.err.find("cannot read the commit messages since the baseline's commit"),
            std::string::npos)
      << d1.run.err;
  EXPECT_NE(d1.run.err.find("force_tags = false"), std::string::npos) << d1.run.err;
}

TEST_F(ShallowClone, WithoutForceTagsADepthOneMergeCommitSelectsTheSubset) {
  W("ste.toml", ReadFile(origin_ + "/ste.toml") + "[selection]\nforce_tags = false\n");
  Git(origin_, {"commit", "-q", "-a", "-m", "main: no force tags"});
  Spawned r = Ste(origin_, {"record", "--progress", "none"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  main_ = Head(origin_);
  Feature();
  MergeFeatureIntoMain();
  Selected full = Select(origin_);
  ASSERT_EQ(full.tests, std::set<std::string>{"tests/test_b.sh"}) << Describe(full);
  Selected one = Select(Clone("pr-merge", 1));
  EXPECT_EQ(one.mode, "subset") << Describe(one);
  EXPECT_EQ(one.tests, full.tests) << Describe(one);
}

TEST_F(ShallowClone, ThroughASchedulerADepthOneCloneSelectsWhatTheFullCloneSelects) {
  // The lookup (the commits a shallow clone can see) travels to the
  // scheduler, which answers from its own store.
  Feature();
  Selected full = Select(origin_);
  ASSERT_EQ(full.tests, std::set<std::string>{"tests/test_b.sh"}) << Describe(full);
  ::ste::testing::SchedulerProcess server(kSte, "sqlite:" + origin_ + "/.ste/ste.db", MakeTempDir());
  ::ste::testing::Process& scheduler = server.process();
  const std::string address = server.address();
  ASSERT_FALSE(address.empty()) << scheduler.err();
  std::string clone = Clone("feature", 1);
  Spawned cleared = Spawn({"rm", "-rf", clone + "/.ste"}, {}, "/");  // only the scheduler's store
  ASSERT_EQ(cleared.exit_code, 0);
  Selected remote = Select(clone, {"--scheduler", address});
  EXPECT_EQ(remote.mode, "subset") << Describe(remote) << scheduler.err();
  EXPECT_EQ(remote.tests, full.tests) << Describe(remote);
  scheduler.Signal(SIGTERM);
  EXPECT_EQ(scheduler.Wait(60), 0) << scheduler.err();
}

TEST_F(ShallowClone, ForceTagsInThePresentCommitsAreHonoured) {
  Git(origin_, {"checkout", "-q", "-b", "feature"});
  W("lib/a.sh", "a() { echo A; }  # changed\n");
  Git(origin_, {"commit", "-q", "-a", "-m", "feature [test all]"});
  Selected s = Select(Clone("feature", 1));
  EXPECT_EQ(s.mode, "all") << Describe(s);
  EXPECT_NE(s.run.err.find("force tag [test all]"), std::string::npos) << s.run.err;
}

TEST_F(ShallowClone, NoRecordedCommitInSightSaysWhatToPass) {
  Feature();
  W("lib/a.sh", "a() { echo A; }  # again\n");
  Git(origin_, {"commit", "-q", "-a", "-m", "feature: two"});
  std::string clone = Clone("feature", 1);  // sees feature's tip and its parent only
  Selected s = Select(clone);
  EXPECT_EQ(s.mode, "all") << Describe(s);
  EXPECT_NE(s.run.err.find("shallow clone"), std::string::npos) << s.run.err;
  EXPECT_NE(s.run.err.find("--base-commit"), std::string::npos) << s.run.err;
  // The base the CI knows finds it; the change is then read by content.
  Selected based = Select(clone, {"--base-commit", main_});
  EXPECT_NE(based.run.err.find("(baseline 1,"), std::string::npos) << Describe(based);
  EXPECT_EQ(based.mode, "all") << "the commits in between are missing: " << Describe(based);
  Selected by_mri = Select(clone, {"--mri", "2"});
  EXPECT_NE(by_mri.run.err.find("(baseline 1,"), std::string::npos) << Describe(by_mri);
  Spawned by_env = Spawn({kSte, "select"}, {"STE_MRI=2"}, clone);
  EXPECT_NE(by_env.err.find("(baseline 1,"), std::string::npos) << by_env.err;
  Spawned bad = Spawn({kSte, "select"}, {"STE_MRI=two"}, clone);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

TEST_F(ShallowClone, RecordInAShallowCloneNeedsAnMri) {
  Feature();
  std::string clone = Clone("feature", 1);
  Spawned r = Ste(clone, {"record", "--progress", "none"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("shallow clone"), std::string::npos) << r.err;
  Spawned based = Ste(clone, {"record", "--progress", "none", "--base-commit", main_});
  EXPECT_EQ(based.exit_code, 0) << based.out << based.err;
  EXPECT_NE(based.out.find("(mri 3, commit "), std::string::npos) << based.out;
  Spawned env = Spawn({kSte, "record", "--progress", "none"}, {"STE_MRI=9"}, clone);
  EXPECT_EQ(env.exit_code, 0) << env.out << env.err;
  EXPECT_NE(env.out.find("(mri 9, commit "), std::string::npos) << env.out;
}

}  // namespace
}  // namespace ste
