// Log reduction: the pure half of recording a test. From the logs of one
// traced run (log_reader.h) to its dependency set, per scope; no process
// is run and nothing is written (the run itself is test_recorder.h's).
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
//     policy.definitions (definition_resolution.h: a repo file's content
//     dependency becomes its module-level view, plus the definitions that
//     ran, where every process that recorded it was tracked whole and did
//     not read it as data), or dropped without one;
//   - an `unfollowed` record, a log that cannot be read whole (corrupt,
//     truncated, records lost) or a test whose logs are missing makes the
//     test *opaque*: always selected, with the reason kept.
// Records keep their scope: the test's own scope (or one beneath it, which
// rolls up to the test), or an ancestor scope (a forking runner's shared
// setup), which the index applies to every test beneath it.
//
// Thread-safety: every function here is safe to call from several threads
// at once (a DefinitionCache in the policy is itself thread-safe).
#ifndef STE_LOG_REDUCTION_H_
#define STE_LOG_REDUCTION_H_

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ste/definitions.h"
#include "ste/dependency.h"
#include "ste/glob.h"
#include "ste/log_reader.h"
#include "ste/test_scope.h"

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
  // test); "" for a reason of the whole run (unreadable logs). A test that
  // could not be run at all has reasons and no scopes (test_recorder.h).
  std::vector<std::string> opaque_scopes;  // parallel to opaque_reasons
  // Definition granularity (PathPolicy::definitions): per scope, the repo
  // files whose content dependency became their module-level view there;
  // the scopes in which a tracked process did not account for all it ran
  // (ApplyDefinitionFallback). Not sent anywhere: used where the run is.
  std::map<std::string, std::vector<std::string>> definition_files;
  std::set<std::string> untracked_scopes;
  // Test cases (SplitCaseScopes, case_split.h): the scopes whose
  // definition records are not complete for that scope alone: a tracked
  // process recorded there without the tracker's `scope` marker (it may
  // have listed a code object in an earlier scope only).
  std::set<std::string> unsplit_scopes;
  // Test cases: the order a runner entered scopes in, from the tracker's
  // `scope` markers ("/\x01ste-defs-scope:<pid>.<n>", n counting one
  // process's scope pushes): per scope, the (pid, n) of its first entry;
  // pid 0 when processes of two pids made markers there (no one order).
  std::map<std::string, std::pair<uint32_t, uint64_t>> scope_entries;
  // SplitCaseScopes: the names beneath the test's scope of its case scopes
  // in the order they ran (one process entered them all; every case scope
  // that recorded anything is among them); empty when that order is not
  // known, and then no case of the test is selected alone (a case sees the
  // state the cases before it left: docs/concepts.md, "Test cases").
  std::vector<std::string> case_order;
  // How many processes tracked definitions with the slow fallback tracer,
  // by why (definitions.h); a batch's on each of its tests (RunBatch).
  // Shown once in `ste record`'s summary, nowhere else.
  std::map<std::string, size_t> slow_trackers;
  // What the run wrote and left behind (a `write` record of a path that
  // exists after it), outside its private temporary directory, its log
  // directory and inventory.ignore, by the scope that wrote it: repo paths
  // relative, others absolute, sorted. Not a dependency: `ste hazards`
  // pairs each with the tests that read it (an order dependence).
  std::map<std::string, std::vector<std::string>> writes;
};

// Adds what `from` holds to *into: each scope's dependencies (a union),
// opacity and its reasons, and the definition-level sets (a union; maps:
// each key's values joined). A test run several times (runner.retries)
// depends on what any of its runs read. case_order and scope_entries stay
// *into's.
void MergeDependencies(TestDependencies* into, const TestDependencies& from);

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
  // Environment variables whose reads are no dependency
  // (selection.env_ignore; environment.h), globs over names.
  GlobSet env_ignore;
  // Definition granularity (definitions.h): resolves the tracker's records
  // into definition dependencies; null: they are dropped (file level).
  DefinitionCache* definitions = nullptr;
};

// The repo-relative form of an absolute path under root ("." for root),
// or the path itself if it lies outside.
std::string RepoRelative(const std::string& root, const std::string& abs);


// Reduces the logs of one test's run (or one batch's: every scope is
// kept, batch_split.h divides them). `read_status` is what ReadLogDir
// returned (a non-OK status makes the test opaque).
TestDependencies ReduceLogs(const std::vector<ProcessLog>& logs,
                            const absl::Status& read_status,
                            const PathPolicy& policy);

// The per-test half of definition granularity: when a scope of `test`
// (its own, beneath or above) is one of all.untracked_scopes, every file
// whose content dependency became a module-level view in those scopes is
// a content dependency of the test's own scope in *deps again (file level
// for it alone; the scope is added if *deps has none). `all` is what
// ReduceLogs gave for the whole run; *deps is the test's share of it.
void ApplyDefinitionFallback(const TestDependencies& all, const std::string& test,
                             TestDependencies* deps);

}  // namespace ste

#endif  // STE_LOG_REDUCTION_H_
