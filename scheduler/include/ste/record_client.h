// `ste record` as a client of a scheduler: the tree inventoried here
// (before any test runs), a build created on a scheduler and watched to its
// end. Embedded (no scheduler address), the scheduler is an in-process
// SchedulerServer on the store of ste.toml and a worker runs in this
// process on the in-process channel: one code path for both.
//
//   RecordBaseline(options)
//     1. commit and MRI (git, or --mri, or the store's next outside git)
//     2. the inventory, with the previous baseline's as the stat cache
//        (embedded), and the tests (DiscoverTests)
//     3. CreateBuild on the scheduler (in process, or the one given)
//     4. embedded: a local worker with `jobs` slots, each test's output
//        to its log in output_dir
//     5. WatchBuild to the end (retrying an unreachable scheduler for 30 s),
//        reporting each finished test through on_test
//
// Errors: InvalidArgument for options that do not go together (outside
// git or in a shallow clone with no MRI, an output_dir with a scheduler); any other error means the
// baseline was not stored (the previous one stays in use), the message
// says why.
#ifndef STE_RECORD_CLIENT_H_
#define STE_RECORD_CLIENT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/build_session.h"
#include "ste/config.h"
#include "ste/rpc_common.h"

namespace ste {

struct RecordOptions {
  Config config;
  int jobs = 0;            // tests at a time, embedded; 0: runner.jobs
  int64_t mri = -1;        // -1: git rev-list --count HEAD (outside git:
                           // embedded, the store's next; remote: required;
                           // a shallow clone: required, or base_commit)
  std::string base_commit; // with mri -1: the MRI is one more than that of
                           // this commit's baseline (embedded only)
  std::string scheduler;   // "" embedded, else HOST:PORT or unix:PATH
  RpcAuth auth;            // for a remote scheduler
  bool wait = true;        // remote: follow the build to its end
  // Embedded: where each test's stdout and stderr go (test_output.h);
  // "": <root>/.ste/output/<build id>. Remote: must be "" (each worker
  // keeps its tests' logs; a failing test's tail comes with its result).
  std::string output_dir;
  // Called on the calling thread: at the start of each phase
  // ("inventory", "tests"), and for each test as it finishes (done of
  // total so far).
  std::function<void(const std::string& phase)> on_phase;
  std::function<void(const FinishedTest& test, size_t done, size_t total)> on_test;
  // What the user should know about how this record runs, once each, on
  // the calling thread (embedded: the integrations folder missing, so
  // Python imports are recorded as listings; an output directory the
  // inventory sees, OutputDirWarning); and, embedded, what went wrong in
  // the local workers (WorkerOptions::warn), on their threads, one call
  // at a time.
  std::function<void(const std::string& warning)> on_warning;
};

struct RecordSummary {
  std::string build_id;
  bool started_only = false;  // remote without wait: the build was created
  int64_t baseline_id = 0;
  int64_t mri = 0;
  std::string commit;
  size_t tests = 0;
  std::vector<FinishedTest> finished;  // sorted by test
  size_t passed = 0, failed = 0, errors = 0, opaque = 0;
  double inventory_seconds = 0, tests_seconds = 0;
  uint64_t inventory_entries = 0, index_bytes = 0;
  std::string output_dir;  // embedded: where the logs are; remote: ""
  // Embedded: the tests some of whose Python processes tracked definitions
  // with the slow fallback tracer, and those processes by why
  // (WorkerSummary; remote: each worker's own summary).
  size_t slow_tracker_tests = 0;
  std::map<std::string, size_t> slow_trackers;
  // Embedded: WorkerSummary's files_fingerprinted and fingerprints_reused.
  size_t files_fingerprinted = 0;
  size_t fingerprints_reused = 0;
};

absl::StatusOr<RecordSummary> RecordBaseline(const RecordOptions& options);

}  // namespace ste

#endif  // STE_RECORD_CLIENT_H_
