// What recording a test needs from the operating system, behind one small
// interface (the model is LevelDB's Env): make and remove its temporary
// directories, run the traced command and wait for it, read the logs it
// left and the file its runner wrote. RunOneTest and RunBatch
// (test_recorder.h) go through it and nothing else; the real one is
// RealTestRunEnv(), and a test wraps it to inject faults
// (test_recorder_fault_test.cc) so that every failure path is tested.
//
// Every method is safe to call from several threads at once.
#ifndef STE_TEST_RUN_ENV_H_
#define STE_TEST_RUN_ENV_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ste/log_reader.h"
#include "ste/traced_run.h"

namespace ste {

class TestRunEnv {
 public:
  virtual ~TestRunEnv() = default;

  // Creates a new, empty directory named `prefix` plus six random
  // characters (mkdtemp: "<dir>/logs-" gives "<dir>/logs-a8Zq0b") and
  // returns its path. Errors: the errno's code (the parent is missing,
  // not writable, full) with strerror's text alone (the caller names the
  // directory).
  virtual absl::StatusOr<std::string> MakeTempDir(const std::string& prefix) = 0;

  // Removes `path` and everything below it, best effort (RemoveTree).
  virtual void RemoveTree(const std::string& path) = 0;

  // Runs the command under the interceptor and waits for it (RunTraced,
  // traced_run.h: a command killed by a signal is an exit, not an error).
  virtual absl::StatusOr<TracedExit> RunTraced(const TracedRunOptions& options) = 0;

  // Reads every log in `dir` (ReadLogDir, log_reader.h).
  virtual absl::Status ReadLogDir(const std::string& dir, std::vector<ProcessLog>* out) = 0;

  // The whole content of a file. NotFound if it does not exist.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) = 0;

  // Removes what processes that are gone left of their private temporary
  // directories under `base` (RemoveDeadOwnersTmps), the first time it is
  // asked for that base (the real one); none by default.
  virtual void RemoveDeadOwnersTmps(const std::string& /*base*/) {}
};

// The real operating system. Never null; lives forever.
TestRunEnv* RealTestRunEnv();

// Removes `path` and everything below it, best effort; a symlink is
// removed, never followed (a test's scratch and log folders, a record
// build's test logs).
void RemoveTree(const std::string& path);

// A directory its maker removes when done, and a maker killed first
// cannot: "<base>/<kind>-<ns>-<pid>-" plus mkdtemp's six characters, <pid>
// the process that made it and <ns> its pid namespace (the inode of
// /proc/self/ns/pid; 0 when it cannot be read). A test's private temporary
// directory (runner.private_tmp) is of kind "ste-tmp" (PrivateTmpPrefix);
// a command's scratch directory of its logs, "ste-record", "ste-worker",
// "ste-audit" (MakeScratchDir, traced_run.h).
std::string OwnedDirPrefix(const std::string& base, const std::string& kind);
std::string PrivateTmpPrefix(const std::string& base);

// Removes each directory under `base` named by OwnedDirPrefix(base, kind)
// in this pid namespace whose maker is gone (kill(pid, 0) fails with
// ESRCH), owned by this user and not a symlink; returns how many. Never one
// of another namespace (a container sharing /tmp: its pids are not ours), a
// live maker's (whatever it is now: a reused pid keeps the directory until
// that process ends), or any when the namespace is not known. Best effort.
int RemoveDeadOwnersDirs(const std::string& base, const std::string& kind);
int RemoveDeadOwnersTmps(const std::string& base);  // kind "ste-tmp"

}  // namespace ste

#endif  // STE_TEST_RUN_ENV_H_
