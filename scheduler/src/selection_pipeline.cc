#include "ste/selection_pipeline.h"

#include <algorithm>
#include <climits>
#include <future>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ste/test_scope.h"
#include "ste/timings.h"

namespace ste {

SelectionOutcome SelectForCheckout(Checkout& checkout, BaselineSource& source,
                                   const BaselineQuery& query) {
  SelectionOutcome out;
  // 1. The baseline.
  BaselineLookup lookup;
  {
    ScopedPhase phase("baseline lookup (git facts)");
    lookup = checkout.Lookup(query);
  }
  absl::StatusOr<std::shared_ptr<const LoadedBaseline>> base;
  {
    ScopedPhase phase("baseline load");
    base = source.Load(lookup);
  }
  const LoadedBaseline* b = base.ok() ? base->get() : nullptr;
  if (b) {
    out.baseline = b->info;
    out.loaded = *base;
  }

  // 2. The tree now, hashed with the baseline's inventory as the stat
  // cache and with the external files and the views its tests read.
  // The commit messages since the baseline's commit are read (a git
  // process) while the tree is walked.
  std::future<std::string> force;
  if (b) {
    force = std::async(std::launch::async, [&checkout, commit = b->info.commit] {
      ScopedPhase phase("force tags (commit messages), beside the tree read");
      return checkout.ForceReason(commit);
    });
  }
  absl::StatusOr<TreeNow> tree;
  {
    ScopedPhase phase("tree read");
    tree = checkout.ReadTree(b ? &b->inventory : nullptr,
                             b ? RequestedPaths(*b->index) : std::vector<std::string>{});
  }
  if (!tree.ok()) {
    out.tree = tree.status();
    out.selection = SelectAll(absl::StrCat("cannot inventory the tree: ", tree.status().message()), {});
    return out;
  }

  // The tree's tests were not listed (TreeNow::tests_from_baseline): the
  // baseline's are the list. Without a baseline there is none to take.
  if (tree->tests_from_baseline && b) {
    for (uint32_t i = 0; i < b->index->test_count(); i++) {
      tree->tests.emplace_back(TestOfScope(b->index->test_scope(i)));
    }
    std::sort(tree->tests.begin(), tree->tests.end());
    tree->tests.erase(std::unique(tree->tests.begin(), tree->tests.end()), tree->tests.end());
  }

  out.head_tests = tree->tests;
  // 3. Guardrail 1.
  if (!b) {
    out.selection = SelectWithoutBaseline(std::string(base.status().message()), tree->tests);
    return out;
  }

  // 4. What changed.
  std::vector<InventoryChange> changes;
  if (tree->inventory) {
    ScopedPhase phase("diff");
    changes = Inventory::Diff(b->inventory, *tree->inventory).changes;
  } else {
    absl::StatusOr<std::vector<InventoryChange>> given =
        ChangesFromPaths(b->inventory, tree->changed_paths);
    if (!given.ok()) {
      out.selection = SelectAll(absl::StrCat("the changed paths are unusable: ", given.status().message()),
                                tree->tests);
      return out;
    }
    changes = *std::move(given);
  }

  // 5. Guardrails 2 to 5.
  SelectionInputs in{*b->index, b->failed_tests, std::move(changes), std::move(tree->tests),
                     force.get()};
  ScopedPhase phase("guardrails and the index's bitmaps");
  out.selection = Select(checkout.rules(), in);
  if (std::string note = BaselineFallbackNote(lookup, b->info, absl::ToUnixSeconds(absl::Now()));
      !note.empty()) {
    absl::StrAppend(&out.selection.reason, " (", note, ")");
  }
  for (SelectedTest& t : out.selection.tests) {
    auto it = b->seconds.find(t.test);
    if (it != b->seconds.end()) t.seconds = it->second;
    t.flaky = std::binary_search(b->flaky_tests.begin(), b->flaky_tests.end(), t.test);
  }
  return out;
}

SelectionEntry HistoryEntryOf(const SelectionOutcome& outcome, double seconds,
                              std::string commit, std::string origin) {
  const Selection& s = outcome.selection;
  SelectionEntry e;
  e.baseline = outcome.baseline ? outcome.baseline->id : 0;
  e.commit = std::move(commit);
  e.mode = std::string(SelectionModeName(s.mode));
  e.reason = s.reason;
  e.tests = static_cast<int64_t>(outcome.head_tests.size());
  e.changed = static_cast<int64_t>(s.changed.size());
  e.seconds = seconds;
  e.origin = std::move(origin);
  if (s.mode == SelectionMode::kAll) {
    e.selected = e.tests;
    return e;
  }
  absl::flat_hash_set<std::string_view> chosen;
  for (const SelectedTest& t : s.tests) chosen.insert(t.test);
  e.selected = static_cast<int64_t>(std::min(chosen.size(), outcome.head_tests.size()));
  if (outcome.loaded != nullptr) {
    for (const std::string& t : outcome.head_tests) {
      if (chosen.contains(t)) continue;
      auto it = outcome.loaded->seconds.find(t);
      if (it != outcome.loaded->seconds.end()) e.skipped_seconds += it->second;
    }
  }
  return e;
}

absl::Status AppendToHistory(HistoryStore* history, const SelectionEntry& entry) {
  if (history == nullptr) return absl::FailedPreconditionError("no store to append to");
  return history->AppendSelection(entry).status();
}

}  // namespace ste
