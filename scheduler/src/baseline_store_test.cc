// Copyright: the ste authors. BaselineStore::Open (URL dispatch) and the
// name helpers.
#include "ste/baseline_store.h"

#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store_test_util.h"

namespace ste {
namespace {

using ::testing::HasSubstr;
using testing_util::ScopedTempDir;

TEST(BaselineStoreOpenTest, SqlitePathIsRelativeToTheRoot) {
  ScopedTempDir root;
  absl::StatusOr<std::unique_ptr<BaselineStore>> store =
      BaselineStore::Open("sqlite:.ste/ste.db", root.path());
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
  ASSERT_TRUE(BaselineStore::Open("sqlite:" + path, root.path()).ok());
  EXPECT_EQ(access(path.c_str(), F_OK), 0);
  EXPECT_NE(access((root.path() + "/store.db").c_str(), F_OK), 0);
}

TEST(BaselineStoreOpenTest, RejectsOtherSchemesAndAnEmptyPath) {
  for (const char* url : {"", "sqlite:", "mysql://db/ste", "/abs/ste.db"}) {
    absl::Status status = BaselineStore::Open(url, "/tmp").status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << url << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr("sqlite:PATH")) << url;
  }
  // PostgreSQL stores are libpq URIs (opening them: postgres_store_test.cc).
  for (const char* url : {"postgresql:ste", "postgres:/ste"}) {
    absl::Status status = BaselineStore::Open(url, "/tmp").status();
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

}  // namespace
}  // namespace ste
