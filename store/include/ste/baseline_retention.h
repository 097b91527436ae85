// Which baselines a store keeps: `ste baseline gc --keep N`.
//
// The rule (PlanGc), for the baselines as ListSummaries() gives them:
//   complete  the newest `keep` (highest mri, then highest id: the order
//             LatestCompleted serves them in) stay; older ones go. The
//             newest complete one always stays (keep >= 1).
//   failed    goes (it is never served; its failure is in `ste baseline
//             list` until then).
//   building  stays while a writer holds its lock (baseline_store.h:
//             "Writers"). Without one it is *abandoned* only once it is
//             older than `abandoned_after` (created_unix by this machine's
//             clock): the lock is strong evidence, but a ste from before
//             writer locks, a PostgreSQL connection lost mid-build and not
//             re-established yet, or a lock file that could not be made
//             leave none for a build that is still running. The default,
//             a day, is longer than any record build ste has seen.
//
// Doing it (CollectGarbage): each baseline the plan removes is removed with
// Remove(id, the state it was listed in), which checks the state (and, for
// a building one, the writer lock) again in its transaction, so a baseline
// that completed, failed or was taken by a writer since it was listed
// stays. Rows go before files, so a concurrent `ste select` either finds a
// baseline whose files are there or does not find it; one that found it
// just before and then misses a file looks again (baseline_loader.h) and
// finds a kept baseline. Then RemoveStaleFiles sweeps what killed writes
// and earlier removals left behind (temp files, unnamed blob files, stale
// cache copies and hash stamps, writer lock files).
#ifndef STE_BASELINE_RETENTION_H_
#define STE_BASELINE_RETENTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/baseline_store.h"

namespace ste {

inline constexpr int64_t kDefaultAbandonedAfterSeconds = 24 * 3600;

struct GcOptions {
  size_t keep = 1;  // complete baselines kept; 0 counts as 1
  int64_t abandoned_after_seconds = kDefaultAbandonedAfterSeconds;
  bool dry_run = false;  // plan only: remove nothing
  // The checkout's record output directory (`<root>/.ste/output`: a
  // `b<id>` folder of test logs per record build): the folder of each
  // baseline removed goes too, and those of baselines the store no longer
  // has (removed by a gc elsewhere). "" leaves output folders alone.
  std::string output_dir;
};

struct GcDecision {
  BaselineSummary baseline;
  bool remove = false;
  std::string why;  // one line: "complete, older than the newest 2"
};

// One decision per baseline, in the order given (the rule above). Pure.
std::vector<GcDecision> PlanGc(const std::vector<BaselineSummary>& baselines,
                               const GcOptions& options, int64_t now_unix);

struct GcReport {
  std::vector<GcDecision> decisions;  // the plan
  std::vector<int64_t> removed;       // ids removed, in plan order
  int64_t removed_bytes = 0;          // their blobs' sizes
  // Planned for removal and kept after all: "<id>: <why>" (it changed
  // since it was listed, or removing it failed: the error).
  std::vector<std::string> kept_after_all;
  std::vector<std::string> stale_files;  // what RemoveStaleFiles removed
  std::vector<std::string> output_dirs;  // output folders removed (paths)
  absl::Status status;  // the first error (the others were still tried)
};

// Plans with ListSummaries() and carries the plan out (unless dry_run).
// An error listing is returned; errors removing one baseline or sweeping
// files are in report.status, the rest having been done.
absl::StatusOr<GcReport> CollectGarbage(RetentionStore& store, const GcOptions& options,
                                        int64_t now_unix);

// "45s", "12m", "3h", "2d": the largest unit that fits, rounded down.
std::string DescribeAge(int64_t seconds);

}  // namespace ste

#endif  // STE_BASELINE_RETENTION_H_
