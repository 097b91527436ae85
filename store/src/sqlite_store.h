// Copyright: the ste authors. The SQLite baseline store (internal header).
//
// Store::Open("sqlite:PATH", root) lands here. This header is
// internal to store/ (and its tests): callers use baseline_store.h.
// What is SQLite's own is here and in sqlite_store.cc: the schema, its
// creation and migration, the open modes. The protocol is written once in
// relational_store.h, run over sql_db.h's SQLite adapter with blob files
// beside the database and flock writer locks (store_strategies.h).
//
// On disk, for PATH = .ste/ste.db:
//
//   .ste/ste.db        the database (WAL mode: ste.db-wal and ste.db-shm
//   .ste/ste.db-wal     beside it while a connection is open or after a
//   .ste/ste.db-shm     crash; SQLite recovers them on the next open)
//   .ste/blobs/<baseline id>-<name>-<xxh3-128 hex>.blob
//                      one file per blob, content-addressed by its hash
//                      (the canonical big-endian hex `xxh128sum` prints)
//   .ste/blobs/.tmp-<final name>-<pid>-<random>-<counter>
//                      a blob being written (a leftover one is garbage of a
//                      write that was killed)
//   .ste/verified/<final name>
//                      the hash stamp of a blob file (blob_file.h,
//                      Xxh3HexOfFileCached)
//   .ste/writers/<baseline id>.lock
//                      the writer lock of a building baseline: flock()ed by
//                      the store object that began it (writer_lock.h)
//
// Database, schema version 2 (PRAGMA application_id = kApplicationId):
//
//   meta(key TEXT PRIMARY KEY, value TEXT)
//       "magic" = "ste baseline store", "schema_version" = "2"
//   baselines(id INTEGER PRIMARY KEY AUTOINCREMENT  -- never reused
//             commit_id TEXT, mri INTEGER,
//             state INTEGER               -- BaselineState: 0 building,
//                                         -- 1 complete, 2 failed
//             created_unix INTEGER, completed_unix INTEGER (0 until then),
//             failure TEXT ('' unless failed))
//       INDEX baselines_complete_by_mri ON (mri, id) WHERE state = 1
//             -- partial: LatestCompleted is one search of it
//       INDEX baselines_by_mri ON (mri)  -- NextMri
//   results(baseline, test, outcome INTEGER (TestOutcome), exit_code,
//           seconds REAL, opaque INTEGER 0/1, PRIMARY KEY(baseline, test))
//   blobs(baseline, name, file TEXT (name inside blobs/), size INTEGER,
//         xxh3_128 TEXT (32 lowercase hex digits), PRIMARY KEY(baseline, name))
//   -- version 2: resumable record builds (baseline_store.h), a row each
//   -- while building, deleted by Complete/MarkFailed/Remove
//   builds(baseline INTEGER PRIMARY KEY, owner TEXT (scheduler instance),
//          generation INTEGER (1, then +1 per take-over),
//          lease_expires_ms INTEGER (this machine's clock, ms since the
//          epoch; expired when <= now), spec BLOB (build_journal.h))
//   accepted(baseline, test, seq INTEGER (1, 2, ... in order of
//            acceptance), record BLOB (build_journal.h),
//            PRIMARY KEY(baseline, test))
//       INDEX accepted_in_order ON (baseline, seq)
//
// Versions: a new store is created at version 1 and migrated; a version-1
// store is migrated to 2 (two CREATE TABLEs, one transaction) by the first
// read-write open; a read-only open reads it as it is. An older ste
// refuses a version-2 store ("newer than this ste understands").
//
// Durability and atomicity. journal_mode=WAL, synchronous=FULL (every
// commit is fsynced: a commit that returned survives a power loss), every
// change of several rows in one BEGIN IMMEDIATE transaction. A blob file is
// written to a temp file in blobs/, fsynced, renamed to its final name, and
// the directory fsynced, and only then is its row inserted; Complete()
// checks, inside its transaction, that both the "index" and "inventory"
// rows exist and that their files exist with the recorded size. So a
// process killed (or a machine losing power) at any point leaves either
// the old or the new committed state, and a completed baseline never
// names a blob that was not durable first.
//
// Verification. BlobPath() stats the file (size must match) and, unless
// disabled in the options, checks its XXH3-128. The hash is read once per
// file (Xxh3HexOfFileCached in blob_file.h): later calls trust a stamp
// keyed by the file's identity (dev, inode, size, mtime, ctime) when the
// file is older than the stamp's second, so `ste select` does not read a
// 274 MiB index twice (~35 ms) on every run; any rewrite changes ctime and
// is re-hashed. Any mismatch, or a missing file, is DataLoss naming the file.
//
// Writer locks. Begin() inserts the row and creates and locks
// writers/<id>.lock in one BEGIN IMMEDIATE transaction, so the lock exists
// before anyone sees the row; Complete/MarkFailed/Remove release it (and
// unlink the file) after their commit; destroying the store object or the
// process dying lets go of it, leaving the file. ListSummaries and Remove
// probe it with an open of their own (writer_lock.h).
//
// Removal and garbage. Remove() deletes the results, blob rows and
// baseline row in one BEGIN IMMEDIATE transaction (checking the state, and
// for a building baseline probing its writer lock, under the write lock),
// then unlinks its blob files, temp files, stamps and lock file.
// RemoveStaleFiles() takes the write lock (so no Begin() is half done),
// lists blobs/, verified/ and writers/, reads the rows, lets go, and
// removes what belongs to no building baseline and is named by no row:
// blob files renamed into place by a write killed before its row was
// inserted, leftover .tmp- files, stamps of removed files, lock files of
// finished or removed baselines. Replacing a blob deletes the file it
// replaced (best effort). None of it is ever referenced by a complete
// baseline; `ste baseline gc` runs both (baseline_retention.h).
#ifndef STE_SCHEDULER_SQLITE_STORE_H_
#define STE_SCHEDULER_SQLITE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "sqlite_db.h"
#include "ste/baseline_store.h"

namespace ste {

// 'S' 'T' 'E' 'B': PRAGMA application_id of every ste store.
inline constexpr int32_t kSqliteStoreApplicationId = 0x53544542;
inline constexpr int kSqliteStoreSchemaVersion = 3;
// Version 1 (no resumable builds) and 2 (no history) are migrated to 3 on
// a read-write open and read as they are by a read-only one (whose
// history is then an error to read, and to append to).
inline constexpr int kSqliteStoreOldestSchemaVersion = 1;
inline constexpr char kSqliteStoreMagic[] = "ste baseline store";

// The statement LatestCompleted() runs (?1 = max_mri), as SQLite reads it
// (relational_store.cc writes it in the seam's spelling). Exposed so a
// test can EXPLAIN QUERY PLAN it. The literal `state = 1` (not a parameter) is
// what lets SQLite use the partial index.
inline constexpr char kLatestCompletedSql[] =
    "SELECT id, commit_id, mri, state, created_unix, completed_unix, failure"
    " FROM baselines WHERE state = 1 AND mri <= ?1"
    " ORDER BY mri DESC, id DESC LIMIT 1";

struct SqliteStoreOptions {
  // BlobPath() checks the hash (true; remembered per file identity, see
  // "Verification") or the size only.
  bool verify_blob_hash = true;
  // How long a statement waits for another writer before Unavailable.
  int busy_timeout_ms = 5000;
  // Test hook: called at named points inside the store's writes, so a test
  // program can kill itself at an exact place. Points:
  //   "blob-half-written"       half of a blob's bytes are in the temp file
  //   "blob-renamed"            the blob file is durable under its final
  //                             name; its row is not inserted yet
  //   "accepted-before-commit"  PutAccepted()'s rows are written; COMMIT has
  //                             not
  //   "complete-before-commit"  Complete()'s UPDATE ran; COMMIT has not
  std::function<void(const char* point)> fault_hook;
  // kReadOnly / kImmutable: an existing store, read only (nothing is
  // created, no pragma is set; writes fail); see Store::OpenForReading.
  SqliteDb::Mode open_mode = SqliteDb::Mode::kReadWrite;
};

// Opens (creating the file, its directory and its schema if needed) the
// store at `path` (made absolute against the current directory).
// DataLoss for a file that is not an SQLite database; FailedPrecondition
// for an SQLite database that is not an ste store or has another schema
// version; Unavailable when the database stays locked by another process.
absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(
    const std::string& path, const SqliteStoreOptions& options = {});

}  // namespace ste

#endif  // STE_SCHEDULER_SQLITE_STORE_H_
