// The recorder's own functions (test_recorder.h): which integrations
// folder a run wants. Its failure paths are test_recorder_fault_test.cc;
// log reduction and the batch split have their own tests.
#include "ste/test_recorder.h"

#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace ste {
namespace {

// IntegrationsDirForRuns with $STE_INTEGRATIONS pointing at `dir`
// (restored afterwards).
class IntegrationsDirForRunsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = getenv("STE_INTEGRATIONS");
    had_ = old != nullptr;
    if (had_) old_ = old;
  }
  void TearDown() override {
    if (had_) {
      setenv("STE_INTEGRATIONS", old_.c_str(), 1);
    } else {
      unsetenv("STE_INTEGRATIONS");
    }
  }
  static Config ConfigOf(RunnerKind kind, PythonImports imports) {
    Config c;
    c.runner_kind = kind;
    c.runner_python_imports = imports;
    return c;
  }
  bool had_ = false;
  std::string old_;
};

TEST_F(IntegrationsDirForRunsTest, EveryKindGetsTheFolderForThePythonHook) {
  char dir[] = "/tmp/ste-integrations-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("STE_INTEGRATIONS", dir, 1);
  for (RunnerKind kind : {RunnerKind::kGeneric, RunnerKind::kPytest}) {
    std::string warning = "stale";
    absl::StatusOr<std::string> got =
        IntegrationsDirForRuns(ConfigOf(kind, PythonImports::kNames), &warning);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, dir);
    EXPECT_EQ(warning, "");
  }
  // Listings, and no batch runner: no folder wanted.
  std::string warning;
  absl::StatusOr<std::string> got =
      IntegrationsDirForRuns(ConfigOf(RunnerKind::kGeneric, PythonImports::kListing), &warning);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "");
  rmdir(dir);
}

TEST_F(IntegrationsDirForRunsTest, WithoutTheFolderABatchRunnerFailsAndTheOthersWarn) {
  setenv("STE_INTEGRATIONS", "/nonexistent/ste-integrations", 1);
  std::string warning;
  EXPECT_FALSE(
      IntegrationsDirForRuns(ConfigOf(RunnerKind::kPytest, PythonImports::kNames), &warning).ok());
  EXPECT_FALSE(
      IntegrationsDirForRuns(ConfigOf(RunnerKind::kPytest, PythonImports::kListing), &warning)
          .ok());
  absl::StatusOr<std::string> got =
      IntegrationsDirForRuns(ConfigOf(RunnerKind::kGeneric, PythonImports::kNames), &warning);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "");
  EXPECT_NE(warning.find("Python imports will be recorded as directory listings"),
            std::string::npos)
      << warning;
  got = IntegrationsDirForRuns(ConfigOf(RunnerKind::kGeneric, PythonImports::kListing), &warning);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(warning, "");
}

}  // namespace
}  // namespace ste
