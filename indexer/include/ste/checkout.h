// The checkout a selection looks at: its rules, its tree now, its commit
// facts. Selection (scheduler/.../selection_pipeline.h) asks a Checkout
// for these in one fixed order and never reaches past it, so the same
// pipeline serves a local `ste select` (LocalCheckout: the files and git
// history on this machine) and a scheduler answering a client (a checkout
// made of what the client sent).
#ifndef STE_CHECKOUT_H_
#define STE_CHECKOUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/config.h"
#include "ste/environment.h"
#include "ste/inventory.h"

namespace ste {

// The tree of a checkout now.
struct TreeNow {
  // The inventory, to diff against the baseline's; or, when absent, the
  // changed paths as the caller knows them (path, "added" / "deleted" /
  // "modified"; see ChangesFromPaths).
  std::optional<Inventory> inventory;
  std::vector<std::pair<std::string, std::string>> changed_paths;
  std::vector<std::string> tests;  // the tests now, sorted
  // true: `tests` was not listed, because listing would run code the
  // change may have written (kind "ctest" lists by running `ctest -N`,
  // which evaluates the build tree's CMake scripts, and the configuration
  // file, which names runner.build_dir, differs from the baseline's):
  // the caller takes the baseline's tests instead (docs/SECURITY.md), and
  // those in `tests` (an --assume-changed path tests.include names).
  bool tests_from_baseline = false;
};

// What the user asked for (flags, environment): which baseline to compare
// with.
struct BaselineQuery {
  int64_t id = 0;           // --base ID: exactly this one
  std::string base_commit;  // --base-commit SHA: the one recorded for it
  int64_t mri = -1;         // --mri N / $STE_MRI: the latest with mri <= N
  // --base: "auto" (or "") or a positive id; InvalidArgument otherwise.
  static absl::StatusOr<BaselineQuery> FromFlag(const std::string& base);
};

// How a store finds that baseline: the first of these that is set decides.
struct BaselineLookup {
  int64_t id = 0;                    // > 0: exactly this one (must be complete)
  std::string commit;                // the latest complete one recorded for it
  std::vector<std::string> commits;  // the latest recorded for one of them (a
                                     // shallow clone: the commits it can see)
  int64_t mri = INT64_MAX;           // otherwise: the latest with mri <= this
  // With `commit`: when that commit has no complete baseline (main's record
  // of it lags, or main records every few pushes), the latest recorded for
  // one of `fallback_commits` (the commit's history as this checkout has
  // it, nearest first, the commit itself first), else the newest complete
  // baseline of the store. Any baseline gives a correct selection (changes
  // are found by comparing content); an older one only a wider one.
  // BaselineFallbackNote says which was taken and how far back it is.
  bool fallback = false;
  std::vector<std::string> fallback_commits;
  // Appended to the reason when none is found: what this checkout is and
  // what the user can pass instead.
  std::string hint;
};

class Checkout {
 public:
  virtual ~Checkout() = default;

  // The guardrails of its ste.toml.
  virtual const SelectionRules& rules() const = 0;

  // How to find the baseline `query` asks for. Without an id, a commit or
  // an MRI in the query: a full clone looks up the latest complete baseline
  // with mri <= MRI(HEAD) (INT64_MAX outside git: any; selection compares
  // content, so a baseline that is not an ancestor is still correct, only
  // wider); a shallow clone, whose commit count is not an MRI, the latest
  // recorded for one of the commits it can see (HEAD, the history it has,
  // and the parents named in its oldest commits).
  virtual BaselineLookup Lookup(const BaselineQuery& query) = 0;

  // The tree now. `stat_cache` (may be null) is the baseline's inventory,
  // to reuse hashes of unchanged files; `external` are the absolute paths
  // outside the repository the baseline's tests read and the view paths
  // they used (RequestedPaths), to be inventoried too. LocalCheckout also
  // computes every view path of `stat_cache`; with `[inventory] external =
  // false` it leaves out the absolute paths (views included) and keeps the
  // repo views. An error means no test list can be made (callers run all
  // and say so). LocalCheckout does not run `ctest -N` (kind "ctest") when
  // `stat_cache` is given and the configuration file's entry in it differs
  // from the tree's (tests_from_baseline).
  virtual absl::StatusOr<TreeNow> ReadTree(const Inventory* stat_cache,
                                           const std::vector<std::string>& external) = 0;

  // A reason to run every test whatever changed since `base_commit` (""
  // when the baseline has no commit): --all, a force tag ("[test all]",
  // "[no filter]") in a commit message of the change, or the messages
  // could not be read (a tag could be missed: any doubt widens). "" for
  // none. SelectForCheckout calls it on another thread while ReadTree
  // runs: the two must not share state they change.
  virtual std::string ForceReason(const std::string& base_commit) = 0;
};

// What git says of a checkout, read once.
struct CommitFacts {
  enum class State { kNotGit, kNoCommits, kUnreadable, kReadable };
  State state = State::kNotGit;
  std::string head;         // HEAD's commit id, when kReadable
  bool shallow = false;     // a shallow clone: part of the history is missing
  int64_t mri = INT64_MAX;  // commits reachable from HEAD, when kReadable and
                            // not shallow (a shallow clone cannot count them)
  std::string error;        // why, when kUnreadable
};

// `git rev-parse --is-shallow-repository HEAD`, then (unless shallow)
// `git rev-list --count HEAD`, in `root`.
CommitFacts ReadCommitFacts(const std::string& root);

// How many commits a shallow checkout offers the baseline lookup.
inline constexpr size_t kMaxVisibleCommits = 1000;

// The commits a (shallow) checkout can name, nearest first: HEAD, the
// history it has, then the parents its oldest commits name but that were
// not fetched (their ids are in the commit objects). At most `limit`.
absl::StatusOr<std::vector<std::string>> VisibleCommits(const std::string& root, size_t limit);

// The commit messages of the change since `base` (exclusive) up to `head`
// (HEAD's id), walking the parents the commit objects name; HEAD's own
// message when `base` is "". NotFound naming the first
// commit on the way that this checkout does not have (a shallow clone that
// does not reach `base`): its message, and a tag in it, cannot be read.
absl::StatusOr<std::string> MessagesSince(const std::string& root, const std::string& base,
                                          const std::string& head, bool shallow);

// The force tags of ForceReason, in the order they are looked for (the
// last one found names the reason).
inline constexpr const char* kForceTags[] = {"[test all]", "[no filter]"};

// The checkout of `config.root` on this machine. Runs git lazily, each
// fact once: HEAD and whether the clone is shallow, the MRI, the messages
// of the change (and in a shallow clone the commits it can see).
class LocalCheckout final : public Checkout {
 public:
  // `force_all`: --all was given.
  LocalCheckout(Config config, bool force_all);

  const Config& config() const { return config_; }
  const SelectionRules& rules() const override { return config_.selection; }
  BaselineLookup Lookup(const BaselineQuery& query) override;
  const CommitFacts& facts();
  absl::StatusOr<TreeNow> ReadTree(const Inventory* stat_cache,
                                   const std::vector<std::string>& external) override;
  std::string ForceReason(const std::string& base_commit) override;
  // Without a stat cache (`select --scheduler`): the baseline's entries of
  // the source files its definition views name, and of those views
  // (definitions.h), so that ReadTree fingerprints only the files that
  // changed. Not set: every such file is fingerprinted.
  void SetDefinitionBase(Inventory base) { definition_base_ = std::move(base); }
  // The change's text as the CI knows it (`select --change-text`): its
  // commit messages, a pull request's title, body and labels. Once set,
  // ForceReason looks for the force tags there and no longer in the
  // commit messages git can reach (a shallow merge commit of a pull
  // request reaches none of its commits); whoever makes the text answers
  // for its holding every message of the change (deploy/github/ste-ci.sh).
  void SetChangeText(std::string text) { change_text_ = std::move(text); }
  // A what-if (`select --assume-changed`): with a baseline (a stat cache)
  // the tree is not read; ReadTree
  // gives these paths (repo-relative, or absolute outside the root) as
  // the change, each "modified" (added where the baseline lacks it), and
  // the baseline's tests plus those of the paths that tests.include
  // names; the commit messages carry no force tag (the change has none
  // yet; --all still counts).
  void AssumeChanged(std::vector<std::string> paths) { assumed_ = std::move(paths); }
  // The environment the tests will run in (`select --env-file`), whose
  // variables ReadTree compares with the baseline's (environment.h). Not
  // set: this process's own.
  void SetEnvironment(Environment env) { environment_ = std::move(env); }

 private:
  Config config_;
  bool force_all_;
  std::optional<std::vector<std::string>> assumed_;
  std::optional<std::string> change_text_;
  std::optional<Inventory> definition_base_;
  std::optional<CommitFacts> facts_;
  std::optional<Environment> environment_;
};

}  // namespace ste

#endif  // STE_CHECKOUT_H_
