// Copyright: the ste authors. A thin RAII layer over the SQLite C API.
//
// Internal to scheduler/. Every SQLite failure becomes an absl::Status that
// names the database file and what was being done:
//   SQLITE_BUSY, SQLITE_LOCKED        -> Unavailable (another writer held
//                                        the database past the busy timeout)
//   SQLITE_NOTADB, SQLITE_CORRUPT     -> DataLoss
//   SQLITE_FULL                       -> ResourceExhausted
//   SQLITE_PERM, SQLITE_READONLY,
//   SQLITE_AUTH                       -> PermissionDenied
//   SQLITE_CANTOPEN                   -> FailedPrecondition
//   anything else                     -> Internal
//
// Thread-safety: a SqliteDb and its Statements belong to one thread.
#ifndef STE_SCHEDULER_SQLITE_DB_H_
#define STE_SCHEDULER_SQLITE_DB_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ste {

class SqliteDb {
 public:
  // How a database is opened: read-write (creating it if needed), read
  // only (an existing file; SQLite still needs its -shm file, created if
  // missing), or immutable (read only, no locks, no -shm/-wal: SQLite's
  // `immutable=1`, only for a file on a read-only file system, which
  // nobody can be writing), or read only with a private WAL index: the
  // index in this process's memory instead of the -shm file (SQLite's
  // exclusive locking mode, set before the first read; no checkpoint on
  // close), for a store whose disk is full so that a -shm file cannot
  // grow. It reads the committed WAL frames like any reader, but holds the
  // database's lock while open: a writer waits (on a full disk it could
  // not write anyway). Such readers take turns: each first waits for an
  // flock(2) on the database's folder, held while it is open (SQLite
  // takes that exclusive lock without its busy handler, so readers that
  // only retried could keep each other out), then up to 30 s for the
  // exclusive lock itself.
  enum class Mode { kReadWrite, kReadOnly, kImmutable, kPrivateIndex };
  // Opens the database file at `path`, with extended result codes and a
  // busy handler that waits up to `busy_timeout_ms`.
  static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path,
                                                        int busy_timeout_ms,
                                                        Mode mode = Mode::kReadWrite);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs `sql` (one or more statements; result rows are discarded).
  absl::Status Exec(const char* sql);

  // The status for result code `rc` of the last call on this connection.
  absl::Status Error(int rc, absl::string_view what) const;

  // The rowid of the last successful INSERT on this connection.
  int64_t LastInsertRowid() const;
  // Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t Changes() const;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  int busy_timeout_ms() const { return busy_timeout_ms_; }

 private:
  SqliteDb(sqlite3* db, std::string path, int busy_timeout_ms)
      : db_(db), path_(std::move(path)), busy_timeout_ms_(busy_timeout_ms) {}
  sqlite3* db_;
  std::string path_;
  int busy_timeout_ms_;
  int turn_fd_ = -1;  // kPrivateIndex: the folder, flock()ed
};

// One prepared statement. Bind*() failures are remembered and returned by
// the next Step(), so call sites read as a list of bindings.
class Statement {
 public:
  static absl::StatusOr<Statement> Prepare(SqliteDb& db, const char* sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;

  // Parameters are 1-based, as in SQL (?1, ?2 ...).
  Statement& BindInt(int index, int64_t value);
  Statement& BindDouble(int index, double value);
  Statement& BindText(int index, absl::string_view value);
  Statement& BindBlob(int index, absl::string_view bytes);  // any bytes

  // Runs to the next row: true if there is one, false when done.
  absl::StatusOr<bool> Step();
  // Steps once and requires that the statement produced no row.
  absl::Status Run();
  // Makes the statement ready to bind and run again (bindings and a
  // remembered Bind*() failure cleared).
  void Reset();

  // Columns of the current row (0-based): how many, and each one's type
  // as SQLite stored it.
  enum class Kind { kNull, kInt, kFloat, kText, kBlob };
  int ColumnCount() const;
  Kind ColumnKind(int column) const;
  int64_t ColumnInt(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;
  std::string ColumnBlob(int column) const;

 private:
  Statement(SqliteDb* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  SqliteDb* db_;
  sqlite3_stmt* stmt_;
  absl::Status bind_status_;
};

// BEGIN IMMEDIATE (takes the write lock now, waiting up to the busy
// timeout, so the transaction cannot fail later for want of it); rolled
// back on destruction unless Commit() succeeded.
class Transaction {
 public:
  static absl::StatusOr<Transaction> BeginImmediate(SqliteDb& db);
  ~Transaction();
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;

  absl::Status Commit();

 private:
  explicit Transaction(SqliteDb* db) : db_(db) {}
  SqliteDb* db_;  // null once committed, rolled back, or moved from
};

}  // namespace ste

#endif  // STE_SCHEDULER_SQLITE_DB_H_
