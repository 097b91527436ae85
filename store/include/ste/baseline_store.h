// The baseline store: completed record builds, keyed by MRI.
//
// A baseline is one record build: the commit it recorded, its MRI
// (monotonic revision id: if A is an ancestor of B then MRI(A) < MRI(B)),
// its selection index and inventory (blobs), and every test's result.
// `ste select` asks for the latest *completed* baseline with mri <= X.
//
// Life cycle:  Begin() -> "building"  -> PutBlob()/PutResults() ...
//              -> Complete() -> "complete"   (or MarkFailed() -> "failed")
//              (CompleteImported() for a copy: `ste baseline import`)
//              ... Remove() -> gone          (`ste baseline gc`)
// Only Complete() makes a baseline visible to LatestCompleted(); it is
// atomic: a build interrupted at any point (killed, power lost) leaves the
// store with the previous completed baseline still the one served, and
// never serves a half-written one. Blobs are written durably (fsync) before
// Complete() can succeed.
//
// Interfaces. The store is one object with four faces, so that a caller
// names the part it needs:
//   BaselineStore    the life cycle above and the reads (`ste record`,
//                    `ste select`, the loader)
//   BuildLeaseStore  resumable record builds: leases, claims, the journal
//                    (the scheduler's build sessions)
//   RetentionStore   copies and retention: blob lists, summaries, imports,
//                    removal, the sweep (`ste baseline import|list|gc`)
//   HistoryStore     what selections and audits found (`ste select` and
//                    `ste audit` append, `ste report` reads)
// Store is all four; Store::Open and Store::OpenForReading return one.
//
// Implementations: SQLite ("sqlite:PATH", the embedded default; blobs are
// files beside the database, so a select can mmap the index) and
// PostgreSQL ("postgresql://..." or "postgres://...", a libpq connection
// URI: a store shared by many machines; blobs are bytea on the server,
// copied on demand into <root>/.ste/pgcache for BlobPath). The protocol
// is written once (store/src/relational_store.h) over a narrow SQL seam
// (sql_db.h), with two strategies per back-end: where blobs live and how
// writers lock (store_strategies.h). Both pass the same contract tests
// (store/src/store_contract_test.cc and its continuations).
//
// Writers. The store object that Begin()s a baseline holds a *writer lock*
// on it until it completes it, marks it failed, removes it, or is
// destroyed (or its process dies: the kernel, or the server for a dropped
// connection, lets go of it). SQLite: an flock(2) on
// <store dir>/writers/<id>.lock; PostgreSQL: a session advisory lock
// (WriterLockKey in postgres_store.h), taken again after a reconnect. So
// "building, and no writer lock is held" means that nothing will write the
// baseline again, unless a connection was lost and not re-established yet,
// or a ste from before writer locks began it: the reason `ste baseline gc`
// also wants an abandoned build to be old (baseline_retention.h).
//
// Removal. Remove() deletes a baseline's rows first, in one transaction,
// and its local files after: a reader that found the baseline just before
// may find its blobs gone, and looks again (baseline_loader.h); a reader
// that had mapped the index keeps its mapping (an unlinked file lives on).
//
// Resumable record builds (schema version 2). A build that a scheduler
// runs (BeginBuild) has a *build row* beside its baseline row until it is
// complete, failed or removed:
//   owner       the instance id of the scheduler running it
//               (scheduler_service.h, --instance-id)
//   generation  1 at BeginBuild, one more at each ClaimBuild
//   lease       until when the owner holds it, on the *store's* clock
//               (SQLite: the machine's; PostgreSQL: the server's, one
//               clock for every scheduler), renewed by RenewBuild
//   spec        what the build was created with (build_journal.h)
// and a *journal*: one row per accepted result (its TestResult in results,
// its record, build_journal.h, in accepted), written by PutAccepted in
// batches, one transaction each, in the order of acceptance.
// The store object that BeginBuild()s or ClaimBuild()s a build holds its
// *claim* (owner, generation). Fencing: every write to a baseline with a
// build row (PutBlob, PutResults, PutAccepted, RenewBuild, Complete,
// MarkFailed) checks in its own transaction that the row still names this
// object's claim, and is FailedPrecondition ("... is run by <owner>")
// otherwise: a scheduler that lost its build (paused past its lease,
// another took it over) cannot change a byte of it. Complete and
// MarkFailed delete the build row and the journal in their transaction (a
// finished build needs neither); Remove deletes them with the rest.
// A baseline without a build row (Begin: `ste record` embedded, imports)
// is written as before, by whoever began it.
//
// The history (schema version 3). Two tables that only grow, one row per
// event, written by one INSERT each and never changed:
//   selections  one `ste select` (local, or a scheduler's Select): when
//               (the store's clock), the baseline compared with (0: none),
//               the commit selected at, the mode and its reason, how many
//               tests there were and how many were selected, how many
//               paths changed, the recorded seconds of the tests left out
//               (the time saved), how long the select took, and its origin
//               ("select", "select 2/4" for one shard of four,
//               "scheduler")
//   audits      one `ste audit` or `ste record --observe`: when, the
//               baseline, the commit, how many tests the selection left
//               out, how many of those ran, the misses and the flaky ones
//               (counts, and the names: each followed by a NUL byte)
// Rows name a baseline by id without a reference: `ste baseline gc` may
// remove it and the history stays. Nothing removes history rows (a row is
// ~100 bytes: a million selects are ~100 MB). Appending is a caller's
// best effort: `ste select` ignores a failure (a read-only store, an
// older schema it could not migrate) and its selection is the same.
//
// Thread-safety: one Store object per thread; several processes may
// open the same store (writers of one baseline are serialised; a busy
// store is retried for a few seconds, then reported as Unavailable, as is
// an unreachable server).
#ifndef STE_BASELINE_STORE_H_
#define STE_BASELINE_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ste/test_outcome.h"

namespace ste {

struct TestResult {
  std::string test;         // repo-relative test path, e.g. tests/test_a.py
  TestOutcome outcome = TestOutcome::kPassed;
  int exit_code = 0;
  double seconds = 0;       // wall time
  bool opaque = false;      // something it ran could not be followed
};

// Stored as these numbers (both stores): never renumber one.
enum class BaselineState : uint8_t { kBuilding = 0, kComplete = 1, kFailed = 2 };
// Every state, in enum order (a new one is added here too).
inline constexpr BaselineState kBaselineStates[] = {
    BaselineState::kBuilding, BaselineState::kComplete, BaselineState::kFailed};

struct BaselineInfo {
  int64_t id = 0;
  std::string commit;       // git commit id, or "" outside git
  int64_t mri = 0;
  BaselineState state = BaselineState::kBuilding;
  int64_t created_unix = 0; // seconds since the epoch
  int64_t completed_unix = 0;
  std::string failure;      // why, for kFailed
};

inline constexpr size_t kMaxCommitsPerLookup = 1000;

// What is recorded of one blob, without its bytes.
struct BlobInfo {
  std::string name;
  int64_t size = 0;
  std::string xxh3_128;  // 32 lowercase hex digits (what xxh128sum prints)
};

// The build row of a resumable build (baseline_store.h "Resumable").
struct BuildOwnership {
  int64_t baseline = 0;
  std::string owner;
  int64_t generation = 0;
  // Milliseconds left of the owner's lease on the store's clock: > 0 while
  // it runs, <= 0 once expired (that long ago).
  int64_t lease_left_ms = 0;
};

// A build taken over (ClaimBuild).
struct ClaimedBuild {
  int64_t generation = 0;     // this object's, from now on
  std::string previous_owner; // who held it before ("" never: BeginBuild names one)
  std::string spec;           // as BeginBuild stored it
};

// One accepted result of a resumable build, for PutAccepted.
struct AcceptedEntry {
  TestResult result;   // stored in results, as PutResults would
  std::string record;  // its journal record (build_journal.h), kept as is
};

// A baseline with what `ste baseline list` and gc need to know of it.
struct BaselineSummary {
  BaselineInfo info;
  int64_t tests = 0;       // results stored
  int64_t blob_bytes = 0;  // the sizes of its blobs, summed
  // Building only: some store object, in any process (SQLite: on this
  // machine; PostgreSQL: any client of the server), holds its writer lock.
  bool writer_alive = false;
};

// The life cycle of a baseline and the reads of a select.
class BaselineStore {
 public:
  virtual ~BaselineStore() = default;

  // Starts a baseline in state kBuilding; returns its id. This object holds
  // its writer lock from now on (taken before the row is visible to
  // others; a lock that cannot be taken is not an error, only no evidence).
  virtual absl::StatusOr<int64_t> Begin(const std::string& commit,
                                        int64_t mri) = 0;

  // Stores blob `name` ("index", "inventory") of a building baseline,
  // durably. Replaces an earlier blob of the same name.
  virtual absl::Status PutBlob(int64_t baseline, const std::string& name,
                               const std::string& bytes) = 0;

  // Adds (or replaces, by test) results of a building baseline.
  virtual absl::Status PutResults(int64_t baseline,
                                  const std::vector<TestResult>& results) = 0;

  // Makes a building baseline complete, atomically. FailedPrecondition if
  // it is not building or lacks the "index" or "inventory" blob.
  virtual absl::Status Complete(int64_t baseline) = 0;

  // Marks a building baseline failed (kept for the record, never served).
  virtual absl::Status MarkFailed(int64_t baseline, const std::string& why) = 0;

  // The latest complete baseline with mri <= max_mri (highest mri, then
  // highest id), or nullopt if there is none. One indexed query.
  virtual absl::StatusOr<std::optional<BaselineInfo>> LatestCompleted(
      int64_t max_mri) = 0;

  // The latest complete baseline (highest mri, then highest id) recorded
  // for one of `commits` (at most kMaxCommitsPerLookup; more is
  // InvalidArgument), or nullopt if there is none. For checkouts that
  // cannot count their history (a shallow clone): the commits they can see.
  // One query; it walks the complete baselines newest first and stops at
  // the first match.
  virtual absl::StatusOr<std::optional<BaselineInfo>> LatestCompletedAmong(
      const std::vector<std::string>& commits) = 0;

  // A baseline by id (any state). NotFound if there is none.
  virtual absl::StatusOr<BaselineInfo> Get(int64_t baseline) = 0;

  // Every baseline, newest first.
  virtual absl::StatusOr<std::vector<BaselineInfo>> List() = 0;

  // The results of a baseline, sorted by test.
  virtual absl::StatusOr<std::vector<TestResult>> Results(int64_t baseline) = 0;

  // A local file holding blob `name` of a baseline, for mmap. The bytes
  // are checked against the size and hash recorded with them (DataLoss on
  // a mismatch: the caller then selects all). NotFound if absent.
  virtual absl::StatusOr<std::string> BlobPath(int64_t baseline,
                                               const std::string& name) = 0;

  // The highest mri of any baseline + 1 (1 for an empty store): the MRI of
  // a record build outside git when none is given.
  virtual absl::StatusOr<int64_t> NextMri() = 0;
};

// Resumable record builds (see "Resumable record builds" above).
class BuildLeaseStore {
 public:
  virtual ~BuildLeaseStore() = default;

  // As Begin(), and in the same transaction the build row: owned by
  // `owner` (not empty), generation 1, leased for `lease_ms` (>= 0) from
  // now on the store's clock, with `spec`. This object holds the claim.
  virtual absl::StatusOr<int64_t> BeginBuild(const std::string& commit, int64_t mri,
                                             const std::string& owner,
                                             const std::string& spec,
                                             int64_t lease_ms) = 0;

  // Takes build `baseline` over for `owner` when it is building and its
  // build row names `owner` already (a restart of the same instance) or
  // its lease has expired (lease_left_ms <= 0): the row then names
  // `owner`, generation + 1, leased for `lease_ms`, and this object holds
  // the claim (and the writer lock). nullopt, changing nothing, when
  // another owner's lease still runs or the baseline is not building.
  // NotFound for a baseline without a build row. One transaction: of two
  // schedulers claiming one build at once, one gets it.
  virtual absl::StatusOr<std::optional<ClaimedBuild>> ClaimBuild(int64_t baseline,
                                                                 const std::string& owner,
                                                                 int64_t lease_ms) = 0;

  // Extends this object's claim on `baseline` to `lease_ms` from now.
  // false (and this object forgets the claim) when the build is no longer
  // this claim's: taken over, finished, removed.
  virtual absl::StatusOr<bool> RenewBuild(int64_t baseline, int64_t lease_ms) = 0;

  // Appends accepted results to the journal of a build this object holds
  // (each result's row in results, replacing one of the same test; its
  // record in the journal, where a test already journaled keeps its first
  // record), all in one transaction. InvalidArgument as PutResults;
  // FailedPrecondition when the claim is lost or the build is over.
  virtual absl::Status PutAccepted(int64_t baseline,
                                   const std::vector<AcceptedEntry>& entries) = 0;

  // The journal records of a resumable build, in the order they were
  // appended. NotFound without a build row.
  virtual absl::StatusOr<std::vector<std::string>> Journal(int64_t baseline) = 0;

  // The build rows of every building baseline, by baseline id.
  virtual absl::StatusOr<std::vector<BuildOwnership>> ListBuilds() = 0;
};

// Copies and retention (`ste baseline import|list|gc`).
class RetentionStore {
 public:
  virtual ~RetentionStore() = default;

  // The blobs recorded for a baseline (any state), sorted by name.
  // NotFound if there is no such baseline. Reads no blob bytes.
  virtual absl::StatusOr<std::vector<BlobInfo>> Blobs(int64_t baseline) = 0;

  // Every baseline with its counts, newest (highest id) first; whether a
  // writer holds each building one is probed without taking its lock.
  virtual absl::StatusOr<std::vector<BaselineSummary>> ListSummaries() = 0;

  // Completes a building baseline that is a copy of one recorded elsewhere
  // (`ste baseline import`): as Complete(), and it keeps the given times.
  // But if a complete baseline with the same commit, mri, blobs (name, size,
  // hash) and results exists already, nothing is completed and that one's
  // id is returned (the caller then removes its own). Returns `baseline`
  // once completed. The check and the completion are one transaction,
  // serialised with every other CompleteImported: two imports of one file
  // at once complete one baseline.
  virtual absl::StatusOr<int64_t> CompleteImported(int64_t baseline,
                                                   int64_t created_unix,
                                                   int64_t completed_unix) = 0;

  // Removes baseline `baseline` if it is (still) in state `expected` and,
  // for kBuilding, no writer lock on it is held by anything but this
  // object: its results, blob rows (PostgreSQL: and bytes) and its row in
  // one transaction, then its files (SQLite: blob files and temp files;
  // PostgreSQL: the local cache's copies), their hash stamps, its writer
  // lock file. Returns false, having removed nothing, when it is gone
  // already, in another state, or held by a live writer. A file that
  // cannot be unlinked is left for RemoveStaleFiles (not an error).
  virtual absl::StatusOr<bool> Remove(int64_t baseline,
                                      BaselineState expected) = 0;

  // Removes local files no baseline needs: blob files (SQLite) or cached
  // copies (PostgreSQL) of baselines that are gone or that no blob row
  // names (a killed write, a replaced blob), temp files and writer lock
  // files of baselines that are gone or no longer building, and hash
  // stamps of files that are gone. Never a file of a building baseline
  // nor one a complete baseline names. Returns the paths removed, sorted.
  virtual absl::StatusOr<std::vector<std::string>> RemoveStaleFiles() = 0;
};

// One selection, as the history keeps it ("The history" above).
struct SelectionEntry {
  int64_t id = 0;             // given by the store
  int64_t at_unix = 0;        // given by the store: its clock at the append
  int64_t baseline = 0;       // 0: no baseline
  std::string commit;         // HEAD of the checkout ("" outside git)
  std::string mode;           // "all", "subset" or "none"
  std::string reason;         // at most kMaxHistoryReasonBytes (cut)
  int64_t tests = 0;          // the tests the tree has
  int64_t selected = 0;       // of them selected (mode all: every one)
  int64_t changed = 0;        // changed paths
  double skipped_seconds = 0; // the baseline's seconds of the tests left out
  double seconds = 0;         // how long the select took
  std::string origin;         // "select", "select K/N", "scheduler"
};

// One audit or observation.
struct AuditEntry {
  int64_t id = 0;        // given by the store
  int64_t at_unix = 0;   // given by the store
  int64_t baseline = 0;  // 0: none
  std::string commit;
  std::string kind;      // "audit" (`ste audit`) or "observe" (`ste record --observe`)
  int64_t left_out = 0;  // tests the selection left out
  int64_t ran = 0;       // of them run (an observation: every one)
  std::vector<std::string> missed;  // did not pass (not flaky); sorted
  std::vector<std::string> flaky;   // did not pass, then did; sorted
};

inline constexpr size_t kMaxHistoryReasonBytes = 1000;

// The history ("The history" above).
class HistoryStore {
 public:
  virtual ~HistoryStore() = default;

  // Appends one row; returns its id. InvalidArgument for a mode or kind
  // not listed above, a negative count, or a name holding a NUL byte.
  virtual absl::StatusOr<int64_t> AppendSelection(const SelectionEntry& entry) = 0;
  virtual absl::StatusOr<int64_t> AppendAudit(const AuditEntry& entry) = 0;

  // The newest `limit` rows (limit <= 0: every row), oldest first.
  virtual absl::StatusOr<std::vector<SelectionEntry>> Selections(int64_t limit) = 0;
  virtual absl::StatusOr<std::vector<AuditEntry>> Audits(int64_t limit) = 0;
};

// A store: all four. What Open returns; a caller that needs one part
// may take that interface (a Store& converts to each).
class Store : public BaselineStore,
              public BuildLeaseStore,
              public RetentionStore,
              public HistoryStore {
 public:
  ~Store() override = default;

  // Opens (creating if needed, with its schema) the store named by `url`:
  // "sqlite:PATH" (PATH relative to `root` unless absolute), or
  // "postgresql://..." / "postgres://..." (blob copies go to
  // `root`/.ste/pgcache). InvalidArgument for another scheme;
  // DataLoss/FailedPrecondition for a database that is not ste's or has an
  // unknown schema version; Unavailable for a server that does not answer.
  static absl::StatusOr<std::unique_ptr<Store>> Open(
      const std::string& url, const std::string& root);

  // For a reader (`ste select`): Open, and when an existing SQLite store
  // cannot be opened so (its disk full, its file system read-only: SQLite
  // cannot set it up or create its -shm file), the same store read only;
  // on a read-only file system immutable (no locks: nobody can be writing
  // there), unless a WAL holds frames that such a read would skip; on a
  // full disk (under 1 MiB free) with its WAL index in memory
  // (SqliteDb::Mode::kPrivateIndex: no -shm file to grow; such readers
  // take turns). Writes through such a store
  // fail. When nothing opens, the first error, then the fallback's.
  static absl::StatusOr<std::unique_ptr<Store>> OpenForReading(
      const std::string& url, const std::string& root);
};

// "building"/"complete"/"failed"; "unknown" for a value that is not in
// the enum. (TestOutcomeName: ste/test_outcome.h.)
std::string_view BaselineStateName(BaselineState state);

}  // namespace ste

#endif  // STE_BASELINE_STORE_H_
