// One record build on the scheduler's side, whatever carries it: the
// coordinator (who runs what), the index builder (what the results say),
// and the baseline being written to the store.
//
//   BuildSession::Create(spec, store)   Begin() a baseline in the store
//        │                              (state building, never served)
//        ├─ coordinator(): RegisterWorker / Heartbeat / Lease
//        ├─ InternPath(path)            a stream's path table, validated
//        ├─ AddExternal(inventory)      files outside the repo, hashed
//        │                              on the worker
//        ├─ Submit(result)              validated, accepted once, fed
//        │                              to the index builder
//        └─ when the last test is fed:  index + inventory + results are
//           stored and Complete()d      (or MarkFailed() on any error)
//
// The gRPC service (scheduler_service.h) is a thin adapter over this
// class: it decodes messages into these types. Validation is here, so a
// bad message is refused the same way whatever brings it, and nothing of
// a refused result reaches the index.
//
// Thread-safety: every method may be called from any thread.
#ifndef STE_BUILD_SESSION_H_
#define STE_BUILD_SESSION_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/baseline_store.h"
#include "ste/build_coordinator.h"
#include "ste/dependency.h"
#include "ste/inventory.h"
#include "ste/selection_index.h"

namespace ste {

// OK iff `path` may be a dependency key sent by a worker: no NUL byte; "."
// (the repo root) or a repo-relative path without a leading '/' or any
// empty, "." or ".." component (nothing that could escape the repo); or
// an absolute path ('/' then components, none empty, "." or ".."); and at
// most 4096 bytes. InvalidArgument naming the path otherwise.
absl::Status ValidateDependencyPath(std::string_view path);
// A test path: as above, repo-relative only, not ".".
absl::Status ValidateTestPath(std::string_view path);

struct BuildSpec {
  std::string commit;
  int64_t mri = 0;
  std::vector<BuildTest> tests;  // historical_seconds 0: taken from the
                                 // store's previous baseline if it knew it
  Inventory inventory;           // the checkout, before any test ran
  // Results depending on an absolute path must have sent its inventory
  // entry (AddExternal) first. Off when ste.toml says inventory.external =
  // false (then absolute paths, views of outside directories included, are
  // in the index but never inventoried, so no change to them is seen).
  // Repo view paths need their entry either way.
  bool external = true;
};

// One scope of a result; ids come from InternPath.
struct ResultScope {
  std::string scope;
  std::vector<uint32_t> ids[kDepKindCount + 1];  // by DepKind
};

struct LeaseResult {
  uint64_t lease_id = 0;
  std::string test;
  TestOutcome outcome = TestOutcome::kPassed;
  int exit_code = 0;
  double seconds = 0;
  bool opaque = false;
  std::vector<std::string> opaque_reasons;
  std::string error;  // why it could not run (outcome error)
  std::vector<ResultScope> scopes;
  // Where the test's output is kept, on the worker (TestRecord's fields
  // of the same names); the tail of a test that did not pass.
  std::string output_log;
  bool output_shared = false;
  std::string output_tail;
  uint64_t output_bytes = 0;
};

// The most of a result's output tail a build keeps (the last bytes of a
// longer one), and the longest output log path (a longer one is dropped).
inline constexpr size_t kMaxOutputTailBytes = 8 << 10;
inline constexpr size_t kMaxOutputLogBytes = 4096;

// A test whose result was accepted, as the build's watchers see it.
struct FinishedTest {
  std::string test;
  TestOutcome outcome = TestOutcome::kPassed;
  int exit_code = 0;
  double seconds = 0;
  bool opaque = false;
  std::string detail;
  // Its output, as the worker that ran it keeps it (LeaseResult), and that
  // worker's name ("" when unknown).
  std::string output_log;
  bool output_shared = false;
  std::string output_tail;
  uint64_t output_bytes = 0;
  std::string worker_name;
};

struct BuildSnapshot {
  BaselineState state = BaselineState::kBuilding;
  size_t done = 0, total = 0, workers = 0;
  int64_t baseline_id = 0;
  std::string failure;
  uint64_t index_bytes = 0;
  uint64_t inventory_entries = 0;
  std::vector<FinishedTest> finished;  // from the index asked for
};

class BuildSession {
 public:
  struct Options {
    BuildCoordinator::Options coordinator;
    // One line per build event (created, worker joined/expired, complete,
    // failed); may be empty.
    std::function<void(const std::string&)> log;
  };

  // Begins a baseline in `store` (which the session owns from now on).
  // InvalidArgument for a bad test path, a duplicate, or no test.
  static absl::StatusOr<std::unique_ptr<BuildSession>> Create(
      BuildSpec spec, std::unique_ptr<BaselineStore> store, Options options);
  ~BuildSession();

  // "b<baseline id>": unique in the store, so a restarted scheduler knows
  // a build id it has never seen belonged to an earlier run.
  const std::string& id() const { return id_; }
  int64_t baseline_id() const { return baseline_id_; }
  const std::string& commit() const { return spec_.commit; }
  int64_t mri() const { return spec_.mri; }
  BuildCoordinator& coordinator() { return *coordinator_; }

  // The builder's id for a validated path (InvalidArgument otherwise).
  absl::StatusOr<uint32_t> InternPath(std::string_view path);

  // Entries of files outside the repo and of views (inventory.h, "Views"),
  // computed where the tests ran: every path valid, and absolute or a
  // repo-relative path of a known view (InvalidArgument otherwise). The
  // first entry for a path wins.
  absl::Status AddExternal(const Inventory& external);

  // A result. Errors (InvalidArgument), and then nothing is taken: an
  // unknown lease, a test other than the lease's, a scope that is neither
  // the test's, beneath it nor above it, an unknown path id, an absolute
  // path (unless the build has no external files) or a repo view path
  // with no AddExternal entry. FailedPrecondition when the build
  // is no longer running. Otherwise kAccepted (fed to the index; the last
  // one stores the baseline before returning) or kDuplicate (ignored).
  // Its output fields go to the watchers' FinishedTest, bounded (the last
  // kMaxOutputTailBytes of the tail; a log path over kMaxOutputLogBytes
  // left out), with the name of the worker holding the lease.
  absl::StatusOr<BuildCoordinator::Acceptance> Submit(const LeaseResult& result);

  // Marks a running build failed (kept in the store as failed, never
  // served). No-op when it is over.
  void Fail(const std::string& why);

  // The state now, with the finished tests from index `from` on. Waits up
  // to `wait` for something new (a finished test past `from`, or the end).
  BuildSnapshot Snapshot(size_t from, absl::Duration wait);
  bool running();

 private:
  BuildSession(BuildSpec spec, std::unique_ptr<BaselineStore> store, Options options);
  void Log(const std::string& line);
  // Stores the baseline; requires every test fed. Sets the final state.
  void Finalize();
  void FailLocked(const std::string& why);  // requires mu_

  BuildSpec spec_;
  Options options_;
  std::string id_;
  int64_t baseline_id_ = 0;
  std::unique_ptr<BuildCoordinator> coordinator_;
  SelectionIndexBuilder builder_;

  std::mutex paths_mu_;  // guards paths_
  std::vector<std::string> paths_;  // builder path id -> path

  std::mutex mu_;  // guards everything below
  std::condition_variable changed_;
  std::unique_ptr<BaselineStore> store_;
  BaselineState state_ = BaselineState::kBuilding;
  std::string failure_;
  std::map<std::string, InventoryEntry> external_;
  std::vector<TestResult> results_;
  std::vector<FinishedTest> finished_;
  size_t fed_ = 0;
  uint64_t index_bytes_ = 0;
  uint64_t inventory_entries_ = 0;
};

}  // namespace ste

#endif  // STE_BUILD_SESSION_H_
