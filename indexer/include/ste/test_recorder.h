// The unit of work of a record build: run one test under the interceptor
// and turn its logs into the test's result and dependency set.
//
//   RunOneTest(config, "tests/test_a.py")  ->  TestRecord
//        runs `sh -c "<runner.command with {test}>"` in the repo root,
//        scope //r/tests/test_a.py, logs in a fresh directory (removed
//        afterwards), with the Python import hook on PYTHONPATH
//        (runner.python_imports, config.h), its stdout and stderr to
//        options.output_file when set (test_output.h), then ReduceLogs().
//
// A record build (embedded or distributed) runs many of these and feeds
// each TestRecord to the index builder; nothing here knows how records
// travel.
//
// ReduceLogs maps every record to a dependency key:
//   - a path whose directory lies behind a symlink is also recorded under
//     its real directory (the inventory does not follow symlinked
//     directories, so the real file is what it hashes);
//   - paths inside the repo become repo-relative ("." for the root itself),
//     paths outside stay absolute; records under the log directory and the
//     test's private temporary directory (runner.private_tmp) and repo
//     paths matching inventory.ignore are dropped;
//   - an `absent` (or `content`) record of a view path "<dir>/\x01<view>"
//     (inventory.h, "Views") becomes a `content` dependency on the view
//     path when the view is known, a `listing` of <dir> when it is not;
//     inventory.ignore applies to <dir>, and a symlinked <dir> is also
//     recorded as its real directory, as above;
//   - `write` records are outputs, not dependencies: dropped, but
//     remembered: a `content` record of a path the test wrote that does
//     not exist when the test is over (a temporary file it created and
//     deleted) is dropped too;
//   - the definition tracker's records (definitions.h) are resolved with
//     policy.definitions (see ResolveDefinitions in test_recorder.cc: a
//     repo file's content dependency becomes its module-level view, plus
//     the definitions that ran, where every process that recorded it was
//     tracked whole and did not read it as data), or dropped without one;
//   - an `unfollowed` record, a log that cannot be read whole (corrupt,
//     truncated, records lost) or a test whose logs are missing makes the
//     test *opaque*: always selected, with the reason kept.
// Records keep their scope: the test's own scope (or one beneath it, which
// rolls up to the test), or an ancestor scope (a forking runner's shared
// setup), which the index applies to every test beneath it.
#ifndef STE_TEST_RECORDER_H_
#define STE_TEST_RECORDER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/config.h"
#include "ste/definitions.h"
#include "ste/dependency.h"
#include "ste/glob.h"
#include "ste/log_reader.h"

namespace ste {

struct ScopeDependencies {
  std::string scope;          // "//r/tests/test_a.py", "//r", ...
  std::vector<DepKey> deps;   // sorted, unique
};

struct TestDependencies {
  std::vector<ScopeDependencies> scopes;  // sorted by scope
  bool opaque = false;
  std::vector<std::string> opaque_reasons;
  // The scopes of the unfollowed records (a batch run splits opacity by
  // test); "" for a reason of the whole run (unreadable logs).
  std::vector<std::string> opaque_scopes;  // parallel to opaque_reasons
  // Definition granularity (PathPolicy::definitions): per scope, the repo
  // files whose content dependency became their module-level view there;
  // the scopes in which a tracked process did not account for all it ran
  // (ApplyDefinitionFallback). Not sent anywhere: used where the run is.
  std::map<std::string, std::vector<std::string>> definition_files;
  std::set<std::string> untracked_scopes;
};

struct PathPolicy {
  std::string root;     // absolute, normalised repo root
  GlobSet ignore;       // repo-relative paths to drop
  std::string log_dir;  // absolute; records under it are dropped
  // The test's private temporary directory ($TMPDIR while it ran, empty
  // when it started, removed after): what the test finds there it put
  // there itself, so its records are dropped too ("" for none). An
  // `unfollowed` record there still makes the test opaque.
  std::string private_tmp;
  // True if `abs` exists now (after the test). Default: lstat.
  std::function<bool(const std::string& abs)> exists;
  // Definition granularity (definitions.h): resolves the tracker's records
  // into definition dependencies; null: they are dropped (file level).
  DefinitionCache* definitions = nullptr;
};

// The repo-relative form of an absolute path under root ("." for root),
// or the path itself if it lies outside.
std::string RepoRelative(const std::string& root, const std::string& abs);

// Reduces the logs of one test's run. `read_status` is what ReadLogDir
// returned (a non-OK status makes the test opaque).
TestDependencies ReduceLogs(const std::vector<ProcessLog>& logs,
                            const absl::Status& read_status,
                            const PathPolicy& policy);

// The per-test half of definition granularity: when a scope of `record`'s
// test (its own, beneath or above) is one of all.untracked_scopes, every
// file whose content dependency became a module-level view in those
// scopes is a content dependency of the test's own scope again (file
// level for it alone). `all` is what ReduceLogs gave for the whole run.
void ApplyDefinitionFallback(const TestDependencies& all, struct TestRecord* record);

// The scope of a test file: "//r/" + its repo-relative path.
std::string TestScope(const std::string& test);

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
};

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
};

// The integrations folder the runs of `config` want in
// RunOneTestOptions::integrations_dir: FindIntegrationsDir() when the runner
// is a batch one or runner.python_imports is "names", else "". A batch
// runner cannot run without it: its error. For any other kind a missing
// folder is no error: "" (Python imports recorded as listings, coarser and
// honest), and *warning says so, for the caller to print once; *warning is
// cleared otherwise.
absl::StatusOr<std::string> IntegrationsDirForRuns(const Config& config, std::string* warning);

// Removes `path` and everything below it, best effort; a symlink is
// removed, never followed (a test's scratch and log folders, a record
// build's test logs).
void RemoveTree(const std::string& path);

// Runs one test (see top). Never fails outright: a test that cannot be run
// comes back with started=false and an error (its outcome is "error").
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
// above it, or the logs could not be read.
std::vector<TestRecord> RunBatch(const Config& config, const std::vector<std::string>& tests,
                                 const RunOneTestOptions& options);

// Parses $STE_RESULTS lines ("outcome\texit\tseconds\tpath\n": the path
// is everything after the third tab, tabs and a '\r' included); malformed
// lines (too few fields, an empty path, an outcome other than passed,
// failed or error, an exit code that is not an int) and a torn last line
// are skipped; a seconds field that is unreadable, not finite or negative
// counts as 0. Later lines for a path win.
struct RunnerResult {
  std::string outcome;  // passed, failed, error
  int exit_code = 0;
  double seconds = 0;
};
std::map<std::string, RunnerResult> ParseRunnerResults(std::string_view text);

}  // namespace ste

#endif  // STE_TEST_RECORDER_H_
