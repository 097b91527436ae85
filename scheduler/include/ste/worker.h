// The worker: runs leased tests of a record build under the interceptor
// and streams their results to the scheduler.
//
//   RegisterWorker (retried while no build is running yet)
//   N slot threads:   Lease(1) -> RunOneTest (output to its log) -> queue
//   a heartbeat thread every heartbeat_interval (re-registers if the
//     scheduler gave up on it: its unfinished leases went to others)
//   a reporter thread: the queue -> Report streams, dictionary-coded
//     (ReportEncoder). A stream is closed after 256 results or when idle,
//     and its summary confirms every result on it; a stream that breaks is
//     replayed whole on a new one (the scheduler accepts a result once, so
//     a replay is harmless).
// Files outside the repo that a test read are hashed here, on the machine
// the test ran on, and sent (ExternalFiles) before the result naming them.
//
// The embedded `ste record` runs this same worker in process, on the
// in-process channel of a local scheduler.
#ifndef STE_WORKER_H_
#define STE_WORKER_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ste/baseline_store.h"
#include "ste/config.h"
#include "ste/report_encoder.h"
#include "ste/rpc_common.h"
#include "ste/test_recorder.h"
#include "ste/v1/scheduler.pb.h"

namespace ste {

struct WorkerOptions {
  Config config;
  std::string preload_library;  // absolute path of libste_preload.so
  std::string scratch_dir;      // per-test log directories go under it
  // Tests at a time. With a batch runner (config.batch_runner()): one
  // runner at a time, leasing runner.batch tests, with STE_JOBS = slots.
  int slots = 1;
  std::string integrations_dir;  // RunOneTestOptions::integrations_dir
  // Where each test's stdout and stderr go (test_output.h): one log per
  // test (a batch runner's: per batch) in output_dir, or, with
  // output_per_build, in output_dir/<build id>; made when the worker joins
  // (an error if it cannot be). "": not captured (inherited). The tail of
  // a test that did not pass goes with its result.
  std::string output_dir;
  bool output_per_build = false;
  std::string name;             // for the scheduler's log
  std::string build_id;         // "" : the newest running build of `commit`
  std::string commit;           // this checkout's; "" outside git
  RpcAuth auth;
  // How long to wait for a build to join (RegisterWorker says NOT_FOUND).
  absl::Duration wait_for_build = absl::Seconds(60);
  // How long the scheduler may be unreachable before the worker gives up.
  absl::Duration unavailable_grace = absl::Seconds(30);
  size_t max_ids_per_message = 1 << 20;
  std::function<void(const std::string&)> log;  // any thread, serialised
  // What went wrong but did not stop the worker (a path it could not hash,
  // a result the scheduler refused): here when set, else to `log`.
  std::function<void(const std::string&)> warn;
};

struct WorkerSummary {
  std::string build_id;
  size_t tests_run = 0;
  size_t accepted = 0;    // as the scheduler counted them
  size_t duplicates = 0;  // results another worker had already given
  size_t refused = 0;     // results the scheduler refused
  std::string output_dir; // where the logs went ("" not captured)
  // Definition granularity: the tests some of whose Python processes
  // tracked with the slow fallback tracer, and those processes by why
  // (TestDependencies::slow_trackers; a batch's counted once).
  size_t slow_tracker_tests = 0;
  std::map<std::string, size_t> slow_trackers;
  // Definition granularity: the sources fingerprinted, and those whose
  // fingerprints a record of the same bytes left on disk (DefinitionCache).
  size_t files_fingerprinted = 0;
  size_t fingerprints_reused = 0;
};

// Runs until the build is done (OK) or cannot go on (the build is gone or
// failed, the scheduler unreachable for longer than unavailable_grace, a
// refused registration): an error saying why.
absl::StatusOr<WorkerSummary> RunWorker(std::shared_ptr<grpc::Channel> channel,
                                        const WorkerOptions& options);

}  // namespace ste

#endif  // STE_WORKER_H_
