// Copyright: the ste authors. The two store back-ends the contract tests
// (store_contract_test.cc) run against, and raw access to each, to look
// and to damage behind the store's back.
//
//   Backend::kSqlite    a store file in the test's temp directory
//   Backend::kPostgres  a fresh database on the test binary's PostgreSQL
//                       server (tests/support/pg_test_server.h), blob
//                       copies cached in the test's temp directory
//
// Header-only: scheduler/CMakeLists.txt compiles every non-test .cc of
// src/ into the library.
#ifndef STE_SCHEDULER_STORE_BACKENDS_TEST_UTIL_H_
#define STE_SCHEDULER_STORE_BACKENDS_TEST_UTIL_H_

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "blob_file.h"
#include "gtest/gtest.h"
#include "pg_conn.h"
#include "pg_test_server.h"
#include "postgres_store.h"
#include "sqlite_store.h"
#include "store_test_util.h"

namespace ste {
namespace testing_util {

// A raw SQLite connection to the store's file, to look behind its back.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
  }
  ~RawDb() { sqlite3_close(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;
  void Exec(const std::string& sql) {
    char* error = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    EXPECT_EQ(rc, SQLITE_OK) << sql << ": " << (error ? error : "");
    sqlite3_free(error);
  }
  // The first column of every row, as text.
  std::vector<std::string> Column(const std::string& sql, int column = 0) {
    std::vector<std::string> values;
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db_);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(stmt, column);
      values.push_back(text ? reinterpret_cast<const char*>(text) : "");
    }
    sqlite3_finalize(stmt);
    return values;
  }

 private:
  sqlite3* db_ = nullptr;
};

// A raw connection to a PostgreSQL store's database.
class RawPg {
 public:
  explicit RawPg(const std::string& url) {
    absl::StatusOr<std::unique_ptr<PgConn>> conn = PgConn::Connect(url, 10);
    EXPECT_TRUE(conn.ok()) << conn.status();
    if (conn.ok()) conn_ = std::move(*conn);
  }
  // Runs `sql`, expecting success.
  void Exec(const std::string& sql, const PgParams& params = {}) {
    ASSERT_NE(conn_, nullptr);
    absl::StatusOr<PgResult> result = conn_->Exec(sql.c_str(), params);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.status();
  }
  // Runs `sql`; its status.
  absl::Status Try(const std::string& sql, const PgParams& params = {}) {
    if (conn_ == nullptr) return absl::InternalError("not connected");
    return conn_->Exec(sql.c_str(), params).status();
  }
  // Column `column` of every row, as text.
  std::vector<std::string> Column(const std::string& sql,
                                  const PgParams& params = {}, int column = 0) {
    std::vector<std::string> values;
    if (conn_ == nullptr) return values;
    absl::StatusOr<PgResult> result = conn_->Exec(sql.c_str(), params);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.status();
    if (!result.ok()) return values;
    for (int i = 0; i < result->rows(); ++i) {
      values.push_back(result->Text(i, column));
    }
    return values;
  }

 private:
  std::unique_ptr<PgConn> conn_;
};

enum class Backend { kSqlite, kPostgres };

inline std::ostream& operator<<(std::ostream& os, Backend backend) {
  return os << (backend == Backend::kSqlite ? "Sqlite" : "Postgres");
}

// The test name suffix: ctest runs "*Postgres*" tests apart (one server).
inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

class StoreBackend {
 public:
  virtual ~StoreBackend() = default;

  // Opens this test's store (the same store on every call).
  virtual absl::StatusOr<std::unique_ptr<Store>> Open(
      bool verify_blob_hash = true) = 0;

  // Every stored copy of a blob as "<baseline>-<name>-<xxh3>.blob", and
  // anything else blob writes left behind. SQLite: the files in blobs/
  // (temp files included); PostgreSQL: the rows of ste.blob_contents.
  virtual std::vector<std::string> StoredBlobs() = 0;

  // Damage the store's own copy of a blob behind its back (SQLite: the
  // file; PostgreSQL: the row, and local copies are dropped, as on a
  // machine that never fetched it), after checking that BlobPath finds it
  // intact. Each returns what the store's DataLoss message must name.
  virtual std::string TruncateBlob(Store& store, int64_t baseline,
                                   const std::string& name, size_t size) = 0;
  virtual std::string FlipBlobByte(Store& store, int64_t baseline,
                                   const std::string& name) = 0;
  virtual std::string DeleteBlob(Store& store, int64_t baseline,
                                 const std::string& name) = 0;

  // The meta table's values, ordered by key: magic, schema_version.
  virtual std::vector<std::string> MetaValues() = 0;

  // The local directory of blob files: SQLite's blobs/, PostgreSQL's cache.
  virtual std::string LocalBlobDir() const = 0;

  // Every row of the version-2 tables, sorted:
  //   "build <baseline> <owner> <generation>"
  //   "accepted <baseline> <seq> <test> <record bytes>"
  virtual std::vector<std::string> BuildRows() = 0;
  // Turns the store back into the version-1 store a ste from before
  // resumable builds left (its version-2 tables dropped, schema_version 1).
  virtual void Downgrade() = 0;

  // Every row of the baselines, results and blobs tables (PostgreSQL: and
  // of blob_contents, as its size), sorted, times left out:
  //   "baseline <id> <commit> mri=<mri> <state> <failure>"
  //   "result <baseline> <test> <outcome> <exit> <seconds> <opaque 0|1>"
  //   "blob <baseline> <name> <size> <xxh3>"   (SQLite: and its file)
  //   "bytes <baseline> <name> <octet_length>" (PostgreSQL)
  virtual std::vector<std::string> Rows() = 0;

  // Every file under the test directory's .ste/ (the SQLite store's
  // database, blobs, hash stamps and writer locks; PostgreSQL's cache and
  // stamps), relative to it, sorted; ste.db-wal and ste.db-shm (there
  // while a connection is open) left out.
  std::vector<std::string> LocalFiles() const {
    std::vector<std::string> files;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(ste_dir_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory()) continue;
      std::string rel = std::filesystem::relative(it->path(), ste_dir_).string();
      if (rel == "ste.db-wal" || rel == "ste.db-shm") continue;
      files.push_back(rel);
    }
    std::sort(files.begin(), files.end());
    return files;
  }

 protected:
  explicit StoreBackend(std::string ste_dir) : ste_dir_(std::move(ste_dir)) {}
  std::string ste_dir_;  // <test dir>/.ste
};

class SqliteBackend final : public StoreBackend {
 public:
  explicit SqliteBackend(const std::string& dir)
      : StoreBackend(dir + "/.ste"),
        db_path_(dir + "/.ste/ste.db"),
        blobs_dir_(dir + "/.ste/blobs") {}

  const std::string& db_path() const { return db_path_; }
  std::string LocalBlobDir() const override { return blobs_dir_; }

  absl::StatusOr<std::unique_ptr<Store>> Open(
      bool verify_blob_hash) override {
    SqliteStoreOptions options;
    options.verify_blob_hash = verify_blob_hash;
    return OpenSqliteStore(db_path_, options);
  }
  std::vector<std::string> StoredBlobs() override {
    return FileNames(blobs_dir_);
  }
  std::string TruncateBlob(Store& store, int64_t baseline,
                           const std::string& name, size_t size) override {
    std::string path = PathOf(store, baseline, name);
    EXPECT_EQ(truncate(path.c_str(), static_cast<off_t>(size)), 0) << path;
    return path;
  }
  std::string FlipBlobByte(Store& store, int64_t baseline,
                           const std::string& name) override {
    std::string path = PathOf(store, baseline, name);
    std::string bytes = ReadWholeFile(path);
    EXPECT_FALSE(bytes.empty());
    if (!bytes.empty()) bytes[bytes.size() / 2] ^= 0x01;
    WriteWholeFile(path, bytes);
    return path;
  }
  std::string DeleteBlob(Store& store, int64_t baseline,
                         const std::string& name) override {
    std::string path = PathOf(store, baseline, name);
    EXPECT_EQ(unlink(path.c_str()), 0) << path;
    return path;
  }
  std::vector<std::string> MetaValues() override {
    RawDb raw(db_path_);
    return raw.Column("SELECT value FROM meta ORDER BY key");
  }
  std::vector<std::string> BuildRows() override {
    RawDb raw(db_path_);
    std::vector<std::string> rows = raw.Column(
        "SELECT 'build ' || baseline || ' ' || owner || ' ' || generation FROM builds");
    for (std::string& row : raw.Column("SELECT 'accepted ' || baseline || ' ' || seq || ' ' || "
                                       "test || ' ' || length(record) FROM accepted")) {
      rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }
  void Downgrade() override {
    RawDb raw(db_path_);
    raw.Exec("DROP INDEX accepted_in_order; DROP TABLE accepted; DROP TABLE builds;"
             "DROP TABLE selections; DROP TABLE audits;"
             "UPDATE meta SET value = '1' WHERE key = 'schema_version'");
  }
  std::vector<std::string> Rows() override {
    RawDb raw(db_path_);
    std::vector<std::string> rows;
    for (const char* sql :
         {"SELECT 'baseline ' || id || ' ' || commit_id || ' mri=' || mri || ' ' || CASE state "
          "WHEN 0 THEN 'building' WHEN 1 THEN 'complete' ELSE 'failed' END || ' ' || failure "
          "FROM baselines",
          "SELECT 'result ' || baseline || ' ' || test || ' ' || outcome || ' ' || exit_code || "
          "' ' || seconds || ' ' || opaque FROM results",
          "SELECT 'blob ' || baseline || ' ' || name || ' ' || size || ' ' || xxh3_128 || ' ' || "
          "file FROM blobs"}) {
      for (std::string& row : raw.Column(sql)) rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

 private:
  // The blob's file, where BlobPath says it is (and it must say so).
  std::string PathOf(Store& store, int64_t baseline,
                     const std::string& name) {
    absl::StatusOr<std::string> path = store.BlobPath(baseline, name);
    EXPECT_TRUE(path.ok()) << path.status();
    return path.ok() ? *path : "";
  }

  std::string db_path_;
  std::string blobs_dir_;
};

class PostgresBackend final : public StoreBackend {
 public:
  PostgresBackend(std::string url, std::string cache_dir)
      : StoreBackend(std::filesystem::path(cache_dir).parent_path().string()),
        url_(std::move(url)),
        cache_dir_(std::move(cache_dir)) {}

  const std::string& url() const { return url_; }
  const std::string& cache_dir() const { return cache_dir_; }
  std::string LocalBlobDir() const override { return cache_dir_; }

  absl::StatusOr<std::unique_ptr<Store>> Open(
      bool verify_blob_hash) override {
    PostgresStoreOptions options;
    options.verify_blob_hash = verify_blob_hash;
    return OpenPostgresStore(url_, cache_dir_, options);
  }
  std::vector<std::string> StoredBlobs() override {
    RawPg raw(url_);
    return raw.Column(
        "SELECT c.baseline || '-' || c.name || '-' || "
        "coalesce(b.xxh3_128, '(no row in ste.blobs)') || '.blob' "
        "FROM ste.blob_contents c LEFT JOIN ste.blobs b USING (baseline, "
        "name) ORDER BY 1");
  }
  std::string TruncateBlob(Store& store, int64_t baseline,
                           const std::string& name, size_t size) override {
    return Damage(store, baseline, name,
                  absl::StrCat("UPDATE ste.blob_contents SET bytes = "
                               "substring(bytes FROM 1 FOR ",
                               size, ")"));
  }
  std::string FlipBlobByte(Store& store, int64_t baseline,
                           const std::string& name) override {
    return Damage(store, baseline, name,
                  "UPDATE ste.blob_contents SET bytes = set_byte(bytes, "
                  "length(bytes) / 2, get_byte(bytes, length(bytes) / 2) # 1)");
  }
  std::string DeleteBlob(Store& store, int64_t baseline,
                         const std::string& name) override {
    return Damage(store, baseline, name, "DELETE FROM ste.blob_contents");
  }
  std::vector<std::string> MetaValues() override {
    RawPg raw(url_);
    return raw.Column("SELECT value FROM ste.meta ORDER BY key");
  }
  std::vector<std::string> BuildRows() override {
    RawPg raw(url_);
    std::vector<std::string> rows = raw.Column(
        "SELECT 'build ' || baseline || ' ' || owner || ' ' || generation FROM ste.builds");
    for (std::string& row : raw.Column("SELECT 'accepted ' || baseline || ' ' || seq || ' ' || "
                                       "test || ' ' || octet_length(record) FROM ste.accepted")) {
      rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }
  void Downgrade() override {
    RawPg raw(url_);
    raw.Exec("DROP TABLE ste.accepted");
    raw.Exec("DROP TABLE ste.builds");
    raw.Exec("DROP TABLE ste.selections");
    raw.Exec("DROP TABLE ste.audits");
    raw.Exec("UPDATE ste.meta SET value = '1' WHERE key = 'schema_version'");
  }
  std::vector<std::string> Rows() override {
    RawPg raw(url_);
    std::vector<std::string> rows;
    for (const char* sql :
         {"SELECT 'baseline ' || id || ' ' || commit_id || ' mri=' || mri || ' ' || CASE state "
          "WHEN 0 THEN 'building' WHEN 1 THEN 'complete' ELSE 'failed' END || ' ' || failure "
          "FROM ste.baselines",
          "SELECT 'result ' || baseline || ' ' || test || ' ' || outcome || ' ' || exit_code || "
          "' ' || seconds || ' ' || CASE WHEN opaque THEN 1 ELSE 0 END FROM ste.results",
          "SELECT 'blob ' || baseline || ' ' || name || ' ' || size || ' ' || xxh3_128 "
          "FROM ste.blobs",
          "SELECT 'bytes ' || baseline || ' ' || name || ' ' || octet_length(bytes) "
          "FROM ste.blob_contents"}) {
      for (std::string& row : raw.Column(sql)) rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

 private:
  // Fetches the blob (it must be fine), then runs `sql` + WHERE on its
  // row and drops the local copies.
  std::string Damage(Store& store, int64_t baseline,
                     const std::string& name, const std::string& sql) {
    absl::StatusOr<std::string> fetched = store.BlobPath(baseline, name);
    EXPECT_TRUE(fetched.ok()) << fetched.status();
    RawPg raw(url_);
    raw.Exec(sql + " WHERE baseline = $1 AND name = $2",
             PgParams().Int(baseline).Text(name));
    std::error_code ec;
    std::filesystem::remove_all(cache_dir_, ec);
    return absl::StrCat("blob \"", name, "\" of baseline ", baseline);
  }

  std::string url_;
  std::string cache_dir_;
};

// The back-end of one test, with its store in (or its cache under) `dir`.
inline absl::StatusOr<std::unique_ptr<StoreBackend>> MakeBackend(
    Backend backend, const std::string& dir) {
  if (backend == Backend::kSqlite) {
    return std::unique_ptr<StoreBackend>(new SqliteBackend(dir));
  }
  absl::StatusOr<testing::PgTestServer*> server =
      testing::PgTestServer::Shared();
  if (!server.ok()) return server.status();
  absl::StatusOr<std::string> url = (*server)->CreateDatabase();
  if (!url.ok()) return url.status();
  return std::unique_ptr<StoreBackend>(
      new PostgresBackend(*url, dir + "/.ste/pgcache"));
}

// The fixture of a test run on each back-end (its parameter): store_ is
// open on a fresh store in dir_; OpenStore opens another connection to it.
class BackendStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    absl::StatusOr<std::unique_ptr<StoreBackend>> backend = MakeBackend(GetParam(), dir_.path());
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = *std::move(backend);
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<Store> OpenStore() {
    absl::StatusOr<std::unique_ptr<Store>> store = backend_->Open();
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  ScopedTempDir dir_;
  std::unique_ptr<StoreBackend> backend_;
  std::unique_ptr<Store> store_;
};

}  // namespace testing_util
}  // namespace ste

#endif  // STE_SCHEDULER_STORE_BACKENDS_TEST_UTIL_H_
