// Copyright: the ste authors. What only the PostgreSQL baseline store has,
// on a real server (tests/support/pg_test_server.h): the local blob cache,
// the query plan of LatestCompleted, the schema as deployed, row locks and
// their timeout, connections that fail or drop, and what Open refuses. The
// contract both stores keep is tested in store_contract_test.cc.
//
// Every test name contains "Postgres": ctest runs them in one process.
#include "postgres_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "blob_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg_test_server.h"
#include "store_backends_test_util.h"
#include "store_test_util.h"

namespace ste {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing_util::FileNames;
using testing_util::PatternBytes;
using testing_util::RawPg;
using testing_util::ReadWholeFile;
using testing_util::ScopedTempDir;
using testing_util::WriteWholeFile;

using testing_util::kAnyMri;

// A fresh database on the shared server, a cache directory in a temp dir.
class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    absl::StatusOr<testing::PgTestServer*> server =
        testing::PgTestServer::Shared();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *server;
    absl::StatusOr<std::string> url = server_->CreateDatabase();
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
    cache_dir_ = dir_.path() + "/pgcache";
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<Store> OpenStore(PostgresStoreOptions options = {}) {
    absl::StatusOr<std::unique_ptr<Store>> store =
        OpenPostgresStore(url_, cache_dir_, options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  int64_t MakeComplete(Store& store, const std::string& commit,
                       int64_t mri, const std::string& index) {
    return testing_util::MakeCompleteBaseline(store, commit, mri, index);
  }

  std::string BlobFileOf(Store& store, int64_t baseline,
                         const std::string& name) {
    return testing_util::BlobFileOf(store, baseline, name);
  }

  ScopedTempDir dir_;
  testing::PgTestServer* server_ = nullptr;
  std::string url_;
  std::string cache_dir_;
  std::unique_ptr<Store> store_;
};

// --- The blob cache. ---

TEST_F(PostgresStoreTest, BlobsAreCopiedIntoTheCacheNamedByHash) {
  const std::string index = PatternBytes("index", 300001);
  int64_t id = MakeComplete(*store_, "c", 1, index);
  // Nothing is fetched before it is asked for.
  EXPECT_THAT(FileNames(cache_dir_), IsEmpty());
  std::string path = BlobFileOf(*store_, id, "index");
  EXPECT_EQ(path, absl::StrCat(cache_dir_, "/", id, "-index-", Xxh3Hex(index),
                               ".blob"));
  EXPECT_TRUE(ReadWholeFile(path) == index);
  BlobFileOf(*store_, id, "inventory");
  EXPECT_THAT(FileNames(cache_dir_),
              ElementsAre(absl::StrCat(id, "-index-", Xxh3Hex(index), ".blob"),
                          absl::StrCat(id, "-inventory-", Xxh3Hex("inv of c"),
                                       ".blob")));  // no temp file left
}

TEST_F(PostgresStoreTest, AValidCachedCopyIsUsedWithoutFetching) {
  int64_t id = MakeComplete(*store_, "c", 1, "index bytes");
  std::string path = BlobFileOf(*store_, id, "index");
  struct stat before;
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  // The server's bytes are gone: only the cached copy can answer.
  RawPg raw(url_);
  raw.Exec("DELETE FROM ste.blob_contents");
  absl::StatusOr<std::string> again = store_->BlobPath(id, "index");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, path);
  struct stat after;
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);  // the same file, not rewritten
  EXPECT_EQ(ReadWholeFile(path), "index bytes");
  // Another store object (another process) shares the cache.
  std::unique_ptr<Store> other = OpenStore();
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(BlobFileOf(*other, id, "index"), path);
}

TEST_F(PostgresStoreTest, ADamagedCachedCopyIsFetchedAgain) {
  const std::string index = PatternBytes("index", 100000);
  int64_t id = MakeComplete(*store_, "c", 1, index);
  std::string path = BlobFileOf(*store_, id, "index");

  ASSERT_EQ(truncate(path.c_str(), 10), 0);
  EXPECT_EQ(BlobFileOf(*store_, id, "index"), path);
  EXPECT_TRUE(ReadWholeFile(path) == index);

  std::string bytes = ReadWholeFile(path);
  bytes[bytes.size() / 2] ^= 0x01;
  WriteWholeFile(path, bytes);
  EXPECT_EQ(BlobFileOf(*store_, id, "index"), path);
  EXPECT_TRUE(ReadWholeFile(path) == index);

  ASSERT_EQ(unlink(path.c_str()), 0);
  EXPECT_EQ(BlobFileOf(*store_, id, "index"), path);
  EXPECT_TRUE(ReadWholeFile(path) == index);
}

TEST_F(PostgresStoreTest, SizeOnlyVerificationTrustsACachedCopyOfTheRightSize) {
  int64_t id = MakeComplete(*store_, "c", 1, "index bytes");
  PostgresStoreOptions size_only;
  size_only.verify_blob_hash = false;
  std::unique_ptr<Store> fast = OpenStore(size_only);
  ASSERT_NE(fast, nullptr);
  std::string path = BlobFileOf(*fast, id, "index");
  WriteWholeFile(path, "INDEX BYTES");  // same size, other bytes
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*fast, id, "index")), "INDEX BYTES");
  // ... but not one of another size, and the default store re-hashes.
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*store_, id, "index")), "index bytes");
  WriteWholeFile(path, "short");
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*fast, id, "index")), "index bytes");
}

TEST_F(PostgresStoreTest, FetchesInSlices) {
  PostgresStoreOptions small_slices;
  small_slices.fetch_chunk_bytes = 1000;
  std::unique_ptr<Store> store = OpenStore(small_slices);
  ASSERT_NE(store, nullptr);
  const std::string index = PatternBytes("sliced", 54321);  // 55 slices
  int64_t id = MakeComplete(*store, "c", 1, index);
  EXPECT_TRUE(ReadWholeFile(BlobFileOf(*store, id, "index")) == index);
  absl::StatusOr<int64_t> empty = store->Begin("e", 2);
  ASSERT_TRUE(empty.ok());
  ASSERT_TRUE(store->PutBlob(*empty, "index", std::string(1000, 'x')).ok());
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*store, *empty, "index")),
            std::string(1000, 'x'));  // exactly one slice
}

TEST_F(PostgresStoreTest, ACacheThatCannotBeWrittenIsAClearError) {
  int64_t id = MakeComplete(*store_, "c", 1, "i");
  WriteWholeFile(cache_dir_, "a file where the cache directory should be");
  absl::Status status = store_->BlobPath(id, "index").status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(cache_dir_));
}

// --- The schema and the plan. ---

TEST_F(PostgresStoreTest, TheSchemaIsDeployPostgresSchemaSqlAndItsMigration) {
  RawPg raw(url_);
  EXPECT_THAT(
      raw.Column("SELECT tablename FROM pg_tables WHERE schemaname = "
                 "'ste' ORDER BY 1"),
      ElementsAre("accepted", "audits", "baselines", "blob_contents", "blobs", "builds", "meta",
                  "results", "selections"));
  // migrate-2.sql: the spec out of line, journal records in order.
  EXPECT_THAT(raw.Column("SELECT attstorage FROM pg_attribute WHERE attrelid "
                         "= 'ste.builds'::regclass AND attname = 'spec'"),
              ElementsAre("e"));
  EXPECT_THAT(raw.Column("SELECT indexdef FROM pg_indexes WHERE schemaname = 'ste' "
                         "AND indexname = 'accepted_in_order'"),
              ElementsAre(HasSubstr("(baseline, seq)")));
  EXPECT_THAT(
      raw.Column("SELECT indexdef FROM pg_indexes WHERE schemaname = 'ste' "
                 "AND indexname = 'baselines_complete_by_mri'"),
      ElementsAre(AllOf(HasSubstr("(mri DESC, id DESC)"),
                        HasSubstr("WHERE (state = 1)"))));
  // Blob bytes: out of line, uncompressed.
  EXPECT_THAT(raw.Column("SELECT attstorage FROM pg_attribute WHERE attrelid "
                         "= 'ste.blob_contents'::regclass AND attname = "
                         "'bytes'"),
              ElementsAre("e"));
  // Test names sort bytewise whatever the database's collation (the test
  // server's is ICU en-US).
  EXPECT_THAT(raw.Column("SELECT collname FROM pg_attribute a JOIN "
                         "pg_collation c ON c.oid = a.attcollation WHERE "
                         "attrelid = 'ste.results'::regclass AND attname = "
                         "'test'"),
              ElementsAre("C"));
  EXPECT_THAT(
      raw.Column("SELECT datlocprovider::text || ':' || daticulocale FROM "
                 "pg_database WHERE datname = current_database()"),
      ElementsAre("i:en-US"));
}

// LatestCompleted is one Index Scan of the partial index, with the bound as
// its Index Cond: no Seq Scan, no Sort, no Filter on state. Measured on
// 2,000 baselines with fresh statistics (no planner switch turned off):
// with a handful of rows a Seq Scan is the right plan, which says nothing.
TEST_F(PostgresStoreTest, LatestCompletedIsOneIndexScan) {
  RawPg raw(url_);
  raw.Exec(
      "INSERT INTO ste.baselines (commit_id, mri, state, created_unix) "
      "SELECT 'c' || i, i / 2, i % 3, 0 FROM generate_series(1, 2000) i");
  raw.Exec("ANALYZE ste.baselines");
  raw.Exec(
      absl::StrCat("PREPARE latest(bigint) AS ", kPostgresLatestCompletedSql));
  for (int64_t max_mri : {int64_t{0}, int64_t{500}, kAnyMri}) {
    std::string plan = absl::StrJoin(
        raw.Column(absl::StrCat("EXPLAIN EXECUTE latest(", max_mri, ")")),
        "\n");
    SCOPED_TRACE(plan);
    EXPECT_THAT(plan, HasSubstr("Index Scan using baselines_complete_by_mri"));
    EXPECT_THAT(plan, HasSubstr("Index Cond: (mri <= "));
    EXPECT_THAT(plan, Not(HasSubstr("Seq Scan")));
    EXPECT_THAT(plan, Not(HasSubstr("Sort")));
    EXPECT_THAT(plan, Not(HasSubstr("Filter")));
  }
  // And the store's own query agrees with a brute-force answer.
  absl::StatusOr<std::optional<BaselineInfo>> latest =
      store_->LatestCompleted(500);
  ASSERT_TRUE(latest.ok() && latest->has_value()) << latest.status();
  EXPECT_THAT(raw.Column("SELECT max(id) FROM ste.baselines WHERE state = 1 "
                         "AND mri = (SELECT max(mri) FROM ste.baselines WHERE "
                         "state = 1 AND mri <= 500)"),
              ElementsAre(absl::StrCat((*latest)->id)));
}

// --- Writes: hooks, locks, limits. ---

TEST_F(PostgresStoreTest, FaultHookSeesEveryPointInOrder) {
  std::vector<std::string> points;
  PostgresStoreOptions options;
  options.fault_hook = [&](const char* point) { points.push_back(point); };
  std::unique_ptr<Store> store = OpenStore(options);
  ASSERT_NE(store, nullptr);
  MakeComplete(*store, "c", 1, "i");
  EXPECT_THAT(points, ElementsAre("blob-before-commit", "blob-before-commit",
                                  "complete-before-commit"));
}

TEST_F(PostgresStoreTest, ABusyBaselineIsUnavailableAfterTheTimeout) {
  PostgresStoreOptions impatient;
  impatient.busy_timeout_ms = 200;
  std::unique_ptr<Store> store = OpenStore(impatient);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<int64_t> id = store->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store->PutBlob(*id, "index", "i").ok());
  ASSERT_TRUE(store->PutBlob(*id, "inventory", "v").ok());

  RawPg other(url_);
  other.Exec("BEGIN");
  other.Exec("SELECT id FROM ste.baselines WHERE id = $1 FOR UPDATE",
             PgParams().Int(*id));
  auto start = std::chrono::steady_clock::now();
  absl::Status status = store->Complete(*id);
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("200 ms"));
  EXPECT_THAT(status.message(), HasSubstr("55P03"));
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  // Readers, and other baselines, are not blocked.
  EXPECT_TRUE(store->LatestCompleted(kAnyMri).ok());
  EXPECT_TRUE(store->BlobPath(*id, "index").ok());
  EXPECT_TRUE(store->Begin("d", 2).ok());
  other.Exec("ROLLBACK");
  EXPECT_TRUE(store->Complete(*id).ok());
}

TEST_F(PostgresStoreTest, APutBlobThatFailsLeavesTheStoredBlobAlone) {
  PostgresStoreOptions impatient;
  impatient.busy_timeout_ms = 100;
  std::unique_ptr<Store> store = OpenStore(impatient);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<int64_t> id = store->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store->PutBlob(*id, "index", "stored").ok());
  {
    RawPg other(url_);
    other.Exec("BEGIN");
    other.Exec("SELECT id FROM ste.baselines WHERE id = $1 FOR UPDATE",
               PgParams().Int(*id));
    EXPECT_TRUE(absl::IsUnavailable(store->PutBlob(*id, "index", "stored")));
    EXPECT_TRUE(absl::IsUnavailable(store->PutBlob(*id, "index", "other")));
    EXPECT_TRUE(absl::IsUnavailable(store->PutResults(*id, {{"t"}})));
    other.Exec("ROLLBACK");
  }
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*store, *id, "index")), "stored");
  absl::StatusOr<std::vector<TestResult>> results = store->Results(*id);
  ASSERT_TRUE(results.ok());
  EXPECT_THAT(*results, IsEmpty());
}

TEST_F(PostgresStoreTest, TextTheServerCannotHoldIsInvalidArgument) {
  absl::Status status = store_->Begin(std::string("a\0b", 3), 1).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("NUL"));
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  status = store_->PutResults(*id, {{std::string("t\0", 2)}});
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  // Not UTF-8: the server refuses it, and says so.
  status = store_->PutResults(*id, {{"tests/\xff.py"}});
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("UTF8"));
  EXPECT_THAT(status.message(), HasSubstr("SQLSTATE 22"));
  absl::StatusOr<std::vector<TestResult>> results = store_->Results(*id);
  ASSERT_TRUE(results.ok());
  EXPECT_THAT(*results, IsEmpty());
}

TEST_F(PostgresStoreTest, ManyResultsInOneCall) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  std::vector<TestResult> results;
  for (int i = 0; i < 20000; ++i) {
    results.push_back({absl::StrCat("tests/t", 100000 + i, ".py"),
                       static_cast<TestOutcome>(i % 3), i, i * 0.5,
                       i % 2 == 0});
  }
  ASSERT_TRUE(store_->PutResults(*id, results).ok());
  absl::StatusOr<std::vector<TestResult>> got = store_->Results(*id);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), results.size());
  for (size_t i = 0; i < results.size(); i += 997) {
    EXPECT_EQ((*got)[i].test, results[i].test);
    EXPECT_EQ((*got)[i].outcome, results[i].outcome);
    EXPECT_EQ((*got)[i].exit_code, results[i].exit_code);
    EXPECT_EQ((*got)[i].seconds, results[i].seconds);
    EXPECT_EQ((*got)[i].opaque, results[i].opaque);
  }
}

// --- Connections. ---

TEST_F(PostgresStoreTest, ADroppedConnectionIsReestablished) {
  PostgresStoreOptions impatient;
  impatient.busy_timeout_ms = 200;
  store_ = OpenStore(impatient);
  ASSERT_NE(store_, nullptr);
  int64_t id = MakeComplete(*store_, "c", 1, "i");
  RawPg admin(url_);
  // Every other session of this database: the store's (and maybe the
  // first store's, closed above but not yet gone).
  EXPECT_THAT(admin.Column("SELECT bool_or(pg_terminate_backend(pid, 5000)) "
                           "FROM pg_stat_activity WHERE datname = "
                           "current_database() AND pid <> pg_backend_pid()"),
              ElementsAre("t"));
  // The call that finds the connection gone says so ...
  absl::Status status = store_->Get(id).status();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  // ... and the next one reconnects.
  absl::StatusOr<std::optional<BaselineInfo>> latest =
      store_->LatestCompleted(kAnyMri);
  ASSERT_TRUE(latest.ok()) << latest.status();
  ASSERT_TRUE(latest->has_value());
  EXPECT_EQ((*latest)->id, id);
  // The new session has the store's settings again (lock_timeout): a
  // locked baseline is Unavailable after 200 ms, not waited for until the
  // other session gives up (3 s).
  absl::StatusOr<int64_t> next = store_->Begin("d", 2);
  ASSERT_TRUE(next.ok());
  RawPg other(url_);
  other.Exec("SET idle_in_transaction_session_timeout = '3s'");
  other.Exec("BEGIN");
  other.Exec("SELECT id FROM ste.baselines WHERE id = $1 FOR UPDATE",
             PgParams().Int(*next));
  auto start = std::chrono::steady_clock::now();
  status = store_->MarkFailed(*next, "x");
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST_F(PostgresStoreTest, OpeningAFreshDatabaseAtOnceCreatesTheSchemaOnce) {
  absl::StatusOr<std::string> url = server_->CreateDatabase();
  ASSERT_TRUE(url.ok()) << url.status();
  constexpr int kOpeners = 4;
  std::vector<absl::Status> statuses(kOpeners);
  std::vector<std::thread> threads;
  for (int i = 0; i < kOpeners; ++i) {
    threads.emplace_back(
        [&, i] { statuses[i] = OpenPostgresStore(*url, cache_dir_).status(); });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& status : statuses)
    EXPECT_TRUE(status.ok()) << status;
  RawPg raw(*url);
  EXPECT_THAT(raw.Column("SELECT value FROM ste.meta ORDER BY key"),
              ElementsAre(kPostgresStoreMagic, "3"));
}

// --- Open: what is not a (current) ste store, or not reachable. ---

class PostgresStoreOpenTest : public PostgresStoreTest {
 protected:
  // A new database with nothing in it.
  std::string FreshUrl() {
    absl::StatusOr<std::string> url = server_->CreateDatabase();
    EXPECT_TRUE(url.ok()) << url.status();
    return url.ok() ? *url : "";
  }
};

TEST_F(PostgresStoreOpenTest, AServerThatDoesNotAnswerIsUnavailable) {
  const std::string nowhere = dir_.path() + "/no-server-here";
  absl::Status status =
      OpenPostgresStore(absl::StrCat("postgresql:///ste?host=", nowhere),
                        cache_dir_)
          .status();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("cannot connect"));
  EXPECT_THAT(status.message(), HasSubstr(nowhere));  // libpq's own words
  // Through Store::Open too, with the other scheme.
  status = Store::Open(absl::StrCat("postgres:///ste?host=", nowhere),
                               dir_.path())
               .status();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
}

TEST_F(PostgresStoreOpenTest, AMissingDatabaseIsFailedPrecondition) {
  absl::Status status =
      OpenPostgresStore(server_->UrlFor("no_such_db"), cache_dir_).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("\"no_such_db\" does not exist"));
}

TEST_F(PostgresStoreOpenTest, ABadUrlIsInvalidArgument) {
  absl::Status status =
      OpenPostgresStore("postgresql:///ste?nonsense=1", cache_dir_).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("nonsense"));
  status = OpenPostgresStore("mysql://x/y", cache_dir_).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
}

TEST_F(PostgresStoreOpenTest, BaselineStoreOpenTakesBothSchemes) {
  ScopedTempDir root;
  for (const char* scheme : {"postgresql://", "postgres://"}) {
    std::string url = FreshUrl();
    url.replace(0, url.find("://") + 3, scheme);
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open(url, root.path());
    ASSERT_TRUE(store.ok()) << url << ": " << store.status();
    int64_t id = MakeComplete(**store, "c", 1, "i");
    std::string path = BlobFileOf(**store, id, "index");
    EXPECT_EQ(path.rfind(root.path() + "/.ste/pgcache/", 0), 0u) << path;
  }
}

TEST_F(PostgresStoreOpenTest, RejectsAnotherApplicationsSchema) {
  std::string url = FreshUrl();
  RawPg raw(url);
  raw.Exec("CREATE SCHEMA ste");
  raw.Exec("CREATE TABLE ste.users (name text)");
  absl::Status status = OpenPostgresStore(url, cache_dir_).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("not an ste baseline store"));
  EXPECT_THAT(raw.Column("SELECT tablename FROM pg_tables WHERE schemaname = "
                         "'ste'"),
              ElementsAre("users"));  // untouched
}

TEST_F(PostgresStoreOpenTest, SharesADatabaseWithOtherApplications) {
  std::string url = FreshUrl();
  RawPg raw(url);
  raw.Exec("CREATE TABLE public.users (name text)");
  std::unique_ptr<Store> store;
  absl::StatusOr<std::unique_ptr<Store>> opened =
      OpenPostgresStore(url, cache_dir_);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_THAT(raw.Column("SELECT tablename FROM pg_tables WHERE schemaname = "
                         "'public'"),
              ElementsAre("users"));
}

TEST_F(PostgresStoreOpenTest, RejectsANewerSchemaVersion) {
  RawPg raw(url_);
  raw.Exec("UPDATE ste.meta SET value = '4' WHERE key = 'schema_version'");
  absl::Status status = OpenPostgresStore(url_, cache_dir_).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("schema version 4"));
  EXPECT_THAT(status.message(), HasSubstr("newer"));
}

TEST_F(PostgresStoreOpenTest, RejectsADamagedMetaTable) {
  RawPg raw(url_);
  raw.Exec("DELETE FROM ste.meta WHERE key = 'magic'");
  absl::Status status = OpenPostgresStore(url_, cache_dir_).status();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  raw.Exec("DROP TABLE ste.meta");
  status = OpenPostgresStore(url_, cache_dir_).status();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("meta"));
}

TEST_F(PostgresStoreOpenTest, ARoleThatMayNotCreateTheSchemaIsToldWhatToDo) {
  std::string url = FreshUrl();
  ASSERT_TRUE(server_->AdminExec("DROP ROLE IF EXISTS ste_reader").ok());
  ASSERT_TRUE(server_->AdminExec("CREATE ROLE ste_reader LOGIN").ok());
  std::string as_reader = url;
  as_reader.replace(as_reader.find("user=ste"), 8, "user=ste_reader");
  absl::Status status = OpenPostgresStore(as_reader, cache_dir_).status();
  EXPECT_TRUE(absl::IsPermissionDenied(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("permission denied"));
  EXPECT_THAT(status.message(), HasSubstr("deploy/postgres/schema.sql"));
}

}  // namespace
}  // namespace ste
