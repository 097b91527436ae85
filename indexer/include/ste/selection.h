// Selection: which tests a change can affect, and why.
//
// Given the baseline's index and the tree's changes since its inventory,
// Select() applies the guardrails (docs/concepts.md) in order; the first
// that decides the mode wins:
//   1. no usable baseline                        -> all
//   2. a force tag in a commit message, or --all -> all
//   2b. ste.toml itself changed                  -> all
//   3. every changed path matches skip_all       -> none
//   4. a changed path matches run_all            -> all
//   5. subset = affected ∪ new tests ∪ tests that failed in the baseline
//               ∪ mandatory ∪ opaque;  empty -> none, every test -> all
// where affected = tests depending on (p, content) for p modified or
// deleted, (p, absent) for p added, (d, listing) for a directory d whose
// names changed, and (v, content) for a view v (inventory.h, "Views")
// changed in any way (its directory came or went too). An external path
// that appears (was kMissing) counts as added, one that disappears as
// deleted. Rules 3 and 4 apply only when something changed.
//
// A directory's `content` (a stat of it) is its existence and type: it is
// affected when the directory is deleted or replaced (by a file, a link),
// never by entries coming or going, which only its `listing` sees. So:
//   - a repo directory whose names changed is the echo of the entries that
//     came or went: rule 3 (skip_all) weighs those entries, not it; rule 4
//     (run_all) matches it too, which is only ever wider;
//   - an external directory whose names changed and that no test lists is
//     no change at all (Selection::changed leaves it out): e.g. the
//     checkout's parent, which pytest stats, when a directory is created
//     next to the checkout. A listed one counts, and is never skippable;
//   - a repo view's change is an echo too, of the real entries of its
//     directory that explain it (rule 4 never looks at it, rule 3 when no
//     real change explains it: a view through a symlink); an external
//     view's, like a listed external directory's, counts and is never
//     skippable.
//
// Fail safe: any error while reading the index (a corrupt bitmap, ...)
// widens the answer to all, with the error as the reason. Never narrows.
#ifndef STE_SELECTION_H_
#define STE_SELECTION_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/config.h"
#include "ste/dependency.h"
#include "ste/inventory.h"
#include "ste/selection_index.h"

namespace ste {

enum class SelectionMode { kAll, kSubset, kNone };
std::string_view SelectionModeName(SelectionMode mode);  // all/subset/none

// The rules that select a test whatever changed.
enum class SelectionRule : uint8_t {
  kNewTest,           // not in the baseline
  kFailedInBaseline,  // did not pass in the baseline
  kMandatory,         // selection.mandatory names it
  kOpaque,            // it ran something ste could not trace
};
// Every rule, in enum order (a new one is added here too).
inline constexpr SelectionRule kSelectionRules[] = {
    SelectionRule::kNewTest, SelectionRule::kFailedInBaseline, SelectionRule::kMandatory,
    SelectionRule::kOpaque};

// Why one test was selected: a dependency that changed (lib/a.py, content,
// modified), or a rule. Typed here; the words of the outputs and the wire
// (ReasonKindWord, ReasonChangeWord) are made at the edges only.
struct SelectionReason {
  std::string path;                          // the dependency; "" for a rule
  DepKind kind = DepKind::kContent;          // a dependency's
  ChangeKind change = ChangeKind::kModified; // a dependency's
  std::optional<SelectionRule> rule;         // set: a rule (path, kind,
                                             // change unused)

  static SelectionReason Dependency(std::string path, DepKind kind, ChangeKind change) {
    return SelectionReason{std::move(path), kind, change, std::nullopt};
  }
  static SelectionReason Rule(SelectionRule rule) { return SelectionReason{"", {}, {}, rule}; }
  bool operator==(const SelectionReason& o) const {
    return rule ? rule == o.rule : !o.rule && path == o.path && kind == o.kind && change == o.change;
  }
  bool operator!=(const SelectionReason& o) const { return !(*this == o); }
};

// "content", "absent", "listing"; "" for a rule.
std::string_view ReasonKindWord(const SelectionReason& reason);
// "modified", "added", "deleted", "changed" (a listing whose directory is
// still one), or the rule: "new test", "failed in baseline", "mandatory",
// "opaque: it ran something ste could not trace".
std::string_view ReasonChangeWord(const SelectionReason& reason);
// The reason those two words (and `path`) name; InvalidArgument for words
// no reason has (a peer that speaks another version: the caller widens).
absl::StatusOr<SelectionReason> ReasonFromWords(std::string path, std::string_view kind,
                                                std::string_view change);

struct SelectedTest {
  std::string test;  // repo-relative path
  std::vector<SelectionReason> reasons;  // at most kMaxReasons
  size_t more_reasons = 0;                // reasons left out
  // Its wall time in the baseline compared with; none for a test the
  // baseline did not run, or without a baseline (set by the selection
  // pipeline, not by Select; shards.h splits by it).
  std::optional<double> seconds;
  // selection.cases (tests.unit = "case"): when set, only these cases of
  // the file (their names as the runner gives them, in the order they ran
  // in the baseline), because every change that selected it lies in the
  // own part of the first of them, or of a later one (case_split.h; the
  // later ones see the state it leaves); empty: the whole file.
  std::vector<std::string> cases;
  // runner.retries: in the baseline it did not pass, then passed when run
  // again (set by the selection pipeline, not by Select). A note for its
  // reader: never a reason to select it, nor to leave it out.
  bool flaky = false;
};

// A dependency (or a rule) that pulled many tests into a selection.
struct WideCause {
  SelectionReason cause;
  size_t tests = 0;    // tests of the selection it pulled in
  // For a listing: the entries that came or went in `path` (at most
  // kMaxWideEntries; path and kAdded or kDeleted), and how many more.
  std::vector<std::pair<std::string, ChangeKind>> entries;
  size_t more_entries = 0;
};

struct Selection {
  SelectionMode mode = SelectionMode::kAll;
  std::string reason;
  std::vector<InventoryChange> changed;  // the changes a test can see (see top)
  std::vector<SelectedTest> tests;  // sorted by test
  // When the selection is wide (mode all because every test is affected,
  // or a subset of more than a quarter of the tests): the few causes that
  // pulled in the most tests, most first, so that a user sees what to fix
  // or ignore. Empty otherwise (a guardrail's mode all says its reason).
  std::vector<WideCause> wide;
};

inline constexpr size_t kMaxReasons = 16;
inline constexpr size_t kMaxWideCauses = 3;
inline constexpr size_t kMaxWideEntries = 3;

// What a selection compares, all of it required: the baseline's index and
// the tests that did not pass in it, and the tree's changes since.
struct SelectionInputs {
  const SelectionIndex& index;
  std::vector<std::string> failed_tests;   // not passed in the baseline
  std::vector<InventoryChange> changes;    // sorted by path: Inventory::Diff
                                           // or ChangesFromPaths
  std::vector<std::string> head_tests;     // the tests now, sorted
  std::string force_all;                   // non-empty: mode all (a force
                                           // tag, --all), this reason
};

// Guardrails 2 to 5 (see top) on a usable baseline. Pure: reads only its
// arguments (the index through its mmap).
Selection Select(const SelectionRules& rules, const SelectionInputs& in);

// Guardrail 1: no usable baseline, for the reason `why` -> mode all.
Selection SelectWithoutBaseline(const std::string& why, const std::vector<std::string>& head_tests);

// Mode all over `head_tests` with `reason` as it stands (for errors around
// selection: the caller says what went wrong).
Selection SelectAll(std::string reason, const std::vector<std::string>& head_tests,
                    std::vector<InventoryChange> changed = {});

// One line for a user: "NOTES.txt added: listing of . -> 31 tests",
// "src/a.py modified: content -> 6 tests", "new test -> 4 tests", for a
// view (DescribeViewChange) ".: the *.dist-info and *.egg-info names
// changed -> 12 tests".
std::string DescribeWideCause(const WideCause& cause);

// Changes given as paths (e.g. `git diff --name-status`: each path with
// "added", "deleted" or "modified"), made comparable to an inventory diff
// against `base`: types come from `base` (an added path is regular), a
// path added or deleted also changes its directory's listing, and a
// "modified" path that `base` does not have counts as added. What git
// never names, inferred from `base` as Inventory::Diff would see it: an
// "added" path `base` has (a directory replaced by a file or a link) is a
// modification from base's type; a repo directory all of whose entries
// are deleted (and none added) is deleted, with the directories beneath
// it; a view of `base` whose directory came, went or changed type, or with
// a path named at or below an entry it looks at, changed (widely: a list
// of paths cannot tell its value). Sorted by path. InvalidArgument for
// another change word.
absl::StatusOr<std::vector<InventoryChange>> ChangesFromPaths(
    const Inventory& base,
    const std::vector<std::pair<std::string, std::string>>& paths);

// How a change reads to a user: "added", "deleted" or "modified" (an
// external path that appears is added, one that goes is deleted).
std::string_view ChangeWord(const InventoryChange& change);

// The tests of a tree, sorted (runner_kind.h says which): the regular
// files (or symlinks) of `inventory` matching config.test_include and not
// config.test_exclude; for runner.kind "ctest", the names `ctest -N` lists
// in runner.build_dir (filtered by the same globs). An error when they
// cannot be listed (no build tree, ctest fails, a name ste cannot scope):
// callers run all.
absl::StatusOr<std::vector<std::string>> DiscoverTests(const Config& config,
                                                       const Inventory& inventory);

// The paths among an index's keys a head inventory must request beyond
// its walk to be compared with the baseline's: the absolute ones (files
// outside the repository) and the view paths (inventory.h, "Views"),
// repo-relative ones included. Sorted, unique.
std::vector<std::string> RequestedPaths(const SelectionIndex& index);

// How the change of a view path reads: "<dir>: <what the view is> changed"
// (DescribeView), "(the directory appeared)" or "(the directory went)"
// added for the change words "added" and "deleted". "" when `path` is not
// a known view's.
std::string DescribeViewChange(std::string_view path, std::string_view change);

}  // namespace ste

#endif  // STE_SELECTION_H_
