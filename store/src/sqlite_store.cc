// Copyright: the ste authors. The SQLite baseline store: its schema (the
// layout is described in sqlite_store.h), its creation and migration, and
// OpenSqliteStore, which hands the connection to the relational store
// (relational_store.h) with SQLite's strategies: blob files beside the
// database and flock writer locks (store_strategies.h).
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
#include "relational_store.h"
#include "sql_db.h"
#include "sqlite_db.h"
#include "ste/repo_path.h"
#include "ste/status_macros.h"
#include "store_rules.h"
#include "store_strategies.h"

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

// Version 3: the history of selections and audits (baseline_store.h, "The
// history"). Applied after version 2, the same way.
constexpr char kMigrationV3[] = R"sql(
CREATE TABLE selections(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at_unix INTEGER NOT NULL,
  baseline INTEGER NOT NULL,
  commit_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('all', 'subset', 'none')),
  reason TEXT NOT NULL,
  tests INTEGER NOT NULL CHECK (tests >= 0),
  selected INTEGER NOT NULL CHECK (selected >= 0),
  changed INTEGER NOT NULL CHECK (changed >= 0),
  skipped_seconds REAL NOT NULL,
  seconds REAL NOT NULL,
  origin TEXT NOT NULL
);
CREATE TABLE audits(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at_unix INTEGER NOT NULL,
  baseline INTEGER NOT NULL,
  commit_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('audit', 'observe')),
  left_out INTEGER NOT NULL CHECK (left_out >= 0),
  ran INTEGER NOT NULL CHECK (ran >= 0),
  misses INTEGER NOT NULL CHECK (misses >= 0),
  flakes INTEGER NOT NULL CHECK (flakes >= 0),
  missed BLOB NOT NULL,
  flaky BLOB NOT NULL
);
UPDATE meta SET value = '3' WHERE key = 'schema_version';
)sql";


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
  if (version >= kSqliteStoreSchemaVersion) return absl::OkStatus();  // lost the race
  if (version < 2) STE_RETURN_IF_ERROR(db.Exec(kMigrationV2));
  if (version < 3) STE_RETURN_IF_ERROR(db.Exec(kMigrationV3));
  return txn.Commit();
}

// The store over `db`, its files in `dir`.
std::unique_ptr<Store> MakeStore(std::unique_ptr<SqliteDb> db, const std::string& dir,
                                 const SqliteStoreOptions& options) {
  return std::make_unique<RelationalStore>(
      SqlDbOverSqlite(std::move(db)),
      BlobFilesBesideDatabase(absl::StrCat(dir, "/", kBlobsDir), options.verify_blob_hash,
                              options.fault_hook),
      [&dir](SqlDb&) { return FlockWriterLocksIn(absl::StrCat(dir, "/", kWritersDir)); },
      options.fault_hook);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(
    const std::string& path_arg, const SqliteStoreOptions& options) {
  namespace fs = std::filesystem;
  if (path_arg.empty()) {
    return absl::InvalidArgumentError("the SQLite store path is empty");
  }
  std::error_code ec;
  absl::StatusOr<std::string> absolute = AbsoluteNormalPath(path_arg);
  if (!absolute.ok()) {
    return absl::Status(absolute.status().code(),
                        absl::StrCat("absolute path of ", path_arg, ": ", absolute.status().message()));
  }
  const fs::path path = *absolute;
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
    return MakeStore(std::move(db), dir, options);
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
  return MakeStore(std::move(db), dir, options);
}

}  // namespace ste
