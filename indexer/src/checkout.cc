#include "ste/checkout.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ste/git.h"
#include "ste/selection.h"

namespace ste {

CommitFacts ReadCommitFacts(const std::string& root) {
  CommitFacts f;
  absl::StatusOr<std::string> count = RunGit(root, {"rev-list", "--count", "HEAD"});
  if (count.ok()) {
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(*count), &f.mri)) {
      f.state = CommitFacts::State::kReadable;
    } else {
      f.state = CommitFacts::State::kUnreadable;
      f.error = absl::StrCat("git rev-list --count HEAD printed '", *count, "'");
      f.mri = INT64_MAX;
    }
    return f;
  }
  const std::string why(count.status().message());
  if (absl::StrContains(why, "not a git repository")) {
    f.state = CommitFacts::State::kNotGit;
  } else if (absl::StrContains(why, "ambiguous argument 'HEAD'") ||
             absl::StrContains(why, "unknown revision")) {
    f.state = CommitFacts::State::kNoCommits;  // a repository without commits yet
  } else if (absl::StrContains(why, "cannot run") || absl::StrContains(why, "No such file")) {
    f.state = CommitFacts::State::kNotGit;  // no git installed: not a git checkout to ste
  } else {
    f.state = CommitFacts::State::kUnreadable;
    f.error = why;
  }
  return f;
}

LocalCheckout::LocalCheckout(Config config, bool force_all)
    : config_(std::move(config)), force_all_(force_all) {}

const CommitFacts& LocalCheckout::facts() {
  if (!facts_) facts_ = ReadCommitFacts(config_.root);
  return *facts_;
}

int64_t LocalCheckout::mri() { return facts().mri; }

absl::StatusOr<TreeNow> LocalCheckout::ReadTree(const Inventory* stat_cache,
                                                const std::vector<std::string>& external) {
  ScanOptions scan;
  scan.root = config_.root;
  scan.ignore = config_.inventory_ignore;
  if (config_.inventory_external) scan.external_paths = external;
  absl::StatusOr<Inventory> inventory = Inventory::Scan(scan, stat_cache);
  if (!inventory.ok()) return inventory.status();
  absl::StatusOr<std::vector<std::string>> tests = DiscoverTests(config_, *inventory);
  if (!tests.ok()) return tests.status();
  TreeNow now;
  now.inventory = *std::move(inventory);
  now.tests = *std::move(tests);
  return now;
}

std::string LocalCheckout::ForceReason(const std::string& base_commit) {
  if (force_all_) return "--all given";
  const CommitFacts& f = facts();
  switch (f.state) {
    case CommitFacts::State::kNotGit:
    case CommitFacts::State::kNoCommits:
      return "";  // no commit message to carry a tag
    case CommitFacts::State::kUnreadable:
      return absl::StrCat("cannot read the git history (a force tag could be missed): ", f.error);
    case CommitFacts::State::kReadable:
      break;
  }
  // The messages of the change: the commits HEAD has and the baseline's
  // commit has not; HEAD's own when the baseline has no commit.
  absl::StatusOr<std::string> messages =
      base_commit.empty() ? RunGit(config_.root, {"log", "-1", "--format=%B", "HEAD"})
                          : RunGit(config_.root, {"log", "--format=%B", base_commit + "..HEAD"});
  if (!messages.ok()) {
    return absl::StrCat("cannot read the commit messages since the baseline's commit ",
                        base_commit.substr(0, 12),
                        " (a force tag there could be missed; a shallow clone?): ",
                        absl::StripAsciiWhitespace(messages.status().message()));
  }
  std::string force;
  for (const char* tag : kForceTags) {
    if (absl::StrContains(*messages, tag)) force = absl::StrCat("force tag ", tag, " in a commit message");
  }
  return force;
}

}  // namespace ste
