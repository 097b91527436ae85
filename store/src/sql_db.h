// Copyright: the ste authors. The narrow SQL seam the relational store
// (relational_store.h) is written over: a statement with parameters
// returning rows, transactions, and the few places where SQLite and
// PostgreSQL spell things differently (SqlDialect).
//
// Internal to store/. Two adapters: over SqliteDb (sqlite_db.h: busy
// retries, the read-only, immutable and private-index modes stay there)
// and over PgConn (pg_conn.h: session setup, reconnects).
//
// Spelling. Statements are written once, in PostgreSQL's spelling:
// parameters $1, $2 ... and tables qualified by the schema, "ste.baselines".
// The SQLite adapter rewrites them as it prepares them: ?1, ?2 ... and no
// qualifier (SqliteSpelling; outside single-quoted strings). Everything
// else a shared statement uses means the same in both: CAST(... AS
// BIGINT), ON CONFLICT ... DO UPDATE / DO NOTHING (SQLite >= 3.24),
// RETURNING (SQLite >= 3.35), EXCEPT, coalesce. What differs is in
// SqlDialect: the clock, the row-lock clause, array parameters.
//
// Values. Parameters are typed (SqlParams): an integer, a double (read
// back exactly), a boolean (SQLite: 0/1), text (valid in the database's
// encoding; PostgreSQL refuses a NUL byte) or bytes (a blob/bytea).
// Columns are read back by type (SqlRows); a value that does not parse as
// asked makes ParseStatus() DataLoss (PostgreSQL sends text).
//
// Thread-safety: an SqlDb and what it returns belong to one thread.
#ifndef STE_STORE_SQL_DB_H_
#define STE_STORE_SQL_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ste {

class SqliteDb;
class PgConn;

// The parameters of one statement, $1, $2 ... in the order added.
class SqlParams {
 public:
  enum class Kind { kInt, kDouble, kBool, kText, kBytes };
  struct Value {
    Kind kind = Kind::kInt;
    int64_t i = 0;  // kInt, kBool (0/1)
    double d = 0;
    std::string text;         // kText (copied)
    absl::string_view bytes;  // kBytes (not copied)
  };

  SqlParams& Int(int64_t value);
  SqlParams& Double(double value);
  SqlParams& Bool(bool value);
  SqlParams& Text(absl::string_view value);
  // Not copied: `bytes` must outlive the Query.
  SqlParams& Bytes(absl::string_view bytes);

  const std::vector<Value>& values() const { return values_; }

 private:
  SqlParams& Add(Value value);
  std::vector<Value> values_;
};

// The rows of one statement (row and column 0-based).
class SqlRows {
 public:
  virtual ~SqlRows() = default;
  virtual int size() const = 0;
  virtual int64_t Int(int row, int column) const = 0;
  virtual double Double(int row, int column) const = 0;
  virtual bool Bool(int row, int column) const = 0;
  virtual std::string Text(int row, int column) const = 0;
  // A blob or bytea column (PostgreSQL: of a Query with `binary`); valid
  // while the rows live.
  virtual absl::string_view Bytes(int row, int column) const = 0;
  // DataLoss once a value did not parse as asked.
  virtual const absl::Status& ParseStatus() const = 0;
};

// A transaction, rolled back on destruction unless Commit() succeeded.
class SqlTransaction {
 public:
  class Impl {
   public:
    virtual ~Impl() = default;  // rolls back unless committed
    virtual absl::Status Commit() = 0;
  };
  explicit SqlTransaction(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
  SqlTransaction(SqlTransaction&&) = default;
  SqlTransaction& operator=(SqlTransaction&&) = default;

  absl::Status Commit() { return impl_->Commit(); }

 private:
  std::unique_ptr<Impl> impl_;
};

// What a transaction is for.
enum class TxnKind {
  // Changes rows: SQLite BEGIN IMMEDIATE (the database's write lock, taken
  // now: writers are serialised, and nothing else can change what this
  // one reads); PostgreSQL BEGIN (READ COMMITTED; writers lock the rows
  // they change, see SqlDialect::for_share / for_update).
  kWrite,
  // Reads a consistent snapshot: SQLite BEGIN (deferred); PostgreSQL
  // REPEATABLE READ READ ONLY (the snapshot is taken by its first
  // statement).
  kSnapshot,
};

// Where the two spellings differ (SQL fragments are spliced into
// statements; none carries a value).
struct SqlDialect {
  // The store's clock: now in seconds, and in milliseconds, since the
  // epoch (SQLite: the machine's; PostgreSQL: the server's).
  const char* now_s;
  const char* now_ms;
  // Appended to a SELECT of a baseline's row inside a kWrite transaction:
  // PostgreSQL " FOR SHARE" / " FOR UPDATE"; SQLite "" (BEGIN IMMEDIATE
  // holds the whole database already).
  const char* for_share;
  const char* for_update;
  // Whether a batch of values may travel as array parameters
  // (PostgreSQL: one INSERT ... SELECT FROM unnest($2::text[], ...)).
  bool array_params;
};

class SqlDb {
 public:
  virtual ~SqlDb() = default;

  virtual const SqlDialect& dialect() const = 0;
  // "sqlite /path/ste.db", "postgresql database ...": for messages.
  virtual const std::string& name() const = 0;

  // Runs one statement (see "Spelling") with `params`. With `binary`,
  // every column comes back as raw bytes (PostgreSQL; SQLite's blobs are
  // bytes anyway): for a statement whose columns are all bytea.
  virtual absl::StatusOr<std::unique_ptr<SqlRows>> Query(absl::string_view sql,
                                                        const SqlParams& params = {},
                                                        bool binary = false) = 0;
  // Query, rows discarded.
  absl::Status Exec(absl::string_view sql, const SqlParams& params = {}) {
    return Query(sql, params).status();
  }

  virtual absl::StatusOr<SqlTransaction> Begin(TxnKind kind) = 0;

  // Re-establishes a connection the server dropped (PostgreSQL); OK if up.
  virtual absl::Status EnsureConnected() { return absl::OkStatus(); }
  // How many sessions the connection has had: session state (advisory
  // locks) is lost when it changes.
  virtual uint64_t sessions() const { return 1; }
};

// The adapters.
std::unique_ptr<SqlDb> SqlDbOverSqlite(std::unique_ptr<SqliteDb> db);
std::unique_ptr<SqlDb> SqlDbOverPostgres(std::unique_ptr<PgConn> conn);

// `sql` in SQLite's spelling: $N -> ?N, "ste." qualifiers dropped (outside
// single-quoted strings).
std::string SqliteSpelling(absl::string_view sql);

}  // namespace ste

#endif  // STE_STORE_SQL_DB_H_
