// Copyright: the ste authors. What only the SQLite baseline store has, on
// real database files in temp directories: blob files beside the database,
// WAL, its locks, its fault points, its query plan, and what Open refuses.
// The contract both stores keep is tested in store_contract_test.cc.
#include "sqlite_store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "blob_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store_backends_test_util.h"
#include "store_test_util.h"

namespace ste {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing_util::FileNames;
using testing_util::RawDb;
using testing_util::ReadWholeFile;
using testing_util::ScopedTempDir;
using testing_util::WriteWholeFile;

using testing_util::kAnyMri;

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    db_path_ = dir_.path() + "/.ste/ste.db";
    blobs_dir_ = dir_.path() + "/.ste/blobs";
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<Store> OpenStore(SqliteStoreOptions options = {}) {
    absl::StatusOr<std::unique_ptr<Store>> store =
        OpenSqliteStore(db_path_, options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Begin + both blobs + Complete; returns the id.
  int64_t MakeComplete(const std::string& commit, int64_t mri) {
    return testing_util::MakeCompleteBaseline(*store_, commit, mri);
  }

  int64_t LatestId(int64_t max_mri) {
    return testing_util::LatestCompletedId(*store_, max_mri);
  }

  std::string BlobFileOf(int64_t baseline, const std::string& name) {
    return testing_util::BlobFileOf(*store_, baseline, name);
  }

  ScopedTempDir dir_;
  std::string db_path_;
  std::string blobs_dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(SqliteStoreTest, BlobFilesLiveBesideTheDatabaseNamedByHash) {
  int64_t id = MakeComplete("c", 1);
  std::string path = BlobFileOf(id, "index");
  EXPECT_EQ(path, absl::StrCat(blobs_dir_, "/", id, "-index-",
                               Xxh3Hex("index of c"), ".blob"));
  EXPECT_THAT(
      FileNames(blobs_dir_),
      ElementsAre(
          absl::StrCat(id, "-index-", Xxh3Hex("index of c"), ".blob"),
          absl::StrCat(id, "-inventory-", Xxh3Hex("inv of c"), ".blob")));
  // The recorded hash is the canonical XXH3-128 `xxh128sum` prints.
  EXPECT_EQ(Xxh3Hex(""), "99aa06d3014798d86001c324468d497f");
}

TEST_F(SqliteStoreTest, BlobPathDetectsAModifiedByte) {
  int64_t id = MakeComplete("c", 1);
  std::string path = BlobFileOf(id, "index");
  std::string bytes = ReadWholeFile(path);
  bytes[bytes.size() / 2] ^= 0x01;
  WriteWholeFile(path, bytes);
  absl::Status status = store_->BlobPath(id, "index").status();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("XXH3-128"));

  // With hash verification off, only the size is checked.
  SqliteStoreOptions size_only;
  size_only.verify_blob_hash = false;
  std::unique_ptr<Store> fast = OpenStore(size_only);
  ASSERT_NE(fast, nullptr);
  absl::StatusOr<std::string> unchecked = fast->BlobPath(id, "index");
  EXPECT_TRUE(unchecked.ok()) << unchecked.status();
  ASSERT_EQ(truncate(path.c_str(), 1), 0);
  EXPECT_TRUE(absl::IsDataLoss(fast->BlobPath(id, "index").status()));
}

TEST_F(SqliteStoreTest, BlobPathRefusesARowPointingOutsideBlobs) {
  int64_t id = MakeComplete("c", 1);
  RawDb raw(db_path_);
  raw.Exec("UPDATE blobs SET file = '../ste.db' WHERE name = 'index'");
  absl::Status status = store_->BlobPath(id, "index").status();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
}

TEST_F(SqliteStoreTest, DatabaseIsWalWithStesApplicationId) {
  RawDb raw(db_path_);
  EXPECT_THAT(raw.Column("PRAGMA journal_mode"), ElementsAre("wal"));
  EXPECT_THAT(raw.Column("PRAGMA application_id"),
              ElementsAre(absl::StrCat(kSqliteStoreApplicationId)));
}

// A store whose disk is full is read with its WAL index in memory
// (Store::OpenForReading, on under 1 MiB free): no -shm file, the
// committed frames still in the WAL are seen, and closing it neither
// checkpoints nor deletes the WAL. A copy of the files while the writer is
// open (db and WAL, no -shm) is what such a reader finds after a crash.
TEST_F(SqliteStoreTest, APrivateIndexReaderSeesTheWalWithoutAShmFile) {
  int64_t first = MakeComplete("c1", 1);
  int64_t second = MakeComplete("c2", 2);
  const std::string wal = ReadWholeFile(db_path_ + "-wal");
  ASSERT_FALSE(wal.empty()) << "the writer checkpointed: nothing to read from the WAL";
  ScopedTempDir copy;
  const std::string copy_db = copy.path() + "/ste.db";
  WriteWholeFile(copy_db, ReadWholeFile(db_path_));
  WriteWholeFile(copy_db + "-wal", wal);
  {
    SqliteStoreOptions frozen;
    frozen.open_mode = SqliteDb::Mode::kImmutable;  // the db file alone
    absl::StatusOr<std::unique_ptr<Store>> old = OpenSqliteStore(copy_db, frozen);
    if (old.ok()) {
      EXPECT_NE(testing_util::LatestCompletedId(**old, kAnyMri), second);
    }
  }
  {
    SqliteStoreOptions options;
    options.open_mode = SqliteDb::Mode::kPrivateIndex;
    absl::StatusOr<std::unique_ptr<Store>> reader = OpenSqliteStore(copy_db, options);
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_EQ(testing_util::LatestCompletedId(**reader, kAnyMri), second);
    EXPECT_EQ(testing_util::LatestCompletedId(**reader, 1), first);
    EXPECT_FALSE((*reader)->Begin("c3", 3).ok());  // read only
  }
  EXPECT_THAT(FileNames(copy.path()), ElementsAre("ste.db", "ste.db-wal"));
  EXPECT_EQ(ReadWholeFile(copy_db + "-wal"), wal);
}

TEST_F(SqliteStoreTest, ABusyStoreIsUnavailableAfterTheTimeout) {
  SqliteStoreOptions impatient;
  impatient.busy_timeout_ms = 200;
  std::unique_ptr<Store> store = OpenStore(impatient);
  ASSERT_NE(store, nullptr);
  RawDb writer(db_path_);
  writer.Exec("BEGIN IMMEDIATE");
  auto start = std::chrono::steady_clock::now();
  absl::Status status = store->Begin("c", 1).status();
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("200 ms"));
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  // Readers are not blocked by a writer (WAL).
  EXPECT_TRUE(store->LatestCompleted(kAnyMri).ok());
  writer.Exec("ROLLBACK");
  EXPECT_TRUE(store->Begin("c", 1).ok());
}

TEST_F(SqliteStoreTest, APutBlobThatFailsLeavesTheStoredBlobAlone) {
  SqliteStoreOptions impatient;
  impatient.busy_timeout_ms = 100;
  std::unique_ptr<Store> store = OpenStore(impatient);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<int64_t> id = store->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store->PutBlob(*id, "index", "stored").ok());
  std::vector<std::string> files = FileNames(blobs_dir_);
  {
    RawDb writer(db_path_);
    writer.Exec("BEGIN IMMEDIATE");
    // The same bytes (the same file name) and other bytes: both fail for
    // the lock, neither removes nor replaces what the row names.
    EXPECT_TRUE(absl::IsUnavailable(store->PutBlob(*id, "index", "stored")));
    EXPECT_TRUE(absl::IsUnavailable(store->PutBlob(*id, "index", "other")));
    writer.Exec("ROLLBACK");
  }
  EXPECT_EQ(FileNames(blobs_dir_), files);
  absl::StatusOr<std::string> path = store->BlobPath(*id, "index");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(ReadWholeFile(*path), "stored");
}

TEST_F(SqliteStoreTest, FaultHookSeesEveryPointInOrder) {
  std::vector<std::string> points;
  SqliteStoreOptions options;
  options.fault_hook = [&](const char* point) { points.push_back(point); };
  std::unique_ptr<Store> store = OpenStore(options);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<int64_t> id = store->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store->PutBlob(*id, "index", std::string(3 << 20, 'x')).ok());
  ASSERT_TRUE(store->PutBlob(*id, "inventory", "v").ok());
  ASSERT_TRUE(store->Complete(*id).ok());
  EXPECT_THAT(points, ElementsAre("blob-half-written", "blob-renamed",
                                  "blob-half-written", "blob-renamed",
                                  "complete-before-commit"));
}

// LatestCompleted must be one search of the partial index: no scan of the
// baselines table, no sort.
TEST_F(SqliteStoreTest, LatestCompletedIsOneIndexedSearch) {
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<int64_t> id = store_->Begin("c", i % 17);
    ASSERT_TRUE(id.ok());
    if (i % 3 == 0) {
      ASSERT_TRUE(store_->PutBlob(*id, "index", "i").ok());
      ASSERT_TRUE(store_->PutBlob(*id, "inventory", "v").ok());
      ASSERT_TRUE(store_->Complete(*id).ok());
    }
  }
  RawDb raw(db_path_);
  for (bool analyzed : {false, true}) {
    if (analyzed) raw.Exec("ANALYZE");
    std::vector<std::string> plan =
        raw.Column(absl::StrCat("EXPLAIN QUERY PLAN ", kLatestCompletedSql), 3);
    std::string text;
    for (const std::string& line : plan) text += line + "\n";
    EXPECT_THAT(text, HasSubstr("SEARCH baselines USING INDEX "
                                "baselines_complete_by_mri (mri<?)"))
        << text;
    EXPECT_THAT(text, Not(HasSubstr("SCAN"))) << text;
    EXPECT_THAT(text, Not(HasSubstr("TEMP B-TREE"))) << text;
  }
}

// --- Open: what is not a (current) ste store is refused, clearly. ---

class SqliteStoreOpenTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = dir_.path() + "/ste.db"; }
  absl::Status OpenStatus() { return OpenSqliteStore(path_).status(); }
  ScopedTempDir dir_;
  std::string path_;
};

TEST_F(SqliteStoreOpenTest, CreatesTheDirectoryTheFileAndBlobs) {
  path_ = dir_.path() + "/a/b/.ste/ste.db";
  ASSERT_TRUE(OpenStatus().ok());
  EXPECT_EQ(access(path_.c_str(), F_OK), 0);
  EXPECT_EQ(access((dir_.path() + "/a/b/.ste/blobs").c_str(), F_OK), 0);
  ASSERT_TRUE(OpenStatus().ok());  // and opens again
}

TEST_F(SqliteStoreOpenTest, RejectsAFileThatIsNotSqlite) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "this is not a database\n";
  WriteWholeFile(path_, text);
  absl::Status status = OpenStatus();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(path_));
  EXPECT_THAT(status.message(), HasSubstr("not an SQLite database"));
  EXPECT_EQ(ReadWholeFile(path_), text);  // untouched
}

TEST_F(SqliteStoreOpenTest, RejectsAnotherApplicationsDatabase) {
  {
    RawDb raw(path_);
    raw.Exec("CREATE TABLE users(name TEXT); INSERT INTO users VALUES('x')");
  }
  absl::Status status = OpenStatus();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(path_));
  EXPECT_THAT(status.message(), HasSubstr("not an ste baseline store"));
  RawDb raw(path_);
  EXPECT_THAT(raw.Column("SELECT name FROM sqlite_master"),
              ElementsAre("users"));  // untouched
}

TEST_F(SqliteStoreOpenTest, RejectsAForeignApplicationId) {
  {
    RawDb raw(path_);
    raw.Exec("PRAGMA application_id = 1234");
  }
  absl::Status status = OpenStatus();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("0x000004d2"));
}

TEST_F(SqliteStoreOpenTest, RejectsANewerSchemaVersion) {
  ASSERT_TRUE(OpenStatus().ok());
  {
    RawDb raw(path_);
    raw.Exec("UPDATE meta SET value = '4' WHERE key = 'schema_version'");
  }
  absl::Status status = OpenStatus();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("schema version 4"));
  EXPECT_THAT(status.message(), HasSubstr("newer"));
}

TEST_F(SqliteStoreOpenTest, RejectsADamagedMetaTable) {
  ASSERT_TRUE(OpenStatus().ok());
  {
    RawDb raw(path_);
    raw.Exec("DELETE FROM meta WHERE key = 'magic'");
  }
  absl::Status status = OpenStatus();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  {
    RawDb raw(path_);
    raw.Exec("DROP TABLE meta");
  }
  status = OpenStatus();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("meta"));
}

TEST_F(SqliteStoreOpenTest, RejectsADirectory) {
  ASSERT_EQ(mkdir(path_.c_str(), 0755), 0);
  absl::Status status = OpenStatus();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
}

}  // namespace
}  // namespace ste
