// Copyright: the ste authors. The two things the relational store
// (relational_store.h) leaves to its back-end: where blob bytes live
// (BlobPlace) and how writers lock (WriterLocks).
//
// Internal to store/. Both are called by the store at fixed points of its
// protocol, inside or outside its transactions as each method says; they
// run their own statements on the store's SqlDb (sql_db.h).
//
//   BlobPlace                  files beside the database    bytea + cache
//                              (SQLite, blob_places.cc)     (PostgreSQL)
//   bytes written              before the row, durably      with the row
//   Complete checks            the file, by its size        octet_length
//   BlobPath                   the file, hash checked       a verified copy
//   local files swept          blobs/                       the cache
//
//   WriterLocks                flock files (SQLite,         advisory locks
//                              writer_locks.cc)             (PostgreSQL)
//   held by                    an open file description     the session
//   probed                     an open of the file          pg_locks
//   after a reconnect          -                            taken again
//   imports serialised by      BEGIN IMMEDIATE              a xact lock
#ifndef STE_STORE_STORE_STRATEGIES_H_
#define STE_STORE_STORE_STRATEGIES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sql_db.h"
#include "writer_lock.h"

namespace ste {

using FaultHook = std::function<void(const char* point)>;

class BlobPlace {
 public:
  virtual ~BlobPlace() = default;

  // The directory of this machine's blob files (blobs/, or the cache):
  // what Remove and RemoveStaleFiles clean.
  virtual const std::string& dir() const = 0;
  // Whether PutBlob writes the bytes before its transaction (then it
  // checks the baseline is still building before that write, too).
  virtual bool writes_before_rows() const = 0;
  // Whether a temp file of any baseline that exists may be a write in
  // progress (a cache fetch); otherwise only of a building one.
  virtual bool temp_files_of_any_baseline() const = 0;

  // PutBlob, first: OK if a blob of `size` bytes can be stored.
  virtual absl::Status Admit(int64_t baseline, const std::string& name, size_t size) const = 0;

  // What PutBlob has written so far: the file its bytes went to, and the
  // file the blob's row named before ("" for none).
  struct Staged {
    std::string file;
    std::string previous;
  };
  // PutBlob, before its transaction: the bytes, where they go first.
  virtual absl::StatusOr<Staged> Stage(SqlDb& db, int64_t baseline, const std::string& name,
                                       const std::string& hash, const std::string& bytes) = 0;
  // PutBlob, inside its transaction (the baseline checked): the rows,
  // the last thing before the commit.
  virtual absl::Status Record(SqlDb& db, int64_t baseline, const std::string& name,
                              const std::string& hash, const std::string& bytes,
                              Staged& staged) = 0;
  // PutBlob, last, committed or not: what no row names any more goes.
  virtual void Finish(const Staged& staged, bool committed) = 0;

  // Inside Complete's transaction: false if the blob has no row;
  // DataLoss unless its bytes are there with the recorded size.
  virtual absl::StatusOr<bool> CheckDurable(SqlDb& db, int64_t baseline,
                                            const std::string& name) = 0;
  // BlobPath (the baseline exists): a local file with the blob's bytes,
  // checked. NotFound without a row; DataLoss for bytes that do not match.
  virtual absl::StatusOr<std::string> Path(SqlDb& db, int64_t baseline,
                                           const std::string& name) = 0;

  // Inside Remove's transaction: this machine's files of the baseline's
  // blobs (removed with their hash stamps once it commits), then the rows
  // that hold bytes (deleted before the blob rows).
  virtual absl::StatusOr<std::vector<std::string>> LocalFiles(SqlDb& db, int64_t baseline) = 0;
  virtual absl::Status DeleteBytes(SqlDb& db, int64_t baseline) = 0;

  // Inside RemoveStaleFiles' transaction: (baseline, file name) of every
  // local file a blob row names.
  virtual absl::StatusOr<std::set<std::pair<int64_t, std::string>>> NamedFiles(SqlDb& db) = 0;
};

// SQLite: files in `blobs_dir`, written durably before their rows
// (WriteFileDurably, calling `hook`), hashes checked by BlobPath unless
// `verify_hash` is false.
std::unique_ptr<BlobPlace> BlobFilesBesideDatabase(std::string blobs_dir, bool verify_hash,
                                                   FaultHook hook);
// PostgreSQL: bytea rows (ste.blob_contents), at most `max_bytes` each;
// BlobPath copies them into a BlobCache at `cache_dir`, read in slices
// of `fetch_chunk_bytes`, re-hashing a cached copy unless `verify_hash`
// is false. `hook` is called with "blob-before-commit" once PutBlob's rows
// are written.
std::unique_ptr<BlobPlace> BlobBytesWithCache(std::string cache_dir, bool verify_hash,
                                              size_t fetch_chunk_bytes, size_t max_bytes,
                                              FaultHook hook);

class WriterLocks {
 public:
  virtual ~WriterLocks() = default;  // lets go of every lock held

  // Inside Begin's (or ClaimBuild's) transaction, before the row is seen
  // by others: takes the lock of `baseline`. Never waits; a lock that
  // cannot be taken is no evidence of a writer, not an error.
  virtual void Acquire(int64_t baseline) = 0;
  virtual bool Holds(int64_t baseline) const = 0;
  // After the commit that finished `baseline` (or a Begin that did not
  // commit): lets go of its lock, if held, and tidies it away.
  virtual void Release(int64_t baseline) = 0;
  // The claim on `baseline` was lost: lets go without tidying.
  virtual void Forget(int64_t baseline) = 0;
  // The connection is a new session: takes the locks held again (those
  // not granted are forgotten).
  virtual void Retake() = 0;

  // Inside Remove's transaction, the building baseline's row locked:
  // whether nothing but this object holds its lock. An error counts as
  // held.
  virtual absl::StatusOr<bool> FreeToRemove(int64_t baseline) = 0;
  // After Remove committed: what is left of the lock of `baseline`.
  virtual void RemoveLeftovers(int64_t baseline) = 0;

  // ListSummaries: an SQL boolean over the row `b` of ste.baselines (the
  // lock probed by the server), or "0" (probed by Alive).
  virtual std::string AliveSql() const = 0;
  // Whether a writer holds building `baseline` (`from_sql`: AliveSql's
  // value). A lock that cannot be probed counts as held.
  virtual bool Alive(int64_t baseline, bool from_sql) const = 0;

  // Inside CompleteImported's transaction: waits for every other import.
  virtual absl::Status SerialiseImports() = 0;

  // RemoveStaleFiles: whether the listing below must happen under the
  // database's write lock (lock files are made inside Begin's
  // transaction), and the lock files (in dir()) left by finished builds.
  virtual bool sweep_under_write_lock() const = 0;
  virtual absl::StatusOr<std::vector<WriterLockFile>> ListFiles() const = 0;
  virtual const std::string& dir() const = 0;
};

// SQLite: <writers_dir>/<id>.lock, flock()ed (writer_lock.h).
std::unique_ptr<WriterLocks> FlockWriterLocksIn(std::string writers_dir);
// PostgreSQL: session advisory locks on PostgresWriterLockKey(id), taken
// on `db` (which must outlive them); imports serialised by
// pg_advisory_xact_lock(`import_key`).
std::unique_ptr<WriterLocks> AdvisoryWriterLocks(SqlDb& db, int64_t import_key);

}  // namespace ste

#endif  // STE_STORE_STORE_STRATEGIES_H_
