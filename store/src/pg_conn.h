// Copyright: the ste authors. A thin RAII layer over libpq.
//
// Internal to scheduler/ (the PostgreSQL store and its tests). Every
// statement that carries a value is parameterised (PQexecParams): values
// travel as text, blob bytes as binary; nothing is ever spliced into SQL.
//
// Every failure becomes an absl::Status that names the database and what
// was being done, followed by the server's own words (primary message,
// detail, hint) and its SQLSTATE:
//
//   a lost connection, class 08 (connection exception),
//   57P01-57P03 (server shutting down / starting)     -> Unavailable
//   55P03 lock_not_available (lock_timeout expired)    -> Unavailable
//   40001, 40P01 (serialization failure, deadlock)     -> Aborted
//   class 53 (disk full, out of memory, connections)   -> ResourceExhausted
//   class 28, 42501 (authorization, privilege)          -> PermissionDenied
//   class 22 (data exception: e.g. text not UTF-8)      -> InvalidArgument
//   XX001, XX002 (data or index corrupted)             -> DataLoss
//   anything else                                       -> Internal
//
// Connect() failures are classified with PQping on the same parameters:
// no server answering (or one starting/stopping) is Unavailable; a server
// that is up but refused us (no such database or role, authentication) is
// FailedPrecondition; an unusable connection string is InvalidArgument.
//
// libpq is not linked: Connect() loads libpq.so.5 (dlopen) the first time,
// so that a process that never connects never loads it; when it cannot be
// loaded, Connect() is FailedPrecondition naming the Debian package.
//
// Thread-safety: a PgConn and the objects made from it belong to one
// thread.
#ifndef STE_SCHEDULER_PG_CONN_H_
#define STE_SCHEDULER_PG_CONN_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct pg_conn;
struct pg_result;

namespace ste {

// `value` as PostgreSQL float8 input: 17 significant digits (reads back
// as the same double), NaN, Infinity, -Infinity.
std::string PgFloat8Text(double value);

// The parameters of one statement, $1, $2 ... in the order added. A text
// value containing a NUL byte cannot be sent: it is remembered and
// returned by PgConn::Exec, so call sites read as a list of values.
class PgParams {
 public:
  PgParams() = default;
  // Not copyable: the value pointers point into the object.
  PgParams(const PgParams&) = delete;
  PgParams& operator=(const PgParams&) = delete;

  PgParams& Int(int64_t value);
  PgParams& Double(double value);  // round-trips exactly
  PgParams& Bool(bool value);
  PgParams& Text(absl::string_view value);  // copied
  // Binary (a bytea parameter). Not copied: `bytes` must outlive Exec.
  PgParams& Bytes(absl::string_view bytes);

  int size() const { return static_cast<int>(values_.size()); }
  const absl::Status& status() const { return status_; }

 private:
  friend class PgConn;
  PgParams& Add(const char* data, size_t size, int format);
  std::deque<std::string> owned_;  // stable addresses for values_
  std::vector<const char*> values_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
  absl::Status status_;
};

// The rows of one successful statement. Columns are read as text (the
// default) or as raw bytes (a statement run with binary results).
class PgResult {
 public:
  explicit PgResult(pg_result* result) : result_(result) {}
  ~PgResult();
  PgResult(PgResult&& other) noexcept;
  PgResult& operator=(PgResult&&) = delete;
  PgResult(const PgResult&) = delete;

  int rows() const;
  bool IsNull(int row, int column) const;
  std::string Text(int row, int column) const;
  // Valid while this result lives.
  absl::string_view Bytes(int row, int column) const;
  // An integer, double or boolean column in text form. A value that does
  // not parse yields 0/false and makes ParseStatus() DataLoss.
  int64_t Int(int row, int column) const;
  double Double(int row, int column) const;
  bool Bool(int row, int column) const;
  const absl::Status& ParseStatus() const { return parse_status_; }
  pg_result* raw() const { return result_; }

 private:
  void BadValue(int row, int column, absl::string_view type) const;
  pg_result* result_;
  mutable absl::Status parse_status_;
};

class PgConn {
 public:
  // Connects to `url` (a libpq connection URI, "postgresql://..." or
  // "postgres://...", including host=/socket/dir query parameters).
  // `connect_timeout_s`, client_encoding UTF8 and application name "ste"
  // are defaults the URL may override. With `lock_timeout_ms` >= 0, the
  // session's lock_timeout is set to it (again after every reconnect).
  static absl::StatusOr<std::unique_ptr<PgConn>> Connect(
      const std::string& url, int connect_timeout_s, int lock_timeout_ms = -1);
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  // Runs one statement with `params`; rows come back as text, or as raw
  // bytes with `binary_result`.
  absl::StatusOr<PgResult> Exec(const char* sql, const PgParams& params = {},
                                bool binary_result = false);
  // Runs a script of several statements without parameters (the schema).
  absl::Status ExecScript(const char* sql, absl::string_view what);

  // Reconnects a connection the server dropped (PQreset, then the session
  // settings again); OK if it is up.
  absl::Status EnsureConnected();

  // How many server sessions this connection has had (1 after Connect; one
  // more after each reconnect): session state such as advisory locks is
  // lost when it changes.
  uint64_t sessions() const { return sessions_; }

  // "postgresql database \"ste\" at /run/postgresql:5432": for messages.
  const std::string& name() const { return name_; }
  // The number for the server's message, SQLSTATE included, when a call
  // failed; `what` says what was being done.
  absl::Status Error(pg_result* result, absl::string_view what) const;

 private:
  explicit PgConn(pg_conn* conn);
  // Applies the session settings (lock_timeout).
  absl::Status SetUpSession();
  pg_conn* conn_;
  std::string name_;
  int lock_timeout_ms_ = -1;  // also quoted in 55P03 messages
  uint64_t sessions_ = 0;
};

// BEGIN (or `begin_sql`, e.g. "BEGIN ISOLATION LEVEL REPEATABLE READ READ
// ONLY"); rolled back on destruction unless Commit() succeeded.
class PgTransaction {
 public:
  static absl::StatusOr<PgTransaction> Begin(PgConn& conn,
                                             const char* begin_sql = "BEGIN");
  ~PgTransaction();
  PgTransaction(PgTransaction&& other) noexcept;
  PgTransaction& operator=(PgTransaction&&) = delete;
  PgTransaction(const PgTransaction&) = delete;

  absl::Status Commit();

 private:
  explicit PgTransaction(PgConn* conn) : conn_(conn) {}
  PgConn* conn_;  // null once committed, rolled back, or moved from
};

}  // namespace ste

#endif  // STE_SCHEDULER_PG_CONN_H_
