// Copyright: the ste authors. `ste baseline gc`'s rule (PlanGc), carried out
// on both stores (CollectGarbage: every file and row left afterwards,
// against a list written here), and the loader when a removal lands
// between finding a baseline and opening its blobs. Test names of the
// store-backed ones end in /Sqlite or /Postgres.
#include "ste/baseline_retention.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "baseline_images_test_util.h"
#include "blob_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ste/baseline_loader.h"
#include "store_backends_test_util.h"
#include "store_test_util.h"

namespace ste {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing_util::Backend;
using testing_util::ScopedTempDir;
using testing_util::StoreBackend;

constexpr int64_t kNow = 1800000000;
using testing_util::kAnyMri;

BaselineSummary Summary(int64_t id, BaselineState state, int64_t mri, int64_t created = kNow - 60,
                        bool writer = false) {
  BaselineSummary s;
  s.info.id = id;
  s.info.state = state;
  s.info.mri = mri;
  s.info.created_unix = created;
  s.writer_alive = writer;
  return s;
}

std::vector<int64_t> Removed(const std::vector<GcDecision>& plan) {
  std::vector<int64_t> ids;
  for (const GcDecision& d : plan) {
    if (d.remove) ids.push_back(d.baseline.info.id);
  }
  return ids;
}

TEST(PlanGc, KeepsTheNewestCompleteByMriThenId) {
  // Newest by mri, ties by id: 6 (mri 9), 5 (mri 7, id 5), 2 (mri 7, id 2),
  // 4 (mri 3), 1 (mri 1). An import keeps its mri, so 6 is not the newest id.
  std::vector<BaselineSummary> list = {
      Summary(6, BaselineState::kComplete, 9), Summary(5, BaselineState::kComplete, 7),
      Summary(4, BaselineState::kComplete, 3), Summary(2, BaselineState::kComplete, 7),
      Summary(1, BaselineState::kComplete, 1)};
  std::sort(list.begin(), list.end(),
            [](const BaselineSummary& a, const BaselineSummary& b) { return a.info.id > b.info.id; });
  GcOptions keep2;
  keep2.keep = 2;
  EXPECT_THAT(Removed(PlanGc(list, keep2, kNow)), ElementsAre(4, 2, 1));
  GcOptions keep3;
  keep3.keep = 3;
  EXPECT_THAT(Removed(PlanGc(list, keep3, kNow)), ElementsAre(4, 1));
  std::vector<GcDecision> plan = PlanGc(list, keep2, kNow);
  EXPECT_EQ(plan[0].why, "the newest complete baseline");
  EXPECT_EQ(plan[1].why, "complete, one of the newest 2");
  EXPECT_EQ(plan[2].why, "complete, older than the newest 2");
}

TEST(PlanGc, NeverRemovesTheNewestComplete) {
  std::vector<BaselineSummary> list = {Summary(2, BaselineState::kComplete, 2),
                                       Summary(1, BaselineState::kComplete, 1)};
  GcOptions none;
  none.keep = 0;  // counts as 1
  EXPECT_THAT(Removed(PlanGc(list, none, kNow)), ElementsAre(1));
  EXPECT_THAT(Removed(PlanGc({Summary(1, BaselineState::kComplete, 1)}, none, kNow)), IsEmpty());
}

TEST(PlanGc, FailedGoAndBuildsGoOnlyWithoutAWriterAndOldEnough) {
  const int64_t day = 86400;
  BaselineSummary failed = Summary(7, BaselineState::kFailed, 4);
  failed.info.failure = "the record was given up";
  std::vector<BaselineSummary> list = {
      Summary(12, BaselineState::kBuilding, 9, kNow - 30 * day, /*writer=*/true),  // alive
      Summary(11, BaselineState::kBuilding, 9, kNow - day),        // exactly the threshold
      Summary(10, BaselineState::kBuilding, 9, kNow - day + 1),    // a second too young
      Summary(9, BaselineState::kBuilding, 9, kNow - 3 * day),     // abandoned
      Summary(8, BaselineState::kComplete, 1), failed};
  GcOptions options;  // keep 1, 24h
  std::vector<GcDecision> plan = PlanGc(list, options, kNow);
  EXPECT_THAT(Removed(plan), ElementsAre(11, 9, 7));
  EXPECT_EQ(plan[0].why, "building: its writer is alive");
  EXPECT_EQ(plan[2].why,
            "building, nothing holds its writer lock, but only 23h old (abandoned after 24h)");
  EXPECT_EQ(plan[3].why, "abandoned: building for 3d, and nothing holds its writer lock");
  EXPECT_EQ(plan[5].why, "failed: the record was given up");
  options.abandoned_after_seconds = 0;
  EXPECT_THAT(Removed(PlanGc(list, options, kNow)), ElementsAre(11, 10, 9, 7));
}

class StoreGcTest : public testing_util::BackendStoreTest {
 protected:
  // Ages baseline `id` behind the store's back (created_unix = `when`).
  void SetCreated(int64_t id, int64_t when) {
    const std::string sql = absl::StrCat("UPDATE ", GetParam() == Backend::kSqlite ? "" : "ste.",
                                         "baselines SET created_unix = ", when, " WHERE id = ", id);
    if (GetParam() == Backend::kSqlite) {
      testing_util::RawDb(dir_.path() + "/.ste/ste.db").Exec(sql);
    } else {
      testing_util::RawPg(static_cast<testing_util::PostgresBackend&>(*backend_).url()).Exec(sql);
    }
  }
  // Both blobs of `id` fetched twice: local copies (PostgreSQL) and hash
  // stamps (both) exist, as after a few selects.
  void Use(int64_t id) {
    for (int i = 0; i < 2; ++i) {
      for (const char* name : {"index", "inventory"}) {
        absl::StatusOr<std::string> path = store_->BlobPath(id, name);
        ASSERT_TRUE(path.ok()) << path.status();
      }
    }
  }
};

// The brief's case: 3 complete, 1 failed, 1 abandoned; --keep 2.
TEST_P(StoreGcTest, KeepTwoOfFiveLeavesExactlyTheNewestTwoComplete) {
  const bool sqlite = GetParam() == Backend::kSqlite;
  int64_t c1 = testing_util::MakeCompleteBaseline(*store_, "c1", 1);
  int64_t c2 = testing_util::MakeCompleteBaseline(*store_, "c2", 2);
  int64_t c3 = testing_util::MakeCompleteBaseline(*store_, "c3", 3);
  ASSERT_EQ(std::vector<int64_t>({c1, c2, c3}), std::vector<int64_t>({1, 2, 3}));
  absl::StatusOr<int64_t> f = store_->Begin("f", 4);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(store_->PutBlob(*f, "index", "index of f").ok());
  ASSERT_TRUE(store_->MarkFailed(*f, "worker lost").ok());
  int64_t a = 0;
  {
    // A record killed mid-build: its store object (and so its lock) gone,
    // begun two days ago.
    std::unique_ptr<Store> killed = OpenStore();
    absl::StatusOr<int64_t> id = killed->Begin("a", 5);
    ASSERT_TRUE(id.ok());
    a = *id;
    ASSERT_TRUE(killed->PutBlob(a, "index", "index of a").ok());
    ASSERT_TRUE(killed->PutResults(a, {{"tests/a.sh"}}).ok());
  }
  SetCreated(a, std::time(nullptr) - 2 * 86400);
  for (int64_t id : {c1, c2, c3}) Use(id);
  ASSERT_EQ(*f, 4);
  ASSERT_EQ(a, 5);
  // A killed PutBlob's temp file of the failed one, and of the abandoned one.
  const std::string blob_dir = backend_->LocalBlobDir();
  testing_util::WriteWholeFile(
      absl::StrCat(blob_dir, "/.tmp-4-inventory-", Xxh3Hex("x"), ".blob-77-1-0"), "half");
  testing_util::WriteWholeFile(
      absl::StrCat(blob_dir, "/.tmp-5-inventory-", Xxh3Hex("y"), ".blob-78-1-0"), "half");

  GcOptions options;
  options.keep = 2;
  absl::StatusOr<GcReport> report = CollectGarbage(*store_, options, std::time(nullptr));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->status.ok()) << report->status;
  EXPECT_THAT(report->removed, ElementsAre(5, 4, 1));
  EXPECT_THAT(report->kept_after_all, IsEmpty());
  store_.reset();  // SQLite: no -wal/-shm left open

  auto blob = [](int64_t id, const std::string& name, const std::string& commit) {
    const std::string bytes = name == "index" ? "index of " + commit : "inv of " + commit;
    return absl::StrCat(id, "-", name, "-", Xxh3Hex(bytes), ".blob");
  };
  const std::string dir = sqlite ? "blobs/" : "pgcache/";
  std::vector<std::string> files = {
      dir + blob(2, "index", "c2"),      dir + blob(2, "inventory", "c2"),
      dir + blob(3, "index", "c3"),      dir + blob(3, "inventory", "c3"),
      "verified/" + blob(2, "index", "c2"), "verified/" + blob(2, "inventory", "c2"),
      "verified/" + blob(3, "index", "c3"), "verified/" + blob(3, "inventory", "c3")};
  if (sqlite) files.push_back("ste.db");
  std::sort(files.begin(), files.end());
  EXPECT_THAT(backend_->LocalFiles(), ElementsAreArray(files));

  auto blob_row = [&](int64_t id, const std::string& name, const std::string& commit) {
    const std::string bytes = name == "index" ? "index of " + commit : "inv of " + commit;
    std::string row = absl::StrCat("blob ", id, " ", name, " ", bytes.size(), " ", Xxh3Hex(bytes));
    return sqlite ? absl::StrCat(row, " ", blob(id, name, commit)) : row;
  };
  std::vector<std::string> rows = {"baseline 2 c2 mri=2 complete ", "baseline 3 c3 mri=3 complete ",
                                   blob_row(2, "index", "c2"), blob_row(2, "inventory", "c2"),
                                   blob_row(3, "index", "c3"), blob_row(3, "inventory", "c3")};
  if (!sqlite) {
    for (const char* r : {"bytes 2 index 11", "bytes 2 inventory 9", "bytes 3 index 11",
                                 "bytes 3 inventory 9"}) {
      rows.push_back(r);
    }
  }
  std::sort(rows.begin(), rows.end());
  EXPECT_THAT(backend_->Rows(), ElementsAreArray(rows));
}

TEST_P(StoreGcTest, KeepsABuildItsWriterHoldsAndOneTooYoungToBeAbandoned) {
  int64_t c = testing_util::MakeCompleteBaseline(*store_, "c", 1);
  std::unique_ptr<Store> writer = OpenStore();
  absl::StatusOr<int64_t> live = writer->Begin("live", 2);
  ASSERT_TRUE(live.ok());
  SetCreated(*live, 1000000000);  // years old, but written
  int64_t young = 0;
  {
    std::unique_ptr<Store> gone = OpenStore();
    absl::StatusOr<int64_t> id = gone->Begin("young", 3);
    ASSERT_TRUE(id.ok());
    young = *id;
  }
  GcOptions options;
  options.keep = 1;
  absl::StatusOr<GcReport> report = CollectGarbage(*store_, options, std::time(nullptr));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->removed, IsEmpty());
  ASSERT_EQ(report->decisions.size(), 3u);
  EXPECT_EQ(report->decisions[0].baseline.info.id, young);
  EXPECT_THAT(report->decisions[0].why, HasSubstr("but only"));
  EXPECT_EQ(report->decisions[1].why, "building: its writer is alive");
  ASSERT_TRUE(writer->PutBlob(*live, "index", "i").ok());  // still writable
  // With no age threshold, the young one goes; the live one still stays.
  options.abandoned_after_seconds = 0;
  report = CollectGarbage(*store_, options, std::time(nullptr));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->removed, ElementsAre(young));
  EXPECT_EQ(testing_util::LatestCompletedId(*store_, kAnyMri), c);
  // Dry run: a plan, nothing removed.
  writer.reset();
  options.dry_run = true;
  report = CollectGarbage(*store_, options, std::time(nullptr));
  ASSERT_TRUE(report.ok());
  EXPECT_THAT(Removed(report->decisions), ElementsAre(*live));
  EXPECT_TRUE(store_->Get(*live).ok());
}

// The real store, with a real removal (through a second store object, as
// another process's `ste baseline gc` would do it) run right after
// BlobPath resolves `blob`, before the loader opens the file: the window a
// select can lose to gc. `removals` is shared by the copies an opener makes.
class RemovedWhileResolving final : public Store {
 public:
  RemovedWhileResolving(std::unique_ptr<Store> real, Store* gc, std::string blob,
                        std::shared_ptr<int> removals)
      : real_(std::move(real)), gc_(gc), blob_(std::move(blob)), removals_(std::move(removals)) {}

  absl::StatusOr<std::string> BlobPath(int64_t baseline, const std::string& name) override {
    absl::StatusOr<std::string> path = real_->BlobPath(baseline, name);
    if (path.ok() && name == blob_ && *removals_ > 0) {
      --*removals_;
      absl::StatusOr<bool> removed = gc_->Remove(baseline, BaselineState::kComplete);
      EXPECT_TRUE(removed.ok() && *removed) << removed.status();
    }
    return path;
  }
  absl::StatusOr<int64_t> Begin(const std::string& c, int64_t m) override { return real_->Begin(c, m); }
  absl::Status PutBlob(int64_t b, const std::string& n, const std::string& x) override {
    return real_->PutBlob(b, n, x);
  }
  absl::Status PutResults(int64_t b, const std::vector<TestResult>& r) override {
    return real_->PutResults(b, r);
  }
  absl::Status Complete(int64_t b) override { return real_->Complete(b); }
  absl::Status MarkFailed(int64_t b, const std::string& w) override { return real_->MarkFailed(b, w); }
  absl::StatusOr<std::optional<BaselineInfo>> LatestCompleted(int64_t m) override {
    return real_->LatestCompleted(m);
  }
  absl::StatusOr<std::optional<BaselineInfo>> LatestCompletedAmong(
      const std::vector<std::string>& c) override {
    return real_->LatestCompletedAmong(c);
  }
  absl::StatusOr<BaselineInfo> Get(int64_t b) override { return real_->Get(b); }
  absl::StatusOr<std::vector<BaselineInfo>> List() override { return real_->List(); }
  absl::StatusOr<std::vector<TestResult>> Results(int64_t b) override { return real_->Results(b); }
  absl::StatusOr<int64_t> NextMri() override { return real_->NextMri(); }
  absl::StatusOr<std::vector<BlobInfo>> Blobs(int64_t b) override { return real_->Blobs(b); }
  absl::StatusOr<std::vector<BaselineSummary>> ListSummaries() override {
    return real_->ListSummaries();
  }
  absl::StatusOr<int64_t> CompleteImported(int64_t b, int64_t c, int64_t d) override {
    return real_->CompleteImported(b, c, d);
  }
  absl::StatusOr<bool> Remove(int64_t b, BaselineState s) override { return real_->Remove(b, s); }
  absl::StatusOr<std::vector<std::string>> RemoveStaleFiles() override {
    return real_->RemoveStaleFiles();
  }
  absl::StatusOr<int64_t> BeginBuild(const std::string& c, int64_t m, const std::string& o,
                                     const std::string& s, int64_t l) override {
    return real_->BeginBuild(c, m, o, s, l);
  }
  absl::StatusOr<std::optional<ClaimedBuild>> ClaimBuild(int64_t b, const std::string& o,
                                                         int64_t l) override {
    return real_->ClaimBuild(b, o, l);
  }
  absl::StatusOr<bool> RenewBuild(int64_t b, int64_t l) override { return real_->RenewBuild(b, l); }
  absl::Status PutAccepted(int64_t b, const std::vector<AcceptedEntry>& e) override {
    return real_->PutAccepted(b, e);
  }
  absl::StatusOr<std::vector<std::string>> Journal(int64_t b) override { return real_->Journal(b); }
  absl::StatusOr<std::vector<BuildOwnership>> ListBuilds() override { return real_->ListBuilds(); }
  absl::StatusOr<int64_t> AppendSelection(const SelectionEntry& e) override {
    return real_->AppendSelection(e);
  }
  absl::StatusOr<int64_t> AppendAudit(const AuditEntry& e) override { return real_->AppendAudit(e); }
  absl::StatusOr<std::vector<SelectionEntry>> Selections(int64_t l) override {
    return real_->Selections(l);
  }
  absl::StatusOr<std::vector<AuditEntry>> Audits(int64_t l) override { return real_->Audits(l); }

 private:
  std::unique_ptr<Store> real_;
  Store* gc_;
  std::string blob_;
  std::shared_ptr<int> removals_;
};

class LoaderRaceTest : public StoreGcTest {
 protected:
  // Baselines 1..n at mri 1..n, with real images.
  std::vector<int64_t> MakeBaselines(int n) {
    std::vector<int64_t> ids;
    for (int i = 1; i <= n; ++i) {
      ids.push_back(testing_util::StoreArchive(
          *store_, testing_util::SampleArchive(absl::StrCat("commit", i), i)));
    }
    return ids;
  }
  std::unique_ptr<Store> Racer(const std::string& blob, int removals) {
    return std::make_unique<RemovedWhileResolving>(OpenStore(), store_.get(), blob,
                                                   std::make_shared<int>(removals));
  }
};

TEST_P(LoaderRaceTest, AnIndexRemovedBeforeItIsOpenedMakesTheLoaderLookAgain) {
  std::vector<int64_t> ids = MakeBaselines(2);
  std::unique_ptr<Store> racer = Racer("index", 1);
  absl::StatusOr<LoadedBaseline> loaded = LoadCompletedBaseline(*racer, kAnyMri, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->info.id, ids[0]);  // the newest went; the next one serves
  EXPECT_EQ(loaded->index->test_count(), 2u);
  EXPECT_THAT(loaded->failed_tests, ElementsAre("tests/test_b.sh"));
  EXPECT_TRUE(absl::IsNotFound(store_->Get(ids[1]).status()));
}

TEST_P(LoaderRaceTest, AnIndexAlreadyMappedStaysReadableAndTheInventoryIsLookedForAgain) {
  std::vector<int64_t> ids = MakeBaselines(2);
  std::unique_ptr<Store> racer = Racer("inventory", 1);
  absl::StatusOr<LoadedBaseline> loaded = LoadCompletedBaseline(*racer, kAnyMri, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->info.id, ids[0]);
  EXPECT_EQ(loaded->inventory.size(), 3u);
}

TEST_P(LoaderRaceTest, LosingEveryLookIsAnErrorThatSaysSo) {
  MakeBaselines(4);
  std::unique_ptr<Store> racer = Racer("index", 4);
  absl::StatusOr<LoadedBaseline> loaded = LoadCompletedBaseline(*racer, kAnyMri, 0);
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(absl::IsUnavailable(loaded.status())) << loaded.status();
  EXPECT_THAT(loaded.status().message(), HasSubstr("removed (ste baseline gc) while it was being loaded"));
}

TEST_P(LoaderRaceTest, ABaselineAskedForByIdAndRemovedIsNotFound) {
  std::vector<int64_t> ids = MakeBaselines(2);
  std::unique_ptr<Store> racer = Racer("index", 1);
  absl::StatusOr<LoadedBaseline> loaded = LoadCompletedBaseline(*racer, 0, ids[0]);
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(absl::IsNotFound(loaded.status())) << loaded.status();
}

TEST_P(LoaderRaceTest, TheSchedulersCachingSourceLooksAgainToo) {
  std::vector<int64_t> ids = MakeBaselines(2);
  std::shared_ptr<int> removals = std::make_shared<int>(1);
  CachingBaselineSource source(
      [&]() -> absl::StatusOr<std::unique_ptr<Store>> {
        return std::unique_ptr<Store>(
            new RemovedWhileResolving(OpenStore(), store_.get(), "index", removals));
      },
      4);
  BaselineLookup any;
  any.mri = kAnyMri;
  absl::StatusOr<std::shared_ptr<const LoadedBaseline>> loaded = source.Load(any);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->info.id, ids[0]);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreGcTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing_util::BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, LoaderRaceTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing_util::BackendName);

}  // namespace
}  // namespace ste
