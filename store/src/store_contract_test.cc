// Copyright: the ste authors. The BaselineStore contract, run against
// every back-end: SQLite (a file in a temp directory) and PostgreSQL (a
// fresh database on a real server, tests/support/pg_test_server.h). What
// only one back-end has (SQLite's WAL, files and locks; PostgreSQL's
// cache, plans and connections) is tested in sqlite_store_test.cc and
// postgres_store_test.cc.
//
// Test names end in /Sqlite or /Postgres; ctest runs the PostgreSQL ones
// in one process, so the server starts once (scheduler/CMakeLists.txt).
#include <unistd.h>

#include <cstdint>
#include <ctime>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "blob_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "postgres_store.h"
#include "sqlite_store.h"
#include "ste/baseline_loader.h"
#include "store_backends_test_util.h"
#include "store_test_util.h"

namespace ste {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing_util::Backend;
using testing_util::ReadWholeFile;
using testing_util::ScopedTempDir;
using testing_util::StoreBackend;

using testing_util::kAnyMri;

class StoreContractTest : public testing_util::BackendStoreTest {
 protected:
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
};

TEST_P(StoreContractTest, EmptyStoreHasNothing) {
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

TEST_P(StoreContractTest, LifeCycle) {
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

TEST_P(StoreContractTest, LatestCompletedPicksHighestMriNotAboveMax) {
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

TEST_P(StoreContractTest, LatestCompletedAmongCommitsIgnoresWhatIsNotComplete) {
  int64_t a = MakeComplete("aaaa", 5);
  int64_t b = MakeComplete("bbbb", 9);
  int64_t b_again = MakeComplete("bbbb", 9);  // recorded twice: the later
  ASSERT_TRUE(store_->Begin("cccc", 12).ok());  // building: not served
  absl::StatusOr<int64_t> failed = store_->Begin("dddd", 13);
  ASSERT_TRUE(failed.ok());
  ASSERT_TRUE(store_->MarkFailed(*failed, "x").ok());
  auto among = [&](std::vector<std::string> commits) -> int64_t {
    absl::StatusOr<std::optional<BaselineInfo>> got = store_->LatestCompletedAmong(commits);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() && got->has_value() ? (*got)->id : -1;
  };
  EXPECT_EQ(among({"aaaa"}), a);
  EXPECT_EQ(among({"zzzz", "aaaa"}), a);
  EXPECT_EQ(among({"aaaa", "bbbb"}), b_again) << "the highest mri, then id";
  EXPECT_NE(b, b_again);
  EXPECT_EQ(among({"cccc", "dddd", "eeee"}), -1);
  EXPECT_EQ(among({"'; DROP TABLE baselines; --"}), -1) << "bound, not spliced";
  EXPECT_EQ(among({"aaaa"}), a) << "still there";
  EXPECT_FALSE(store_->LatestCompletedAmong({}).ok());
  EXPECT_FALSE(store_->LatestCompletedAmong(std::vector<std::string>(kMaxCommitsPerLookup + 1, "a")).ok());
  std::vector<std::string> many(kMaxCommitsPerLookup, "nope");
  many.back() = "aaaa";
  EXPECT_EQ(among(many), a);
}

TEST_P(StoreContractTest, ABaseCommitWithoutABaselineFallsBackToItsNearestRecordedAncestorThenTheNewest) {
  const int64_t old = MakeComplete("c1", 1);
  const int64_t mid = MakeComplete("c2", 2);
  const int64_t newest = MakeComplete("c9", 9);  // another line, or later
  BaselineLookup which;
  which.commit = "c4";  // main's record of it lags
  auto found = [&](const BaselineLookup& w) -> int64_t {
    absl::StatusOr<BaselineInfo> got = FindCompletedBaseline(*store_, w);
    return got.ok() ? got->id : -1;
  };
  EXPECT_EQ(found(which), -1) << "exact unless asked to fall back";
  which.fallback = true;
  which.fallback_commits = {"c4", "c3", "c2", "c1"};  // its history, nearest first
  EXPECT_EQ(found(which), mid) << "the nearest recorded ancestor";
  which.fallback_commits = {"c4", "c3"};  // none recorded in what the clone sees
  EXPECT_EQ(found(which), newest);
  which.fallback_commits.clear();  // a depth-1 merge commit has none of it
  EXPECT_EQ(found(which), newest);
  which.commit = "c1";
  EXPECT_EQ(found(which), old) << "its own first";

  absl::StatusOr<BaselineInfo> c2 = store_->Get(mid);
  ASSERT_TRUE(c2.ok());
  which.commit = "c4";
  which.fallback_commits = {"c4", "c3", "c2", "c1"};
  const std::string note = BaselineFallbackNote(which, *c2, c2->completed_unix + 600);
  EXPECT_THAT(note, ::testing::HasSubstr("the base commit c4 has no baseline yet: compared with baseline"));
  EXPECT_THAT(note, ::testing::HasSubstr("of commit c2 (mri 2), 2 commits before it, recorded 10 min ago"));
  which.fallback_commits.clear();
  EXPECT_THAT(BaselineFallbackNote(which, *c2, c2->completed_unix),
              ::testing::HasSubstr("whose place in the base commit's history this checkout cannot see"));
  which.commit = "c2";
  EXPECT_EQ(BaselineFallbackNote(which, *c2, 0), "") << "its own: no note";
}

TEST_P(StoreContractTest, TiesOnMriPickTheHighestId) {
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

TEST_P(StoreContractTest, NextMriIsOneAboveTheHighestOfAnyState) {
  MakeComplete("a", 3);
  ASSERT_TRUE(store_->Begin("b", 9).ok());  // building counts too
  absl::StatusOr<int64_t> next = store_->NextMri();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, 10);
}

TEST_P(StoreContractTest, BeginRejectsNegativeMri) {
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Begin("c", -1).status()));
}

TEST_P(StoreContractTest, BeginWhileAnotherBuildsIsAllowed) {
  absl::StatusOr<int64_t> abandoned = store_->Begin("killed build", 5);
  ASSERT_TRUE(abandoned.ok());
  int64_t next = MakeComplete("next build", 5);
  EXPECT_GT(next, *abandoned);
  EXPECT_EQ(LatestId(kAnyMri), next);
  absl::StatusOr<BaselineInfo> info = store_->Get(*abandoned);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, BaselineState::kBuilding);
}

TEST_P(StoreContractTest, ResultsRoundTripSortedAndReplacedByTest) {
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

TEST_P(StoreContractTest, PutResultsRejectsAnUnnamedTest) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(
      absl::IsInvalidArgument(store_->PutResults(*id, {{"tests/a.py"}, {""}})));
  absl::StatusOr<std::vector<TestResult>> got = store_->Results(*id);
  ASSERT_TRUE(got.ok());
  EXPECT_THAT(*got, IsEmpty());  // all or nothing
}

TEST_P(StoreContractTest, ListIsNewestFirst) {
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

TEST_P(StoreContractTest, UnknownBaselineIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(store_->Get(99).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->Results(99).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->BlobPath(99, "index").status()));
  EXPECT_TRUE(absl::IsNotFound(store_->Complete(99)));
  EXPECT_TRUE(absl::IsNotFound(store_->MarkFailed(99, "x")));
  EXPECT_TRUE(absl::IsNotFound(store_->PutBlob(99, "index", "x")));
  EXPECT_TRUE(absl::IsNotFound(store_->PutResults(99, {{"t"}})));
  EXPECT_THAT(backend_->StoredBlobs(), IsEmpty());
}

TEST_P(StoreContractTest, MissingBlobIsNotFound) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  absl::Status status = store_->BlobPath(*id, "index").status();
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
}

TEST_P(StoreContractTest, CompleteRefusesABaselineWithoutBothBlobs) {
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

TEST_P(StoreContractTest, CompleteRefusesABaselineThatIsNotBuilding) {
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

TEST_P(StoreContractTest, CompleteRefusesWhenABlobIsGone) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store_->PutBlob(*id, "index", "i").ok());
  ASSERT_TRUE(store_->PutBlob(*id, "inventory", "v").ok());
  std::string inventory = backend_->DeleteBlob(*store_, *id, "inventory");
  absl::Status status = store_->Complete(*id);
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(inventory));
  EXPECT_EQ(LatestId(kAnyMri), -1);
}

TEST_P(StoreContractTest, MarkFailedKeepsTheReasonAndIsNeverServed) {
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

TEST_P(StoreContractTest, AFinishedBaselineTakesNoMoreWrites) {
  int64_t id = MakeComplete("c", 1);
  std::vector<std::string> files = backend_->StoredBlobs();
  absl::Status status = store_->PutBlob(id, "index", "new");
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  status = store_->PutResults(id, {{"t"}});
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_EQ(backend_->StoredBlobs(), files);  // no stray file either
  EXPECT_EQ(ReadWholeFile(BlobFileOf(id, "index")), "index of c");
}

TEST_P(StoreContractTest, PutBlobReplacesAndRemovesTheOldCopy) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store_->PutBlob(*id, "index", "first").ok());
  ASSERT_TRUE(store_->PutBlob(*id, "index", "second").ok());
  ASSERT_TRUE(store_->PutBlob(*id, "index", "second").ok());  // same bytes
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*id, "index")), "second");
  EXPECT_THAT(
      backend_->StoredBlobs(),
      ElementsAre(absl::StrCat(*id, "-index-", Xxh3Hex("second"), ".blob")));
}

TEST_P(StoreContractTest, PutBlobTakesAnEmptyBlob) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store_->PutBlob(*id, "index", "").ok());
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*id, "index")), "");
}

TEST_P(StoreContractTest, PutBlobRejectsNamesThatAreNotPlain) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  for (const char* name : {"", "../x", "a/b", "Index", "x y", ".."}) {
    EXPECT_TRUE(absl::IsInvalidArgument(store_->PutBlob(*id, name, "b")))
        << name;
  }
  EXPECT_THAT(backend_->StoredBlobs(), IsEmpty());
}

TEST_P(StoreContractTest, BlobPathDetectsATruncatedBlob) {
  int64_t id = MakeComplete("c", 1);
  std::string path = backend_->TruncateBlob(*store_, id, "index", 3);
  absl::Status status = store_->BlobPath(id, "index").status();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("truncated"));
  // The other blob is still fine.
  EXPECT_TRUE(store_->BlobPath(id, "inventory").ok());
}

// (The SQLite store's size-only option is tested in sqlite_store_test.cc;
// the PostgreSQL store always hashes what it fetches.)
TEST_P(StoreContractTest, BlobPathDetectsAModifiedByte) {
  int64_t id = MakeComplete("c", 1);
  std::string path = backend_->FlipBlobByte(*store_, id, "index");
  absl::Status status = store_->BlobPath(id, "index").status();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("XXH3-128"));
  // The other blob is still fine.
  EXPECT_TRUE(store_->BlobPath(id, "inventory").ok());
}

TEST_P(StoreContractTest, BlobPathDetectsADeletedBlob) {
  int64_t id = MakeComplete("c", 1);
  std::string path = backend_->DeleteBlob(*store_, id, "inventory");
  absl::Status status = store_->BlobPath(id, "inventory").status();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("missing"));
}

TEST_P(StoreContractTest, ReopenedStoreKeepsEverything) {
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
  EXPECT_THAT(backend_->MetaValues(), ElementsAre(kSqliteStoreMagic, "3"));
  static_assert(std::string_view(kSqliteStoreMagic) == kPostgresStoreMagic);
}

TEST_P(StoreContractTest, TwoConnectionsSeeEachOthersCommits) {
  std::unique_ptr<Store> other = OpenStore();
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

// Test names sort bytewise (as memcmp), not by a locale's collation; odd
// characters round-trip (the PostgreSQL store sends names as an array).
TEST_P(StoreContractTest, ResultsSortBytewiseAndKeepOddNames) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  const std::vector<std::string> names = {"tests/ab.py",
                                          "tests/B.py",
                                          "tests/a_b.py",
                                          "tests/a.py",
                                          "tests/\xc3\xa9t\xc3\xa9.py",
                                          "tests/q\"u,o{t}e\\s.py",
                                          "tests/NULL",
                                          "tests/ space .py"};
  std::vector<TestResult> results;
  for (const std::string& name : names) results.push_back({name});
  // The same test twice in one call: the last one counts.
  results.push_back({"tests/a.py", TestOutcome::kFailed, 7, 1.5, true});
  ASSERT_TRUE(store_->PutResults(*id, results).ok());
  absl::StatusOr<std::vector<TestResult>> got = store_->Results(*id);
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<std::string> order;
  for (const TestResult& r : *got) order.push_back(r.test);
  EXPECT_THAT(order, ElementsAre("tests/ space .py", "tests/B.py", "tests/NULL",
                                 "tests/a.py", "tests/a_b.py", "tests/ab.py",
                                 "tests/q\"u,o{t}e\\s.py",
                                 "tests/\xc3\xa9t\xc3\xa9.py"));
  EXPECT_EQ((*got)[3].outcome, TestOutcome::kFailed);
  EXPECT_EQ((*got)[3].exit_code, 7);
  EXPECT_TRUE((*got)[3].opaque);
}

TEST_P(StoreContractTest, ResultsKeepExtremeNumbers) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double third = 1.0 / 3.0;
  ASSERT_TRUE(store_
                  ->PutResults(*id, {{"a", TestOutcome::kError,
                                      std::numeric_limits<int>::min(), tiny},
                                     {"b", TestOutcome::kPassed,
                                      std::numeric_limits<int>::max(), third}})
                  .ok());
  absl::StatusOr<std::vector<TestResult>> got = store_->Results(*id);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].exit_code, std::numeric_limits<int>::min());
  EXPECT_EQ((*got)[0].seconds, tiny);  // exactly
  EXPECT_EQ((*got)[1].exit_code, std::numeric_limits<int>::max());
  EXPECT_EQ((*got)[1].seconds, third);
}

TEST_P(StoreContractTest, ABlobRoundTripsEveryByteValue) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  std::string bytes;
  for (int i = 0; i < 3 * 256; ++i) bytes += static_cast<char>(i % 256);
  bytes += testing_util::PatternBytes("big", (3 << 20) + 11);
  ASSERT_TRUE(store_->PutBlob(*id, "index", bytes).ok());
  EXPECT_TRUE(ReadWholeFile(BlobFileOf(*id, "index")) == bytes);
}

TEST_P(StoreContractTest, NewestCommittedBlobWins) {
  absl::StatusOr<int64_t> id = store_->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  absl::Status first = store_->PutBlob(*id, "index", "first");
  ASSERT_TRUE(first.ok()) << first;
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*id, "index")), "first");
  ASSERT_TRUE(store_->PutBlob(*id, "index", "second, longer").ok());
  EXPECT_EQ(ReadWholeFile(BlobFileOf(*id, "index")), "second, longer");
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreContractTest,
                         ::testing::Values(Backend::kSqlite,
                                           Backend::kPostgres),
                         testing_util::BackendName);

}  // namespace
}  // namespace ste
