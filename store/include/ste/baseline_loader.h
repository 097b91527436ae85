// A completed baseline, loaded for selection: its info, its index (mapped)
// and its inventory; and the sources a selection takes baselines from
// (selection_pipeline.h). Used by `ste select` on the local store and by
// the scheduler's GetBaseline and Select.
#ifndef STE_BASELINE_LOADER_H_
#define STE_BASELINE_LOADER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ste/baseline_store.h"
#include "ste/checkout.h"
#include "ste/inventory.h"
#include "ste/selection_index.h"

namespace ste {

struct LoadedBaseline {
  BaselineInfo info;
  std::unique_ptr<SelectionIndex> index;
  Inventory inventory;
  std::vector<std::string> failed_tests;  // not passed in it (failed, error)
  absl::flat_hash_map<std::string, double> seconds;  // each test's wall time
  // runner.retries: the tests that did not pass, then passed when run again
  // (the blob kFlakyBlob; none when the baseline has no such blob).
  std::vector<std::string> flaky_tests;  // sorted
};

// The bytes of blob `name` of baseline `id` (BlobPath: checked against its
// recorded size and hash); nullopt when the baseline has no such blob.
// For the optional blobs below.
absl::StatusOr<std::optional<std::string>> ReadOptionalBlob(BaselineStore& store, int64_t id,
                                                            const char* name);

// A baseline's optional blob of its flaky tests: each test's name followed
// by a NUL byte, sorted. Written by the build (build_session.cc) when a
// test was flaky; read by LoadCompletedBaseline.
inline constexpr char kFlakyBlob[] = "flaky";
std::string EncodeTestNames(std::vector<std::string> tests);
std::vector<std::string> DecodeTestNames(std::string_view bytes);

// A baseline's optional blob of what its tests wrote and left behind
// (TestDependencies::writes; `ste hazards`): per test, in test order, its
// name, a NUL, each path followed by a NUL, then one more NUL. Names and
// paths are never empty. Decode: an error for bytes that end inside a
// test's list.
inline constexpr char kWritesBlob[] = "writes";
std::string EncodeWrites(const std::map<std::string, std::vector<std::string>>& writes);
absl::StatusOr<std::map<std::string, std::vector<std::string>>> DecodeWrites(std::string_view bytes);

// A baseline's optional blob of why its opaque tests are opaque: per
// opaque test, what it ran that could not be followed (the first reason
// the build kept), in kWritesBlob's layout (EncodeWrites/DecodeWrites, a
// list of one). Read by `ste report`.
inline constexpr char kOpaqueBlob[] = "opaque";

// How many times a load looks for its baseline again when the one it found
// was removed (`ste baseline gc`) before its blobs could be read.
inline constexpr int kLoadAttempts = 3;

// The latest complete baseline with mri <= `mri` (INT64_MAX: any), or
// baseline `id` when id > 0 (which must be complete). Any problem (none,
// unreadable, wrong version, checksum) is an error whose message says why;
// callers selecting tests turn it into mode all.
//
// Removal. A baseline found and then removed before its blobs are open
// (its rows go first, then its files: baseline_store.h) fails to load with
// the store saying it is gone: the lookup is made again, up to
// kLoadAttempts times (it then finds the next baseline, or none: NotFound,
// with what was looked for); still losing the race every time is
// Unavailable saying so. An index already mapped stays readable.
absl::StatusOr<LoadedBaseline> LoadCompletedBaseline(BaselineStore& store, int64_t mri,
                                                     int64_t id);

// Only the info of that baseline (the same rules, without the blobs).
absl::StatusOr<BaselineInfo> FindCompletedBaseline(BaselineStore& store, int64_t mri,
                                                   int64_t id);

// The baseline `which` names, the first of its fields that is set
// deciding (checkout.h). NotFound when there is none, saying what was
// looked for, with which.hint.
absl::StatusOr<BaselineInfo> FindCompletedBaseline(BaselineStore& store, const BaselineLookup& which);

// "" unless `found` is a fallback of `which` (BaselineLookup::fallback: its
// commit has no baseline); then what was taken instead and how far back it
// is, for the selection's reason: "the base commit <B> has no baseline yet:
// compared with baseline <id> of commit <C> (mri M), 3 commits before it,
// recorded 12 min ago; …".
std::string BaselineFallbackNote(const BaselineLookup& which, const BaselineInfo& found,
                                 int64_t now_unix);
absl::StatusOr<LoadedBaseline> LoadCompletedBaseline(BaselineStore& store, const BaselineLookup& which);

// Where a selection gets its baseline from.
class BaselineSource {
 public:
  virtual ~BaselineSource() = default;
  // The baseline `which` names (FindCompletedBaseline). Any problem is an
  // error whose message says why there is no usable baseline.
  virtual absl::StatusOr<std::shared_ptr<const LoadedBaseline>> Load(const BaselineLookup& which) = 0;
};

// The baselines of a store (store.url): each Load reads them afresh. A
// store that could not be opened makes every Load fail with "store
// unusable: <why>".
class StoreBaselineSource final : public BaselineSource {
 public:
  explicit StoreBaselineSource(absl::StatusOr<std::unique_ptr<BaselineStore>> store);
  absl::StatusOr<std::shared_ptr<const LoadedBaseline>> Load(const BaselineLookup& which) override;

 private:
  absl::StatusOr<std::unique_ptr<BaselineStore>> store_;
};

// A store's baselines, the last `capacity` loaded kept in memory: a
// complete baseline never changes, so a GetBaseline and the Select that
// follows load it once. Finding which baseline (by mri) asks the store
// each time. Thread-safe; `open` is called once per Load.
class CachingBaselineSource final : public BaselineSource {
 public:
  using StoreOpener = std::function<absl::StatusOr<std::unique_ptr<BaselineStore>>()>;
  CachingBaselineSource(StoreOpener open, size_t capacity);
  absl::StatusOr<std::shared_ptr<const LoadedBaseline>> Load(const BaselineLookup& which) override;

 private:
  // Caches `loaded` (baseline `id`), evicting the least recently used.
  std::shared_ptr<const LoadedBaseline> Keep(int64_t id, LoadedBaseline loaded);

  const StoreOpener open_;
  const size_t capacity_;
  std::mutex mu_;
  std::map<int64_t, std::shared_ptr<const LoadedBaseline>> loaded_;  // by id; guarded by mu_
  uint64_t clock_ = 0;                                               // guarded by mu_
  std::map<int64_t, uint64_t> last_use_;                             // guarded by mu_
};

}  // namespace ste

#endif  // STE_BASELINE_LOADER_H_
