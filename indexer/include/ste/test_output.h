// Where a recorded test's stdout and stderr go, and how much of them is
// shown back.
//
// While `ste record` (its worker, embedded or `ste worker`) runs a test,
// the test's stdout and stderr are one file, its *log* (both descriptors
// share one open file, so the two streams interleave in the order they
// were written); stdin is left as it is. A batch runner's process tree
// (runner.kind pytest, unittest, minitest, rspec) writes one log for the
// whole batch. The layout, in an output directory D:
//
//   D/<test path>.log       one test's log: its repo-relative path, each
//                           component escaped (OutputLogName)
//   D/%batch-<n>.log        a batch's log; n is the lease id of its first
//                           test (unique in a build)
//
// D is `<checkout>/.ste/output/<build id>` by default (".ste/**" is always
// ignored by the inventory, so nothing there is a dependency or a change),
// or the directory given with --output-dir. Files are overwritten, nothing
// is removed.
//
// Thread-safety: every function here may be called from any thread.
#ifndef STE_TEST_OUTPUT_H_
#define STE_TEST_OUTPUT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ste/config.h"

namespace ste {

// The tail of a log that is shown back (`ste record` after a failure,
// JUnit's <system-out>, and what a worker sends with a failing result): its
// last kOutputTailLines lines, and never more than kOutputTailBytes bytes.
inline constexpr size_t kOutputTailLines = 20;
inline constexpr size_t kOutputTailBytes = 8 << 10;

// The path of a test's log relative to the output directory: each
// '/'-separated component of `test` with
//   - bytes 0x00-0x1F, 0x7F, '%' and bytes that are not part of valid UTF-8
//     written as '%' and two uppercase hex digits (valid UTF-8 and every
//     other byte, space included, kept);
//   - a component that is empty, "." or ".." written wholly escaped ("%",
//     "%2E", "%2E%2E"): no component can climb out of the directory;
//   - a directory component ending in ".log" with that '.' escaped
//     ("a.log/" -> "a%2Elog/"), so that it never meets a test's log file;
//   - a component over 200 bytes (escaped) cut to its first 180 bytes (not
//     inside an escape or a character) + "%~" + the FNV-1a 64-bit hash of
//     the component before escaping, in 16 lowercase hex digits;
// then ".log" after the last component. Different tests give different
// names (up to a 64-bit hash collision of two long components).
// "tests/test a.sh" -> "tests/test a.sh.log"; "t/50%" -> "t/50%25.log".
std::string OutputLogName(std::string_view test);

// "%batch-<n>.log": no test's log can have that name (an escape is '%' and
// two uppercase hex digits, "%~" or a lone "%").
std::string BatchLogName(uint64_t n);

// Creates `dir` and its missing parents (mode 0755). An existing
// directory is fine; an error names the path that could not be made.
absl::Status MakeDirectories(const std::string& dir);

struct OutputTail {
  std::string text;        // the last lines, at most max_bytes
  uint64_t file_bytes = 0; // the log's size: text is all of it when equal
};

// The end of the log at `path`: its last `max_lines` lines ('\n'-ended; a
// last line without one counts), at most `max_bytes` bytes. When the
// byte limit cuts a line, the partial line is left out unless it is the
// only one (then its last max_bytes bytes). NotFound when there is no
// such file; other errors for a file that cannot be read.
absl::StatusOr<OutputTail> ReadOutputTail(const std::string& path,
                                          size_t max_lines = kOutputTailLines,
                                          size_t max_bytes = kOutputTailBytes);

// What the user should know about putting logs in `dir` (absolute) for
// the repository of `config`: "" when it is outside the repository or
// under an ignored path (the default .ste/output is); else a warning that
// the next select will see its files as new, and what to do.
std::string OutputDirWarning(const Config& config, const std::string& dir);

}  // namespace ste

#endif  // STE_TEST_OUTPUT_H_
