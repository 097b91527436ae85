// LocalCheckout's commit facts and force reasons on real git repositories.
#include "ste/checkout.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_split.h"
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

// The views of the baseline (its inventory's, and those its index names)
// are computed; with inventory.external = false the outside ones are left
// out, with the other outside paths, and the repo ones kept.
TEST_F(GitCheckout, ReadTreeComputesTheBaselinesViews) {
  std::filesystem::create_directories(root_ + "/src/a-1.0.dist-info");
  const std::string outside = root_ + "-outside";
  std::filesystem::create_directories(outside + "/b-1.0.dist-info");
  const std::string repo_view = "src/\x01ste-dists", root_view = "\x01ste-pth";
  const std::string outside_view = outside + "/\x01ste-dists", outside_file = outside + "/f.py";
  InventoryEntry cached;
  cached.path = root_view;
  cached.type = FileType::kRegular;
  Inventory stat_cache = *Inventory::FromEntries({cached}, 0);
  for (bool external : {true, false}) {
    Config c;
    c.root = root_;
    c.inventory_external = external;
    c.test_include = *GlobSet::Compile({"**"});
    LocalCheckout checkout(c, false);
    absl::StatusOr<TreeNow> tree =
        checkout.ReadTree(&stat_cache, {outside_file, outside_view, repo_view});
    ASSERT_TRUE(tree.ok()) << tree.status();
    ASSERT_NE(tree->inventory->Find(repo_view), nullptr);
    EXPECT_EQ(tree->inventory->Find(repo_view)->type, FileType::kRegular);
    ASSERT_NE(tree->inventory->Find(root_view), nullptr) << "the stat cache's view";
    EXPECT_EQ(tree->inventory->Find(outside_view) != nullptr, external);
    EXPECT_EQ(tree->inventory->Find(outside_file) != nullptr, external);
    for (const std::string& t : tree->tests) EXPECT_FALSE(IsViewPath(t)) << "a view is no test";
  }
  std::filesystem::remove_all(outside);
}

TEST_F(GitCheckout, OutsideGitThereIsNoMriAndNoTag) {
  EXPECT_EQ(ReadCommitFacts(root_).state, CommitFacts::State::kNotGit);
  LocalCheckout c = Checkout();
  EXPECT_EQ(c.Lookup(BaselineQuery{}).mri, INT64_MAX);
  EXPECT_EQ(c.ForceReason(""), "");
  EXPECT_EQ(c.ForceReason("0123abcd"), "");
  EXPECT_EQ(Checkout(true).ForceReason(""), "--all given");
}

TEST_F(GitCheckout, ARepositoryWithoutCommits) {
  Init();
  EXPECT_EQ(ReadCommitFacts(root_).state, CommitFacts::State::kNoCommits);
  EXPECT_EQ(Checkout().Lookup(BaselineQuery{}).mri, INT64_MAX);
  EXPECT_EQ(Checkout().ForceReason(""), "");
}

TEST_F(GitCheckout, TheMriCountsCommits) {
  Init();
  Commit("one");
  Commit("two");
  CommitFacts f = ReadCommitFacts(root_);
  EXPECT_EQ(f.state, CommitFacts::State::kReadable);
  EXPECT_EQ(f.mri, 2);
  EXPECT_EQ(Checkout().Lookup(BaselineQuery{}).mri, 2);
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

TEST_F(GitCheckout, TheQueryDecidesBeforeTheHistory) {
  Init();
  Commit("one");
  BaselineQuery q;
  q.mri = 7;
  EXPECT_EQ(Checkout().Lookup(q).mri, 7);
  q.base_commit = "abc";
  EXPECT_EQ(Checkout().Lookup(q).commit, "abc");
  q.id = 3;
  EXPECT_EQ(Checkout().Lookup(q).id, 3);
}

// A depth-1 clone (as actions/checkout makes) of a repository with 3
// commits, and a depth-2 one.
class ShallowCheckout : public GitCheckout {
 protected:
  void SetUp() override {
    GitCheckout::SetUp();
    Init();
    first_ = Commit("first");
    second_ = Commit("second [test all]");
    third_ = Commit("third");
  }
  std::string Clone(int depth) {
    std::string dir = root_ + "-clone" + std::to_string(depth);
    absl::StatusOr<std::string> out =
        RunAndCapture({"git", "clone", "-q", "--depth", std::to_string(depth), "file://" + root_, dir});
    EXPECT_TRUE(out.ok()) << out.status();
    clones_.push_back(dir);
    return dir;
  }
  void TearDown() override {
    for (const std::string& c : clones_) std::filesystem::remove_all(c);
    GitCheckout::TearDown();
  }
  LocalCheckout At(const std::string& dir) {
    Config c;
    c.root = dir;
    return LocalCheckout(c, false);
  }
  std::string first_, second_, third_;
  std::vector<std::string> clones_;
};

TEST_F(ShallowCheckout, SeesHeadAndTheParentItsObjectNames) {
  std::string clone = Clone(1);
  CommitFacts f = ReadCommitFacts(clone);
  EXPECT_EQ(f.state, CommitFacts::State::kReadable);
  EXPECT_TRUE(f.shallow);
  EXPECT_EQ(f.head, third_);
  EXPECT_EQ(f.mri, INT64_MAX) << "a shallow clone's commit count is no MRI";
  absl::StatusOr<std::vector<std::string>> seen = VisibleCommits(clone, 100);
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(*seen, (std::vector<std::string>{third_, second_}));
  BaselineLookup which = At(clone).Lookup(BaselineQuery{});
  EXPECT_EQ(which.commits, *seen);
  EXPECT_NE(which.hint.find("--base-commit"), std::string::npos) << which.hint;
  EXPECT_FALSE(ReadCommitFacts(root_).shallow);
}

TEST_F(ShallowCheckout, ForceTagsOfThePresentCommitsAreReadTheMissingOnesWidenToAll) {
  std::string one = Clone(1);
  // The baseline is HEAD's parent: the change is HEAD alone, which is here.
  EXPECT_EQ(At(one).ForceReason(second_), "");
  // The baseline is further back: "second [test all]" is not in the clone.
  std::string reason = At(one).ForceReason(first_);
  EXPECT_NE(reason.find("cannot read the commit messages since the baseline's commit"), std::string::npos)
      << reason;
  EXPECT_NE(reason.find("is not in this checkout"), std::string::npos) << reason;
  std::string two = Clone(2);
  EXPECT_EQ(At(two).ForceReason(first_), "force tag [test all] in a commit message");
  // A project without force tags does not need the messages.
  Config c;
  c.root = one;
  c.selection.force_tags = false;
  EXPECT_EQ(LocalCheckout(c, false).ForceReason(first_), "");
}

// The shallow walk reads every commit of a long change through one `git
// cat-file --batch`: a tag in the oldest commit of 40 is found, and the
// messages are those `git log` prints.
TEST_F(ShallowCheckout, AWalkOverManyCommitsReadsEveryMessageThroughOneProcess) {
  const std::string base = third_;
  Commit("fourth: the change's oldest [no filter]");
  for (int i = 0; i < 39; i++) Commit("change " + std::to_string(i) + "\n\nwith a body");
  std::string clone = Clone(45);
  const std::string head(absl::StripAsciiWhitespace(*RunGit(clone, {"rev-parse", "HEAD"})));
  absl::StatusOr<std::string> walked = MessagesSince(clone, base, head, /*shallow=*/true);
  ASSERT_TRUE(walked.ok()) << walked.status();
  absl::StatusOr<std::string> logged = MessagesSince(clone, base, head, /*shallow=*/false);
  ASSERT_TRUE(logged.ok()) << logged.status();
  // The same messages (the walk's order is its own): compare them sorted.
  auto sorted_lines = [](const std::string& text) {
    std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  EXPECT_EQ(sorted_lines(*walked), sorted_lines(*logged));
  EXPECT_EQ(sorted_lines(*walked).size(), 40u + 39u);
  EXPECT_EQ(At(clone).ForceReason(base), "force tag [no filter] in a commit message");
}

TEST_F(ShallowCheckout, TheObjectReaderHandsOutObjectsAndSaysWhatIsMissing) {
  absl::StatusOr<std::unique_ptr<GitObjectReader>> reader = GitObjectReader::Start(root_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<GitObject> commit = (*reader)->Read(third_);
  ASSERT_TRUE(commit.ok()) << commit.status();
  EXPECT_EQ(commit->type, "commit");
  EXPECT_NE(commit->content.find("parent " + second_ + "\n"), std::string::npos) << commit->content;
  EXPECT_NE(commit->content.find("\n\nthird\n"), std::string::npos) << commit->content;
  absl::StatusOr<GitObject> blob = (*reader)->Read(third_ + ":f");
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_EQ(blob->type, "blob");
  EXPECT_EQ(blob->content, "first\nsecond [test all]\nthird\n");
  absl::StatusOr<GitObject> missing = (*reader)->Read(std::string(40, 'e'));
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_TRUE(absl::IsInvalidArgument((*reader)->Read("a\nb").status()));
  EXPECT_TRUE(absl::IsInvalidArgument((*reader)->Read("").status()));
  // Still answering after all that.
  absl::StatusOr<GitObject> again = (*reader)->Read(first_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->type, "commit");
}

}  // namespace
}  // namespace ste
