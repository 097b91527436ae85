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
};

class Checkout {
 public:
  virtual ~Checkout() = default;

  // The guardrails of its ste.toml.
  virtual const SelectionRules& rules() const = 0;

  // The MRI the automatic baseline lookup uses: the latest complete
  // baseline with mri <= this. INT64_MAX: any (selection compares content,
  // so a baseline that is not an ancestor is still correct, only wider).
  virtual int64_t mri() = 0;

  // The tree now. `stat_cache` (may be null) is the baseline's inventory,
  // to reuse hashes of unchanged files; `external` are the absolute paths
  // outside the repository the baseline's tests read, to be inventoried
  // too. An error means no test list can be made (callers run all and say
  // so).
  virtual absl::StatusOr<TreeNow> ReadTree(const Inventory* stat_cache,
                                           const std::vector<std::string>& external) = 0;

  // A reason to run every test whatever changed since `base_commit` (""
  // when the baseline has no commit): --all, a force tag ("[test all]",
  // "[no filter]") in a commit message of the change, or the messages
  // could not be read (a tag could be missed: any doubt widens). "" for
  // none.
  virtual std::string ForceReason(const std::string& base_commit) = 0;
};

// What git says of a checkout, read once.
struct CommitFacts {
  enum class State { kNotGit, kNoCommits, kUnreadable, kReadable };
  State state = State::kNotGit;
  int64_t mri = INT64_MAX;  // commits reachable from HEAD, when kReadable
  std::string error;        // why, when kUnreadable
};

// One `git rev-list --count HEAD` in `root`.
CommitFacts ReadCommitFacts(const std::string& root);

// The force tags of ForceReason, in the order they are looked for (the
// last one found names the reason).
inline constexpr const char* kForceTags[] = {"[test all]", "[no filter]"};

// The checkout of `config.root` on this machine. Runs git at most twice
// (the MRI, then the messages of the change), lazily.
class LocalCheckout final : public Checkout {
 public:
  // `force_all`: --all was given.
  LocalCheckout(Config config, bool force_all);

  const Config& config() const { return config_; }
  const SelectionRules& rules() const override { return config_.selection; }
  int64_t mri() override;
  absl::StatusOr<TreeNow> ReadTree(const Inventory* stat_cache,
                                   const std::vector<std::string>& external) override;
  std::string ForceReason(const std::string& base_commit) override;

 private:
  const CommitFacts& facts();

  Config config_;
  bool force_all_;
  std::optional<CommitFacts> facts_;
};

}  // namespace ste

#endif  // STE_CHECKOUT_H_
