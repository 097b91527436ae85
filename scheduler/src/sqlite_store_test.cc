// Copyright: the ste authors. The SQLite baseline store, on real database
// files in temp directories.
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
#include "store_test_util.h"

namespace ste {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing_util::FileNames;
using testing_util::ReadWholeFile;
using testing_util::ScopedTempDir;
using testing_util::WriteWholeFile;

constexpr int64_t kAnyMri = std::numeric_limits<int64_t>::max();

// A raw SQLite connection to the store's file, to look behind its back.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
  }
  ~RawDb() { sqlite3_close(db_); }
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

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    db_path_ = dir_.path() + "/.ste/ste.db";
    blobs_dir_ = dir_.path() + "/.ste/blobs";
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<BaselineStore> OpenStore(SqliteStoreOptions options = {}) {
    absl::StatusOr<std::unique_ptr<BaselineStore>> store =
        OpenSqliteStore(db_path_, options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Begin + both blobs + Complete; returns the id.
  int64_t MakeComplete(const std::string& commit, int64_t mri) {
    absl::StatusOr<int64_t> id = store_->Begin(commit, mri);
    EXPECT_TRUE(id.ok()) << id.status();
    EXPECT_TRUE(store_->PutBlob(*id, "index", "index of " + commit).ok());
    EXPECT_TRUE(store_->PutBlob(*id, "inventory", "inv of " + commit).ok());
    absl::Status done = store_->Complete(*id);
    EXPECT_TRUE(done.ok()) << done;
    return *id;
  }

  int64_t LatestId(int64_t max_mri) {
    absl::StatusOr<std::optional<BaselineInfo>> latest =
        store_->LatestCompleted(max_mri);
    EXPECT_TRUE(latest.ok()) << latest.status();
    return latest.ok() && latest->has_value() ? (*latest)->id : -1;
  }

  std::string BlobFileOf(int64_t baseline, const std::string& name) {
    absl::StatusOr<std::string> path = store_->BlobPath(baseline, name);
    EXPECT_TRUE(path.ok()) << path.status();
    return path.ok() ? *path : "";
  }

  ScopedTempDir dir_;
  std::string db_path_;
  std::string blobs_dir_;
  std::unique_ptr<BaselineStore> store_;
};

TEST_F(SqliteStoreTest, EmptyStoreHasNothing) {
  absl::StatusOr<std::optional<BaselineInfo>> latest =
      store_->LatestCompleted(kAnyMri);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_FALSE(latest->has_value());
  absl::StatusOr<std::vector<BaselineInfo>> list = store_->List();
  ASSERT_TRUE(list.ok());
  EXPECT_THAT(*list, IsEmpty());
  absl::StatusOr<int64_t> next = store_->NextMri();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, 1);
}

TEST_F(SqliteStoreTest, LifeCycle) {
  const int64_t before = static_cast<int64_t>(std::time(nullptr));
  absl::StatusOr<int64_t> id = store_->Begin("abc123", 42);
  ASSERT_TRUE(id.ok()) << id.status();

  absl::StatusOr<BaselineInfo> info = store_->Get(*id);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->id, *id);
  EXPECT_EQ(info->commit, "abc123");
  EXPECT_EQ(info->mri, 42);
  EXPECT_EQ(info->state, BaselineState::kBuilding);
  EXPECT_GE(info->created_unix, before);
  EXPECT_EQ(info->completed_unix, 0);
  // Building: not served.
  EXPECT_EQ(LatestId(kAnyMri), -1);

  const std::string index = testing_util::PatternBytes("index", 300000);
  ASSERT_TRUE(store_->PutBlob(*id, "index", index).ok());
  ASSERT_TRUE(store_->PutBlob(*id, "inventory", "inventory bytes").ok());
  ASSERT_TRUE(store_->PutResults(*id, {{"tests/a.py"}}).ok());
  ASSERT_TRUE(store_->Complete(*id).ok());

  info = store_->Get(*id);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, BaselineState::kComplete);
  EXPECT_GE(info->completed_unix, info->created_unix);
  EXPECT_EQ(LatestId(42), *id);
  EXPECT_EQ(LatestId(kAnyMri), *id);
  EXPECT_EQ(LatestId(41), -1);

  EXPECT_EQ(ReadWholeFile(BlobFileOf(*id, "index")), index);
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*id, "inventory")), "inventory bytes");
}

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

TEST_F(SqliteStoreTest, LatestCompletedPicksHighestMriNotAboveMax) {
  int64_t c5 = MakeComplete("c5", 5);
  int64_t c10 = MakeComplete("c10", 10);
  int64_t c20 = MakeComplete("c20", 20);
  // Not served: building, failed.
  ASSERT_TRUE(store_->Begin("b12", 12).ok());
  absl::StatusOr<int64_t> f15 = store_->Begin("f15", 15);
  ASSERT_TRUE(f15.ok());
  ASSERT_TRUE(store_->MarkFailed(*f15, "runner crashed").ok());
  ASSERT_TRUE(store_->Begin("b30", 30).ok());

  EXPECT_EQ(LatestId(4), -1);
  EXPECT_EQ(LatestId(5), c5);
  EXPECT_EQ(LatestId(9), c5);
  EXPECT_EQ(LatestId(10), c10);
  EXPECT_EQ(LatestId(12), c10);
  EXPECT_EQ(LatestId(15), c10);
  EXPECT_EQ(LatestId(19), c10);
  EXPECT_EQ(LatestId(20), c20);
  EXPECT_EQ(LatestId(kAnyMri), c20);

  absl::StatusOr<std::optional<BaselineInfo>> latest =
      store_->LatestCompleted(12);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->commit, "c10");
  EXPECT_EQ((*latest)->mri, 10);
  EXPECT_EQ((*latest)->state, BaselineState::kComplete);
}

TEST_F(SqliteStoreTest, TiesOnMriPickTheHighestId) {
  absl::StatusOr<int64_t> first = store_->Begin("first", 7);
  absl::StatusOr<int64_t> second = store_->Begin("second", 7);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_LT(*first, *second);
  for (int64_t id : {*second, *first}) {  // completed in the other order
    ASSERT_TRUE(store_->PutBlob(id, "index", "i").ok());
    ASSERT_TRUE(store_->PutBlob(id, "inventory", "v").ok());
    ASSERT_TRUE(store_->Complete(id).ok());
  }
  EXPECT_EQ(LatestId(7), *second);
}

TEST_F(SqliteStoreTest, NextMriIsOneAboveTheHighestOfAnyState) {
  MakeComplete("a", 3);
  ASSERT_TRUE(store_->Begin("b", 9).ok());  // building counts too
  absl::StatusOr<int64_t> next = store_->NextMri();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, 10);
}

TEST_F(SqliteStoreTest, BeginRejectsNegativeMri) {
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Begin("c", -1).status()));
}

TEST_F(SqliteStoreTest, BeginWhileAnotherBuildsIsAllowed) {
  absl::StatusOr<int64_t> abandoned = store_->Begin("killed build", 5);
  ASSERT_TRUE(abandoned.ok());
  int64_t next = MakeComplete("next build", 5);
  EXPECT_GT(next, *abandoned);
  EXPECT_EQ(LatestId(kAnyMri), next);
  absl::StatusOr<BaselineInfo> info = store_->Get(*abandoned);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, BaselineState::kBuilding);
}

TEST_F(SqliteStoreTest, ResultsRoundTripSortedAndReplacedByTest) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  std::vector<TestResult> results = {
      {"tests/z_test.py", TestOutcome::kFailed, 3, 1.25, false},
      {"tests/a_test.py", TestOutcome::kPassed, 0, 0.5, true},
      {"tests/m_test.py", TestOutcome::kError, -9, 12.0, false},
  };
  ASSERT_TRUE(store_->PutResults(*id, results).ok());
  // Replace one, add one.
  ASSERT_TRUE(store_
                  ->PutResults(*id, {{"tests/z_test.py", TestOutcome::kPassed,
                                      0, 2.5, true},
                                     {"tests/b_test.py"}})
                  .ok());

  absl::StatusOr<std::vector<TestResult>> got = store_->Results(*id);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 4u);
  EXPECT_EQ((*got)[0].test, "tests/a_test.py");
  EXPECT_EQ((*got)[0].outcome, TestOutcome::kPassed);
  EXPECT_EQ((*got)[0].exit_code, 0);
  EXPECT_DOUBLE_EQ((*got)[0].seconds, 0.5);
  EXPECT_TRUE((*got)[0].opaque);
  EXPECT_EQ((*got)[1].test, "tests/b_test.py");
  EXPECT_EQ((*got)[2].test, "tests/m_test.py");
  EXPECT_EQ((*got)[2].outcome, TestOutcome::kError);
  EXPECT_EQ((*got)[2].exit_code, -9);
  EXPECT_DOUBLE_EQ((*got)[2].seconds, 12.0);
  EXPECT_FALSE((*got)[2].opaque);
  EXPECT_EQ((*got)[3].test, "tests/z_test.py");
  EXPECT_EQ((*got)[3].outcome, TestOutcome::kPassed);  // replaced
  EXPECT_DOUBLE_EQ((*got)[3].seconds, 2.5);
  EXPECT_TRUE((*got)[3].opaque);

  // Another baseline's results are its own.
  absl::StatusOr<int64_t> other = store_->Begin("d", 2);
  ASSERT_TRUE(other.ok());
  got = store_->Results(*other);
  ASSERT_TRUE(got.ok());
  EXPECT_THAT(*got, IsEmpty());
}

TEST_F(SqliteStoreTest, PutResultsRejectsAnUnnamedTest) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(
      absl::IsInvalidArgument(store_->PutResults(*id, {{"tests/a.py"}, {""}})));
  absl::StatusOr<std::vector<TestResult>> got = store_->Results(*id);
  ASSERT_TRUE(got.ok());
  EXPECT_THAT(*got, IsEmpty());  // all or nothing
}

TEST_F(SqliteStoreTest, ListIsNewestFirst) {
  int64_t a = MakeComplete("a", 5);
  absl::StatusOr<int64_t> b = store_->Begin("b", 1);
  ASSERT_TRUE(b.ok());
  int64_t c = MakeComplete("c", 3);
  absl::StatusOr<std::vector<BaselineInfo>> list = store_->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].id, c);
  EXPECT_EQ((*list)[1].id, *b);
  EXPECT_EQ((*list)[1].state, BaselineState::kBuilding);
  EXPECT_EQ((*list)[2].id, a);
  EXPECT_EQ((*list)[2].commit, "a");
}

TEST_F(SqliteStoreTest, UnknownBaselineIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(store_->Get(99).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->Results(99).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->BlobPath(99, "index").status()));
  EXPECT_TRUE(absl::IsNotFound(store_->Complete(99)));
  EXPECT_TRUE(absl::IsNotFound(store_->MarkFailed(99, "x")));
  EXPECT_TRUE(absl::IsNotFound(store_->PutBlob(99, "index", "x")));
  EXPECT_TRUE(absl::IsNotFound(store_->PutResults(99, {{"t"}})));
  EXPECT_THAT(FileNames(blobs_dir_), IsEmpty());
}

TEST_F(SqliteStoreTest, MissingBlobIsNotFound) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  absl::Status status = store_->BlobPath(*id, "index").status();
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
}

TEST_F(SqliteStoreTest, CompleteRefusesABaselineWithoutBothBlobs) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  absl::Status status = store_->Complete(*id);
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("\"index\""));

  ASSERT_TRUE(store_->PutBlob(*id, "index", "i").ok());
  status = store_->Complete(*id);
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("\"inventory\""));

  // Still building, still not served.
  EXPECT_EQ(LatestId(kAnyMri), -1);
  ASSERT_TRUE(store_->PutBlob(*id, "inventory", "v").ok());
  EXPECT_TRUE(store_->Complete(*id).ok());
}

TEST_F(SqliteStoreTest, CompleteRefusesABaselineThatIsNotBuilding) {
  int64_t done = MakeComplete("c", 1);
  absl::Status status = store_->Complete(done);
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("complete"));

  absl::StatusOr<int64_t> failed = store_->Begin("f", 2);
  ASSERT_TRUE(failed.ok());
  ASSERT_TRUE(store_->PutBlob(*failed, "index", "i").ok());
  ASSERT_TRUE(store_->PutBlob(*failed, "inventory", "v").ok());
  ASSERT_TRUE(store_->MarkFailed(*failed, "oops").ok());
  status = store_->Complete(*failed);
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("failed"));
  EXPECT_EQ(LatestId(kAnyMri), done);
}

TEST_F(SqliteStoreTest, CompleteRefusesWhenABlobFileIsGone) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store_->PutBlob(*id, "index", "i").ok());
  ASSERT_TRUE(store_->PutBlob(*id, "inventory", "v").ok());
  std::string inventory = BlobFileOf(*id, "inventory");
  ASSERT_EQ(unlink(inventory.c_str()), 0);
  absl::Status status = store_->Complete(*id);
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(inventory));
  EXPECT_EQ(LatestId(kAnyMri), -1);
}

TEST_F(SqliteStoreTest, MarkFailedKeepsTheReasonAndIsNeverServed) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store_->MarkFailed(*id, "worker lost").ok());
  absl::StatusOr<BaselineInfo> info = store_->Get(*id);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, BaselineState::kFailed);
  EXPECT_EQ(info->failure, "worker lost");
  EXPECT_EQ(LatestId(kAnyMri), -1);
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->MarkFailed(*id, "again")));
}

TEST_F(SqliteStoreTest, AFinishedBaselineTakesNoMoreWrites) {
  int64_t id = MakeComplete("c", 1);
  std::vector<std::string> files = FileNames(blobs_dir_);
  absl::Status status = store_->PutBlob(id, "index", "new");
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  status = store_->PutResults(id, {{"t"}});
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_EQ(FileNames(blobs_dir_), files);  // no stray file either
  EXPECT_EQ(ReadWholeFile(BlobFileOf(id, "index")), "index of c");
}

TEST_F(SqliteStoreTest, PutBlobReplacesAndRemovesTheOldFile) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store_->PutBlob(*id, "index", "first").ok());
  ASSERT_TRUE(store_->PutBlob(*id, "index", "second").ok());
  ASSERT_TRUE(store_->PutBlob(*id, "index", "second").ok());  // same bytes
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*id, "index")), "second");
  EXPECT_THAT(
      FileNames(blobs_dir_),
      ElementsAre(absl::StrCat(*id, "-index-", Xxh3Hex("second"), ".blob")));
}

TEST_F(SqliteStoreTest, PutBlobTakesAnEmptyBlob) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store_->PutBlob(*id, "index", "").ok());
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*id, "index")), "");
}

TEST_F(SqliteStoreTest, PutBlobRejectsNamesThatAreNotPlain) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  for (const char* name : {"", "../x", "a/b", "Index", "x y", ".."}) {
    EXPECT_TRUE(absl::IsInvalidArgument(store_->PutBlob(*id, name, "b")))
        << name;
  }
  EXPECT_THAT(FileNames(blobs_dir_), IsEmpty());
}

TEST_F(SqliteStoreTest, BlobPathDetectsATruncatedFile) {
  int64_t id = MakeComplete("c", 1);
  std::string path = BlobFileOf(id, "index");
  ASSERT_EQ(truncate(path.c_str(), 3), 0);
  absl::Status status = store_->BlobPath(id, "index").status();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("truncated"));
  // The other blob is still fine.
  EXPECT_TRUE(store_->BlobPath(id, "inventory").ok());
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
  std::unique_ptr<BaselineStore> fast = OpenStore(size_only);
  ASSERT_NE(fast, nullptr);
  absl::StatusOr<std::string> unchecked = fast->BlobPath(id, "index");
  EXPECT_TRUE(unchecked.ok()) << unchecked.status();
  ASSERT_EQ(truncate(path.c_str(), 1), 0);
  EXPECT_TRUE(absl::IsDataLoss(fast->BlobPath(id, "index").status()));
}

TEST_F(SqliteStoreTest, BlobPathDetectsADeletedFile) {
  int64_t id = MakeComplete("c", 1);
  std::string path = BlobFileOf(id, "inventory");
  ASSERT_EQ(unlink(path.c_str()), 0);
  absl::Status status = store_->BlobPath(id, "inventory").status();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("missing"));
}

TEST_F(SqliteStoreTest, BlobPathRefusesARowPointingOutsideBlobs) {
  int64_t id = MakeComplete("c", 1);
  RawDb raw(db_path_);
  raw.Exec("UPDATE blobs SET file = '../ste.db' WHERE name = 'index'");
  absl::Status status = store_->BlobPath(id, "index").status();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
}

TEST_F(SqliteStoreTest, ReopenedStoreKeepsEverything) {
  int64_t id = MakeComplete("c", 4);
  ASSERT_TRUE(store_->PutResults(*store_->Begin("d", 5), {{"t"}}).ok());
  store_.reset();
  store_ = OpenStore();
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(LatestId(kAnyMri), id);
  EXPECT_EQ(ReadWholeFile(BlobFileOf(id, "index")), "index of c");
  absl::StatusOr<std::vector<BaselineInfo>> list = store_->List();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 2u);
  RawDb raw(db_path_);
  EXPECT_THAT(raw.Column("SELECT value FROM meta ORDER BY key"),
              ElementsAre(kSqliteStoreMagic, "1"));
}

TEST_F(SqliteStoreTest, DatabaseIsWalWithStesApplicationId) {
  RawDb raw(db_path_);
  EXPECT_THAT(raw.Column("PRAGMA journal_mode"), ElementsAre("wal"));
  EXPECT_THAT(raw.Column("PRAGMA application_id"),
              ElementsAre(absl::StrCat(kSqliteStoreApplicationId)));
}

TEST_F(SqliteStoreTest, TwoConnectionsSeeEachOthersCommits) {
  std::unique_ptr<BaselineStore> other = OpenStore();
  ASSERT_NE(other, nullptr);
  int64_t id = MakeComplete("c", 3);
  absl::StatusOr<std::optional<BaselineInfo>> seen =
      other->LatestCompleted(kAnyMri);
  ASSERT_TRUE(seen.ok() && seen->has_value());
  EXPECT_EQ((*seen)->id, id);
  absl::StatusOr<int64_t> next = other->Begin("d", 4);
  ASSERT_TRUE(next.ok());
  EXPECT_GT(*next, id);
}

TEST_F(SqliteStoreTest, ABusyStoreIsUnavailableAfterTheTimeout) {
  SqliteStoreOptions impatient;
  impatient.busy_timeout_ms = 200;
  std::unique_ptr<BaselineStore> store = OpenStore(impatient);
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
  std::unique_ptr<BaselineStore> store = OpenStore(impatient);
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
  std::unique_ptr<BaselineStore> store = OpenStore(options);
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
    raw.Exec("UPDATE meta SET value = '2' WHERE key = 'schema_version'");
  }
  absl::Status status = OpenStatus();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("schema version 2"));
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
