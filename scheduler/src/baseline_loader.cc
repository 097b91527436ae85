#include "ste/baseline_loader.h"

#include <climits>

#include "absl/strings/str_cat.h"
#include "ste/status_macros.h"

namespace ste {

absl::StatusOr<BaselineInfo> FindCompletedBaseline(BaselineStore& store, int64_t mri,
                                                   int64_t id) {
  if (id <= 0) {
    STE_ASSIGN_OR_RETURN(std::optional<BaselineInfo> latest, store.LatestCompleted(mri));
    if (!latest.has_value()) {
      return absl::NotFoundError(
          mri == INT64_MAX
              ? std::string("no completed baseline in the store (run 'ste record')")
              : absl::StrCat("no completed baseline with mri <= ", mri,
                             " (run 'ste record' on an ancestor)"));
    }
    return *latest;
  }
  STE_ASSIGN_OR_RETURN(BaselineInfo info, store.Get(id));
  if (info.state != BaselineState::kComplete) {
    return absl::FailedPreconditionError(
        absl::StrCat("baseline ", id, " is ", std::string(BaselineStateName(info.state))));
  }
  return info;
}

absl::StatusOr<LoadedBaseline> LoadCompletedBaseline(BaselineStore& store, int64_t mri,
                                                     int64_t id) {
  LoadedBaseline loaded;
  STE_ASSIGN_OR_RETURN(loaded.info, FindCompletedBaseline(store, mri, id));
  STE_ASSIGN_OR_RETURN(std::string index_path, store.BlobPath(loaded.info.id, "index"));
  STE_ASSIGN_OR_RETURN(loaded.index, SelectionIndex::Open(index_path));
  STE_ASSIGN_OR_RETURN(std::string inventory_path, store.BlobPath(loaded.info.id, "inventory"));
  STE_ASSIGN_OR_RETURN(loaded.inventory, Inventory::ReadFile(inventory_path));
  absl::StatusOr<std::vector<TestResult>> results = store.Results(loaded.info.id);
  if (!results.ok()) {
    return absl::DataLossError(absl::StrCat("baseline results unreadable: ", results.status().message()));
  }
  for (const TestResult& r : *results) {
    if (r.outcome != TestOutcome::kPassed) loaded.failed_tests.push_back(r.test);
  }
  return loaded;
}

}  // namespace ste
