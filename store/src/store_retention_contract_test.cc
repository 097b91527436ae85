// Copyright: the ste authors. The BaselineStore contract, continued: the
// calls of `ste baseline import|list|gc` (Blobs, ListSummaries,
// CompleteImported, Remove, RemoveStaleFiles) and the writer locks, run
// against both back-ends like store_contract_test.cc (which is near its
// length limit). Test names end in /Sqlite or /Postgres.
#include <unistd.h>

#include <cstdint>
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
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Contains;
using testing_util::Backend;
using testing_util::ScopedTempDir;
using testing_util::StoreBackend;
using testing_util::WriteWholeFile;

using testing_util::kAnyMri;

class StoreRetentionTest : public testing_util::BackendStoreTest {
 protected:
  // A complete baseline with results; its blobs say `commit`.
  int64_t MakeComplete(Store& store, const std::string& commit, int64_t mri,
                       std::vector<TestResult> results = {{"tests/a.sh", TestOutcome::kPassed, 0,
                                                          0.25, false}}) {
    absl::StatusOr<int64_t> id = store.Begin(commit, mri);
    EXPECT_TRUE(id.ok()) << id.status();
    EXPECT_TRUE(store.PutBlob(*id, "index", "index of " + commit).ok());
    EXPECT_TRUE(store.PutBlob(*id, "inventory", "inventory of " + commit).ok());
    EXPECT_TRUE(store.PutResults(*id, results).ok());
    absl::Status done = store.Complete(*id);
    EXPECT_TRUE(done.ok()) << done;
    return *id;
  }

  // A building baseline like MakeComplete's, not completed.
  int64_t MakeBuilding(Store& store, const std::string& commit, int64_t mri,
                       const std::vector<TestResult>& results = {
                           {"tests/a.sh", TestOutcome::kPassed, 0, 0.25, false}}) {
    absl::StatusOr<int64_t> id = store.Begin(commit, mri);
    EXPECT_TRUE(id.ok()) << id.status();
    EXPECT_TRUE(store.PutBlob(*id, "index", "index of " + commit).ok());
    EXPECT_TRUE(store.PutBlob(*id, "inventory", "inventory of " + commit).ok());
    EXPECT_TRUE(store.PutResults(*id, results).ok());
    return *id;
  }

  BaselineSummary SummaryOf(Store& store, int64_t id) {
    absl::StatusOr<std::vector<BaselineSummary>> list = store.ListSummaries();
    EXPECT_TRUE(list.ok()) << list.status();
    if (list.ok()) {
      for (const BaselineSummary& s : *list) {
        if (s.info.id == id) return s;
      }
    }
    ADD_FAILURE() << "no baseline " << id;
    return {};
  }

  bool Remove(Store& store, int64_t id, BaselineState state) {
    absl::StatusOr<bool> removed = store.Remove(id, state);
    EXPECT_TRUE(removed.ok()) << removed.status();
    return removed.ok() && *removed;
  }

  std::string BlobName(int64_t id, const std::string& name, const std::string& bytes) {
    return absl::StrCat(id, "-", name, "-", Xxh3Hex(bytes), ".blob");
  }
};

TEST_P(StoreRetentionTest, BlobsAreTheRecordedSizesAndHashesByName) {
  int64_t id = MakeComplete(*store_, "c1", 1);
  absl::StatusOr<std::vector<BlobInfo>> blobs = store_->Blobs(id);
  ASSERT_TRUE(blobs.ok()) << blobs.status();
  ASSERT_EQ(blobs->size(), 2u);
  EXPECT_EQ((*blobs)[0].name, "index");
  EXPECT_EQ((*blobs)[0].size, static_cast<int64_t>(std::string("index of c1").size()));
  EXPECT_EQ((*blobs)[0].xxh3_128, Xxh3Hex("index of c1"));
  EXPECT_EQ((*blobs)[1].name, "inventory");
  EXPECT_EQ((*blobs)[1].xxh3_128, Xxh3Hex("inventory of c1"));
  EXPECT_TRUE(absl::IsNotFound(store_->Blobs(id + 100).status()));
}

TEST_P(StoreRetentionTest, ListSummariesCountsTestsAndBytesNewestFirst) {
  int64_t a = MakeComplete(*store_, "a", 1,
                           {{"tests/a.sh"}, {"tests/b.sh", TestOutcome::kFailed, 1, 2.0, false}});
  absl::StatusOr<int64_t> b = store_->Begin("b", 2);
  ASSERT_TRUE(b.ok());
  absl::StatusOr<std::vector<BaselineSummary>> list = store_->ListSummaries();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].info.id, *b);
  EXPECT_EQ((*list)[0].info.state, BaselineState::kBuilding);
  EXPECT_EQ((*list)[0].tests, 0);
  EXPECT_EQ((*list)[0].blob_bytes, 0);
  EXPECT_EQ((*list)[1].info.id, a);
  EXPECT_EQ((*list)[1].info.commit, "a");
  EXPECT_EQ((*list)[1].tests, 2);
  EXPECT_EQ((*list)[1].blob_bytes,
            static_cast<int64_t>(std::string("index of a").size() +
                                 std::string("inventory of a").size()));
  EXPECT_FALSE((*list)[1].writer_alive);  // complete: nothing to hold
}

TEST_P(StoreRetentionTest, AWriterIsAliveWhileTheStoreObjectThatBeganItIsOpen) {
  std::unique_ptr<Store> writer = OpenStore();
  int64_t id = MakeBuilding(*writer, "w", 1);
  EXPECT_TRUE(SummaryOf(*store_, id).writer_alive);
  EXPECT_TRUE(SummaryOf(*writer, id).writer_alive);
  writer.reset();  // the process of a killed writer lets go the same way
  EXPECT_FALSE(SummaryOf(*store_, id).writer_alive);

  // Complete and MarkFailed let go too (the object stays open).
  std::unique_ptr<Store> other = OpenStore();
  absl::StatusOr<int64_t> failed = other->Begin("f", 2);
  ASSERT_TRUE(failed.ok());
  ASSERT_TRUE(other->MarkFailed(*failed, "given up").ok());
  int64_t done = MakeComplete(*other, "d", 3);
  EXPECT_FALSE(SummaryOf(*store_, *failed).writer_alive);
  EXPECT_FALSE(SummaryOf(*store_, done).writer_alive);
  EXPECT_THAT(backend_->LocalFiles(), Not(Contains(absl::StrCat("writers/", *failed, ".lock"))));
  EXPECT_THAT(backend_->LocalFiles(), Not(Contains(absl::StrCat("writers/", done, ".lock"))));
}

TEST_P(StoreRetentionTest, RemoveTakesTheRowsThenTheFiles) {
  int64_t old = MakeComplete(*store_, "old", 1);
  int64_t kept = MakeComplete(*store_, "kept", 2);
  // Local copies and hash stamps of both (BlobPath makes them).
  for (int64_t id : {old, kept}) {
    for (const char* name : {"index", "inventory"}) ASSERT_TRUE(store_->BlobPath(id, name).ok());
  }
  std::vector<std::string> kept_rows;
  for (const std::string& row : backend_->Rows()) {
    if (row.find(absl::StrCat(" ", old, " ")) == std::string::npos) kept_rows.push_back(row);
  }
  ASSERT_TRUE(Remove(*store_, old, BaselineState::kComplete));
  EXPECT_TRUE(absl::IsNotFound(store_->Get(old).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->Blobs(old).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->BlobPath(old, "index").status()));
  EXPECT_EQ(backend_->Rows(), kept_rows);
  for (const std::string& file : backend_->LocalFiles()) {
    EXPECT_EQ(file.find(absl::StrCat(old, "-")), std::string::npos) << file;
  }
  EXPECT_EQ(testing_util::LatestCompletedId(*store_, kAnyMri), kept);
  EXPECT_EQ(testing_util::ReadWholeFile(testing_util::BlobFileOf(*store_, kept, "index")),
            "index of kept");
  // Gone is gone: a second Remove finds nothing.
  EXPECT_FALSE(Remove(*store_, old, BaselineState::kComplete));
}

TEST_P(StoreRetentionTest, RemoveChangesNothingWhenTheStateIsNotTheOneExpected) {
  int64_t id = MakeComplete(*store_, "c", 1);
  const std::vector<std::string> rows = backend_->Rows();
  EXPECT_FALSE(Remove(*store_, id, BaselineState::kFailed));
  EXPECT_FALSE(Remove(*store_, id, BaselineState::kBuilding));
  EXPECT_EQ(backend_->Rows(), rows);
  EXPECT_EQ(testing_util::LatestCompletedId(*store_, kAnyMri), id);
}

TEST_P(StoreRetentionTest, RemoveLeavesABuildThatItsWriterStillHolds) {
  std::unique_ptr<Store> writer = OpenStore();
  int64_t id = MakeBuilding(*writer, "w", 1);
  const std::vector<std::string> rows = backend_->Rows();
  EXPECT_FALSE(Remove(*store_, id, BaselineState::kBuilding));
  EXPECT_EQ(backend_->Rows(), rows);
  // The writer can still finish it.
  ASSERT_TRUE(writer->Complete(id).ok());
  EXPECT_EQ(testing_util::LatestCompletedId(*store_, kAnyMri), id);

  int64_t dropped = MakeBuilding(*writer, "dropped", 2);
  writer.reset();
  EXPECT_TRUE(Remove(*store_, dropped, BaselineState::kBuilding));
  EXPECT_TRUE(absl::IsNotFound(store_->Get(dropped).status()));
}

TEST_P(StoreRetentionTest, AWriterMayRemoveItsOwnBuild) {
  int64_t id = MakeBuilding(*store_, "mine", 1);
  EXPECT_TRUE(Remove(*store_, id, BaselineState::kBuilding));
  EXPECT_THAT(backend_->Rows(), IsEmpty());
  EXPECT_THAT(backend_->StoredBlobs(), IsEmpty());
  EXPECT_THAT(backend_->LocalFiles(), Not(Contains(absl::StrCat("writers/", id, ".lock"))));
}

TEST_P(StoreRetentionTest, CompleteImportedKeepsTheTimesGiven) {
  int64_t id = MakeBuilding(*store_, "copied", 7);
  absl::StatusOr<int64_t> done = store_->CompleteImported(id, 1000, 2000);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(*done, id);
  absl::StatusOr<BaselineInfo> info = store_->Get(id);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, BaselineState::kComplete);
  EXPECT_EQ(info->created_unix, 1000);
  EXPECT_EQ(info->completed_unix, 2000);
  EXPECT_EQ(testing_util::LatestCompletedId(*store_, 7), id);
  EXPECT_FALSE(SummaryOf(*store_, id).writer_alive);
  // Like Complete: only once, and only with both blobs.
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->CompleteImported(id, 1, 2).status()));
  absl::StatusOr<int64_t> bare = store_->Begin("bare", 8);
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->CompleteImported(*bare, 1, 2).status()));
}

TEST_P(StoreRetentionTest, CompleteImportedOfAnIdenticalBaselineCompletesNothing) {
  const std::vector<TestResult> results = {{"tests/a.sh", TestOutcome::kPassed, 0, 0.25, false},
                                           {"tests/b.sh", TestOutcome::kFailed, 3, 1.5, true}};
  int64_t first = MakeComplete(*store_, "same", 5, results);
  std::unique_ptr<Store> importer = OpenStore();
  int64_t copy = MakeBuilding(*importer, "same", 5, results);
  const std::vector<std::string> rows = backend_->Rows();
  absl::StatusOr<int64_t> done = importer->CompleteImported(copy, 1, 2);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(*done, first);
  EXPECT_EQ(backend_->Rows(), rows);  // the copy is still building, unchanged
  EXPECT_TRUE(Remove(*importer, copy, BaselineState::kBuilding));

  // Any difference makes it another baseline: a duration, an outcome, the
  // commit, the mri, a blob.
  std::vector<TestResult> slower = results;
  slower[1].seconds = 1.5000000000000002;
  std::vector<TestResult> passed = results;
  passed[1].outcome = TestOutcome::kPassed;
  struct Variant {
    std::string commit;
    int64_t mri;
    std::vector<TestResult> results;
    std::string index;
  };
  for (const Variant& v : {Variant{"same", 5, slower, ""}, Variant{"same", 5, passed, ""},
                           Variant{"other", 5, results, ""}, Variant{"same", 6, results, ""},
                           Variant{"same", 5, results, "another index"}}) {
    int64_t id = MakeBuilding(*importer, v.commit, v.mri, v.results);
    if (!v.index.empty()) {
      ASSERT_TRUE(importer->PutBlob(id, "index", v.index).ok());
    }
    done = importer->CompleteImported(id, 1, 2);
    ASSERT_TRUE(done.ok()) << done.status();
    EXPECT_EQ(*done, id) << v.commit << " " << v.mri;
  }
}

TEST_P(StoreRetentionTest, RemoveStaleFilesTakesOnlyWhatNoBaselineNeeds) {
  int64_t complete = MakeComplete(*store_, "complete", 1);
  int64_t gone = MakeComplete(*store_, "gone", 2);
  int64_t building = MakeBuilding(*store_, "building", 3);
  ASSERT_TRUE(store_->BlobPath(complete, "index").ok());  // a copy and a stamp
  ASSERT_TRUE(store_->BlobPath(gone, "index").ok());
  const std::string dir = backend_->LocalBlobDir();
  const std::string stamps = std::filesystem::path(dir).parent_path().string() + "/verified";
  const std::string gone_index = BlobName(gone, "index", "index of gone");
  ASSERT_TRUE(Remove(*store_, gone, BaselineState::kComplete));
  // What killed writes and crashed removals leave behind.
  std::filesystem::create_directories(stamps);
  const std::string orphan = BlobName(complete, "index", "a killed PutBlob's");
  const std::string building_tmp = absl::StrCat(".tmp-", BlobName(building, "index", "x"), "-1-2-3");
  const std::string building_unnamed = BlobName(building, "inventory", "mid-PutBlob");
  for (const std::string& name :
       {gone_index, absl::StrCat(".tmp-", gone_index, "-99-1-0"), orphan, building_tmp,
        building_unnamed, std::string("README")}) {
    WriteWholeFile(dir + "/" + name, "junk");
  }
  WriteWholeFile(stamps + "/" + gone_index, "v1 stale stamp");
  WriteWholeFile(stamps + "/" + gone_index + ".tmp123", "v1 stale stamp");  // ste 0.1's
  WriteWholeFile(stamps + "/.tmp-" + gone_index + "-Xy12Zq", "v1 stale stamp");  // atomic_file's
  const std::vector<std::string> rows = backend_->Rows();

  absl::StatusOr<std::vector<std::string>> removed = store_->RemoveStaleFiles();
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_THAT(*removed, ElementsAre(dir + "/.tmp-" + gone_index + "-99-1-0",
                                    dir + "/" + orphan, dir + "/" + gone_index,
                                    stamps + "/.tmp-" + gone_index + "-Xy12Zq",
                                    stamps + "/" + gone_index, stamps + "/" + gone_index + ".tmp123"));
  EXPECT_EQ(backend_->Rows(), rows);
  std::vector<std::string> left = testing_util::FileNames(dir);
  EXPECT_THAT(left, Contains(building_tmp));
  EXPECT_THAT(left, Contains(building_unnamed));
  EXPECT_THAT(left, Contains("README"));  // not a blob file's name: never touched
  EXPECT_EQ(testing_util::ReadWholeFile(testing_util::BlobFileOf(*store_, complete, "index")),
            "index of complete");
  // Nothing more the second time.
  removed = store_->RemoveStaleFiles();
  ASSERT_TRUE(removed.ok());
  EXPECT_THAT(*removed, IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreRetentionTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing_util::BackendName);

}  // namespace
}  // namespace ste
