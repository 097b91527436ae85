// Copyright: the ste authors. The baseline store protocol, written once
// over the SQL seam (sql_db.h) for both back-ends (internal header).
//
// OpenSqliteStore and OpenPostgresStore (sqlite_store.h, postgres_store.h)
// create or migrate their schema, then hand this class a connection and
// their two strategies (store_strategies.h): where blobs live and how
// writers lock. What it does, for both:
//
//  * Every change of several rows is one kWrite transaction. A write
//    first reads the baseline's row (LockBuilding: SQLite's BEGIN
//    IMMEDIATE holds the database; PostgreSQL locks the row FOR SHARE for
//    PutBlob, PutResults and PutAccepted, which may run side by side, FOR
//    UPDATE for Complete, MarkFailed, ClaimBuild and Remove, which wait for
//    those and for each other), checks it is building, and checks the
//    claim (CheckClaim): every write to a resumable build is fenced by the
//    claim in its own transaction.
//  * Complete checks inside its transaction that both the "index" and
//    "inventory" blobs are durable (BlobPlace::CheckDurable), flips the
//    state, deletes the build row and journal, and commits all at once;
//    then the writer lock goes. CompleteImported does the same after a
//    duplicate check, serialised with every other import
//    (WriterLocks::SerialiseImports).
//  * Remove deletes rows first, in one transaction, files after.
//  * Every call starts with Ready(): a dropped connection is re-established
//    and the writer locks it held are taken again.
//
// Split in four files as the interfaces are: relational_store.cc (the
// life cycle and reads: BaselineStore), relational_builds.cc
// (BuildLeaseStore), relational_retention.cc (RetentionStore),
// relational_history.cc (HistoryStore).
#ifndef STE_STORE_RELATIONAL_STORE_H_
#define STE_STORE_RELATIONAL_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "sql_db.h"
#include "ste/baseline_store.h"
#include "store_strategies.h"

namespace ste {

class RelationalStore final : public Store {
 public:
  // `make_locks` builds the writer locks over the store's connection.
  RelationalStore(std::unique_ptr<SqlDb> db, std::unique_ptr<BlobPlace> blobs,
                  std::function<std::unique_ptr<WriterLocks>(SqlDb&)> make_locks,
                  FaultHook hook);

  // BaselineStore.
  absl::StatusOr<int64_t> Begin(const std::string& commit, int64_t mri) override;
  absl::Status PutBlob(int64_t baseline, const std::string& name,
                       const std::string& bytes) override;
  absl::Status PutResults(int64_t baseline, const std::vector<TestResult>& results) override;
  absl::Status Complete(int64_t baseline) override;
  absl::Status MarkFailed(int64_t baseline, const std::string& why) override;
  absl::StatusOr<std::optional<BaselineInfo>> LatestCompleted(int64_t max_mri) override;
  absl::StatusOr<std::optional<BaselineInfo>> LatestCompletedAmong(
      const std::vector<std::string>& commits) override;
  absl::StatusOr<BaselineInfo> Get(int64_t baseline) override;
  absl::StatusOr<std::vector<BaselineInfo>> List() override;
  absl::StatusOr<std::vector<TestResult>> Results(int64_t baseline) override;
  absl::StatusOr<std::string> BlobPath(int64_t baseline, const std::string& name) override;
  absl::StatusOr<int64_t> NextMri() override;

  // BuildLeaseStore.
  absl::StatusOr<int64_t> BeginBuild(const std::string& commit, int64_t mri,
                                     const std::string& owner, const std::string& spec,
                                     int64_t lease_ms) override;
  absl::StatusOr<std::optional<ClaimedBuild>> ClaimBuild(int64_t baseline,
                                                         const std::string& owner,
                                                         int64_t lease_ms) override;
  absl::StatusOr<bool> RenewBuild(int64_t baseline, int64_t lease_ms) override;
  absl::Status PutAccepted(int64_t baseline, const std::vector<AcceptedEntry>& entries) override;
  absl::StatusOr<std::vector<std::string>> Journal(int64_t baseline) override;
  absl::StatusOr<std::vector<BuildOwnership>> ListBuilds() override;

  // RetentionStore.
  absl::StatusOr<std::vector<BlobInfo>> Blobs(int64_t baseline) override;
  absl::StatusOr<std::vector<BaselineSummary>> ListSummaries() override;
  absl::StatusOr<int64_t> CompleteImported(int64_t baseline, int64_t created_unix,
                                           int64_t completed_unix) override;
  absl::StatusOr<bool> Remove(int64_t baseline, BaselineState expected) override;
  absl::StatusOr<std::vector<std::string>> RemoveStaleFiles() override;

  // HistoryStore (relational_history.cc).
  absl::StatusOr<int64_t> AppendSelection(const SelectionEntry& entry) override;
  absl::StatusOr<int64_t> AppendAudit(const AuditEntry& entry) override;
  absl::StatusOr<std::vector<SelectionEntry>> Selections(int64_t limit) override;
  absl::StatusOr<std::vector<AuditEntry>> Audits(int64_t limit) override;

 private:
  enum class Lock { kNone, kShare, kUpdate };
  struct Claim {
    std::string owner;
    int64_t generation = 0;
  };

  // The connection is up; after a reconnect the writer locks are retaken.
  absl::Status Ready();
  // Begin() and BeginBuild(): the row, the writer lock, and (with an
  // owner) the build row, in one transaction.
  absl::StatusOr<int64_t> Insert(const std::string& commit, int64_t mri, const std::string* owner,
                                 const std::string& spec, int64_t lease_ms);
  // Reads the baseline's row (inside a kWrite transaction: locked as
  // `lock` says), then OK if it is building and the claim holds;
  // NotFound / FailedPrecondition (naming `action`) otherwise.
  absl::Status LockBuilding(int64_t baseline, absl::string_view action, Lock lock);
  // OK unless `baseline` has a build row that does not name this object's
  // claim (FailedPrecondition, naming its owner).
  absl::Status CheckClaim(int64_t baseline, absl::string_view action);
  // Inside the transaction that finishes or removes a build: its build
  // row and journal go.
  absl::Status DeleteBuildRows(int64_t baseline);
  // FailedPrecondition unless both the "index" and "inventory" blobs are
  // there, durably, with the recorded size.
  absl::Status CheckCompletable(int64_t baseline);
  // The end of Complete and CompleteImported: sets the state (and times:
  // `created_unix` < 0 keeps it, `completed_unix` < 0 is now), commits,
  // lets go of the writer lock and the claim.
  absl::Status CommitCompletion(SqlTransaction txn, int64_t baseline, int64_t created_unix,
                                int64_t completed_unix);
  // Adds or replaces results (inside a transaction).
  absl::Status WriteResults(int64_t baseline, const std::vector<TestResult>& results);
  // The baseline in row `row` of `rows` (kBaselineColumns order).
  absl::StatusOr<BaselineInfo> ReadBaseline(const SqlRows& rows, int row) const;
  // The first row of `rows` as a baseline, if any.
  absl::StatusOr<std::optional<BaselineInfo>> FirstBaseline(const SqlRows& rows) const;
  void Hook(const char* point) const {
    if (hook_) hook_(point);
  }

  std::unique_ptr<SqlDb> db_;
  const SqlDialect& dialect_;
  std::unique_ptr<BlobPlace> blobs_;
  std::unique_ptr<WriterLocks> writers_;  // of the baselines this object writes
  FaultHook hook_;
  uint64_t session_;                 // db_->sessions() when the locks were taken
  std::map<int64_t, Claim> claims_;  // resumable builds this object holds
};

// The statement LatestCompleted() runs, in the seam's spelling: it is
// kPostgresLatestCompletedSql, and kLatestCompletedSql in SQLite's
// (sql_db_test.cc checks both; the tests of each back-end check its plan).
// The literal `state = 1` (not a parameter) is what lets either planner
// use the partial index of complete baselines.
inline constexpr char kLatestCompletedStatement[] =
    "SELECT id, commit_id, mri, state, created_unix, completed_unix, failure"
    " FROM ste.baselines WHERE state = 1 AND mri <= $1"
    " ORDER BY mri DESC, id DESC LIMIT 1";

// The columns ReadBaseline reads, in its order.
inline constexpr char kBaselineColumns[] =
    "id, commit_id, mri, state, created_unix, completed_unix, failure";

}  // namespace ste

#endif  // STE_STORE_RELATIONAL_STORE_H_
