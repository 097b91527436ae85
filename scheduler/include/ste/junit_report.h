// JUnit XML of a record build (`ste record --junit FILE`), for the CI
// systems that read it (GitLab, Jenkins, GitHub actions' reporters):
//
//   <?xml version="1.0" encoding="UTF-8"?>
//   <testsuites name="ste record" tests="3" failures="1" errors="0" time="1.234">
//     <testsuite name="ste record" tests="3" failures="1" errors="0"
//                skipped="0" time="1.234">
//       <testcase classname="tests.unit" name="test_a.py"
//                 file="tests/unit/test_a.py" time="0.012">
//         <failure message="exit code 1" type="exit code">exit code 1;
//           the whole output: .ste/output/b3/tests/unit/test_a.py.log</failure>
//         <system-out>the tail of its output</system-out>
//       </testcase>
//       ...
//
// One testcase per test, in the order given: classname is the test's
// directory with '/' as '.' ("(root)" for a test at the top), name its last
// component, file the whole path. A failed test (ran, exited non-zero) has
// <failure>, a test in error (could not run, or its runner gave no result)
// <error> with the detail; both say the exit code and where the whole
// output is. <system-out> is the tail of the test's output
// (test_output.h: the last 20 lines, at most 8 KiB): the one its result
// brought, else, with read_local_logs, read from its log; a passing test
// of a batch gets none (its output is in the batch's log, with the other
// tests'). Text is XML-escaped; what XML 1.0 cannot hold (control bytes
// other than tab, newline and carriage return, invalid UTF-8, U+FFFE and
// U+FFFF) becomes U+FFFD, and terminal colour sequences (ESC [ ... final
// byte) are left out.
#ifndef STE_JUNIT_REPORT_H_
#define STE_JUNIT_REPORT_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "ste/atomic_file.h"  // WriteFileAtomically, for the report
#include "ste/build_session.h"

namespace ste {

struct JUnitOptions {
  std::string suite_name = "ste record";
  double seconds = 0;  // the suite's time (the tests' wall time)
  // A test whose result brought no output tail: read it from its log,
  // which is on this machine (the embedded record).
  bool read_local_logs = false;
  // How a log path is shown (e.g. relative to the current directory);
  // default: as it is.
  std::function<std::string(const std::string& path)> show_path;
};

// The document (see top).
std::string JUnitXml(const std::vector<FinishedTest>& tests, const JUnitOptions& options);

// The report is written with WriteFileAtomically (ste/atomic_file.h).

// `text` made fit for XML 1.0 (see top); `attribute`: for a quoted
// attribute value (tab, newline and carriage return as character
// references, quotes escaped).
std::string XmlEscaped(std::string_view text, bool attribute);

}  // namespace ste

#endif  // STE_JUNIT_REPORT_H_
