// What `ste record` prints while its tests run, and the output of the
// tests that did not pass (their logs' tails, test_output.h).
//
//   bar    (--progress auto on a terminal) one line on stderr, rewritten
//          in place and cut to the terminal's width; when it is done, the
//          tail of each failing test's log
//   plain  a line per test on stderr; a failing test's tail right after
//          its line
//   none   nothing (the summary names the failing tests' logs)
//
// A batch's log is shown once, for the first of its tests that failed;
// the others refer to it. Tails are printed as the tests wrote them,
// between delimiter lines that name the test and the log.
#ifndef STE_CLI_RECORD_PROGRESS_H_
#define STE_CLI_RECORD_PROGRESS_H_

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "ste/build_session.h"

namespace ste::cli {

// A log path as shown: relative to the current directory when it lies
// beneath it; "<path> on worker <name>" for a remote build's.
std::string ShownLogPath(const FinishedTest& test, bool remote);
std::string ShownPath(const std::string& path);

class RecordProgress {
 public:
  // mode: "bar", "plain" or "none". `remote`: the logs are on workers.
  RecordProgress(std::string mode, bool remote);

  void OnTest(const FinishedTest& test, size_t done, size_t total);
  // The run is over (complete or not): ends the bar's line and prints
  // what it held back. Idempotent.
  void Finish();

 private:
  void PrintBar(const FinishedTest& test, size_t done, size_t total);
  void PrintTail(const FinishedTest& test);

  const std::string mode_;
  const bool remote_;
  bool bar_open_ = false;
  size_t failed_ = 0;
  std::vector<FinishedTest> held_;     // bar: the failing tests, for Finish
  std::set<std::string> shown_logs_;   // batch logs already shown
};

}  // namespace ste::cli

#endif  // STE_CLI_RECORD_PROGRESS_H_
