// Copyright: the ste authors. The PostgreSQL baseline store (internal
// header).
//
// Store::Open("postgresql://..." or "postgres://...", root) lands
// here: a store shared by every machine of a CI fleet, behind the same
// contract as the SQLite one (baseline_store.h). This header is internal
// to store/ (and its tests): callers use baseline_store.h. What is
// PostgreSQL's own is here and in postgres_store.cc: the schema, its
// creation and migration, the connection. The protocol is written once in
// relational_store.h, run over sql_db.h's PostgreSQL adapter with bytea
// rows and a local cache, and advisory writer locks (store_strategies.h).
//
// Connection. The URL is a libpq connection URI, passed as is (so
// host=/path/to/socket-dir, sslmode=, connect_timeout= ... query
// parameters work; a password is best kept in ~/.pgpass or PGPASSWORD,
// not in ste.toml). Defaults the URL may override: connect_timeout=10,
// client_encoding=UTF8, application_name "ste". One connection per store
// object; a connection the server dropped is re-established at the start
// of the next call (the call that found it dropped returns Unavailable).
//
// Schema: deploy/postgres/schema.sql (version 1) and
// deploy/postgres/migrate-2.sql (version 2: ste.builds and ste.accepted,
// the resumable builds of baseline_store.h) and migrate-3.sql (version 3:
// ste.selections and ste.audits, the history), compiled in; everything in
// the PostgreSQL schema "ste"; meta holds "magic" and "schema_version".
// Open applies schema.sql to a database that has no "ste" schema yet, and
// the migrations to an older store, each in one transaction under an
// advisory lock (two processes opening a fresh database at once: one
// creates, the other waits and finds it); it refuses a "ste" schema that is not a store (another
// application's: FailedPrecondition), a damaged meta table (DataLoss) and
// another schema version (FailedPrecondition).
//
// Choices, and why:
//  * LatestCompleted is one query on a partial index, ste.baselines (mri
//    DESC, id DESC) WHERE state = 1: an Index Scan whose first entry at or
//    below the bound is the answer (kPostgresLatestCompletedSql; a test
//    checks the plan on 2,000 baselines after ANALYZE). `state = 1` is a
//    literal, not a parameter, so the planner can match the partial index.
//  * Blob bytes are bytea in their own table, ste.blob_contents, one row
//    per blob, TOASTed out of line uncompressed (STORAGE EXTERNAL). Their
//    size and XXH3-128 are in ste.blobs. Nothing but BlobPath() reads the
//    bytes; the small tables stay small, and LatestCompleted, Get, List
//    and Results never touch a blob page. A bytea value is limited to
//    1 GB: PutBlob refuses blobs over kPostgresMaxBlobBytes
//    (ResourceExhausted).
//  * BlobPath() must return a local file (the index is mmapped). Blobs are
//    copied into a BlobCache directory (blob_cache.h; Open() uses
//    <root>/.ste/pgcache): <baseline>-<name>-<xxh3>.blob. A copy that is
//    there with the recorded size and hash is used without asking the
//    server for a byte; otherwise the bytes are read in slices
//    (substring(), fetch_chunk_bytes each, in one REPEATABLE READ READ ONLY
//    transaction, so a concurrent PutBlob cannot mix two versions),
//    hashed while written to a temp file, and renamed into place only if
//    size and hash match what was recorded. Bytes that do not match are
//    DataLoss naming the blob (the caller then selects all); a damaged
//    local copy is not an error: it is fetched again.
//  * Transactions: every change of several rows is one transaction.
//    Writers lock the baseline's row first: PutBlob and PutResults FOR
//    SHARE (they may run side by side), Complete and MarkFailed FOR UPDATE
//    (they wait for those, and for each other). So Complete() checks the
//    state and both blobs (rows present, bytes present with the recorded
//    size: octet_length() reads the TOAST header, not the bytes) and flips
//    the state with nothing able to change in between, and commits all of
//    it at once. A client killed at any point leaves its transaction
//    uncommitted; the server rolls it back when the connection drops.
//    Waiting for a lock is bounded by lock_timeout = busy_timeout_ms, then
//    Unavailable.
//  * Durability is the server's (a commit that returned is durable under
//    PostgreSQL's own settings); blobs are committed with their rows, so
//    a complete baseline never names bytes that were not committed first.
//  * Text: test names, commits and failure reasons are text, so they must
//    be valid in the database's encoding (UTF-8 normally) and contain no
//    NUL byte (InvalidArgument otherwise). Test names sort bytewise
//    (COLLATE "C"), like SQLite's, whatever the database's collation.
//  * Times (created_unix, completed_unix) are the server's clock, one
//    clock for every machine writing to the store.
//  * Ids come from an identity column: never reused, but not gapless.
//  * Writer locks: Begin() takes pg_try_advisory_lock(PostgresWriterLockKey
//    (id)) inside its transaction (a session lock: it outlives the
//    COMMIT), never waiting; Complete/MarkFailed/Remove and the destructor
//    let go of it; a connection that drops loses it (the server lets go
//    when it notices), and the store takes it again after a reconnect.
//    ListSummaries reads pg_locks (no lock taken); Remove of a building
//    baseline takes pg_try_advisory_xact_lock (granted to this session
//    when it holds the lock itself) under FOR UPDATE on the row.
//  * Removal: rows (blob_contents, blobs, results, the baseline) in one
//    transaction, then this machine's cache copies and their stamps;
//    other machines' caches are swept by their own RemoveStaleFiles (a
//    copy whose baseline or blob row is gone), run by `ste baseline gc`
//    there. Ids are never reused, so a stale copy is never served.
//  * Resumable builds: the lease is on the server's clock
//    (clock_timestamp(), ms), so schedulers on machines whose clocks
//    disagree still agree on who owns a build. ClaimBuild locks the
//    baseline's row FOR UPDATE, so it waits for an owner's write in
//    progress (FOR SHARE) and every later write of that owner finds the
//    new generation and is refused (fencing); two claims are serialised by
//    the same lock. PutAccepted is one transaction per batch, one INSERT
//    per result and journal row.
//  * CompleteImported serialises imports with a transaction advisory lock
//    (kPostgresImportLockKey): under READ COMMITTED the duplicate check of
//    the second sees the first's commit.
//
// Errors: pg_conn.h maps the server's SQLSTATEs to status codes; messages
// carry the server's own text. An unreachable server is Unavailable.
#ifndef STE_SCHEDULER_POSTGRES_STORE_H_
#define STE_SCHEDULER_POSTGRES_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ste/baseline_store.h"

namespace ste {

inline constexpr int kPostgresStoreSchemaVersion = 3;
// Version 1 (schema.sql alone) is migrated to 2 (migrate-2.sql) and 3
// (migrate-3.sql: the history) on open.
inline constexpr int kPostgresStoreOldestSchemaVersion = 1;
inline constexpr char kPostgresStoreMagic[] = "ste baseline store";
// The advisory lock key Open() takes to create the schema ('STEB').
inline constexpr int64_t kPostgresStoreLockKey = 0x53544542;
// The writer lock of baseline `id`: a session advisory lock on this bigint
// key ('STEW' in the high half, the id's low 32 bits in the low half; a
// collision only makes gc keep a baseline).
inline constexpr int64_t PostgresWriterLockKey(int64_t id) {
  return (int64_t{0x53544557} << 32) | (id & 0xffffffff);
}
// The transaction advisory lock CompleteImported takes ('STEI').
inline constexpr int64_t kPostgresImportLockKey = 0x53544549;
// The largest blob PutBlob accepts (a bytea value holds at most 1 GB, and
// one protocol message must carry it).
inline constexpr size_t kPostgresMaxBlobBytes = size_t{1000} << 20;

// The statement LatestCompleted() runs ($1 = max_mri). Exposed so a test
// can EXPLAIN it.
inline constexpr char kPostgresLatestCompletedSql[] =
    "SELECT id, commit_id, mri, state, created_unix, completed_unix, failure"
    " FROM ste.baselines WHERE state = 1 AND mri <= $1"
    " ORDER BY mri DESC, id DESC LIMIT 1";

struct PostgresStoreOptions {
  // BlobPath() re-hashes a cached copy before using it (true) or checks
  // its size only. Bytes fetched from the server are always hashed (it
  // costs nothing extra: they are hashed as they are written).
  bool verify_blob_hash = true;
  // lock_timeout: how long a write waits for a baseline another session
  // is changing before it is Unavailable.
  int busy_timeout_ms = 5000;
  // Used unless the URL sets connect_timeout.
  int connect_timeout_s = 10;
  // BlobPath() reads a blob's bytes in slices of this size.
  size_t fetch_chunk_bytes = size_t{8} << 20;
  // Test hook: called at named points inside the store's writes, so a test
  // program can kill itself at an exact place. Points:
  //   "blob-before-commit"      PutBlob's rows are written; COMMIT not sent
  //   "complete-before-commit"  Complete()'s UPDATE ran; COMMIT not sent
  //   "accepted-before-commit"  PutAccepted()'s rows are written; COMMIT not sent
  std::function<void(const char* point)> fault_hook;
};

// Opens the store in the database `url` names (creating its schema if the
// database has none), copying blobs into `cache_dir` on demand.
// InvalidArgument for a URL that is not postgresql:// or postgres://;
// Unavailable when no server answers; FailedPrecondition when the server
// refuses the connection (no such database or role, authentication) or
// the database holds something else under the schema "ste", or another
// schema version; DataLoss for a damaged meta table.
absl::StatusOr<std::unique_ptr<Store>> OpenPostgresStore(
    const std::string& url, const std::string& cache_dir,
    const PostgresStoreOptions& options = {});

// The cache directory Store::Open uses: <root>/.ste/pgcache (the
// inventory never looks into .ste/). An empty root is the current
// directory.
std::string PostgresCacheDir(const std::string& root);

}  // namespace ste

#endif  // STE_SCHEDULER_POSTGRES_STORE_H_
