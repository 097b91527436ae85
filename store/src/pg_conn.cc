// Copyright: the ste authors.
#include "pg_conn.h"

#include <dlfcn.h>
#include <libpq-fe.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace ste {
namespace {

// libpq is loaded with the first connection (dlopen), not linked: every
// other ste command and store is spared its ~5 ms of loading libpq,
// OpenSSL, Kerberos, LDAP and SASL in each process (bench/README, "P7").
// The package depends on libpq5 by name (cmake/install.cmake).
#define STE_LIBPQ_FUNCTIONS(X)                                                             \
  X(PQclear) X(PQcmdStatus) X(PQconnectdbParams) X(PQdb) X(PQerrorMessage) X(PQexec)       \
  X(PQexecParams) X(PQfinish) X(PQfname) X(PQgetisnull) X(PQgetlength) X(PQgetvalue)       \
  X(PQhost) X(PQntuples) X(PQpingParams) X(PQport) X(PQreset) X(PQresultErrorField)        \
  X(PQresultErrorMessage) X(PQresultStatus) X(PQsetNoticeReceiver) X(PQstatus)

struct LibPq {
#define STE_LIBPQ_MEMBER(name) decltype(&::name) name = nullptr;
  STE_LIBPQ_FUNCTIONS(STE_LIBPQ_MEMBER)
#undef STE_LIBPQ_MEMBER
};

// The libpq of this process, loaded once; an error says why it is not.
const absl::StatusOr<LibPq>& LoadedLibPq() {
  static const absl::StatusOr<LibPq>* const loaded = [] {
    // The soname of Debian's libpq5, the package this ste depends on.
    void* lib = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      return new absl::StatusOr<LibPq>(absl::FailedPreconditionError(absl::StrCat(
          "a PostgreSQL store needs libpq.so.5 (Debian package libpq5): ", dlerror())));
    }
    LibPq pq;
#define STE_LIBPQ_LOAD(name)                                                               \
    pq.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));                      \
    if (pq.name == nullptr) {                                                              \
      return new absl::StatusOr<LibPq>(absl::FailedPreconditionError(                     \
          absl::StrCat("libpq.so.5 has no " #name ": is it older than PostgreSQL 12's?"))); \
    }
    STE_LIBPQ_FUNCTIONS(STE_LIBPQ_LOAD)
#undef STE_LIBPQ_LOAD
    return new absl::StatusOr<LibPq>(pq);
  }();
  return *loaded;
}

// libpq, once a connection was made (Connect loads it first).
const LibPq& Pq() { return *LoadedLibPq(); }

// libpq's messages end with a newline and may continue on tab-indented
// lines ("\n\tIs the server running locally ...?"): make them one line.
std::string OneLine(absl::string_view text) {
  std::string line = absl::StrReplaceAll(text, {{"\n\t", " "}, {"\n", " "}});
  return std::string(absl::StripAsciiWhitespace(line));
}

std::string DescribeConn(const PGconn* conn) {
  const char* db = Pq().PQdb(conn);
  const char* host = Pq().PQhost(conn);
  const char* port = Pq().PQport(conn);
  return absl::StrCat("postgresql database \"", db ? db : "", "\" at ",
                      host && *host ? host : "(default host)", ":",
                      port && *port ? port : "(default port)");
}

// The start of a statement, for messages: "SELECT state FROM ste.baselines
// WHERE id = $1 FOR UPDATE" stays whole, a long one ends in "...".
std::string Abbreviated(absl::string_view sql) {
  std::string text(absl::StripAsciiWhitespace(sql));
  absl::RemoveExtraAsciiWhitespace(&text);
  if (text.size() > 72) text = absl::StrCat(text.substr(0, 69), "...");
  return text;
}

absl::StatusCode CodeForSqlState(absl::string_view state) {
  if (state.size() != 5) return absl::StatusCode::kInternal;
  absl::string_view cls = state.substr(0, 2);
  if (cls == "08" || state == "57P01" || state == "57P02" || state == "57P03" ||
      state == "55P03") {
    return absl::StatusCode::kUnavailable;
  }
  if (state == "40001" || state == "40P01") return absl::StatusCode::kAborted;
  if (cls == "53") return absl::StatusCode::kResourceExhausted;
  if (cls == "28" || state == "42501") {
    return absl::StatusCode::kPermissionDenied;
  }
  if (cls == "22") return absl::StatusCode::kInvalidArgument;
  if (state == "XX001" || state == "XX002") return absl::StatusCode::kDataLoss;
  return absl::StatusCode::kInternal;
}

// The server's NOTICEs (chatter) are dropped; WARNINGs go to stderr, marked
// as the store's.
void ReceiveNotice(void*, const PGresult* result) {
  const char* severity =
      Pq().PQresultErrorField(result, PG_DIAG_SEVERITY_NONLOCALIZED);
  if (severity == nullptr || std::strcmp(severity, "WARNING") != 0) return;
  const char* text = Pq().PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
  std::fprintf(stderr, "ste: postgresql warning: %s\n", text ? text : "");
}

}  // namespace

std::string PgFloat8Text(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return absl::StrFormat("%.17g", value);
}

// --- PgParams ---

PgParams& PgParams::Add(const char* data, size_t size, int format) {
  values_.push_back(data);
  lengths_.push_back(static_cast<int>(size));
  formats_.push_back(format);
  return *this;
}

PgParams& PgParams::Int(int64_t value) {
  owned_.push_back(absl::StrCat(value));
  return Add(owned_.back().c_str(), owned_.back().size(), 0);
}

PgParams& PgParams::Double(double value) {
  owned_.push_back(PgFloat8Text(value));
  return Add(owned_.back().c_str(), owned_.back().size(), 0);
}

PgParams& PgParams::Bool(bool value) { return Add(value ? "t" : "f", 1, 0); }

PgParams& PgParams::Text(absl::string_view value) {
  if (value.find('\0') != absl::string_view::npos && status_.ok()) {
    status_ = absl::InvalidArgumentError(absl::StrCat(
        "parameter $", values_.size() + 1,
        " contains a NUL byte, which PostgreSQL text cannot hold"));
  }
  owned_.emplace_back(value);
  return Add(owned_.back().c_str(), owned_.back().size(), 0);
}

PgParams& PgParams::Bytes(absl::string_view bytes) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX) && status_.ok()) {
    status_ = absl::InvalidArgumentError(
        absl::StrCat("parameter $", values_.size() + 1, " is ", bytes.size(),
                     " bytes, more than libpq can send"));
  }
  // libpq wants a non-null pointer even for an empty binary value.
  return Add(bytes.data() != nullptr ? bytes.data() : "", bytes.size(), 1);
}

// --- PgResult ---

PgResult::~PgResult() {
  if (result_ != nullptr) Pq().PQclear(result_);
}

PgResult::PgResult(PgResult&& other) noexcept
    : result_(std::exchange(other.result_, nullptr)),
      parse_status_(std::move(other.parse_status_)) {}

int PgResult::rows() const { return Pq().PQntuples(result_); }

bool PgResult::IsNull(int row, int column) const {
  return Pq().PQgetisnull(result_, row, column) != 0;
}

std::string PgResult::Text(int row, int column) const {
  return std::string(Bytes(row, column));
}

absl::string_view PgResult::Bytes(int row, int column) const {
  return absl::string_view(
      Pq().PQgetvalue(result_, row, column),
      static_cast<size_t>(Pq().PQgetlength(result_, row, column)));
}

void PgResult::BadValue(int row, int column, absl::string_view type) const {
  if (!parse_status_.ok()) return;
  const char* name = Pq().PQfname(result_, column);
  parse_status_ = absl::DataLossError(
      absl::StrCat("column \"", name ? name : "?", "\" of row ", row, " is \"",
                   absl::CEscape(Bytes(row, column)), "\", not ", type));
}

int64_t PgResult::Int(int row, int column) const {
  int64_t value = 0;
  if (!absl::SimpleAtoi(Bytes(row, column), &value)) {
    BadValue(row, column, "an integer");
    return 0;
  }
  return value;
}

double PgResult::Double(int row, int column) const {
  double value = 0;
  if (!absl::SimpleAtod(Bytes(row, column), &value)) {
    BadValue(row, column, "a number");
    return 0;
  }
  return value;
}

bool PgResult::Bool(int row, int column) const {
  absl::string_view text = Bytes(row, column);
  if (text == "t") return true;
  if (text != "f") BadValue(row, column, "a boolean");
  return false;
}

// --- PgConn ---

PgConn::PgConn(PGconn* conn) : conn_(conn), name_(DescribeConn(conn)) {}

PgConn::~PgConn() {
  if (conn_ != nullptr) Pq().PQfinish(conn_);
}

absl::StatusOr<std::unique_ptr<PgConn>> PgConn::Connect(const std::string& url,
                                                        int connect_timeout_s,
                                                        int lock_timeout_ms) {
  // Defaults first: the URL (expanded from "dbname") overrides them.
  const std::string timeout = absl::StrCat(connect_timeout_s);
  const char* const keywords[] = {"connect_timeout", "client_encoding",
                                  "fallback_application_name", "dbname",
                                  nullptr};
  const char* const values[] = {timeout.c_str(), "UTF8", "ste", url.c_str(),
                                nullptr};
  if (!LoadedLibPq().ok()) return LoadedLibPq().status();
  PGconn* raw = Pq().PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (raw == nullptr) {
    return absl::ResourceExhaustedError(
        "libpq could not allocate a connection");
  }
  std::unique_ptr<PgConn> conn(new PgConn(raw));
  Pq().PQsetNoticeReceiver(raw, ReceiveNotice, nullptr);
  conn->lock_timeout_ms_ = lock_timeout_ms;
  if (Pq().PQstatus(raw) == CONNECTION_OK) {
    absl::Status set_up = conn->SetUpSession();
    if (!set_up.ok()) return set_up;
    return conn;
  }

  const std::string message = absl::StrCat("cannot connect to ", conn->name(),
                                           ": ", OneLine(Pq().PQerrorMessage(raw)));
  switch (Pq().PQpingParams(keywords, values, 1)) {
    case PQPING_NO_ATTEMPT:  // (the URL is not repeated: it may hold a
                             // password)
      return absl::InvalidArgumentError(
          absl::StrCat("the store url is not a usable libpq connection URI: ",
                       OneLine(Pq().PQerrorMessage(raw))));
    case PQPING_OK:  // the server is up: it refused us
      return absl::FailedPreconditionError(message);
    case PQPING_REJECT:  // starting up, shutting down, in recovery
    case PQPING_NO_RESPONSE:
      break;
  }
  return absl::UnavailableError(message);
}

absl::Status PgConn::SetUpSession() {
  ++sessions_;
  if (lock_timeout_ms_ < 0) return absl::OkStatus();
  return Exec("SELECT set_config('lock_timeout', $1, false)",
              PgParams().Text(absl::StrCat(lock_timeout_ms_, "ms")))
      .status();
}

absl::Status PgConn::EnsureConnected() {
  if (Pq().PQstatus(conn_) == CONNECTION_OK) return absl::OkStatus();
  Pq().PQreset(conn_);
  if (Pq().PQstatus(conn_) == CONNECTION_OK) return SetUpSession();
  return absl::UnavailableError(absl::StrCat(
      "cannot reconnect to ", name_, ": ", OneLine(Pq().PQerrorMessage(conn_))));
}

absl::Status PgConn::Error(PGresult* result, absl::string_view what) const {
  const char* state =
      result ? Pq().PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const char* primary =
      result ? Pq().PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  std::string message = absl::StrCat(name_, ": ", what, ": ");
  if (primary != nullptr) {
    absl::StrAppend(&message, primary);
    if (const char* detail =
            Pq().PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL)) {
      absl::StrAppend(&message, " (", OneLine(detail), ")");
    }
    if (const char* hint = Pq().PQresultErrorField(result, PG_DIAG_MESSAGE_HINT)) {
      absl::StrAppend(&message, " (hint: ", OneLine(hint), ")");
    }
  } else {
    // No server message: libpq's own (a lost connection, out of memory).
    const char* text = result ? Pq().PQresultErrorMessage(result) : "";
    if (text == nullptr || *text == '\0') text = Pq().PQerrorMessage(conn_);
    absl::StrAppend(&message, OneLine(text));
  }
  if (state != nullptr) absl::StrAppend(&message, " [SQLSTATE ", state, "]");

  absl::StatusCode code =
      state != nullptr ? CodeForSqlState(state) : absl::StatusCode::kInternal;
  if (Pq().PQstatus(conn_) != CONNECTION_OK) code = absl::StatusCode::kUnavailable;
  if (state != nullptr && std::strcmp(state, "55P03") == 0 &&
      lock_timeout_ms_ >= 0) {
    absl::StrAppend(&message, " (another session held the lock for more than ",
                    lock_timeout_ms_, " ms)");
  }
  return absl::Status(code, message);
}

absl::StatusOr<PgResult> PgConn::Exec(const char* sql, const PgParams& params,
                                      bool binary_result) {
  if (!params.status().ok()) {
    return absl::Status(params.status().code(),
                        absl::StrCat(name_, ": ", Abbreviated(sql), ": ",
                                     params.status().message()));
  }
  PgResult result(Pq().PQexecParams(
      conn_, sql, params.size(), /*paramTypes=*/nullptr, params.values_.data(),
      params.lengths_.data(), params.formats_.data(), binary_result ? 1 : 0));
  ExecStatusType status = Pq().PQresultStatus(result.raw());  // FATAL for null
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return Error(result.raw(), Abbreviated(sql));
  }
  return result;
}

absl::Status PgConn::ExecScript(const char* sql, absl::string_view what) {
  PgResult result(Pq().PQexec(conn_, sql));
  ExecStatusType status = Pq().PQresultStatus(result.raw());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return Error(result.raw(), what);
  }
  return absl::OkStatus();
}

// --- PgTransaction ---

absl::StatusOr<PgTransaction> PgTransaction::Begin(PgConn& conn,
                                                   const char* begin_sql) {
  absl::StatusOr<PgResult> begun = conn.Exec(begin_sql);
  if (!begun.ok()) return begun.status();
  return PgTransaction(&conn);
}

PgTransaction::~PgTransaction() {
  if (conn_ != nullptr) (void)conn_->Exec("ROLLBACK");
}

PgTransaction::PgTransaction(PgTransaction&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)) {}

absl::Status PgTransaction::Commit() {
  PgConn* conn = std::exchange(conn_, nullptr);
  absl::StatusOr<PgResult> done = conn->Exec("COMMIT");
  if (!done.ok()) return done.status();
  // COMMIT of a transaction that had failed answers "ROLLBACK".
  const char* tag = Pq().PQcmdStatus(done->raw());
  if (tag == nullptr || std::strcmp(tag, "COMMIT") != 0) {
    return absl::AbortedError(absl::StrCat(conn->name(),
                                           ": the transaction was rolled back"
                                           " (COMMIT answered \"",
                                           tag ? tag : "", "\")"));
  }
  return absl::OkStatus();
}

}  // namespace ste
