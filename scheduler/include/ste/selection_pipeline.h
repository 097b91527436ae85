// `ste select` as one function: a checkout and a baseline source in, a
// Selection out. The local command (a LocalCheckout and the store of
// ste.toml) and the scheduler's Select RPC (a checkout made of what the
// client sent, and the scheduler's store) both call SelectForCheckout; the
// walk is written once:
//
//   1. the baseline: source.Load(checkout.Lookup(query)) (by id, commit,
//      the commits a shallow clone can see, or MRI)
//   2. the tree now: checkout.ReadTree(baseline inventory as stat cache,
//      RequestedPaths of its index: the files outside the repo and the
//      views its tests used)                -- an error: no test list
//   3. no usable baseline                  -> all (guardrail 1)
//   4. the changes: Inventory::Diff, or ChangesFromPaths for a caller that
//      sent changed paths
//   5. checkout.ForceReason(baseline commit), then Select() (guardrails
//      2 to 5, selection.h)
//
// Fail safe: every error on the way widens to all with the reason, except
// an unreadable tree (step 2), which leaves no test list to widen to: the
// result says so and the caller must run everything (`ste select` exits 3).
#ifndef STE_SELECTION_PIPELINE_H_
#define STE_SELECTION_PIPELINE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ste/baseline_loader.h"
#include "ste/baseline_store.h"
#include "ste/checkout.h"
#include "ste/selection.h"

namespace ste {

struct SelectionOutcome {
  Selection selection;
  std::optional<BaselineInfo> baseline;  // the baseline compared with
  // That baseline as loaded (null without one), and the tests the tree has
  // now (the list the selection chose from; `ste audit` runs the rest).
  std::shared_ptr<const LoadedBaseline> loaded;
  std::vector<std::string> head_tests;
  // Not OK: the tree could not be read (step 2); selection is mode all
  // with no tests, its reason saying why.
  absl::Status tree = absl::OkStatus();
};

SelectionOutcome SelectForCheckout(Checkout& checkout, BaselineSource& source,
                                   const BaselineQuery& query);

// The history's row of a selection (baseline_store.h, "The history"): its
// mode and reason, the tests the tree has and how many were selected
// (mode all: every one), the changed paths, and the seconds the baseline
// recorded for the tests left out; `seconds` (how long it took),
// `commit` and `origin` as given. The store fills in the id and time.
SelectionEntry HistoryEntryOf(const SelectionOutcome& outcome, double seconds,
                              std::string commit, std::string origin);

// Appends it to `history`, best effort: a store that cannot take it (read
// only, an older schema, busy) changes nothing; the status says why.
absl::Status AppendToHistory(HistoryStore* history, const SelectionEntry& entry);

}  // namespace ste

#endif  // STE_SELECTION_PIPELINE_H_
