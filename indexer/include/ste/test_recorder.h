// The unit of work of a record build: run one test (or a batch of them)
// under the interceptor and turn its logs into the test's result and
// dependency set.
//
//   RunOneTest(config, "tests/test_a.py")  ->  TestRecord
//        runs `sh -c "<runner.command with {test}>"` in the repo root,
//        scope //r/tests/test_a.py, logs in a fresh directory (removed
//        afterwards), with the integrations' environment (runner_kind.h,
//        IntegrationEnvironment: the Python import hook on PYTHONPATH when
//        runner.python_imports = "names", config.h; the definition
//        trackers), its stdout and stderr to options.output_file when set
//        (test_output.h), then ReduceLogs() (log_reduction.h).
//
// A record build (embedded or distributed) runs many of these and feeds
// each TestRecord to the index builder; nothing here knows how records
// travel. The pieces: log_reduction.h (logs -> dependencies, pure),
// batch_split.h (a batch's results and dependencies per test, pure),
// runner_kind.h (each integration's environment, as data), test_run_env.h
// (the operating system, with a fault-injecting double in the tests).
//
// When a run goes wrong, the record says so and never narrows what the
// test depends on (RunOneTest and RunBatch alike):
//   the log directory cannot be made   not started (outcome error), error
//                                      "cannot create a log directory in
//                                      <scratch_dir>: <why>", opaque;
//   the private $TMPDIR cannot be made the test runs with the inherited
//                                      one, whose records then count;
//   the runner cannot be started       not started, RunTraced's error,
//                                      opaque;
//   it is killed by a signal           exit 128 + signal (failed: selected
//                                      next time), the logs it left;
//                                      RunBatch: a test without a results
//                                      line is not started (error);
//   the logs cannot be read, or none   opaque, "logs unreadable: <why>";
//   a results file missing or garbled  RunBatch: each test without a
//                                      valid line is not started (error).
#ifndef STE_TEST_RECORDER_H_
#define STE_TEST_RECORDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/batch_split.h"
#include "ste/config.h"
#include "ste/definitions.h"
#include "ste/log_reduction.h"
#include "ste/test_outcome.h"
#include "ste/test_run_env.h"

namespace ste {

struct TestRecord {
  std::string test;           // repo-relative path
  int exit_code = 0;
  double seconds = 0;
  bool started = true;        // false: the runner could not be started
  std::string error;          // why, when !started
  TestDependencies deps;
  // Where its stdout and stderr went (RunOneTestOptions::output_file; ""
  // when they were not captured). A batch's tests share the runner's log:
  // output_shared.
  std::string output_log;
  bool output_shared = false;
  // The end of that log (test_output.h), for whoever shows it back: filled
  // by the caller (the worker, for a test that did not pass), not here.
  std::string output_tail;
  uint64_t output_bytes = 0;  // the log's whole size
  // runner.retries: it did not pass, then passed when run again (its
  // dependencies are those of every run, MergeDependencies; its output
  // the failing run's).
  bool flaky = false;
};

// The outcome a test's record stands for: error when it could not be
// started, else passed or failed by its exit code.
TestOutcome OutcomeOf(const TestRecord& record);

struct RunOneTestOptions {
  std::string preload_library;  // absolute path of libste_preload.so
  std::string scratch_dir;      // where per-test log directories go
  bool keep_logs = false;       // leave the log directory (debugging)
  // The runner integrations (FindIntegrationsDir). Batch runners: their
  // $STE_INTEGRATIONS (python/ on PYTHONPATH, ruby/ on RUBYLIB). Every
  // kind, with runner.python_imports = "names": python/ste_site goes first
  // on PYTHONPATH (its sitecustomize looks imports up by name). "": none
  // (Python imports are then recorded as listings).
  std::string integrations_dir;
  int jobs = 1;                 // batch runners: $STE_JOBS
  // Definition granularity (config.selection_definitions): the cache of
  // the checkout's definitions; null: file level (STE_DEFINITIONS unset).
  DefinitionCache* definitions = nullptr;
  // The file the test's (RunBatch: the runner's) stdout and stderr go to
  // (TracedRunOptions::output_file; its directory must exist); "": they
  // are inherited.
  std::string output_file;
  // The operating system (test_run_env.h); null: RealTestRunEnv().
  TestRunEnv* env = nullptr;
};

// The integrations folder the runs of `config` want in
// RunOneTestOptions::integrations_dir: FindIntegrationsDir() when the runner
// is a batch one or runner.python_imports is "names", else "". A batch
// runner cannot run without it: its error. For any other kind a missing
// folder is no error: "" (Python imports recorded as listings, coarser and
// honest), and *warning says so, for the caller to print once; *warning is
// cleared otherwise.
absl::StatusOr<std::string> IntegrationsDirForRuns(const Config& config, std::string* warning);

// Runs one test (see top). Never fails outright: a test that cannot be run
// comes back with started=false and an error (its outcome is "error"; the
// failures at the top).
TestRecord RunOneTest(const Config& config, const std::string& test,
                      const RunOneTestOptions& options);

// Runs a batch of test files with a batch runner (config.batch_runner(),
// the protocol of integrations/README.md): one runner process tree in the
// root scope, which forks a child per test file under the file's scope and
// appends a line per file to $STE_RESULTS. Returns one record per test, in
// the order given: its outcome from the results file (a test without a
// line is an error: not started, always selected next time), its own
// scopes' dependencies plus those of the scopes above it (the shared
// ones), opaque if an unfollowed record was made in its scope, beneath or
// above it, or the logs could not be read (batch_split.h).
std::vector<TestRecord> RunBatch(const Config& config, const std::vector<std::string>& tests,
                                 const RunOneTestOptions& options);

}  // namespace ste

#endif  // STE_TEST_RECORDER_H_
