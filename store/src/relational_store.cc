// Copyright: the ste authors. The relational store (relational_store.h):
// what it shares across its three files, and the life cycle of a baseline
// and the reads (BaselineStore).
#include "relational_store.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "blob_file.h"
#include "pg_conn.h"  // PgFloat8Text, for array parameters
#include "ste/status_macros.h"
#include "store_rules.h"

namespace ste {
namespace {

// A PostgreSQL array literal, "{...}", for an array parameter.
class ArrayLiteral {
 public:
  void Add(absl::string_view element) {
    text_ += text_.empty() ? "{" : ",";
    text_.append(element.data(), element.size());
  }
  // A quoted element: any text, escaped.
  void AddQuoted(absl::string_view element) {
    std::string quoted = "\"";
    for (char c : element) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    quoted += '"';
    Add(quoted);
  }
  std::string Finish() const { return text_.empty() ? "{}" : text_ + "}"; }

 private:
  std::string text_;
};

}  // namespace

RelationalStore::RelationalStore(std::unique_ptr<SqlDb> db, std::unique_ptr<BlobPlace> blobs,
                                 std::function<std::unique_ptr<WriterLocks>(SqlDb&)> make_locks,
                                 FaultHook hook)
    : db_(std::move(db)),
      dialect_(db_->dialect()),
      blobs_(std::move(blobs)),
      writers_(make_locks(*db_)),
      hook_(std::move(hook)),
      session_(db_->sessions()) {}

absl::Status RelationalStore::Ready() {
  STE_RETURN_IF_ERROR(db_->EnsureConnected());
  if (db_->sessions() != session_) {
    session_ = db_->sessions();
    writers_->Retake();
  }
  return absl::OkStatus();
}

absl::StatusOr<BaselineInfo> RelationalStore::ReadBaseline(const SqlRows& rows, int row) const {
  BaselineInfo info;
  info.id = rows.Int(row, 0);
  info.commit = rows.Text(row, 1);
  info.mri = rows.Int(row, 2);
  const int64_t state = rows.Int(row, 3);
  info.created_unix = rows.Int(row, 4);
  info.completed_unix = rows.Int(row, 5);
  info.failure = rows.Text(row, 6);
  if (!rows.ParseStatus().ok()) {
    return absl::DataLossError(
        absl::StrCat(db_->name(), ": baseline row: ", rows.ParseStatus().message()));
  }
  STE_ASSIGN_OR_RETURN(info.state, BaselineStateFromStored(state, db_->name(), info.id));
  return info;
}

absl::StatusOr<std::optional<BaselineInfo>> RelationalStore::FirstBaseline(
    const SqlRows& rows) const {
  if (rows.size() == 0) return std::optional<BaselineInfo>();
  STE_ASSIGN_OR_RETURN(BaselineInfo info, ReadBaseline(rows, 0));
  return std::optional<BaselineInfo>(std::move(info));
}

absl::Status RelationalStore::LockBuilding(int64_t baseline, absl::string_view action,
                                           Lock lock) {
  const char* clause = lock == Lock::kShare    ? dialect_.for_share
                       : lock == Lock::kUpdate ? dialect_.for_update
                                               : "";
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> row,
      db_->Query(absl::StrCat("SELECT state FROM ste.baselines WHERE id = $1", clause),
                 SqlParams().Int(baseline)));
  if (row->size() == 0) return absl::NotFoundError(absl::StrCat("no baseline ", baseline));
  const int64_t state = row->Int(0, 0);
  STE_RETURN_IF_ERROR(row->ParseStatus());
  STE_RETURN_IF_ERROR(CheckStillBuilding(baseline, state, action));
  return CheckClaim(baseline, action);
}

absl::Status RelationalStore::CheckClaim(int64_t baseline, absl::string_view action) {
  // Read after the baseline's row is locked: a ClaimBuild (FOR UPDATE on
  // it) has committed before, or waits until this transaction ends.
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> row,
      db_->Query("SELECT owner, generation FROM ste.builds WHERE baseline = $1",
                 SqlParams().Int(baseline)));
  if (row->size() == 0) return absl::OkStatus();  // not a resumable build
  const std::string owner = row->Text(0, 0);
  const int64_t generation = row->Int(0, 1);
  STE_RETURN_IF_ERROR(row->ParseStatus());
  auto it = claims_.find(baseline);
  if (it != claims_.end() && it->second.owner == owner && it->second.generation == generation) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "cannot ", action, ": baseline ", baseline, " is run by scheduler ", owner, " (generation ",
      generation, ")",
      it == claims_.end() ? ", and this store object holds no claim on it"
                          : absl::StrCat(", no longer by ", it->second.owner, " (generation ",
                                         it->second.generation, ")")));
}

absl::Status RelationalStore::DeleteBuildRows(int64_t baseline) {
  for (const char* sql : {"DELETE FROM ste.accepted WHERE baseline = $1",
                          "DELETE FROM ste.builds WHERE baseline = $1"}) {
    STE_RETURN_IF_ERROR(db_->Exec(sql, SqlParams().Int(baseline)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> RelationalStore::Insert(const std::string& commit, int64_t mri,
                                                const std::string* owner,
                                                const std::string& spec, int64_t lease_ms) {
  if (mri < 0) {
    return absl::InvalidArgumentError(absl::StrCat("mri must not be negative, got ", mri));
  }
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(SqlTransaction txn, db_->Begin(TxnKind::kWrite));
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> row,
      db_->Query(absl::StrCat("INSERT INTO ste.baselines (commit_id, mri, state, created_unix) "
                              "VALUES ($1, $2, 0, ",
                              dialect_.now_s, ") RETURNING id"),
                 SqlParams().Text(commit).Int(mri)));
  const int64_t id = row->size() == 1 ? row->Int(0, 0) : 0;
  STE_RETURN_IF_ERROR(row->ParseStatus());
  if (row->size() != 1) return absl::InternalError("INSERT ... RETURNING id returned no row");
  if (owner != nullptr) {
    STE_RETURN_IF_ERROR(db_->Exec(
        absl::StrCat("INSERT INTO ste.builds (baseline, owner, generation, lease_expires_ms, "
                     "spec) VALUES ($1, $2, 1, ",
                     dialect_.now_ms, " + $3, $4)"),
        SqlParams().Int(id).Text(*owner).Int(lease_ms).Bytes(spec)));
  }
  // Locked before the row is visible. One that cannot be taken is no
  // evidence of a writer: gc then goes by the baseline's age.
  writers_->Acquire(id);
  absl::Status committed = txn.Commit();
  if (!committed.ok()) {
    writers_->Release(id);  // the id may be given again
    return committed;
  }
  if (owner != nullptr) claims_[id] = Claim{*owner, 1};
  return id;
}

absl::StatusOr<int64_t> RelationalStore::Begin(const std::string& commit, int64_t mri) {
  return Insert(commit, mri, nullptr, "", 0);
}

absl::Status RelationalStore::PutBlob(int64_t baseline, const std::string& name,
                                      const std::string& bytes) {
  STE_RETURN_IF_ERROR(ValidateBlobName(name));
  STE_RETURN_IF_ERROR(blobs_->Admit(baseline, name, bytes.size()));
  STE_RETURN_IF_ERROR(Ready());
  // Bytes written before the rows: checked before the (maybe large)
  // write, and again under the lock.
  if (blobs_->writes_before_rows()) {
    STE_RETURN_IF_ERROR(LockBuilding(baseline, "store a blob", Lock::kNone));
  }
  const std::string hash = Xxh3Hex(bytes);  // before any lock is taken
  STE_ASSIGN_OR_RETURN(BlobPlace::Staged staged,
                       blobs_->Stage(*db_, baseline, name, hash, bytes));
  absl::Status status = [&]() -> absl::Status {
    STE_ASSIGN_OR_RETURN(SqlTransaction txn, db_->Begin(TxnKind::kWrite));
    STE_RETURN_IF_ERROR(LockBuilding(baseline, "store a blob", Lock::kShare));
    STE_RETURN_IF_ERROR(blobs_->Record(*db_, baseline, name, hash, bytes, staged));
    return txn.Commit();
  }();
  blobs_->Finish(staged, status.ok());
  return status;
}

absl::Status RelationalStore::WriteResults(int64_t baseline,
                                           const std::vector<TestResult>& results) {
  constexpr char kUpsert[] =
      " ON CONFLICT (baseline, test) DO UPDATE SET outcome = EXCLUDED.outcome, "
      "exit_code = EXCLUDED.exit_code, seconds = EXCLUDED.seconds, opaque = EXCLUDED.opaque";
  if (!dialect_.array_params) {
    for (const TestResult& r : results) {
      STE_RETURN_IF_ERROR(db_->Exec(
          absl::StrCat("INSERT INTO ste.results (baseline, test, outcome, exit_code, seconds, "
                       "opaque) VALUES ($1, $2, $3, $4, $5, $6)",
                       kUpsert),
          SqlParams()
              .Int(baseline)
              .Text(r.test)
              .Int(static_cast<int64_t>(r.outcome))
              .Int(r.exit_code)
              .Double(r.seconds)
              .Bool(r.opaque)));
    }
    return absl::OkStatus();
  }
  // One INSERT of arrays; a test named twice keeps its last result (as a
  // row-by-row replace would), since one INSERT may not touch a row twice.
  absl::flat_hash_map<absl::string_view, size_t> last;
  for (size_t i = 0; i < results.size(); ++i) last[results[i].test] = i;
  ArrayLiteral tests, outcomes, exit_codes, seconds, opaque;
  for (size_t i = 0; i < results.size(); ++i) {
    const TestResult& r = results[i];
    if (last[r.test] != i) continue;
    tests.AddQuoted(r.test);
    outcomes.Add(absl::StrCat(static_cast<int>(r.outcome)));
    exit_codes.Add(absl::StrCat(r.exit_code));
    seconds.Add(PgFloat8Text(r.seconds));
    opaque.Add(r.opaque ? "t" : "f");
  }
  return db_->Exec(
      absl::StrCat("INSERT INTO ste.results (baseline, test, outcome, exit_code, seconds, opaque) "
                   "SELECT $1, u.test, u.outcome, u.exit_code, u.seconds, u.opaque FROM "
                   "unnest($2::text[], $3::smallint[], $4::integer[], $5::float8[], "
                   "$6::boolean[]) AS u(test, outcome, exit_code, seconds, opaque)",
                   kUpsert),
      SqlParams()
          .Int(baseline)
          .Text(tests.Finish())
          .Text(outcomes.Finish())
          .Text(exit_codes.Finish())
          .Text(seconds.Finish())
          .Text(opaque.Finish()));
}

absl::Status RelationalStore::PutResults(int64_t baseline,
                                         const std::vector<TestResult>& results) {
  STE_RETURN_IF_ERROR(ValidateResults(results));
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(SqlTransaction txn, db_->Begin(TxnKind::kWrite));
  STE_RETURN_IF_ERROR(LockBuilding(baseline, "store results", Lock::kShare));
  STE_RETURN_IF_ERROR(WriteResults(baseline, results));
  return txn.Commit();
}

absl::Status RelationalStore::Complete(int64_t baseline) {
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(SqlTransaction txn, db_->Begin(TxnKind::kWrite));
  STE_RETURN_IF_ERROR(LockBuilding(baseline, "complete it", Lock::kUpdate));
  STE_RETURN_IF_ERROR(CheckCompletable(baseline));
  return CommitCompletion(std::move(txn), baseline, -1, -1);
}

absl::Status RelationalStore::CheckCompletable(int64_t baseline) {
  for (const char* name : {"index", "inventory"}) {
    STE_ASSIGN_OR_RETURN(bool found, blobs_->CheckDurable(*db_, baseline, name));
    if (!found) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot complete baseline ", baseline, ": it lacks the \"", name, "\" blob"));
    }
  }
  return absl::OkStatus();
}

absl::Status RelationalStore::CommitCompletion(SqlTransaction txn, int64_t baseline,
                                               int64_t created_unix, int64_t completed_unix) {
  STE_RETURN_IF_ERROR(db_->Exec(
      absl::StrCat("UPDATE ste.baselines SET state = 1, completed_unix = CASE WHEN "
                   "CAST($3 AS BIGINT) < 0 THEN ",
                   dialect_.now_s,
                   " ELSE CAST($3 AS BIGINT) END, created_unix = CASE WHEN CAST($2 AS BIGINT) "
                   "< 0 THEN created_unix ELSE CAST($2 AS BIGINT) END WHERE id = $1 AND "
                   "state = 0"),
      SqlParams().Int(baseline).Int(created_unix).Int(completed_unix)));
  STE_RETURN_IF_ERROR(DeleteBuildRows(baseline));
  Hook("complete-before-commit");
  STE_RETURN_IF_ERROR(txn.Commit());
  writers_->Release(baseline);
  claims_.erase(baseline);
  return absl::OkStatus();
}

absl::Status RelationalStore::MarkFailed(int64_t baseline, const std::string& why) {
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(SqlTransaction txn, db_->Begin(TxnKind::kWrite));
  STE_RETURN_IF_ERROR(LockBuilding(baseline, "mark it failed", Lock::kUpdate));
  STE_RETURN_IF_ERROR(
      db_->Exec("UPDATE ste.baselines SET state = 2, failure = $2 WHERE id = $1 AND state = 0",
                SqlParams().Int(baseline).Text(why)));
  STE_RETURN_IF_ERROR(DeleteBuildRows(baseline));
  STE_RETURN_IF_ERROR(txn.Commit());
  writers_->Release(baseline);
  claims_.erase(baseline);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<BaselineInfo>> RelationalStore::LatestCompleted(int64_t max_mri) {
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> rows,
                       db_->Query(kLatestCompletedStatement, SqlParams().Int(max_mri)));
  return FirstBaseline(*rows);
}

absl::StatusOr<std::optional<BaselineInfo>> RelationalStore::LatestCompletedAmong(
    const std::vector<std::string>& commits) {
  STE_ASSIGN_OR_RETURN(std::string sql,
                       LatestCompletedAmongSql("ste.baselines", '$', commits.size()));
  STE_RETURN_IF_ERROR(Ready());
  SqlParams params;
  for (const std::string& c : commits) params.Text(c);
  STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> rows, db_->Query(sql, params));
  return FirstBaseline(*rows);
}

absl::StatusOr<BaselineInfo> RelationalStore::Get(int64_t baseline) {
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> rows,
      db_->Query(absl::StrCat("SELECT ", kBaselineColumns, " FROM ste.baselines WHERE id = $1"),
                 SqlParams().Int(baseline)));
  if (rows->size() == 0) return absl::NotFoundError(absl::StrCat("no baseline ", baseline));
  return ReadBaseline(*rows, 0);
}

absl::StatusOr<std::vector<BaselineInfo>> RelationalStore::List() {
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> rows,
      db_->Query(absl::StrCat("SELECT ", kBaselineColumns, " FROM ste.baselines ORDER BY id DESC")));
  std::vector<BaselineInfo> list;
  list.reserve(static_cast<size_t>(rows->size()));
  for (int i = 0; i < rows->size(); ++i) {
    STE_ASSIGN_OR_RETURN(BaselineInfo info, ReadBaseline(*rows, i));
    list.push_back(std::move(info));
  }
  return list;
}

absl::StatusOr<std::vector<TestResult>> RelationalStore::Results(int64_t baseline) {
  STE_RETURN_IF_ERROR(Get(baseline).status());
  STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> rows,
                       db_->Query("SELECT test, outcome, exit_code, seconds, opaque "
                                  "FROM ste.results WHERE baseline = $1 ORDER BY test",
                                  SqlParams().Int(baseline)));
  std::vector<TestResult> results;
  results.reserve(static_cast<size_t>(rows->size()));
  for (int i = 0; i < rows->size(); ++i) {
    TestResult r;
    r.test = rows->Text(i, 0);
    const int64_t outcome = rows->Int(i, 1);
    r.exit_code = static_cast<int>(rows->Int(i, 2));
    r.seconds = rows->Double(i, 3);
    r.opaque = rows->Bool(i, 4);
    if (!rows->ParseStatus().ok()) {
      return absl::DataLossError(absl::StrCat(db_->name(), ": result of ", r.test,
                                              " in baseline ", baseline, ": ",
                                              rows->ParseStatus().message()));
    }
    STE_ASSIGN_OR_RETURN(r.outcome, TestOutcomeFromStored(outcome, db_->name(), baseline, r.test));
    results.push_back(std::move(r));
  }
  return results;
}

absl::StatusOr<std::string> RelationalStore::BlobPath(int64_t baseline, const std::string& name) {
  STE_RETURN_IF_ERROR(Get(baseline).status());
  return blobs_->Path(*db_, baseline, name);
}

absl::StatusOr<int64_t> RelationalStore::NextMri() {
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> row,
                       db_->Query("SELECT coalesce(max(mri), 0) + 1 FROM ste.baselines"));
  if (row->size() == 0) return absl::InternalError("MAX() returned no row");
  const int64_t next = row->Int(0, 0);
  STE_RETURN_IF_ERROR(row->ParseStatus());
  return next;
}

}  // namespace ste
