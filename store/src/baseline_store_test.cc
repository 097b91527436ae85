// Copyright: the ste authors. Store::Open (URL dispatch), the
// name helpers, and the rules both stores apply (store_rules.h).
#include "ste/baseline_store.h"

#include <unistd.h>

#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store_rules.h"
#include "store_test_util.h"

namespace ste {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::ScopedTempDir;

TEST(BaselineStoreOpenTest, SqlitePathIsRelativeToTheRoot) {
  ScopedTempDir root;
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open("sqlite:.ste/ste.db", root.path());
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(access((root.path() + "/.ste/ste.db").c_str(), F_OK), 0);
  EXPECT_EQ(access((root.path() + "/.ste/blobs").c_str(), F_OK), 0);

  absl::StatusOr<int64_t> id = (*store)->Begin("c", 1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE((*store)->PutBlob(*id, "index", "i").ok());
  absl::StatusOr<std::string> path = (*store)->BlobPath(*id, "index");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->rfind(root.path() + "/.ste/blobs/", 0), 0u) << *path;
}

TEST(BaselineStoreOpenTest, AbsoluteSqlitePathIgnoresTheRoot) {
  ScopedTempDir dir;
  ScopedTempDir root;
  std::string path = dir.path() + "/store.db";
  ASSERT_TRUE(Store::Open("sqlite:" + path, root.path()).ok());
  EXPECT_EQ(access(path.c_str(), F_OK), 0);
  EXPECT_NE(access((root.path() + "/store.db").c_str(), F_OK), 0);
}

TEST(BaselineStoreOpenTest, RejectsOtherSchemesAndAnEmptyPath) {
  for (const char* url : {"", "sqlite:", "mysql://db/ste", "/abs/ste.db"}) {
    absl::Status status = Store::Open(url, "/tmp").status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << url << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr("sqlite:PATH")) << url;
  }
  // PostgreSQL stores are libpq URIs (opening them: postgres_store_test.cc).
  for (const char* url : {"postgresql:ste", "postgres:/ste"}) {
    absl::Status status = Store::Open(url, "/tmp").status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << url << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr("postgresql://")) << url;
  }
}

TEST(BaselineStoreNamesTest, OutcomesAndStates) {
  EXPECT_EQ(TestOutcomeName(TestOutcome::kPassed), "passed");
  EXPECT_EQ(TestOutcomeName(TestOutcome::kFailed), "failed");
  EXPECT_EQ(TestOutcomeName(TestOutcome::kError), "error");
  EXPECT_EQ(BaselineStateName(BaselineState::kBuilding), "building");
  EXPECT_EQ(BaselineStateName(BaselineState::kComplete), "complete");
  EXPECT_EQ(BaselineStateName(BaselineState::kFailed), "failed");
}

// --- store_rules.h ---

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// The lists are every value of their enum, in order: the value after the
// last listed one has no name (a new enumerator with a name but missing
// from the list fails here).
TEST(StoreRulesTest, TheEnumListsHoldEveryValueInOrder) {
  for (size_t i = 0; i < std::size(kBaselineStates); ++i) {
    EXPECT_EQ(static_cast<size_t>(kBaselineStates[i]), i);
    EXPECT_NE(BaselineStateName(kBaselineStates[i]), "unknown");
  }
  EXPECT_EQ(
      BaselineStateName(static_cast<BaselineState>(std::size(kBaselineStates))),
      "unknown");
  for (size_t i = 0; i < std::size(kTestOutcomes); ++i) {
    EXPECT_EQ(static_cast<size_t>(kTestOutcomes[i]), i);
    EXPECT_NE(TestOutcomeName(kTestOutcomes[i]), "unknown");
  }
  EXPECT_EQ(TestOutcomeName(static_cast<TestOutcome>(std::size(kTestOutcomes))),
            "unknown");
}

TEST(StoreRulesTest, EveryStoredStateDecodes) {
  const struct {
    int64_t stored;
    BaselineState state;
  } kCases[] = {{0, BaselineState::kBuilding},
                {1, BaselineState::kComplete},
                {2, BaselineState::kFailed}};
  ASSERT_EQ(std::size(kCases), std::size(kBaselineStates));
  for (const auto& c : kCases) {
    absl::StatusOr<BaselineState> state =
        BaselineStateFromStored(c.stored, "sqlite /s.db", 7);
    ASSERT_TRUE(state.ok()) << c.stored << ": " << state.status();
    EXPECT_EQ(*state, c.state) << c.stored;
  }
}

TEST(StoreRulesTest, AnUnknownStoredStateIsDataLossNamingIt) {
  for (int64_t stored : {int64_t{-1}, int64_t{3}, int64_t{255}, int64_t{256},
                         int64_t{259}, kInt64Min, kInt64Max}) {
    absl::Status status =
        BaselineStateFromStored(stored, "sqlite /s.db", 7).status();
    EXPECT_TRUE(absl::IsDataLoss(status)) << stored << ": " << status;
    EXPECT_EQ(
        status.message(),
        absl::StrCat("sqlite /s.db: baseline 7 has unknown state ", stored));
  }
}

TEST(StoreRulesTest, EveryStoredOutcomeDecodes) {
  const struct {
    int64_t stored;
    TestOutcome outcome;
  } kCases[] = {{0, TestOutcome::kPassed},
                {1, TestOutcome::kFailed},
                {2, TestOutcome::kError}};
  ASSERT_EQ(std::size(kCases), std::size(kTestOutcomes));
  for (const auto& c : kCases) {
    absl::StatusOr<TestOutcome> outcome =
        TestOutcomeFromStored(c.stored, "db", 3, "t/a.py");
    ASSERT_TRUE(outcome.ok()) << c.stored << ": " << outcome.status();
    EXPECT_EQ(*outcome, c.outcome) << c.stored;
  }
}

TEST(StoreRulesTest, AnUnknownStoredOutcomeIsDataLossNamingIt) {
  for (int64_t stored : {int64_t{-1}, int64_t{3}, int64_t{255}, int64_t{256},
                         int64_t{258}, kInt64Min, kInt64Max}) {
    absl::Status status =
        TestOutcomeFromStored(stored, "postgresql database \"ste\"", 3,
                              "t/a.py")
            .status();
    EXPECT_TRUE(absl::IsDataLoss(status)) << stored << ": " << status;
    EXPECT_EQ(status.message(),
              absl::StrCat("postgresql database \"ste\": result of t/a.py in "
                           "baseline 3 has unknown outcome ",
                           stored));
  }
}

TEST(StoreRulesTest, ValidateResults) {
  auto result = [](std::string test, TestOutcome outcome) {
    TestResult r;
    r.test = std::move(test);
    r.outcome = outcome;
    return r;
  };
  const TestResult ok_a = result("t/a.py", TestOutcome::kPassed);
  const TestResult ok_b = result("t/b.py", TestOutcome::kError);
  const struct {
    const char* name;
    std::vector<TestResult> results;
    const char* error;  // "" when valid
  } kCases[] = {
      {"none", {}, ""},
      {"every outcome",
       {result("t/p", TestOutcome::kPassed),
        result("t/f", TestOutcome::kFailed),
        result("t/e", TestOutcome::kError)},
       ""},
      {"no name",
       {ok_a, result("", TestOutcome::kPassed)},
       "a test result without a test name"},
      {"outcome past the last",
       {ok_a, result("t/c.py", static_cast<TestOutcome>(3)), ok_b},
       "test t/c.py: unknown outcome 3"},
      {"outcome far out",
       {result("t/d.py", static_cast<TestOutcome>(255))},
       "test t/d.py: unknown outcome 255"},
      {"the first bad one is named",
       {result("t/x.py", static_cast<TestOutcome>(9)),
        result("", TestOutcome::kPassed)},
       "test t/x.py: unknown outcome 9"},
  };
  for (const auto& c : kCases) {
    absl::Status status = ValidateResults(c.results);
    if (*c.error == '\0') {
      EXPECT_TRUE(status.ok()) << c.name << ": " << status;
    } else {
      EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.name << ": " << status;
      EXPECT_EQ(status.message(), c.error) << c.name;
    }
  }
}

TEST(StoreRulesTest, OnlyABuildingBaselineMayBeWritten) {
  const struct {
    int64_t stored_state;
    const char* error;  // "" when it may
  } kCases[] = {
      {static_cast<int64_t>(BaselineState::kBuilding), ""},
      {static_cast<int64_t>(BaselineState::kComplete),
       "cannot store results: baseline 4 is complete, not building"},
      {static_cast<int64_t>(BaselineState::kFailed),
       "cannot store results: baseline 4 is failed, not building"},
      {3,
       "cannot store results: baseline 4 is in unknown state 3, not building"},
      {-1,
       "cannot store results: baseline 4 is in unknown state -1, not building"},
      {kInt64Max,
       "cannot store results: baseline 4 is in unknown state "
       "9223372036854775807, not building"},
  };
  for (const auto& c : kCases) {
    absl::Status status =
        CheckStillBuilding(4, c.stored_state, "store results");
    if (*c.error == '\0') {
      EXPECT_TRUE(status.ok()) << c.stored_state << ": " << status;
    } else {
      EXPECT_TRUE(absl::IsFailedPrecondition(status))
          << c.stored_state << ": " << status;
      EXPECT_EQ(status.message(), c.error);
    }
  }
}

TEST(StoreRulesTest, MetaRowsTakeOnlyTheirTwoKeys) {
  StoreMetaRows rows;
  rows.Take("magic", "m");
  rows.Take("schema_version", "1");
  rows.Take("other", "x");
  EXPECT_EQ(rows.magic, "m");
  EXPECT_EQ(rows.schema_version, "1");
}

TEST(StoreRulesTest, SchemaVersionVerdicts) {
  StoreSchemaExpectation expected;
  expected.magic = "ste baseline store";
  expected.version = 2;
  expected.meta_table = "ste.meta";
  expected.elsewhere = "database";
  enum class Verdict { kOk, kDamaged, kNewer, kOlder };
  const struct {
    const char* magic;
    const char* version;
    Verdict verdict;
  } kCases[] = {
      {"ste baseline store", "2", Verdict::kOk},
      {"ste baseline store", "3", Verdict::kNewer},
      {"ste baseline store", "2147483647", Verdict::kNewer},
      {"ste baseline store", "1", Verdict::kOlder},
      {"ste baseline store", "0", Verdict::kOlder},
      {"ste baseline store", "-1", Verdict::kOlder},
      {"ste baseline store", "", Verdict::kDamaged},  // no version row
      {"ste baseline store", "two", Verdict::kDamaged},
      {"ste baseline store", "2.0", Verdict::kDamaged},
      {"ste baseline store", "99999999999", Verdict::kDamaged},  // not an int
      {"", "2", Verdict::kDamaged},                              // no magic row
      {"another store", "2", Verdict::kDamaged},
      {"ste baseline store ", "2", Verdict::kDamaged},
  };
  for (const auto& c : kCases) {
    StoreMetaRows found;
    found.magic = c.magic;
    found.schema_version = c.version;
    absl::Status status = SchemaVersionVerdict("db x", expected, found);
    const std::string where =
        absl::StrCat("magic \"", c.magic, "\", version \"", c.version, "\"");
    switch (c.verdict) {
      case Verdict::kOk:
        EXPECT_TRUE(status.ok()) << where << ": " << status;
        break;
      case Verdict::kDamaged:
        EXPECT_TRUE(absl::IsDataLoss(status)) << where << ": " << status;
        EXPECT_EQ(
            status.message(),
            absl::StrCat("db x has a damaged ste.meta table (magic \"", c.magic,
                         "\", schema_version \"", c.version, "\")"));
        break;
      case Verdict::kNewer:
        EXPECT_TRUE(absl::IsFailedPrecondition(status))
            << where << ": " << status;
        EXPECT_THAT(
            status.message(),
            HasSubstr(absl::StrCat("db x has store schema version ", c.version,
                                   ", newer than this ste "
                                   "understands (2)")));
        EXPECT_THAT(status.message(), HasSubstr("upgrade ste"));
        EXPECT_THAT(status.message(), HasSubstr("another database"));
        break;
      case Verdict::kOlder:
        EXPECT_TRUE(absl::IsFailedPrecondition(status))
            << where << ": " << status;
        EXPECT_EQ(status.message(),
                  absl::StrCat("db x has store schema version ", c.version,
                               ", which this ste (schema version 2) cannot "
                               "read"));
        EXPECT_THAT(status.message(), Not(HasSubstr("newer")));
        break;
    }
  }
}

TEST(StoreRulesTest, AnOlderVersionDownToTheOldestMigratedIsRead) {
  StoreSchemaExpectation expected;
  expected.magic = "ste baseline store";
  expected.version = 3;
  expected.meta_table = "meta";
  expected.elsewhere = "file";
  expected.oldest_version = 2;
  StoreMetaRows found;
  found.magic = "ste baseline store";
  for (const char* version : {"2", "3"}) {
    found.schema_version = version;
    EXPECT_TRUE(SchemaVersionVerdict("f", expected, found).ok()) << version;
  }
  for (const char* version : {"1", "0", "4"}) {
    found.schema_version = version;
    EXPECT_TRUE(absl::IsFailedPrecondition(SchemaVersionVerdict("f", expected, found))) << version;
  }
}

}  // namespace
}  // namespace ste
