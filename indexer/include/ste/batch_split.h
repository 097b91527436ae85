// The batch split: how one batch runner's run (test_recorder.h, RunBatch)
// becomes one result per test. Pure: the runner's $STE_RESULTS text and
// the whole run's reduced logs in, each test's outcome and dependency set
// out.
//
//   $STE_RESULTS text --ParseRunnerResults--> path -> RunnerResult
//                     --BatchTestOutcome----> started, exit code, seconds, error
//   ReduceLogs(all)   --SplitBatchDependencies--> TestDependencies per test
//
// The protocol (the results line, the scopes a runner uses) is
// integrations/README.md.
#ifndef STE_BATCH_SPLIT_H_
#define STE_BATCH_SPLIT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ste/log_reduction.h"
#include "ste/test_outcome.h"

namespace ste {

// Parses $STE_RESULTS lines ("outcome\texit\tseconds\tpath\n": the path
// is everything after the third tab, tabs and a '\r' included); malformed
// lines (too few fields, an empty path, an outcome other than passed,
// failed or error, an exit code that is not an int) and a torn last line
// are skipped; a seconds field that is unreadable, not finite or negative
// counts as 0. Later lines for a path win.
struct RunnerResult {
  TestOutcome outcome = TestOutcome::kPassed;  // its line says "passed", "failed" or "error"
  int exit_code = 0;
  double seconds = 0;
};
std::map<std::string, RunnerResult> ParseRunnerResults(std::string_view text);

// One test's outcome in a batch.
struct BatchTestOutcome {
  bool started = true;  // false: an error (always selected next time)
  int exit_code = 0;
  double seconds = 0;
  std::string error;    // why, when !started
};

// The outcome of `test` from the runner's results: its line's (a "passed"
// line is exit 0, a "failed" one its exit code, or 1 when that is 0, and
// its seconds). An "error" line is an error: not started, with the line's
// exit code and seconds. No line at all (the runner crashed, was killed,
// wrote a garbled or no results file) is an error too: not started, with
// the runner's exit code (128 + signal when it was killed) and an equal
// share of its seconds. `kind_name` names the runner in the error.
BatchTestOutcome OutcomeInBatch(const std::map<std::string, RunnerResult>& results,
                                const std::string& test, int runner_exit_code,
                                double runner_seconds, size_t batch_size,
                                std::string_view kind_name);

// Each test's share of a batch's dependency set `all` (ReduceLogs of the
// whole run), in the order of `tests`: the scopes of the test, beneath it
// and above it (the shared ones), each kept whole; a dependency on one of
// the batch's test files recorded in a scope above it (the runner's parent
// stats the files it was given before forking) moved to that test's own
// scope alone; the opaque reasons of the whole run (scope "") and of the
// scopes related to the test; then ApplyDefinitionFallback.
std::vector<TestDependencies> SplitBatchDependencies(const TestDependencies& all,
                                                     const std::vector<std::string>& tests);

}  // namespace ste

#endif  // STE_BATCH_SPLIT_H_
