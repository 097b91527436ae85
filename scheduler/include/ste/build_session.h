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
// Resumable builds (Options::owner set: `ste scheduler`). The baseline is
// begun with BuildLeaseStore::BeginBuild, its spec (build_journal.h) stored
// with it, and every accepted result is journaled: kept pending, written
// in one PutAccepted transaction when `journal_batch` are pending and by
// Flush(), which the service calls before it acknowledges a Report stream
// (so a result a worker was told is taken is in the store). Renew() keeps
// the build lease; another run of a scheduler that claims the build
// (ClaimBuild) makes a session with Resume(): the spec decoded, every
// journaled result fed to a new index builder and marked accepted in a
// coordinator of the next generation; the rest is leased again. The index
// it stores is the one a fault-free build stores: the same results, fed
// in another order, which the builder does not depend on. A session whose
// claim was lost (the store refuses its writes: another scheduler took the
// build) is lost(): it stops taking results and never marks the build
// failed; its watchers and workers are sent to look again.
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
#include "ste/repo_path.h"  // ValidateDependencyPath, ValidateTestPath
#include "ste/selection_index.h"

namespace ste {


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
  // tests.unit = "case" where the build was asked for: the index keeps each
  // file's cases (FeedCases), as with Options::cases.
  bool cases = false;
  // With cases: a case also owns the files it read (content keys left in
  // its scope by SplitCaseScopes with reads_own), not only definition
  // views. runner.kind = "ctest": a GoogleTest case has no definition
  // tracker (case_split.h).
  bool case_reads = false;
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
  // Test cases: its case scopes' names in the order they ran
  // (TestDependencies::case_order); empty: not known.
  std::vector<std::string> case_order;
  // Where the test's output is kept, on the worker (TestRecord's fields
  // of the same names); the tail of a test that did not pass.
  std::string output_log;
  bool output_shared = false;
  std::string output_tail;
  uint64_t output_bytes = 0;
  bool flaky = false;  // TestRecord::flaky
  std::vector<std::string> writes;  // TestDependencies::writes, every scope's
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
  // runner.retries: it did not pass, then passed when run again. In the
  // build's journal (version 2): a resumed build keeps it.
  bool flaky = false;
};

struct BuildSnapshot {
  BaselineState state = BaselineState::kBuilding;
  size_t done = 0, total = 0, workers = 0;
  int64_t baseline_id = 0;
  std::string failure;
  uint64_t index_bytes = 0;
  uint64_t inventory_entries = 0;
  std::vector<FinishedTest> finished;  // from the index asked for
  // The build was lost to another scheduler (BuildSession::lost()): this
  // one no longer follows it.
  bool handed_over = false;
};

class BuildSession {
 public:
  struct Options {
    BuildCoordinator::Options coordinator;
    // One line per build event (created, worker joined/expired, complete,
    // failed); may be empty.
    std::function<void(const std::string&)> log;
    // The scheduler instance that runs the build, for the store's build
    // row; "" for a build nothing would resume (the embedded `ste
    // record`): then nothing is journaled.
    std::string owner;
    int64_t lease_ms = 10000;   // the build lease (BeginBuild, Renew)
    size_t journal_batch = 64;  // accepted results per journal transaction
    // tests.unit = "case": the index keeps each case's own dependencies
    // (case_split.h); the workers must split case scopes (the same
    // ste.toml: SplitCaseScopes), or a case would own what is shared.
    bool cases = false;
  };

  // Begins a baseline in `store` (which the session owns from now on).
  // InvalidArgument for a bad test path, a duplicate, or no test.
  static absl::StatusOr<std::unique_ptr<BuildSession>> Create(
      BuildSpec spec, std::unique_ptr<Store> store, Options options);

  // Goes on with build `baseline`, which `store` has just claimed
  // (ClaimBuild gave `claimed`; options.owner is the claimer): the spec
  // decoded, every journaled result fed again and its test done, in a
  // coordinator of generation claimed.generation. When every test was
  // accepted already, the baseline is stored before this returns. DataLoss
  // for a spec or journal record that cannot be read, InvalidArgument for
  // one that does not fit the build: then nothing is resumed and the build
  // is marked failed through `store` (the previous baseline stays in use).
  // A store error (reading the journal) is returned as it is, the build
  // left building for a later claim.
  static absl::StatusOr<std::unique_ptr<BuildSession>> Resume(
      int64_t baseline, ClaimedBuild claimed, std::unique_ptr<Store> store,
      Options options);
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

  // Resumable builds: journals the accepted results not written yet, in
  // one transaction. OK when there is nothing to write (none pending, not
  // resumable, over). FailedPrecondition when the store refuses (the build
  // was lost, lost() is now true); other errors as the store gives them,
  // the results staying pending for the next Flush.
  absl::Status Flush();
  // Extends the build lease. False when the build was lost (or the store
  // cannot be reached: then the lease runs on, and the next Renew tries
  // again while it may).
  bool Renew();
  // The store refused this session's claim: another scheduler runs the
  // build now (or it was finished by another). Not running() either.
  bool lost();
  uint32_t generation() const { return options_.coordinator.generation; }
  // The accepted results of this session restored from the journal
  // (Resume), 0 for a new build.
  size_t resumed() const { return resumed_; }

  // The state now, with the finished tests from index `from` on. Waits up
  // to `wait` for something new (a finished test past `from`, or the end).
  BuildSnapshot Snapshot(size_t from, absl::Duration wait);
  bool running();

 private:
  BuildSession(BuildSpec spec, std::unique_ptr<Store> store, Options options);
  // What Create and Resume share once the baseline exists: the builder's
  // tests and the coordinator.
  absl::Status Start(int64_t baseline);
  // Feeds one accepted result's scopes to the index builder (one test is
  // fed by one thread; no lock of this class held).
  absl::Status FeedIndex(const std::string& own, const std::vector<ResultScope>& scopes, bool opaque,
                         const std::vector<std::string>& case_order);
  // Options::cases: each case of `case_order` (in that order, the order
  // they ran) with its own keys (IsCaseOwnKind, not in the file's shared
  // part; maybe none) to the builder. None at all when the order is
  // empty (not known, or a journal's result: the journal keeps no order),
  // a case scope of the result is not in it, or a scope lies deeper than
  // a case's: the file is then selected whole.
  absl::Status FeedCases(const std::string& own, uint32_t test_id, const std::vector<ResultScope>& scopes,
                         const std::vector<std::string>& case_order);
  // Counts an accepted result: its TestResult, its FinishedTest for the
  // watchers, and (resumable, `record` not null) its journal entry; the
  // last one stores the baseline. Requires mu_.
  void CountLocked(FinishedTest f, const absl::Status& fed, std::string* record);
  // A journaled result fed again (Resume).
  absl::Status Restore(const std::string& bytes);
  // Requires mu_.
  absl::Status FlushLocked();
  void LoseLocked(const std::string& why);  // requires mu_
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
  std::unique_ptr<Store> store_;
  BaselineState state_ = BaselineState::kBuilding;
  std::string failure_;
  std::map<std::string, InventoryEntry> external_;
  std::vector<TestResult> results_;
  // Each test's writes (LeaseResult::writes), stored as the baseline's blob
  // kWritesBlob; journaled (version 2), so a resumed build keeps them.
  std::map<std::string, std::vector<std::string>> writes_;
  std::vector<FinishedTest> finished_;
  size_t fed_ = 0;
  uint64_t index_bytes_ = 0;
  uint64_t inventory_entries_ = 0;
  std::vector<AcceptedEntry> pending_;  // accepted, not journaled yet
  bool lost_ = false;
  size_t resumed_ = 0;
};

}  // namespace ste

#endif  // STE_BUILD_SESSION_H_
