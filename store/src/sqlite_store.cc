// Copyright: the ste authors. The SQLite baseline store; the schema and the
// on-disk layout are described in sqlite_store.h.
//
// About 1,100 lines, over the ~600 of STYLE.md, for one reason: the schema
// (version 2 with its migration and the resumable builds' statements),
// the statements that rely on it and the open-time check of it are kept in
// one file on purpose, so that a schema change is reviewed next to every query it affects (the
// retention calls, Remove and RemoveStaleFiles, are queries on it too; what
// they do with files is in blob_sweep.h and writer_lock.h).
// The rules it shares with the other store (what results may be stored,
// reading states and outcomes back, the schema-version verdict) are in
// store_rules.h.
#include "sqlite_store.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "blob_file.h"
#include "blob_sweep.h"
#include "sqlite_db.h"
#include "ste/status_macros.h"
#include "store_rules.h"
#include "writer_lock.h"

namespace ste {
namespace {

constexpr char kBlobsDir[] = "blobs";
constexpr char kWritersDir[] = "writers";

// Version 1. A new version adds a migration in OpenSqliteStore, never an
// edit here.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE meta(
  key TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE baselines(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  commit_id TEXT NOT NULL,
  mri INTEGER NOT NULL,
  state INTEGER NOT NULL CHECK (state IN (0, 1, 2)),
  created_unix INTEGER NOT NULL,
  completed_unix INTEGER NOT NULL DEFAULT 0,
  failure TEXT NOT NULL DEFAULT ''
);
CREATE INDEX baselines_complete_by_mri ON baselines(mri, id) WHERE state = 1;
CREATE INDEX baselines_by_mri ON baselines(mri);
CREATE TABLE results(
  baseline INTEGER NOT NULL REFERENCES baselines(id),
  test TEXT NOT NULL,
  outcome INTEGER NOT NULL CHECK (outcome IN (0, 1, 2)),
  exit_code INTEGER NOT NULL,
  seconds REAL NOT NULL,
  opaque INTEGER NOT NULL CHECK (opaque IN (0, 1)),
  PRIMARY KEY (baseline, test)
) WITHOUT ROWID;
CREATE TABLE blobs(
  baseline INTEGER NOT NULL REFERENCES baselines(id),
  name TEXT NOT NULL,
  file TEXT NOT NULL,
  size INTEGER NOT NULL,
  xxh3_128 TEXT NOT NULL,
  PRIMARY KEY (baseline, name)
) WITHOUT ROWID;
)sql";

// Version 2: resumable record builds (baseline_store.h, "Resumable record
// builds"). Applied to a version-1 store by OpenSqliteStore, in one
// BEGIN IMMEDIATE transaction; a new store gets version 1 then this.
constexpr char kMigrationV2[] = R"sql(
CREATE TABLE builds(
  baseline INTEGER PRIMARY KEY REFERENCES baselines(id),
  owner TEXT NOT NULL,
  generation INTEGER NOT NULL CHECK (generation >= 1),
  lease_expires_ms INTEGER NOT NULL,
  spec BLOB NOT NULL
);
CREATE TABLE accepted(
  baseline INTEGER NOT NULL REFERENCES baselines(id),
  test TEXT NOT NULL,
  seq INTEGER NOT NULL,
  record BLOB NOT NULL,
  PRIMARY KEY (baseline, test)
) WITHOUT ROWID;
CREATE INDEX accepted_in_order ON accepted(baseline, seq);
UPDATE meta SET value = '2' WHERE key = 'schema_version';
)sql";

// The store's clock, in milliseconds since the epoch (julianday('now')
// has millisecond precision; unixepoch('subsec') needs SQLite 3.42).
#define STE_SQLITE_NOW_MS "CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"

constexpr char kBaselineColumns[] =
    "id, commit_id, mri, state, created_unix, completed_unix, failure";

int64_t NowUnix() { return static_cast<int64_t>(std::time(nullptr)); }

class SqliteStore final : public BaselineStore {
 public:
  SqliteStore(std::unique_ptr<SqliteDb> db, const std::string& dir,
              SqliteStoreOptions options)
      : db_(std::move(db)),
        name_(absl::StrCat("sqlite ", db_->path())),
        blobs_dir_(absl::StrCat(dir, "/", kBlobsDir)),
        writers_(absl::StrCat(dir, "/", kWritersDir)),
        options_(std::move(options)) {}

  absl::StatusOr<int64_t> Begin(const std::string& commit,
                                int64_t mri) override;
  absl::Status PutBlob(int64_t baseline, const std::string& name,
                       const std::string& bytes) override;
  absl::Status PutResults(int64_t baseline,
                          const std::vector<TestResult>& results) override;
  absl::Status Complete(int64_t baseline) override;
  absl::Status MarkFailed(int64_t baseline, const std::string& why) override;
  absl::StatusOr<std::optional<BaselineInfo>> LatestCompleted(
      int64_t max_mri) override;
  absl::StatusOr<std::optional<BaselineInfo>> LatestCompletedAmong(
      const std::vector<std::string>& commits) override;
  absl::StatusOr<BaselineInfo> Get(int64_t baseline) override;
  absl::StatusOr<std::vector<BaselineInfo>> List() override;
  absl::StatusOr<std::vector<TestResult>> Results(int64_t baseline) override;
  absl::StatusOr<std::string> BlobPath(int64_t baseline,
                                       const std::string& name) override;
  absl::StatusOr<int64_t> NextMri() override;
  absl::StatusOr<std::vector<BlobInfo>> Blobs(int64_t baseline) override;
  absl::StatusOr<std::vector<BaselineSummary>> ListSummaries() override;
  absl::StatusOr<int64_t> CompleteImported(int64_t baseline,
                                           int64_t created_unix,
                                           int64_t completed_unix) override;
  absl::StatusOr<bool> Remove(int64_t baseline,
                              BaselineState expected) override;
  absl::StatusOr<std::vector<std::string>> RemoveStaleFiles() override;
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

 private:
  struct Claim {
    std::string owner;
    int64_t generation = 0;
  };
  // Inside a write transaction: OK unless `baseline` has a build row that
  // does not name this object's claim (FailedPrecondition, naming its owner).
  absl::Status CheckClaim(int64_t baseline, absl::string_view action);
  // Inside the transaction that finishes or removes a build: its build row
  // and journal go; this object forgets its claim once that commits.
  absl::Status DeleteBuildRows(int64_t baseline);
  // Inside a write transaction: FailedPrecondition unless both the "index"
  // and "inventory" rows exist and their files have the recorded size.
  absl::Status CheckCompletable(int64_t baseline);
  // The end of Complete and CompleteImported: sets the state (and times;
  // `created_unix` < 0 keeps it), commits, lets go of the writer lock.
  absl::Status CommitCompletion(Transaction txn, int64_t baseline,
                                int64_t created_unix, int64_t completed_unix);
  // The baseline in the current row of `stmt` (kBaselineColumns order).
  absl::StatusOr<BaselineInfo> ReadBaseline(const Statement& stmt) const;
  // OK if `baseline` exists and is building; NotFound / FailedPrecondition
  // (naming `action`) otherwise.
  absl::Status CheckBuilding(int64_t baseline, absl::string_view action);
  // The file the row of blob `name` names, or "" if there is no such row.
  absl::StatusOr<std::string> StoredBlobFile(int64_t baseline,
                                             const std::string& name);
  // DataLoss unless blobs/`file` exists with `size` bytes; returns its path.
  absl::StatusOr<std::string> CheckBlobFile(int64_t baseline,
                                            const std::string& name,
                                            const std::string& file,
                                            int64_t size) const;
  void Hook(const char* point) const {
    if (options_.fault_hook) options_.fault_hook(point);
  }

  std::unique_ptr<SqliteDb> db_;
  std::string name_;       // "sqlite <path>", for messages
  std::string blobs_dir_;  // absolute
  WriterLocks writers_;    // of the baselines this object began
  SqliteStoreOptions options_;
  std::map<int64_t, Claim> claims_;  // resumable builds this object holds
};

absl::StatusOr<BaselineInfo> SqliteStore::ReadBaseline(
    const Statement& stmt) const {
  BaselineInfo info;
  info.id = stmt.ColumnInt(0);
  info.commit = stmt.ColumnText(1);
  info.mri = stmt.ColumnInt(2);
  STE_ASSIGN_OR_RETURN(
      info.state, BaselineStateFromStored(stmt.ColumnInt(3), name_, info.id));
  info.created_unix = stmt.ColumnInt(4);
  info.completed_unix = stmt.ColumnInt(5);
  info.failure = stmt.ColumnText(6);
  return info;
}

absl::Status SqliteStore::CheckBuilding(int64_t baseline,
                                        absl::string_view action) {
  STE_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(*db_, "SELECT state FROM baselines WHERE id = ?1"));
  stmt.BindInt(1, baseline);
  STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) {
    return absl::NotFoundError(absl::StrCat("no baseline ", baseline));
  }
  STE_RETURN_IF_ERROR(CheckStillBuilding(baseline, stmt.ColumnInt(0), action));
  return CheckClaim(baseline, action);
}

absl::Status SqliteStore::CheckClaim(int64_t baseline, absl::string_view action) {
  STE_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(*db_, "SELECT owner, generation FROM builds WHERE baseline = ?1"));
  stmt.BindInt(1, baseline);
  STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return absl::OkStatus();  // not a resumable build
  const std::string owner = stmt.ColumnText(0);
  const int64_t generation = stmt.ColumnInt(1);
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

absl::Status SqliteStore::DeleteBuildRows(int64_t baseline) {
  for (const char* sql : {"DELETE FROM accepted WHERE baseline = ?1",
                          "DELETE FROM builds WHERE baseline = ?1"}) {
    STE_ASSIGN_OR_RETURN(Statement del, Statement::Prepare(*db_, sql));
    del.BindInt(1, baseline);
    STE_RETURN_IF_ERROR(del.Run());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SqliteStore::CheckBlobFile(int64_t baseline,
                                                       const std::string& name,
                                                       const std::string& file,
                                                       int64_t size) const {
  // The row comes from the database: never let it point outside blobs/.
  if (file.empty() || file.find('/') != std::string::npos || file[0] == '.') {
    return absl::DataLossError(absl::StrCat(
        "sqlite ", db_->path(), ": blob \"", name, "\" of baseline ", baseline,
        " names a bad file \"", file, "\""));
  }
  std::string path = absl::StrCat(blobs_dir_, "/", file);
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT) {
      return absl::DataLossError(absl::StrCat("blob file ", path, " (\"", name,
                                              "\" of baseline ", baseline,
                                              ") is missing"));
    }
    return absl::ErrnoToStatus(err, absl::StrCat("stat blob file ", path));
  }
  if (!S_ISREG(st.st_mode) || static_cast<int64_t>(st.st_size) != size) {
    return absl::DataLossError(absl::StrCat(
        "blob file ", path, " (\"", name, "\" of baseline ", baseline, ") is ",
        static_cast<int64_t>(st.st_size), " bytes, ", size,
        " were recorded (truncated or replaced)"));
  }
  return path;
}

absl::StatusOr<int64_t> SqliteStore::Begin(const std::string& commit,
                                           int64_t mri) {
  if (mri < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("mri must not be negative, got ", mri));
  }
  STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
  STE_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(*db_,
                         "INSERT INTO baselines(commit_id, mri, state, "
                         "created_unix) VALUES (?1, ?2, 0, ?3)"));
  stmt.BindText(1, commit).BindInt(2, mri).BindInt(3, NowUnix());
  STE_RETURN_IF_ERROR(stmt.Run());
  const int64_t id = db_->LastInsertRowid();
  // Locked before the row is visible. One that cannot be taken is no
  // evidence of a writer: gc then goes by the baseline's age.
  (void)writers_.Acquire(id);
  absl::Status committed = txn.Commit();
  if (!committed.ok()) {
    writers_.Release(id);  // the id may be given again
    return committed;
  }
  return id;
}

absl::Status SqliteStore::PutBlob(int64_t baseline, const std::string& name,
                                  const std::string& bytes) {
  STE_RETURN_IF_ERROR(ValidateBlobName(name));
  // Checked before the (maybe large) write, and again under the lock.
  STE_RETURN_IF_ERROR(CheckBuilding(baseline, "store a blob"));
  STE_ASSIGN_OR_RETURN(std::string stored, StoredBlobFile(baseline, name));
  const std::string hash = Xxh3Hex(bytes);
  const std::string file =
      absl::StrCat(baseline, "-", name, "-", hash, ".blob");
  STE_RETURN_IF_ERROR(
      WriteFileDurably(blobs_dir_, file, bytes, options_.fault_hook));

  absl::Status status = [&]() -> absl::Status {
    STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
    STE_ASSIGN_OR_RETURN(stored, StoredBlobFile(baseline, name));
    STE_RETURN_IF_ERROR(CheckBuilding(baseline, "store a blob"));
    STE_ASSIGN_OR_RETURN(
        Statement put,
        Statement::Prepare(*db_,
                           "INSERT OR REPLACE INTO blobs(baseline, name, file, "
                           "size, xxh3_128) VALUES (?1, ?2, ?3, ?4, ?5)"));
    put.BindInt(1, baseline)
        .BindText(2, name)
        .BindText(3, file)
        .BindInt(4, static_cast<int64_t>(bytes.size()))
        .BindText(5, hash);
    STE_RETURN_IF_ERROR(put.Run());
    return txn.Commit();
  }();
  if (!status.ok()) {
    // The file's name is unique to this baseline, blob name and content:
    // only the row of this baseline and name can name it (when the same
    // bytes were stored before; then the file stays).
    if (stored != file) unlink(absl::StrCat(blobs_dir_, "/", file).c_str());
    return status;
  }
  if (!stored.empty() && stored != file &&
      stored.find('/') == std::string::npos) {
    unlink(absl::StrCat(blobs_dir_, "/", stored).c_str());  // best effort
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SqliteStore::StoredBlobFile(
    int64_t baseline, const std::string& name) {
  STE_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(
          *db_, "SELECT file FROM blobs WHERE baseline = ?1 AND name = ?2"));
  stmt.BindInt(1, baseline).BindText(2, name);
  STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
  return found ? stmt.ColumnText(0) : std::string();
}

absl::Status SqliteStore::PutResults(int64_t baseline,
                                     const std::vector<TestResult>& results) {
  STE_RETURN_IF_ERROR(ValidateResults(results));
  STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
  STE_RETURN_IF_ERROR(CheckBuilding(baseline, "store results"));
  STE_ASSIGN_OR_RETURN(
      Statement put,
      Statement::Prepare(*db_,
                         "INSERT OR REPLACE INTO results(baseline, test, "
                         "outcome, exit_code, seconds, opaque) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  for (const TestResult& r : results) {
    put.BindInt(1, baseline)
        .BindText(2, r.test)
        .BindInt(3, static_cast<int64_t>(r.outcome))
        .BindInt(4, r.exit_code)
        .BindDouble(5, r.seconds)
        .BindInt(6, r.opaque ? 1 : 0);
    STE_RETURN_IF_ERROR(put.Run());
    put.Reset();
  }
  return txn.Commit();
}

absl::Status SqliteStore::Complete(int64_t baseline) {
  STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
  STE_RETURN_IF_ERROR(CheckBuilding(baseline, "complete it"));
  STE_RETURN_IF_ERROR(CheckCompletable(baseline));
  return CommitCompletion(std::move(txn), baseline, -1, NowUnix());
}

absl::Status SqliteStore::CheckCompletable(int64_t baseline) {
  for (const char* name : {"index", "inventory"}) {
    STE_ASSIGN_OR_RETURN(
        Statement blob,
        Statement::Prepare(*db_,
                           "SELECT file, size FROM blobs WHERE baseline = ?1 "
                           "AND name = ?2"));
    blob.BindInt(1, baseline).BindText(2, name);
    STE_ASSIGN_OR_RETURN(bool found, blob.Step());
    if (!found) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot complete baseline ", baseline,
                       ": it lacks the \"", name, "\" blob"));
    }
    STE_RETURN_IF_ERROR(
        CheckBlobFile(baseline, name, blob.ColumnText(0), blob.ColumnInt(1))
            .status());
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::CommitCompletion(Transaction txn, int64_t baseline,
                                           int64_t created_unix,
                                           int64_t completed_unix) {
  STE_ASSIGN_OR_RETURN(
      Statement update,
      Statement::Prepare(*db_,
                         "UPDATE baselines SET state = 1, completed_unix = ?2, "
                         "created_unix = CASE WHEN ?3 < 0 THEN created_unix "
                         "ELSE ?3 END WHERE id = ?1 AND state = 0"));
  update.BindInt(1, baseline).BindInt(2, completed_unix).BindInt(3, created_unix);
  STE_RETURN_IF_ERROR(update.Run());
  STE_RETURN_IF_ERROR(DeleteBuildRows(baseline));
  Hook("complete-before-commit");
  STE_RETURN_IF_ERROR(txn.Commit());
  writers_.Release(baseline);
  claims_.erase(baseline);
  return absl::OkStatus();
}

absl::Status SqliteStore::MarkFailed(int64_t baseline, const std::string& why) {
  STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
  STE_RETURN_IF_ERROR(CheckBuilding(baseline, "mark it failed"));
  STE_ASSIGN_OR_RETURN(
      Statement update,
      Statement::Prepare(*db_,
                         "UPDATE baselines SET state = 2, failure = ?2 "
                         "WHERE id = ?1 AND state = 0"));
  update.BindInt(1, baseline).BindText(2, why);
  STE_RETURN_IF_ERROR(update.Run());
  STE_RETURN_IF_ERROR(DeleteBuildRows(baseline));
  STE_RETURN_IF_ERROR(txn.Commit());
  writers_.Release(baseline);
  claims_.erase(baseline);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<BaselineInfo>> SqliteStore::LatestCompleted(
    int64_t max_mri) {
  STE_ASSIGN_OR_RETURN(Statement stmt,
                       Statement::Prepare(*db_, kLatestCompletedSql));
  stmt.BindInt(1, max_mri);
  STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return std::optional<BaselineInfo>();
  STE_ASSIGN_OR_RETURN(BaselineInfo info, ReadBaseline(stmt));
  return std::optional<BaselineInfo>(std::move(info));
}

absl::StatusOr<std::optional<BaselineInfo>> SqliteStore::LatestCompletedAmong(
    const std::vector<std::string>& commits) {
  STE_ASSIGN_OR_RETURN(std::string sql, LatestCompletedAmongSql("baselines", '?', commits.size()));
  STE_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(*db_, sql.c_str()));
  for (size_t i = 0; i < commits.size(); i++) stmt.BindText(static_cast<int>(i + 1), commits[i]);
  STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return std::optional<BaselineInfo>();
  STE_ASSIGN_OR_RETURN(BaselineInfo info, ReadBaseline(stmt));
  return std::optional<BaselineInfo>(std::move(info));
}

absl::StatusOr<BaselineInfo> SqliteStore::Get(int64_t baseline) {
  const std::string sql = absl::StrCat("SELECT ", kBaselineColumns,
                                       " FROM baselines WHERE id = ?1");
  STE_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(*db_, sql.c_str()));
  stmt.BindInt(1, baseline);
  STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) {
    return absl::NotFoundError(absl::StrCat("no baseline ", baseline));
  }
  return ReadBaseline(stmt);
}

absl::StatusOr<std::vector<BaselineInfo>> SqliteStore::List() {
  const std::string sql = absl::StrCat("SELECT ", kBaselineColumns,
                                       " FROM baselines ORDER BY id DESC");
  STE_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(*db_, sql.c_str()));
  std::vector<BaselineInfo> list;
  for (;;) {
    STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
    if (!found) break;
    STE_ASSIGN_OR_RETURN(BaselineInfo info, ReadBaseline(stmt));
    list.push_back(std::move(info));
  }
  return list;
}

absl::StatusOr<std::vector<TestResult>> SqliteStore::Results(int64_t baseline) {
  STE_RETURN_IF_ERROR(Get(baseline).status());
  STE_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(*db_,
                         "SELECT test, outcome, exit_code, seconds, opaque "
                         "FROM results WHERE baseline = ?1 ORDER BY test"));
  stmt.BindInt(1, baseline);
  std::vector<TestResult> results;
  for (;;) {
    STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
    if (!found) break;
    TestResult r;
    r.test = stmt.ColumnText(0);
    STE_ASSIGN_OR_RETURN(
        r.outcome,
        TestOutcomeFromStored(stmt.ColumnInt(1), name_, baseline, r.test));
    r.exit_code = static_cast<int>(stmt.ColumnInt(2));
    r.seconds = stmt.ColumnDouble(3);
    r.opaque = stmt.ColumnInt(4) != 0;
    results.push_back(std::move(r));
  }
  return results;
}

absl::StatusOr<std::string> SqliteStore::BlobPath(int64_t baseline,
                                                  const std::string& name) {
  STE_RETURN_IF_ERROR(Get(baseline).status());
  STE_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(*db_,
                         "SELECT file, size, xxh3_128 FROM blobs "
                         "WHERE baseline = ?1 AND name = ?2"));
  stmt.BindInt(1, baseline).BindText(2, name);
  STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) {
    return absl::NotFoundError(
        absl::StrCat("baseline ", baseline, " has no \"", name, "\" blob"));
  }
  const std::string expected_hash = stmt.ColumnText(2);
  STE_ASSIGN_OR_RETURN(
      std::string path,
      CheckBlobFile(baseline, name, stmt.ColumnText(0), stmt.ColumnInt(1)));
  if (options_.verify_blob_hash) {
    absl::StatusOr<std::string> hash = Xxh3HexOfFileCached(path);
    if (absl::IsNotFound(hash.status())) {
      return absl::DataLossError(absl::StrCat("blob file ", path, " (\"", name,
                                              "\" of baseline ", baseline,
                                              ") is missing"));
    }
    if (!hash.ok()) return hash.status();
    if (*hash != expected_hash) {
      return absl::DataLossError(
          absl::StrCat("blob file ", path, " (\"", name, "\" of baseline ",
                       baseline, ") has XXH3-128 ", *hash, ", ", expected_hash,
                       " was recorded (its content changed)"));
    }
  }
  return path;
}

absl::StatusOr<int64_t> SqliteStore::NextMri() {
  STE_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(*db_,
                         "SELECT COALESCE(MAX(mri), 0) + 1 FROM baselines"));
  STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return absl::InternalError("MAX() returned no row");
  return stmt.ColumnInt(0);
}

// --- Copies and retention. ---

absl::StatusOr<std::vector<BlobInfo>> SqliteStore::Blobs(int64_t baseline) {
  STE_RETURN_IF_ERROR(Get(baseline).status());
  STE_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(*db_,
                         "SELECT name, size, xxh3_128 FROM blobs "
                         "WHERE baseline = ?1 ORDER BY name"));
  stmt.BindInt(1, baseline);
  std::vector<BlobInfo> blobs;
  for (;;) {
    STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
    if (!found) break;
    blobs.push_back({stmt.ColumnText(0), stmt.ColumnInt(1), stmt.ColumnText(2)});
  }
  return blobs;
}

absl::StatusOr<std::vector<BaselineSummary>> SqliteStore::ListSummaries() {
  const std::string sql = absl::StrCat(
      "SELECT ", kBaselineColumns,
      ", (SELECT count(*) FROM results r WHERE r.baseline = b.id)"
      ", (SELECT coalesce(sum(size), 0) FROM blobs l WHERE l.baseline = b.id)"
      " FROM baselines b ORDER BY id DESC");
  STE_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(*db_, sql.c_str()));
  std::vector<BaselineSummary> list;
  for (;;) {
    STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
    if (!found) break;
    BaselineSummary summary;
    STE_ASSIGN_OR_RETURN(summary.info, ReadBaseline(stmt));
    summary.tests = stmt.ColumnInt(7);
    summary.blob_bytes = stmt.ColumnInt(8);
    if (summary.info.state == BaselineState::kBuilding) {
      absl::StatusOr<bool> held = writers_.Held(summary.info.id);
      // A lock that cannot be probed counts as held: never "no writer"
      // without evidence.
      summary.writer_alive = writers_.Holds(summary.info.id) || !held.ok() || *held;
    }
    list.push_back(std::move(summary));
  }
  return list;
}

absl::StatusOr<int64_t> SqliteStore::CompleteImported(int64_t baseline,
                                                      int64_t created_unix,
                                                      int64_t completed_unix) {
  // BEGIN IMMEDIATE orders this against every other writer, so the
  // duplicate check and the completion see the same store.
  STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
  STE_RETURN_IF_ERROR(CheckBuilding(baseline, "complete it"));
  STE_RETURN_IF_ERROR(CheckCompletable(baseline));
  const std::string dup_sql = DuplicateBaselineSql("", "?1");
  STE_ASSIGN_OR_RETURN(Statement dup, Statement::Prepare(*db_, dup_sql.c_str()));
  dup.BindInt(1, baseline);
  STE_ASSIGN_OR_RETURN(bool found, dup.Step());
  if (found) return dup.ColumnInt(0);  // rolled back: nothing changed
  STE_RETURN_IF_ERROR(CommitCompletion(std::move(txn), baseline,
                                       std::max<int64_t>(created_unix, 0),
                                       completed_unix));
  return baseline;
}

absl::StatusOr<bool> SqliteStore::Remove(int64_t baseline,
                                         BaselineState expected) {
  const bool own = writers_.Holds(baseline);
  std::vector<std::string> files;
  {
    STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
    STE_ASSIGN_OR_RETURN(
        Statement state,
        Statement::Prepare(*db_, "SELECT state FROM baselines WHERE id = ?1"));
    state.BindInt(1, baseline);
    STE_ASSIGN_OR_RETURN(bool found, state.Step());
    if (!found || state.ColumnInt(0) != static_cast<int64_t>(expected)) {
      return false;
    }
    if (expected == BaselineState::kBuilding && !own) {
      // Under the write lock; only Begin() takes a writer lock, and for a
      // new id, so a free lock stays free.
      absl::StatusOr<bool> held = writers_.Held(baseline);
      if (!held.ok() || *held) return false;
    }
    STE_ASSIGN_OR_RETURN(
        Statement blobs,
        Statement::Prepare(*db_, "SELECT file FROM blobs WHERE baseline = ?1"));
    blobs.BindInt(1, baseline);
    for (;;) {
      STE_ASSIGN_OR_RETURN(bool more, blobs.Step());
      if (!more) break;
      files.push_back(blobs.ColumnText(0));
    }
    STE_RETURN_IF_ERROR(DeleteBuildRows(baseline));
    for (const char* sql : {"DELETE FROM results WHERE baseline = ?1",
                            "DELETE FROM blobs WHERE baseline = ?1",
                            "DELETE FROM baselines WHERE id = ?1"}) {
      STE_ASSIGN_OR_RETURN(Statement del, Statement::Prepare(*db_, sql));
      del.BindInt(1, baseline);
      STE_RETURN_IF_ERROR(del.Run());
    }
    STE_RETURN_IF_ERROR(txn.Commit());
  }
  // The rows are gone: no reader finds these files any more (one that
  // found them before and has them mapped keeps its mapping).
  if (own) writers_.Release(baseline);
  claims_.erase(baseline);
  RemoveFileIn(writers_.dir(), absl::StrCat(baseline, ".lock"), nullptr);
  const std::string stamps = StampDirectoryOf(blobs_dir_);
  for (const std::string& file : files) {
    if (file.empty() || file.find('/') != std::string::npos || file[0] == '.') continue;
    RemoveFileIn(blobs_dir_, file, nullptr);
    RemoveFileIn(stamps, file, nullptr);
  }
  RemoveBaselineFiles(blobs_dir_, baseline, nullptr);
  return true;
}

absl::StatusOr<std::vector<std::string>> SqliteStore::RemoveStaleFiles() {
  // The write lock keeps Begin() (which creates a writer lock file inside
  // its transaction) out while the directories are listed and the rows
  // read; a blob file is written after its baseline's Begin() committed.
  // So every file listed here has its row in what is read below.
  std::map<int64_t, int64_t> states;               // baseline -> state
  std::set<std::pair<int64_t, std::string>> named;  // (baseline, file)
  BlobDirListing listing;
  std::vector<WriterLockFile> locks;
  {
    STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
    STE_ASSIGN_OR_RETURN(listing, ListBlobDirectory(blobs_dir_));
    STE_ASSIGN_OR_RETURN(locks, ListWriterLockFiles(writers_.dir()));
    STE_ASSIGN_OR_RETURN(Statement rows,
                         Statement::Prepare(*db_, "SELECT id, state FROM baselines"));
    for (;;) {
      STE_ASSIGN_OR_RETURN(bool more, rows.Step());
      if (!more) break;
      states[rows.ColumnInt(0)] = rows.ColumnInt(1);
    }
    STE_ASSIGN_OR_RETURN(Statement blobs,
                         Statement::Prepare(*db_, "SELECT baseline, file FROM blobs"));
    for (;;) {
      STE_ASSIGN_OR_RETURN(bool more, blobs.Step());
      if (!more) break;
      named.emplace(blobs.ColumnInt(0), blobs.ColumnText(1));
    }
  }  // rolled back: nothing was written
  auto building = [&](int64_t baseline) {
    auto it = states.find(baseline);
    return it != states.end() && it->second == static_cast<int64_t>(BaselineState::kBuilding);
  };
  std::vector<std::string> removed;
  for (const BlobFileName& f : listing.files) {
    if (building(f.baseline)) continue;  // may still be written
    if (!f.temp && named.count({f.baseline, f.file})) continue;
    RemoveFileIn(blobs_dir_, f.file, &removed);
  }
  const std::string stamps = StampDirectoryOf(blobs_dir_);
  for (const BlobFileName& s : listing.stamps) {
    if (building(s.baseline)) continue;
    if (!s.temp && named.count({s.baseline, s.final})) continue;
    RemoveFileIn(stamps, s.file, &removed);
  }
  for (const WriterLockFile& l : locks) {
    if (!building(l.baseline)) RemoveFileIn(writers_.dir(), l.file, &removed);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

// --- Resumable record builds. ---

absl::StatusOr<int64_t> SqliteStore::BeginBuild(const std::string& commit, int64_t mri,
                                                const std::string& owner,
                                                const std::string& spec, int64_t lease_ms) {
  if (mri < 0) {
    return absl::InvalidArgumentError(absl::StrCat("mri must not be negative, got ", mri));
  }
  if (owner.empty() || lease_ms < 0) {
    return absl::InvalidArgumentError("a resumable build needs an owner and a lease >= 0");
  }
  STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
  STE_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(*db_,
                         "INSERT INTO baselines(commit_id, mri, state, "
                         "created_unix) VALUES (?1, ?2, 0, ?3)"));
  stmt.BindText(1, commit).BindInt(2, mri).BindInt(3, NowUnix());
  STE_RETURN_IF_ERROR(stmt.Run());
  const int64_t id = db_->LastInsertRowid();
  STE_ASSIGN_OR_RETURN(
      Statement build,
      Statement::Prepare(*db_,
                         "INSERT INTO builds(baseline, owner, generation, lease_expires_ms, spec) "
                         "VALUES (?1, ?2, 1, " STE_SQLITE_NOW_MS " + ?3, ?4)"));
  build.BindInt(1, id).BindText(2, owner).BindInt(3, lease_ms).BindBlob(4, spec);
  STE_RETURN_IF_ERROR(build.Run());
  (void)writers_.Acquire(id);  // as Begin(): before the row is visible
  absl::Status committed = txn.Commit();
  if (!committed.ok()) {
    writers_.Release(id);
    return committed;
  }
  claims_[id] = Claim{owner, 1};
  return id;
}

absl::StatusOr<std::optional<ClaimedBuild>> SqliteStore::ClaimBuild(int64_t baseline,
                                                                    const std::string& owner,
                                                                    int64_t lease_ms) {
  if (owner.empty() || lease_ms < 0) {
    return absl::InvalidArgumentError("a claim needs an owner and a lease >= 0");
  }
  STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
  STE_ASSIGN_OR_RETURN(
      Statement row,
      Statement::Prepare(*db_,
                         "SELECT b.owner, b.generation, b.lease_expires_ms <= " STE_SQLITE_NOW_MS
                         ", s.state, b.spec FROM builds b JOIN baselines s ON s.id = b.baseline "
                         "WHERE b.baseline = ?1"));
  row.BindInt(1, baseline);
  STE_ASSIGN_OR_RETURN(bool found, row.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("baseline ", baseline, " has no build row"));
  ClaimedBuild claimed;
  claimed.previous_owner = row.ColumnText(0);
  const int64_t generation = row.ColumnInt(1);
  const bool expired = row.ColumnInt(2) != 0;
  const int64_t state = row.ColumnInt(3);
  if (state != static_cast<int64_t>(BaselineState::kBuilding) ||
      (!expired && claimed.previous_owner != owner)) {
    return std::optional<ClaimedBuild>();
  }
  claimed.spec = row.ColumnBlob(4);
  claimed.generation = generation + 1;
  STE_ASSIGN_OR_RETURN(
      Statement update,
      Statement::Prepare(*db_,
                         "UPDATE builds SET owner = ?2, generation = ?3, lease_expires_ms = "
                         STE_SQLITE_NOW_MS " + ?4 WHERE baseline = ?1"));
  update.BindInt(1, baseline).BindText(2, owner).BindInt(3, claimed.generation).BindInt(4, lease_ms);
  STE_RETURN_IF_ERROR(update.Run());
  STE_RETURN_IF_ERROR(txn.Commit());
  claims_[baseline] = Claim{owner, claimed.generation};
  // The previous owner's process is gone or has lost the build: the lock
  // is free unless it still runs (then gc sees a writer either way).
  if (!writers_.Holds(baseline)) (void)writers_.Acquire(baseline);
  return std::optional<ClaimedBuild>(std::move(claimed));
}

absl::StatusOr<bool> SqliteStore::RenewBuild(int64_t baseline, int64_t lease_ms) {
  auto it = claims_.find(baseline);
  if (it == claims_.end()) return false;
  STE_ASSIGN_OR_RETURN(
      Statement update,
      Statement::Prepare(*db_,
                         "UPDATE builds SET lease_expires_ms = " STE_SQLITE_NOW_MS " + ?4"
                         " WHERE baseline = ?1 AND owner = ?2 AND generation = ?3"
                         " AND (SELECT state FROM baselines WHERE id = ?1) = 0"));
  update.BindInt(1, baseline)
      .BindText(2, it->second.owner)
      .BindInt(3, it->second.generation)
      .BindInt(4, std::max<int64_t>(lease_ms, 0));
  STE_RETURN_IF_ERROR(update.Run());
  if (db_->Changes() == 1) return true;
  claims_.erase(it);
  writers_.Forget(baseline);
  return false;
}

absl::Status SqliteStore::PutAccepted(int64_t baseline,
                                      const std::vector<AcceptedEntry>& entries) {
  std::vector<TestResult> results;
  results.reserve(entries.size());
  for (const AcceptedEntry& e : entries) results.push_back(e.result);
  STE_RETURN_IF_ERROR(ValidateResults(results));
  STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
  STE_RETURN_IF_ERROR(CheckBuilding(baseline, "journal results"));
  if (!claims_.count(baseline)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot journal results: baseline ", baseline, " is not a resumable build"));
  }
  STE_ASSIGN_OR_RETURN(
      Statement put,
      Statement::Prepare(*db_,
                         "INSERT OR REPLACE INTO results(baseline, test, "
                         "outcome, exit_code, seconds, opaque) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  STE_ASSIGN_OR_RETURN(
      Statement journal,
      Statement::Prepare(*db_,
                         "INSERT OR IGNORE INTO accepted(baseline, test, seq, record) VALUES "
                         "(?1, ?2, (SELECT coalesce(max(seq), 0) + 1 FROM accepted "
                         "WHERE baseline = ?1), ?3)"));
  for (const AcceptedEntry& e : entries) {
    const TestResult& r = e.result;
    put.BindInt(1, baseline)
        .BindText(2, r.test)
        .BindInt(3, static_cast<int64_t>(r.outcome))
        .BindInt(4, r.exit_code)
        .BindDouble(5, r.seconds)
        .BindInt(6, r.opaque ? 1 : 0);
    STE_RETURN_IF_ERROR(put.Run());
    put.Reset();
    journal.BindInt(1, baseline).BindText(2, r.test).BindBlob(3, e.record);
    STE_RETURN_IF_ERROR(journal.Run());
    journal.Reset();
  }
  Hook("accepted-before-commit");
  return txn.Commit();
}

absl::StatusOr<std::vector<std::string>> SqliteStore::Journal(int64_t baseline) {
  STE_ASSIGN_OR_RETURN(
      Statement has, Statement::Prepare(*db_, "SELECT 1 FROM builds WHERE baseline = ?1"));
  has.BindInt(1, baseline);
  STE_ASSIGN_OR_RETURN(bool found, has.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("baseline ", baseline, " has no build row"));
  STE_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(*db_,
                         "SELECT record FROM accepted WHERE baseline = ?1 ORDER BY seq"));
  stmt.BindInt(1, baseline);
  std::vector<std::string> records;
  for (;;) {
    STE_ASSIGN_OR_RETURN(bool more, stmt.Step());
    if (!more) break;
    records.push_back(stmt.ColumnBlob(0));
  }
  return records;
}

absl::StatusOr<std::vector<BuildOwnership>> SqliteStore::ListBuilds() {
  STE_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(*db_,
                         "SELECT b.baseline, b.owner, b.generation, b.lease_expires_ms - "
                         STE_SQLITE_NOW_MS " FROM builds b JOIN baselines s ON s.id = b.baseline "
                         "WHERE s.state = 0 ORDER BY b.baseline"));
  std::vector<BuildOwnership> builds;
  for (;;) {
    STE_ASSIGN_OR_RETURN(bool more, stmt.Step());
    if (!more) break;
    builds.push_back({stmt.ColumnInt(0), stmt.ColumnText(1), stmt.ColumnInt(2), stmt.ColumnInt(3)});
  }
  return builds;
}

}  // namespace

namespace {

absl::StatusOr<int64_t> QueryInt(SqliteDb& db, const char* sql) {
  STE_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(db, sql));
  STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) {
    return absl::InternalError(
        absl::StrCat("sqlite ", db.path(), ": \"", sql, "\" returned no row"));
  }
  return stmt.ColumnInt(0);
}

// WAL: readers never block the writer, and a commit is one append + fsync.
// The mode is stored in the database file; setting it again is a no-op.
absl::Status UseWal(SqliteDb& db) {
  STE_ASSIGN_OR_RETURN(Statement stmt,
                       Statement::Prepare(db, "PRAGMA journal_mode = WAL"));
  STE_ASSIGN_OR_RETURN(bool found, stmt.Step());
  std::string mode = found ? stmt.ColumnText(0) : "";
  if (mode != "wal") {
    return absl::FailedPreconditionError(absl::StrCat(
        "sqlite ", db.path(), ": cannot use journal_mode WAL (it stays \"",
        mode, "\"); is the store on a network file system?"));
  }
  return absl::OkStatus();
}

// Turns an empty database into a version-1 store, unless another process
// did so first.
absl::Status CreateSchema(SqliteDb& db) {
  STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(db));
  STE_ASSIGN_OR_RETURN(int64_t app_id, QueryInt(db, "PRAGMA application_id"));
  STE_ASSIGN_OR_RETURN(int64_t objects,
                       QueryInt(db, "SELECT count(*) FROM sqlite_master"));
  if (app_id != 0 || objects != 0) return absl::OkStatus();  // lost the race
  STE_RETURN_IF_ERROR(db.Exec(kSchemaV1));
  STE_RETURN_IF_ERROR(db.Exec(
      absl::StrCat("PRAGMA application_id = ", kSqliteStoreApplicationId)
          .c_str()));
  STE_ASSIGN_OR_RETURN(
      Statement meta,
      Statement::Prepare(db, "INSERT INTO meta(key, value) VALUES (?1, ?2)"));
  meta.BindText(1, "magic").BindText(2, kSqliteStoreMagic);
  STE_RETURN_IF_ERROR(meta.Run());
  meta.Reset();
  // Version 1; OpenSqliteStore migrates it to the current one.
  meta.BindText(1, "schema_version").BindText(2, "1");
  STE_RETURN_IF_ERROR(meta.Run());
  return txn.Commit();
}

// The schema version of the store (after the verdict: one this ste reads).
absl::StatusOr<int> CheckSchema(SqliteDb& db) {
  STE_ASSIGN_OR_RETURN(int64_t app_id, QueryInt(db, "PRAGMA application_id"));
  if (app_id != kSqliteStoreApplicationId) {
    STE_ASSIGN_OR_RETURN(int64_t objects,
                         QueryInt(db, "SELECT count(*) FROM sqlite_master"));
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s is an SQLite database of another application, not an ste "
        "baseline store (application_id 0x%08x, ste's is 0x%08x; %d schema "
        "objects); point [store] url at another file",
        db.path(), static_cast<uint32_t>(app_id),
        static_cast<uint32_t>(kSqliteStoreApplicationId), objects));
  }
  absl::StatusOr<Statement> stmt =
      Statement::Prepare(db,
                         "SELECT key, value FROM meta WHERE key IN ('magic', "
                         "'schema_version')");
  if (!stmt.ok()) {
    return absl::DataLossError(absl::StrCat(
        db.path(), " has ste's application_id but no readable meta table (",
        stmt.status().message(), ")"));
  }
  StoreMetaRows meta;
  for (;;) {
    STE_ASSIGN_OR_RETURN(bool found, stmt->Step());
    if (!found) break;
    meta.Take(stmt->ColumnText(0), stmt->ColumnText(1));
  }
  STE_RETURN_IF_ERROR(SchemaVersionVerdict(
      db.path(),
      {kSqliteStoreMagic, kSqliteStoreSchemaVersion, "meta", "file", kSqliteStoreOldestSchemaVersion},
      meta));
  int version = 0;
  (void)absl::SimpleAtoi(meta.schema_version, &version);  // checked by the verdict
  return version;
}

// Brings a store of an older schema version to the current one, unless
// another process did so first. Every step is one transaction.
absl::Status Migrate(SqliteDb& db) {
  STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(db));
  STE_ASSIGN_OR_RETURN(int version, CheckSchema(db));
  if (version >= 2) return absl::OkStatus();  // lost the race
  STE_RETURN_IF_ERROR(db.Exec(kMigrationV2));
  return txn.Commit();
}

}  // namespace

absl::StatusOr<std::unique_ptr<BaselineStore>> OpenSqliteStore(
    const std::string& path_arg, const SqliteStoreOptions& options) {
  namespace fs = std::filesystem;
  if (path_arg.empty()) {
    return absl::InvalidArgumentError("the SQLite store path is empty");
  }
  std::error_code ec;
  const fs::path path = fs::absolute(path_arg, ec).lexically_normal();
  if (ec) {
    return absl::ErrnoToStatus(ec.value(),
                               absl::StrCat("absolute path of ", path_arg));
  }
  const std::string dir = path.parent_path().string();
  const bool read_only = options.open_mode != SqliteDb::Mode::kReadWrite;
  if (read_only) {
    if (!fs::is_regular_file(path, ec)) {
      return absl::NotFoundError(absl::StrCat("no store at ", path.string()));
    }
  } else {
    fs::create_directories(dir, ec);
    if (ec) {
      return absl::ErrnoToStatus(ec.value(),
                                 absl::StrCat("create directory ", dir));
    }
  }
  if (fs::is_directory(path, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("store ", path.string(), " is a directory"));
  }
  STE_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db,
                       SqliteDb::Open(path.string(), options.busy_timeout_ms, options.open_mode));

  // The first read of the file: one that is not SQLite fails here.
  absl::StatusOr<int64_t> app_id = QueryInt(*db, "PRAGMA application_id");
  if (absl::IsDataLoss(app_id.status())) {
    return absl::DataLossError(
        absl::StrCat(path.string(),
                     " is not an SQLite database, so not an "
                     "ste baseline store (",
                     app_id.status().message(), ")"));
  }
  if (!app_id.ok()) {
    // SQLite's words for a read-only mount ("unable to open database
    // file") do not say so: say it.
    struct statvfs fs;
    if (!read_only && statvfs(dir.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY)) {
      return absl::Status(app_id.status().code(),
                          absl::StrCat(app_id.status().message(), "; ", dir,
                                       " is on a read-only file system"));
    }
    return app_id.status();
  }
  STE_ASSIGN_OR_RETURN(int64_t objects,
                       QueryInt(*db, "SELECT count(*) FROM sqlite_master"));
  if (read_only) {
    if (*app_id == 0 && objects == 0) {
      return absl::NotFoundError(absl::StrCat("the store ", path.string(), " is empty"));
    }
    STE_RETURN_IF_ERROR(CheckSchema(*db).status());  // an older one is read as it is
    return std::unique_ptr<BaselineStore>(new SqliteStore(std::move(db), dir, options));
  }
  if (*app_id == 0 && objects == 0) {
    // journal_mode cannot change inside a transaction: set it first.
    STE_RETURN_IF_ERROR(UseWal(*db));
    STE_RETURN_IF_ERROR(CreateSchema(*db));
    // SQLite syncs the directory of a new journal, not of a new database
    // file: make the file (and a .ste/ just created for it) durable.
    STE_RETURN_IF_ERROR(SyncDirectory(dir));
    STE_RETURN_IF_ERROR(
        SyncDirectory(path.parent_path().parent_path().string()));
  }
  STE_ASSIGN_OR_RETURN(int version, CheckSchema(*db));
  if (version < kSqliteStoreSchemaVersion) STE_RETURN_IF_ERROR(Migrate(*db));
  STE_RETURN_IF_ERROR(UseWal(*db));
  STE_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous = FULL"));
  STE_RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys = ON"));

  const std::string blobs_dir = absl::StrCat(dir, "/", kBlobsDir);
  if (mkdir(blobs_dir.c_str(), 0755) == 0) {
    STE_RETURN_IF_ERROR(SyncDirectory(dir));  // the new entry, durably
  } else if (errno != EEXIST) {
    return absl::ErrnoToStatus(errno,
                               absl::StrCat("create directory ", blobs_dir));
  }
  return std::unique_ptr<BaselineStore>(
      new SqliteStore(std::move(db), dir, options));
}

}  // namespace ste
