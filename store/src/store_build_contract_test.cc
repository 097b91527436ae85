// Copyright: the ste authors. The BaselineStore contract, continued: the
// resumable record builds of schema version 2 (BeginBuild, ClaimBuild,
// RenewBuild, PutAccepted, Journal, ListBuilds; baseline_store.h
// "Resumable record builds"), the fencing of every write by the claim, and
// the migration of a version-1 store. Run against both back-ends like
// store_contract_test.cc; names end in /Sqlite or /Postgres.
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store_backends_test_util.h"
#include "store_test_util.h"

namespace ste {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing_util::Backend;
using testing_util::ScopedTempDir;
using testing_util::StoreBackend;

using testing_util::kAnyMri;
constexpr int64_t kLong = 600000;  // a lease no test outlives (10 min)

AcceptedEntry Entry(const std::string& test, const std::string& record,
                    TestOutcome outcome = TestOutcome::kPassed) {
  AcceptedEntry e;
  e.result.test = test;
  e.result.outcome = outcome;
  e.result.seconds = 0.5;
  e.record = record;
  return e;
}

class StoreBuildTest : public testing_util::BackendStoreTest {
 protected:
  int64_t BeginBuild(Store& store, const std::string& owner, int64_t lease_ms,
                     const std::string& spec = "spec bytes\0with a NUL") {
    absl::StatusOr<int64_t> id = store.BeginBuild("c0ffee", 7, owner, spec, lease_ms);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : 0;
  }

  std::vector<std::string> JournalOf(Store& store, int64_t id) {
    absl::StatusOr<std::vector<std::string>> journal = store.Journal(id);
    EXPECT_TRUE(journal.ok()) << journal.status();
    return journal.ok() ? *journal : std::vector<std::string>{};
  }
};

TEST_P(StoreBuildTest, ABuildKeepsItsOwnerAndJournalsAcceptedResultsInOrder) {
  const int64_t id = BeginBuild(*store_, "sched-a", kLong);
  absl::StatusOr<BaselineInfo> info = store_->Get(id);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->state, BaselineState::kBuilding);
  EXPECT_EQ(info->mri, 7);
  // Records are bytes: any byte value round-trips.
  const std::string binary("\0\x01\xff record", 10);
  ASSERT_TRUE(store_->PutAccepted(id, {Entry("tests/b.sh", "rec b"), Entry("tests/a.sh", binary)}).ok());
  ASSERT_TRUE(store_->PutAccepted(id, {Entry("tests/c.sh", "rec c", TestOutcome::kFailed)}).ok());
  EXPECT_THAT(JournalOf(*store_, id), ElementsAre("rec b", binary, "rec c"));
  absl::StatusOr<std::vector<TestResult>> results = store_->Results(id);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 3u);
  EXPECT_EQ((*results)[0].test, "tests/a.sh");
  EXPECT_EQ((*results)[2].outcome, TestOutcome::kFailed);
  absl::StatusOr<std::vector<BuildOwnership>> builds = store_->ListBuilds();
  ASSERT_TRUE(builds.ok()) << builds.status();
  ASSERT_EQ(builds->size(), 1u);
  EXPECT_EQ((*builds)[0].baseline, id);
  EXPECT_EQ((*builds)[0].owner, "sched-a");
  EXPECT_EQ((*builds)[0].generation, 1);
  EXPECT_GT((*builds)[0].lease_left_ms, 0);
  EXPECT_LE((*builds)[0].lease_left_ms, kLong);
  // Nothing of it is served.
  absl::StatusOr<std::optional<BaselineInfo>> latest = store_->LatestCompleted(kAnyMri);
  ASSERT_TRUE(latest.ok());
  EXPECT_FALSE(latest->has_value());
}

TEST_P(StoreBuildTest, ATestJournaledTwiceKeepsItsFirstRecordAndItsLastResult) {
  const int64_t id = BeginBuild(*store_, "sched-a", kLong);
  ASSERT_TRUE(store_->PutAccepted(id, {Entry("tests/a.sh", "first")}).ok());
  ASSERT_TRUE(store_->PutAccepted(id, {Entry("tests/a.sh", "second", TestOutcome::kError)}).ok());
  EXPECT_THAT(JournalOf(*store_, id), ElementsAre("first"));
  absl::StatusOr<std::vector<TestResult>> results = store_->Results(id);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].outcome, TestOutcome::kError);
}

TEST_P(StoreBuildTest, PutAcceptedIsWholeOrNothing) {
  const int64_t id = BeginBuild(*store_, "sched-a", kLong);
  absl::Status bad = store_->PutAccepted(id, {Entry("tests/a.sh", "a"), Entry("", "unnamed")});
  EXPECT_TRUE(absl::IsInvalidArgument(bad)) << bad;
  EXPECT_THAT(JournalOf(*store_, id), IsEmpty());
  // A baseline begun without a build row has no journal.
  absl::StatusOr<int64_t> plain = store_->Begin("c", 1);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->PutAccepted(*plain, {Entry("tests/a.sh", "a")})));
  EXPECT_TRUE(absl::IsNotFound(store_->Journal(*plain).status()));
}

TEST_P(StoreBuildTest, ALiveLeaseIsNotTakenAnExpiredOneIsAndTheOldOwnerIsFencedOff) {
  std::unique_ptr<Store> other = OpenStore();
  const int64_t live = BeginBuild(*store_, "sched-a", kLong);
  absl::StatusOr<std::optional<ClaimedBuild>> refused = other->ClaimBuild(live, "sched-b", kLong);
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_FALSE(refused->has_value());

  // A lease of 0 ms is expired at once.
  const int64_t expired = BeginBuild(*store_, "sched-a", 0, "the spec");
  ASSERT_TRUE(store_->PutAccepted(expired, {Entry("tests/a.sh", "by a")}).ok());
  absl::StatusOr<std::optional<ClaimedBuild>> taken = other->ClaimBuild(expired, "sched-b", kLong);
  ASSERT_TRUE(taken.ok()) << taken.status();
  ASSERT_TRUE(taken->has_value());
  EXPECT_EQ((*taken)->generation, 2);
  EXPECT_EQ((*taken)->previous_owner, "sched-a");
  EXPECT_EQ((*taken)->spec, "the spec");
  EXPECT_THAT(backend_->BuildRows(),
              ::testing::Contains(absl::StrCat("build ", expired, " sched-b 2")));

  // The old owner can no longer write a byte of it, nor finish it.
  absl::Status put = store_->PutAccepted(expired, {Entry("tests/b.sh", "by a, late")});
  EXPECT_TRUE(absl::IsFailedPrecondition(put)) << put;
  EXPECT_THAT(put.message(), HasSubstr("sched-b"));
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->PutBlob(expired, "index", "x")));
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->PutResults(expired, {Entry("tests/b.sh", "").result})));
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->MarkFailed(expired, "by a")));
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->Complete(expired)));
  absl::StatusOr<bool> renewed = store_->RenewBuild(expired, kLong);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  EXPECT_FALSE(*renewed);
  // A store object that never claimed it cannot write either.
  std::unique_ptr<Store> third = OpenStore();
  EXPECT_TRUE(absl::IsFailedPrecondition(third->MarkFailed(expired, "by nobody")));

  // The new owner goes on, and finishes it: the build rows go with it.
  ASSERT_TRUE(other->PutAccepted(expired, {Entry("tests/b.sh", "by b")}).ok());
  EXPECT_THAT(JournalOf(*other, expired), ElementsAre("by a", "by b"));
  ASSERT_TRUE(other->PutBlob(expired, "index", "index").ok());
  ASSERT_TRUE(other->PutBlob(expired, "inventory", "inventory").ok());
  absl::Status done = other->Complete(expired);
  ASSERT_TRUE(done.ok()) << done;
  EXPECT_TRUE(absl::IsNotFound(other->Journal(expired).status()));
  EXPECT_TRUE(absl::IsNotFound(other->ClaimBuild(expired, "sched-b", kLong).status()));
  absl::StatusOr<std::vector<TestResult>> results = other->Results(expired);
  ASSERT_TRUE(results.ok());
  EXPECT_EQ(results->size(), 2u);
  // Only the live one is left running, still sched-a's.
  absl::StatusOr<std::vector<BuildOwnership>> builds = other->ListBuilds();
  ASSERT_TRUE(builds.ok());
  ASSERT_EQ(builds->size(), 1u);
  EXPECT_EQ((*builds)[0].baseline, live);
  EXPECT_EQ((*builds)[0].owner, "sched-a");
}

TEST_P(StoreBuildTest, TheSameOwnerTakesItsBuildBackAtOnceAfterARestart) {
  int64_t id = 0;
  {
    std::unique_ptr<Store> killed = OpenStore();
    id = BeginBuild(*killed, "host:7070", kLong);
    ASSERT_TRUE(killed->PutAccepted(id, {Entry("tests/a.sh", "a")}).ok());
  }
  std::unique_ptr<Store> restarted = OpenStore();
  absl::StatusOr<std::optional<ClaimedBuild>> back = restarted->ClaimBuild(id, "host:7070", kLong);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ((*back)->generation, 2);
  EXPECT_THAT(JournalOf(*restarted, id), ElementsAre("a"));
  ASSERT_TRUE(restarted->PutAccepted(id, {Entry("tests/b.sh", "b")}).ok());
  // A live writer again, for gc.
  absl::StatusOr<std::vector<BaselineSummary>> summaries = OpenStore()->ListSummaries();
  ASSERT_TRUE(summaries.ok());
  ASSERT_EQ(summaries->size(), 1u);
  EXPECT_TRUE((*summaries)[0].writer_alive);
  // Failing it ends it: no build row, no journal, the reason kept.
  ASSERT_TRUE(restarted->MarkFailed(id, "gave up").ok());
  EXPECT_THAT(backend_->BuildRows(), IsEmpty());
  absl::StatusOr<BaselineInfo> info = restarted->Get(id);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, BaselineState::kFailed);
  EXPECT_EQ(info->failure, "gave up");
  absl::StatusOr<std::optional<ClaimedBuild>> again = restarted->ClaimBuild(id, "host:7070", kLong);
  EXPECT_TRUE(absl::IsNotFound(again.status())) << again.status();
}

TEST_P(StoreBuildTest, RenewExtendsTheLeaseOfItsOwnClaimOnly) {
  const int64_t id = BeginBuild(*store_, "sched-a", 0);
  absl::StatusOr<std::vector<BuildOwnership>> before = store_->ListBuilds();
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before->size(), 1u);
  EXPECT_LE((*before)[0].lease_left_ms, 0);
  absl::StatusOr<bool> renewed = store_->RenewBuild(id, kLong);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  EXPECT_TRUE(*renewed);
  absl::StatusOr<std::vector<BuildOwnership>> after = store_->ListBuilds();
  ASSERT_TRUE(after.ok());
  EXPECT_GT((*after)[0].lease_left_ms, kLong / 2);
  // Renewed, it is not claimable by another.
  absl::StatusOr<std::optional<ClaimedBuild>> claim = OpenStore()->ClaimBuild(id, "sched-b", kLong);
  ASSERT_TRUE(claim.ok());
  EXPECT_FALSE(claim->has_value());
  // Another object's renew is no claim.
  absl::StatusOr<bool> foreign = OpenStore()->RenewBuild(id, kLong);
  ASSERT_TRUE(foreign.ok());
  EXPECT_FALSE(*foreign);
}

TEST_P(StoreBuildTest, OfTwoSchedulersClaimingAtOnceOneGetsTheBuild) {
  const int64_t id = BeginBuild(*store_, "dead", 0);
  store_.reset();
  constexpr int kClaimers = 4;
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < kClaimers; i++) stores.push_back(OpenStore());
  std::vector<absl::StatusOr<std::optional<ClaimedBuild>>> got(kClaimers, std::nullopt);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClaimers; i++) {
    threads.emplace_back([&, i] { got[i] = stores[i]->ClaimBuild(id, absl::StrCat("s", i), kLong); });
  }
  for (std::thread& t : threads) t.join();
  int winners = 0, winner = -1;
  for (int i = 0; i < kClaimers; i++) {
    ASSERT_TRUE(got[i].ok()) << got[i].status();
    if (got[i]->has_value()) {
      winners++;
      winner = i;
    }
  }
  ASSERT_EQ(winners, 1);
  EXPECT_THAT(backend_->BuildRows(), ElementsAre(absl::StrCat("build ", id, " s", winner, " 2")));
  for (int i = 0; i < kClaimers; i++) {
    absl::Status put = stores[i]->PutAccepted(id, {Entry(absl::StrCat("tests/", i), "r")});
    EXPECT_EQ(put.ok(), i == winner) << i << ": " << put;
  }
}

TEST_P(StoreBuildTest, RemoveTakesTheBuildRowsWithIt) {
  const int64_t id = BeginBuild(*store_, "sched-a", 0);
  ASSERT_TRUE(store_->PutAccepted(id, {Entry("tests/a.sh", "a")}).ok());
  store_.reset();  // its writer lock goes: the build is abandoned
  std::unique_ptr<Store> gc = OpenStore();
  absl::StatusOr<bool> removed = gc->Remove(id, BaselineState::kBuilding);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_TRUE(*removed);
  EXPECT_THAT(backend_->BuildRows(), IsEmpty());
  EXPECT_THAT(backend_->Rows(), IsEmpty());
}

TEST_P(StoreBuildTest, AVersionOneStoreIsMigratedAndKeepsItsBaselines) {
  const int64_t old = testing_util::MakeCompleteBaseline(*store_, "old", 3);
  store_.reset();
  backend_->Downgrade();
  EXPECT_THAT(backend_->MetaValues(), ElementsAre(::testing::_, "1"));
  std::unique_ptr<Store> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(backend_->MetaValues(), ElementsAre(::testing::_, "3"));
  EXPECT_EQ(testing_util::LatestCompletedId(*store, kAnyMri), old);
  const int64_t id = BeginBuild(*store, "sched-a", kLong);
  ASSERT_TRUE(store->PutAccepted(id, {Entry("tests/a.sh", "a")}).ok());
  EXPECT_THAT(JournalOf(*store, id), ElementsAre("a"));
  // Opening it again migrates nothing twice.
  EXPECT_NE(OpenStore(), nullptr);
  EXPECT_THAT(backend_->MetaValues(), ElementsAre(::testing::_, "3"));
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreBuildTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing_util::BackendName);

}  // namespace
}  // namespace ste
