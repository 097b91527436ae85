// A completed baseline, loaded for selection: its info, its index (mapped)
// and its inventory. Used by `ste select` on the local store and by the
// scheduler's Select.
#ifndef STE_BASELINE_LOADER_H_
#define STE_BASELINE_LOADER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/baseline_store.h"
#include "ste/inventory.h"
#include "ste/selection_index.h"

namespace ste {

struct LoadedBaseline {
  BaselineInfo info;
  std::unique_ptr<SelectionIndex> index;
  Inventory inventory;
  std::vector<std::string> failed_tests;  // not passed in it (failed, error)
};

// The latest complete baseline with mri <= `mri` (INT64_MAX: any), or
// baseline `id` when id > 0 (which must be complete). Any problem (none,
// unreadable, wrong version, checksum) is an error whose message says why;
// callers selecting tests turn it into mode all.
absl::StatusOr<LoadedBaseline> LoadCompletedBaseline(BaselineStore& store, int64_t mri,
                                                     int64_t id);

// Only the info of that baseline (the same rules, without the blobs).
absl::StatusOr<BaselineInfo> FindCompletedBaseline(BaselineStore& store, int64_t mri,
                                                   int64_t id);

}  // namespace ste

#endif  // STE_BASELINE_LOADER_H_
