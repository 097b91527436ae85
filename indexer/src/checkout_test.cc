// LocalCheckout's commit facts and force reasons on real git repositories.
#include "ste/checkout.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "ste/git.h"

namespace ste {
namespace {

class GitCheckout : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = "/tmp/ste-checkout-XXXXXX";
    ASSERT_NE(mkdtemp(root_.data()), nullptr);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Git(const std::vector<std::string>& args) {
    absl::StatusOr<std::string> out = RunGit(root_, args);
    ASSERT_TRUE(out.ok()) << out.status();
  }
  void Init() {
    Git({"init", "-q", "-b", "main"});
    Git({"config", "user.email", "t@example.com"});
    Git({"config", "user.name", "t"});
    Git({"config", "commit.gpgsign", "false"});
  }
  std::string Commit(const std::string& message) {
    std::ofstream(root_ + "/f", std::ios::app) << message << "\n";
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", message});
    return std::string(absl::StripAsciiWhitespace(*RunGit(root_, {"rev-parse", "HEAD"})));
  }
  LocalCheckout Checkout(bool all = false) {
    Config c;
    c.root = root_;
    return LocalCheckout(c, all);
  }
  std::string root_;
};

TEST_F(GitCheckout, OutsideGitThereIsNoMriAndNoTag) {
  EXPECT_EQ(ReadCommitFacts(root_).state, CommitFacts::State::kNotGit);
  LocalCheckout c = Checkout();
  EXPECT_EQ(c.mri(), INT64_MAX);
  EXPECT_EQ(c.ForceReason(""), "");
  EXPECT_EQ(c.ForceReason("0123abcd"), "");
  EXPECT_EQ(Checkout(true).ForceReason(""), "--all given");
}

TEST_F(GitCheckout, ARepositoryWithoutCommits) {
  Init();
  EXPECT_EQ(ReadCommitFacts(root_).state, CommitFacts::State::kNoCommits);
  EXPECT_EQ(Checkout().mri(), INT64_MAX);
  EXPECT_EQ(Checkout().ForceReason(""), "");
}

TEST_F(GitCheckout, TheMriCountsCommits) {
  Init();
  Commit("one");
  Commit("two");
  CommitFacts f = ReadCommitFacts(root_);
  EXPECT_EQ(f.state, CommitFacts::State::kReadable);
  EXPECT_EQ(f.mri, 2);
  EXPECT_EQ(Checkout().mri(), 2);
}

TEST_F(GitCheckout, ATagInAnyCommitSinceTheBaselineForcesAll) {
  Init();
  std::string base = Commit("base");
  Commit("tagged [test all]");
  Commit("after it");
  EXPECT_EQ(Checkout().ForceReason(base), "force tag [test all] in a commit message");
  Commit("and [no filter]");
  EXPECT_EQ(Checkout().ForceReason(base), "force tag [no filter] in a commit message");
}

TEST_F(GitCheckout, NoTagSinceTheBaselineIsNoReason) {
  Init();
  Commit("old [test all]");  // before the baseline: not part of the change
  std::string base = Commit("base");
  std::string head = Commit("plain");
  EXPECT_EQ(Checkout().ForceReason(base), "");
  EXPECT_EQ(Checkout().ForceReason(head), "") << "nothing committed since the baseline";
}

TEST_F(GitCheckout, WithoutABaselineCommitHeadsMessageCounts) {
  Init();
  Commit("plain");
  EXPECT_EQ(Checkout().ForceReason(""), "");
  Commit("now [test all]");
  EXPECT_EQ(Checkout().ForceReason(""), "force tag [test all] in a commit message");
}

TEST_F(GitCheckout, ABaselineCommitThisCheckoutDoesNotHaveWidensToAll) {
  // As in a shallow clone that does not reach the baseline's commit: a
  // tag in between cannot be ruled out.
  Init();
  Commit("plain");
  std::string reason = Checkout().ForceReason("0123456789abcdef0123456789abcdef01234567");
  EXPECT_NE(reason.find("cannot read the commit messages since the baseline's commit 0123456789ab"),
            std::string::npos)
      << reason;
}

TEST_F(GitCheckout, ABrokenRepositoryWidensToAll) {
  Init();
  Commit("plain");
  // HEAD names an object that is not there.
  std::ofstream(root_ + "/.git/refs/heads/main") << "1111111111111111111111111111111111111111\n";
  CommitFacts f = ReadCommitFacts(root_);
  EXPECT_EQ(f.state, CommitFacts::State::kUnreadable) << f.error;
  EXPECT_EQ(f.mri, INT64_MAX);
  EXPECT_NE(Checkout().ForceReason("").find("cannot read the git history"), std::string::npos);
}

}  // namespace
}  // namespace ste
