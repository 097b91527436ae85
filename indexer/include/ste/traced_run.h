// Running a command under the interceptor: what `ste run` does, as a
// library call so that `ste record` (and the worker) run tests the same
// way without shelling out to `ste`.
#ifndef STE_TRACED_RUN_H_
#define STE_TRACED_RUN_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ste {

struct TracedRunOptions {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::string scope = "//r";      // STE_SCOPE of the process tree
  std::string log_dir;            // STE_LOG_DIR; must exist
  std::string preload_library;    // absolute path of libste_preload.so
  std::string working_directory;  // empty: inherit
  // Extra "NAME=value" entries; they win over the inherited environment.
  std::vector<std::string> extra_env;
  // "" : stdout and stderr are inherited. Else the file (created or
  // truncated, 0666 less the umask) that both become: one open file on
  // descriptors 1 and 2, so the two streams interleave in the order they
  // were written (and isatty() is false on both). stdin is inherited
  // either way. Its directory must exist.
  std::string output_file;
};

// How a traced command ended.
struct TracedExit {
  int exit_code = 0;    // exit status, or 128 + signal when killed
  int signal = 0;       // the signal that killed it, or 0
  double seconds = 0;   // wall time
  // The command's own process left no log: the interceptor could not
  // enter it (a static or setuid program, or it could not create its
  // log). RunTraced then writes an `unfollowed` record for it, in the
  // run's scope, so that nothing downstream mistakes it for a process
  // that touched nothing.
  bool root_unfollowed = false;
};

// Spawns options.argv with the interceptor preloaded (appended to any
// LD_PRELOAD already set, never replacing it) and waits for it.
// Errors: an empty argv, a scope not under "//r", a missing log dir or
// preload library, an output file that cannot be created, a program that
// cannot be started (NotFound).
absl::StatusOr<TracedExit> RunTraced(const TracedRunOptions& options);

// Finds libste_preload.so for the running `ste` binary: $STE_PRELOAD if
// set, else beside the executable (the build tree), else
// ../lib/ste/libste_preload.so relative to it (an install).
absl::StatusOr<std::string> FindPreloadLibrary();

// A private file of the `ste` install named `name`: beside the executable
// (the build tree), else in ../lib/ste/ relative to it (an install).
// NotFound naming both places.
absl::StatusOr<std::string> FindPrivateFile(const std::string& name);

// Finds the runner integrations (integrations/ of the source tree):
// $STE_INTEGRATIONS if set, else integrations/ beside the executable (the
// build tree links it there), else ../share/ste/integrations.
absl::StatusOr<std::string> FindIntegrationsDir();

// Where ste puts scratch data such as per-process logs when not told:
// $STE_TMPDIR if set; else /dev/shm when it is a writable tmpfs (a log
// file per process is cheap there and costs a disk inode allocation
// elsewhere: ~250 us per file on some ext4 mounts, measured in
// bench/interceptor); else $TMPDIR; else /tmp.
std::string DefaultScratchRoot();

// A new scratch directory of a command under DefaultScratchRoot(), named
// for its maker (OwnedDirPrefix(root, kind), test_run_env.h: kind
// "ste-record", "ste-worker", "ste-audit"), after removing those of the
// same kind whose maker is gone (a killed record, worker or audit: the logs
// of its tests are of no use to anyone then). The maker removes its own
// when done. (`ste run`'s log directory is its output, kept: not one.)
absl::StatusOr<std::string> MakeScratchDir(std::string_view kind);

// True if `scope` is "//r" or "//r/<names>" with no empty name and no
// trailing '/'.
bool IsValidScope(std::string_view scope);

}  // namespace ste

#endif  // STE_TRACED_RUN_H_
