// Copyright: the ste authors. The SQL seam (sql_db.h) and its two
// adapters: over SqliteDb (rows read into memory as SQLite typed them) and
// over PgConn (PgResult as it is).
#include "sql_db.h"

#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pg_conn.h"
#include "sqlite_db.h"
#include "ste/status_macros.h"

namespace ste {

SqlParams& SqlParams::Add(Value value) {
  values_.push_back(std::move(value));
  return *this;
}

SqlParams& SqlParams::Int(int64_t value) { return Add({Kind::kInt, value, 0, {}, {}}); }
SqlParams& SqlParams::Double(double value) { return Add({Kind::kDouble, 0, value, {}, {}}); }
SqlParams& SqlParams::Bool(bool value) { return Add({Kind::kBool, value ? 1 : 0, 0, {}, {}}); }
SqlParams& SqlParams::Text(absl::string_view value) {
  return Add({Kind::kText, 0, 0, std::string(value), {}});
}
SqlParams& SqlParams::Bytes(absl::string_view bytes) { return Add({Kind::kBytes, 0, 0, {}, bytes}); }

std::string SqliteSpelling(absl::string_view sql) {
  auto ident = [](char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  out.reserve(sql.size());
  bool quoted = false;
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'') quoted = !quoted;
    if (!quoted && c == '$' && i + 1 < sql.size() &&
        absl::ascii_isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      out += '?';
      continue;
    }
    if (!quoted && (i == 0 || !ident(sql[i - 1])) && sql.substr(i, 4) == "ste.") {
      i += 3;
      continue;
    }
    out += c;
  }
  return out;
}

namespace {

// --- SQLite. ---

class SqliteRows final : public SqlRows {
 public:
  struct Cell {
    Statement::Kind kind = Statement::Kind::kNull;
    int64_t i = 0;
    double d = 0;
    std::string s;  // text or blob bytes
  };
  std::vector<std::vector<Cell>> rows;

  int size() const override { return static_cast<int>(rows.size()); }
  int64_t Int(int row, int column) const override { return rows[row][column].i; }
  double Double(int row, int column) const override { return rows[row][column].d; }
  bool Bool(int row, int column) const override { return rows[row][column].i != 0; }
  std::string Text(int row, int column) const override { return rows[row][column].s; }
  absl::string_view Bytes(int row, int column) const override { return rows[row][column].s; }
  const absl::Status& ParseStatus() const override { return ok_; }

 private:
  absl::Status ok_;
};

class SqliteTxn final : public SqlTransaction::Impl {
 public:
  explicit SqliteTxn(Transaction txn) : txn_(std::move(txn)) {}
  absl::Status Commit() override { return txn_.Commit(); }

 private:
  Transaction txn_;
};

class SqliteSqlDb final : public SqlDb {
 public:
  explicit SqliteSqlDb(std::unique_ptr<SqliteDb> db)
      : db_(std::move(db)), name_(absl::StrCat("sqlite ", db_->path())) {}

  const SqlDialect& dialect() const override {
    // julianday('now') has millisecond precision; unixepoch('subsec')
    // needs SQLite 3.42.
    static const SqlDialect kSqlite = {
        "CAST(strftime('%s', 'now') AS INTEGER)",
        "CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)", "", "", false};
    return kSqlite;
  }
  const std::string& name() const override { return name_; }

  absl::StatusOr<std::unique_ptr<SqlRows>> Query(absl::string_view sql, const SqlParams& params,
                                                bool /*binary*/) override {
    STE_ASSIGN_OR_RETURN(Statement * stmt, Prepared(SqliteSpelling(sql)));
    // Reset however this ends: a statement left stepped keeps its read open.
    struct ResetAfter {
      Statement* stmt;
      ~ResetAfter() { stmt->Reset(); }
    } reset{stmt};
    int index = 0;
    for (const SqlParams::Value& v : params.values()) {
      ++index;
      switch (v.kind) {
        case SqlParams::Kind::kInt:
        case SqlParams::Kind::kBool: stmt->BindInt(index, v.i); break;
        case SqlParams::Kind::kDouble: stmt->BindDouble(index, v.d); break;
        case SqlParams::Kind::kText: stmt->BindText(index, v.text); break;
        case SqlParams::Kind::kBytes: stmt->BindBlob(index, v.bytes); break;
      }
    }
    auto rows = std::make_unique<SqliteRows>();
    for (;;) {
      STE_ASSIGN_OR_RETURN(bool more, stmt->Step());
      if (!more) break;
      std::vector<SqliteRows::Cell>& row = rows->rows.emplace_back(stmt->ColumnCount());
      for (int c = 0; c < static_cast<int>(row.size()); ++c) {
        SqliteRows::Cell& cell = row[c];
        cell.kind = stmt->ColumnKind(c);
        cell.i = stmt->ColumnInt(c);
        cell.d = stmt->ColumnDouble(c);
        cell.s = cell.kind == Statement::Kind::kBlob ? stmt->ColumnBlob(c) : stmt->ColumnText(c);
      }
    }
    return std::unique_ptr<SqlRows>(std::move(rows));
  }

  absl::StatusOr<SqlTransaction> Begin(TxnKind kind) override {
    if (kind == TxnKind::kWrite) {
      STE_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginImmediate(*db_));
      return SqlTransaction(std::make_unique<SqliteTxn>(std::move(txn)));
    }
    STE_RETURN_IF_ERROR(db_->Exec("BEGIN"));
    return SqlTransaction(std::make_unique<DeferredTxn>(db_.get()));
  }

 private:
  // A read transaction (BEGIN): sqlite_db.h's Transaction is IMMEDIATE only.
  class DeferredTxn final : public SqlTransaction::Impl {
   public:
    explicit DeferredTxn(SqliteDb* db) : db_(db) {}
    ~DeferredTxn() override {
      if (db_ != nullptr) (void)db_->Exec("ROLLBACK");
    }
    absl::Status Commit() override {
      SqliteDb* db = db_;
      db_ = nullptr;
      return db->Exec("COMMIT");
    }

   private:
    SqliteDb* db_;
  };

  // The statement for `sql`, prepared once: the protocol runs the same
  // few dozen statements again and again (a PutResults one per result).
  // Statements with many parameters (LatestCompletedAmong) have many
  // texts: past kMaxCached, one is prepared for each call.
  absl::StatusOr<Statement*> Prepared(const std::string& sql) {
    auto it = cache_.find(sql);
    if (it != cache_.end()) return it->second.get();
    STE_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(*db_, sql.c_str()));
    auto owned = std::make_unique<Statement>(std::move(stmt));
    Statement* raw = owned.get();
    if (cache_.size() < kMaxCached) {
      cache_.emplace(sql, std::move(owned));
    } else {
      uncached_ = std::move(owned);
    }
    return raw;
  }

  static constexpr size_t kMaxCached = 64;
  std::unique_ptr<SqliteDb> db_;  // declared first: closed after the statements
  std::string name_;
  std::map<std::string, std::unique_ptr<Statement>> cache_;
  std::unique_ptr<Statement> uncached_;  // the last one past kMaxCached
};

// --- PostgreSQL. ---

class PgRows final : public SqlRows {
 public:
  explicit PgRows(PgResult result) : result_(std::move(result)) {}
  int size() const override { return result_.rows(); }
  int64_t Int(int row, int column) const override { return result_.Int(row, column); }
  double Double(int row, int column) const override { return result_.Double(row, column); }
  bool Bool(int row, int column) const override { return result_.Bool(row, column); }
  std::string Text(int row, int column) const override { return result_.Text(row, column); }
  absl::string_view Bytes(int row, int column) const override {
    return result_.Bytes(row, column);
  }
  const absl::Status& ParseStatus() const override { return result_.ParseStatus(); }

 private:
  PgResult result_;
};

class PgTxn final : public SqlTransaction::Impl {
 public:
  explicit PgTxn(PgTransaction txn) : txn_(std::move(txn)) {}
  absl::Status Commit() override { return txn_.Commit(); }

 private:
  PgTransaction txn_;
};

class PgSqlDb final : public SqlDb {
 public:
  explicit PgSqlDb(std::unique_ptr<PgConn> conn) : conn_(std::move(conn)) {}

  const SqlDialect& dialect() const override {
    static const SqlDialect kPostgres = {
        "floor(extract(epoch FROM clock_timestamp()))::bigint",
        "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint", " FOR SHARE",
        " FOR UPDATE", true};
    return kPostgres;
  }
  const std::string& name() const override { return conn_->name(); }

  absl::StatusOr<std::unique_ptr<SqlRows>> Query(absl::string_view sql, const SqlParams& params,
                                                bool binary) override {
    PgParams pg;
    for (const SqlParams::Value& v : params.values()) {
      switch (v.kind) {
        case SqlParams::Kind::kInt: pg.Int(v.i); break;
        case SqlParams::Kind::kBool: pg.Bool(v.i != 0); break;
        case SqlParams::Kind::kDouble: pg.Double(v.d); break;
        case SqlParams::Kind::kText: pg.Text(v.text); break;
        case SqlParams::Kind::kBytes: pg.Bytes(v.bytes); break;
      }
    }
    const std::string text(sql);
    STE_ASSIGN_OR_RETURN(PgResult result, conn_->Exec(text.c_str(), pg, binary));
    return std::unique_ptr<SqlRows>(std::make_unique<PgRows>(std::move(result)));
  }

  absl::StatusOr<SqlTransaction> Begin(TxnKind kind) override {
    STE_ASSIGN_OR_RETURN(
        PgTransaction txn,
        PgTransaction::Begin(*conn_, kind == TxnKind::kWrite
                                         ? "BEGIN"
                                         : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
    return SqlTransaction(std::make_unique<PgTxn>(std::move(txn)));
  }

  absl::Status EnsureConnected() override { return conn_->EnsureConnected(); }
  uint64_t sessions() const override { return conn_->sessions(); }

 private:
  std::unique_ptr<PgConn> conn_;
};

}  // namespace

std::unique_ptr<SqlDb> SqlDbOverSqlite(std::unique_ptr<SqliteDb> db) {
  return std::make_unique<SqliteSqlDb>(std::move(db));
}

std::unique_ptr<SqlDb> SqlDbOverPostgres(std::unique_ptr<PgConn> conn) {
  return std::make_unique<PgSqlDb>(std::move(conn));
}

}  // namespace ste
