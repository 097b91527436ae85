// Copyright: the ste authors.
#include "sqlite_db.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ste/status_macros.h"

namespace ste {

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(
    const std::string& path, int busy_timeout_ms, Mode mode) {
  sqlite3* db = nullptr;
  int rc;
  int turn_fd = -1;
  if (mode == Mode::kImmutable) {
    // A URI, so that the path's own bytes are never read as URI syntax.
    std::string escaped;
    for (const char* p = path.c_str(); *p; p++) {
      unsigned char c = static_cast<unsigned char>(*p);
      if (c == '%' || c == '?' || c == '#' || c < 0x21 || c >= 0x7f) {
        static const char kHex[] = "0123456789ABCDEF";
        escaped += '%';
        escaped += kHex[c >> 4];
        escaped += kHex[c & 15];
      } else {
        escaped += static_cast<char>(c);
      }
    }
    const std::string u = "file:" + escaped + "?immutable=1";
    rc = sqlite3_open_v2(u.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  } else if (mode == Mode::kPrivateIndex) {
    // Our turn first (released with the fd, also by a killed process).
    std::string dir = std::filesystem::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
    turn_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (turn_fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", dir));
    while (flock(turn_fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        const int e = errno;
        close(turn_fd);
        return absl::ErrnoToStatus(e, absl::StrCat("flock ", dir));
      }
    }
    // Read-write, not SQLITE_OPEN_READONLY: the exclusive lock is a write
    // lock on the file. query_only refuses every write.
    rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
  } else {
    rc = sqlite3_open_v2(path.c_str(), &db,
                         mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY
                                                 : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                         nullptr);
  }
  // Even a failed open returns a handle (for the message) that must be
  // closed; only out-of-memory leaves it null.
  std::unique_ptr<SqliteDb> result(new SqliteDb(db, path, busy_timeout_ms));
  result->turn_fd_ = turn_fd;
  if (db == nullptr) return absl::ResourceExhaustedError("sqlite3_open_v2");
  if (rc != SQLITE_OK) return result->Error(rc, "open");
  sqlite3_extended_result_codes(db, 1);
  rc = sqlite3_busy_timeout(db, busy_timeout_ms);
  if (rc != SQLITE_OK) return result->Error(rc, "set busy timeout");
  if (mode == Mode::kPrivateIndex) {
    // Before the first read, or SQLite maps the -shm file.
    STE_RETURN_IF_ERROR(result->Exec("PRAGMA locking_mode = EXCLUSIVE"));
    STE_RETURN_IF_ERROR(result->Exec("PRAGMA query_only = 1"));
    rc = sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    if (rc != SQLITE_OK) return result->Error(rc, "turn off the checkpoint on close");
    // The first read takes the exclusive lock, and SQLite takes it without
    // its busy handler: wait here, up to 30 s, for another process's
    // shared lock (an open of the same store failing on its -shm file).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    absl::Status first = result->Exec("PRAGMA schema_version");
    while (absl::IsUnavailable(first) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      first = result->Exec("PRAGMA schema_version");
    }
    STE_RETURN_IF_ERROR(first);
  }
  return result;
}

SqliteDb::~SqliteDb() {
  // Statements and transactions are RAII objects that end first, so
  // sqlite3_close (not _v2) finds nothing open.
  if (db_ != nullptr) sqlite3_close(db_);
  if (turn_fd_ >= 0) close(turn_fd_);  // the turn, after the database's lock
}

absl::Status SqliteDb::Exec(const char* sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  sqlite3_free(message);  // the same text sqlite3_errmsg returns
  if (rc != SQLITE_OK) return Error(rc, sql);
  return absl::OkStatus();
}

int64_t SqliteDb::LastInsertRowid() const {
  return sqlite3_last_insert_rowid(db_);
}

int64_t SqliteDb::Changes() const { return sqlite3_changes64(db_); }

absl::Status SqliteDb::Error(int rc, absl::string_view what) const {
  std::string message =
      absl::StrCat("sqlite ", path_, ": ", what, ": ",
                   db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
  // What the system said, when SQLite's own words hide it ("disk I/O
  // error" for a full disk).
  if (int err = db_ != nullptr ? sqlite3_system_errno(db_) : 0; err != 0) {
    switch (rc & 0xff) {
      case SQLITE_IOERR:
      case SQLITE_CANTOPEN:
      case SQLITE_FULL:
      case SQLITE_READONLY:
        absl::StrAppend(&message, " (", std::strerror(err), ")");
        break;
      default:
        break;
    }
  }
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(
          absl::StrCat(message,
                       " (another process held the database for "
                       "more than ",
                       busy_timeout_ms_, " ms)"));
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return absl::DataLossError(message);
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(message);
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return absl::PermissionDeniedError(message);
    case SQLITE_CANTOPEN:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<Statement> Statement::Prepare(SqliteDb& db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db.handle(), sql, -1, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return db.Error(rc, absl::StrCat("prepare \"", sql, "\""));
  }
  return Statement(&db, stmt);
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_status_(std::move(other.bind_status_)) {}

Statement& Statement::BindInt(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = db_->Error(rc, absl::StrCat("bind ?", index));
  }
  return *this;
}

Statement& Statement::BindDouble(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = db_->Error(rc, absl::StrCat("bind ?", index));
  }
  return *this;
}

Statement& Statement::BindText(int index, absl::string_view value) {
  int rc = sqlite3_bind_text64(stmt_, index, value.data(), value.size(),
                               SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = db_->Error(rc, absl::StrCat("bind ?", index));
  }
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  if (!bind_status_.ok()) return bind_status_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, absl::StrCat("run \"", sqlite3_sql(stmt_), "\""));
}

absl::Status Statement::Run() {
  absl::StatusOr<bool> row = Step();
  if (!row.ok()) return row.status();
  if (*row) {
    return absl::InternalError(absl::StrCat("sqlite ", db_->path(), ": \"",
                                            sqlite3_sql(stmt_),
                                            "\" returned a row"));
  }
  return absl::OkStatus();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_status_ = absl::OkStatus();
}

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_); }

Statement::Kind Statement::ColumnKind(int column) const {
  switch (sqlite3_column_type(stmt_, column)) {
    case SQLITE_INTEGER: return Kind::kInt;
    case SQLITE_FLOAT: return Kind::kFloat;
    case SQLITE_TEXT: return Kind::kText;
    case SQLITE_BLOB: return Kind::kBlob;
    default: return Kind::kNull;
  }
}

int64_t Statement::ColumnInt(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::ColumnDouble(int column) const {
  return sqlite3_column_double(stmt_, column);
}

Statement& Statement::BindBlob(int index, absl::string_view bytes) {
  // A zero-length blob, not NULL, for empty bytes.
  int rc = sqlite3_bind_blob64(stmt_, index, bytes.empty() ? "" : bytes.data(), bytes.size(),
                               SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = db_->Error(rc, absl::StrCat("bind ?", index));
  }
  return *this;
}

std::string Statement::ColumnBlob(int column) const {
  const void* bytes = sqlite3_column_blob(stmt_, column);
  if (bytes == nullptr) return "";
  return std::string(static_cast<const char*>(bytes),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string Statement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

absl::StatusOr<Transaction> Transaction::BeginImmediate(SqliteDb& db) {
  absl::Status status = db.Exec("BEGIN IMMEDIATE");
  if (!status.ok()) return status;
  return Transaction(&db);
}

Transaction::~Transaction() {
  // SQLite may already have rolled back by itself (e.g. after SQLITE_FULL);
  // then there is nothing to undo.
  if (db_ != nullptr && !sqlite3_get_autocommit(db_->handle())) {
    sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)) {}

absl::Status Transaction::Commit() {
  absl::Status status = db_->Exec("COMMIT");
  if (status.ok()) db_ = nullptr;
  return status;
}

}  // namespace ste
