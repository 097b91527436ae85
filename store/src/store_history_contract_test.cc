// Copyright: the ste authors. The HistoryStore contract (baseline_store.h,
// "The history"): selections and audits appended and read back, against
// both back-ends like store_contract_test.cc. Test names end in /Sqlite or
// /Postgres.
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store_backends_test_util.h"
#include "store_test_util.h"

namespace ste {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class StoreHistoryTest : public testing_util::BackendStoreTest {
 protected:
  static SelectionEntry Selection(int64_t baseline, const std::string& mode, int64_t selected) {
    SelectionEntry e;
    e.baseline = baseline;
    e.commit = absl::StrCat("c", baseline);
    e.mode = mode;
    e.reason = absl::StrCat(mode, " because");
    e.tests = 40;
    e.selected = selected;
    e.changed = 3;
    e.skipped_seconds = 12.5;
    e.seconds = 0.125;
    e.origin = "select";
    return e;
  }

  std::vector<SelectionEntry> ReadSelections(int64_t limit) {
    absl::StatusOr<std::vector<SelectionEntry>> rows = store_->Selections(limit);
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? *rows : std::vector<SelectionEntry>{};
  }
};

TEST_P(StoreHistoryTest, SelectionsComeBackAsAppendedNewestLimitedOldestFirst) {
  EXPECT_THAT(ReadSelections(0), IsEmpty());
  const int64_t before = std::time(nullptr);
  std::vector<int64_t> ids;
  for (int i = 1; i <= 3; i++) {
    absl::StatusOr<int64_t> id = store_->AppendSelection(Selection(i, i == 2 ? "all" : "subset", i));
    ASSERT_TRUE(id.ok()) << id.status();
    ids.push_back(*id);
  }
  EXPECT_LT(ids[0], ids[1]);
  EXPECT_LT(ids[1], ids[2]);
  std::vector<SelectionEntry> all = ReadSelections(0);
  ASSERT_EQ(all.size(), 3u);
  const SelectionEntry& second = all[1];
  EXPECT_EQ(second.id, ids[1]);
  EXPECT_EQ(second.baseline, 2);
  EXPECT_EQ(second.commit, "c2");
  EXPECT_EQ(second.mode, "all");
  EXPECT_EQ(second.reason, "all because");
  EXPECT_EQ(second.tests, 40);
  EXPECT_EQ(second.selected, 2);
  EXPECT_EQ(second.changed, 3);
  EXPECT_EQ(second.skipped_seconds, 12.5);
  EXPECT_EQ(second.seconds, 0.125);
  EXPECT_EQ(second.origin, "select");
  EXPECT_GE(second.at_unix, before - 1);
  EXPECT_LE(second.at_unix, std::time(nullptr) + 1);
  std::vector<SelectionEntry> newest = ReadSelections(2);
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest[0].id, ids[1]);
  EXPECT_EQ(newest[1].id, ids[2]);
  // Another connection sees them too.
  std::unique_ptr<Store> other = OpenStore();
  ASSERT_NE(other, nullptr);
  absl::StatusOr<std::vector<SelectionEntry>> seen = other->Selections(0);
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(seen->size(), 3u);
}

TEST_P(StoreHistoryTest, AReasonIsCutAndLosesItsNulBytesButNothingElseIsTakenThatIsWrong) {
  SelectionEntry long_reason = Selection(1, "subset", 1);
  long_reason.reason = std::string(kMaxHistoryReasonBytes - 1, 'a') + "\xC3\xA9" + "tail";
  long_reason.commit = std::string("c\0d", 3);
  ASSERT_TRUE(store_->AppendSelection(long_reason).ok());
  std::vector<SelectionEntry> rows = ReadSelections(0);
  ASSERT_EQ(rows.size(), 1u);
  // Not cut inside the two bytes of the é.
  EXPECT_EQ(rows[0].reason, std::string(kMaxHistoryReasonBytes - 1, 'a'));
  EXPECT_EQ(rows[0].commit, "cd");

  SelectionEntry bad_mode = Selection(1, "some", 1);
  EXPECT_TRUE(absl::IsInvalidArgument(store_->AppendSelection(bad_mode).status()));
  SelectionEntry negative = Selection(1, "subset", -1);
  EXPECT_TRUE(absl::IsInvalidArgument(store_->AppendSelection(negative).status()));
  AuditEntry bad_kind;
  bad_kind.kind = "guess";
  EXPECT_TRUE(absl::IsInvalidArgument(store_->AppendAudit(bad_kind).status()));
  AuditEntry nul_name;
  nul_name.kind = "audit";
  nul_name.missed = {std::string("a\0b", 3)};
  EXPECT_TRUE(absl::IsInvalidArgument(store_->AppendAudit(nul_name).status()));
  EXPECT_EQ(ReadSelections(0).size(), 1u);
  absl::StatusOr<std::vector<AuditEntry>> audits = store_->Audits(0);
  ASSERT_TRUE(audits.ok()) << audits.status();
  EXPECT_THAT(*audits, IsEmpty());
}

TEST_P(StoreHistoryTest, AuditsKeepTheirCountsAndNamesAsBytes) {
  AuditEntry first;
  first.baseline = 7;
  first.commit = "abc";
  first.kind = "audit";
  first.left_out = 30;
  first.ran = 10;
  first.missed = {"tests/z.sh", "tests/odd\nname \xff.sh"};
  first.flaky = {"tests/f.sh"};
  AuditEntry second;
  second.kind = "observe";
  second.left_out = 5;
  second.ran = 5;
  ASSERT_TRUE(store_->AppendAudit(first).ok());
  ASSERT_TRUE(store_->AppendAudit(second).ok());
  absl::StatusOr<std::vector<AuditEntry>> audits = store_->Audits(0);
  ASSERT_TRUE(audits.ok()) << audits.status();
  ASSERT_EQ(audits->size(), 2u);
  const AuditEntry& a = (*audits)[0];
  EXPECT_EQ(a.baseline, 7);
  EXPECT_EQ(a.commit, "abc");
  EXPECT_EQ(a.kind, "audit");
  EXPECT_EQ(a.left_out, 30);
  EXPECT_EQ(a.ran, 10);
  EXPECT_THAT(a.missed, ElementsAre("tests/odd\nname \xff.sh", "tests/z.sh"));
  EXPECT_THAT(a.flaky, ElementsAre("tests/f.sh"));
  EXPECT_EQ((*audits)[1].kind, "observe");
  EXPECT_THAT((*audits)[1].missed, IsEmpty());
  absl::StatusOr<std::vector<AuditEntry>> newest = store_->Audits(1);
  ASSERT_TRUE(newest.ok()) << newest.status();
  ASSERT_EQ(newest->size(), 1u);
  EXPECT_EQ((*newest)[0].kind, "observe");
}

TEST_P(StoreHistoryTest, TheHistoryOutlivesTheBaselinesItNames) {
  const int64_t id = testing_util::MakeCompleteBaseline(*store_, "one", 1);
  ASSERT_TRUE(store_->AppendSelection(Selection(id, "none", 0)).ok());
  absl::StatusOr<bool> removed = store_->Remove(id, BaselineState::kComplete);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_TRUE(*removed);
  std::vector<SelectionEntry> rows = ReadSelections(0);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].baseline, id);
}

TEST_P(StoreHistoryTest, AVersionOneStoreGetsTheHistoryTablesWhenOpened) {
  store_.reset();
  backend_->Downgrade();
  std::unique_ptr<Store> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(backend_->MetaValues(), ElementsAre(::testing::_, "3"));
  ASSERT_TRUE(store->AppendSelection(Selection(0, "all", 40)).ok());
  absl::StatusOr<std::vector<SelectionEntry>> rows = store->Selections(0);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreHistoryTest,
                         ::testing::Values(testing_util::Backend::kSqlite,
                                           testing_util::Backend::kPostgres),
                         testing_util::BackendName);

}  // namespace
}  // namespace ste
