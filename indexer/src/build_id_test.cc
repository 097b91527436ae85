#include "ste/build_id.h"

#include "gtest/gtest.h"

namespace ste {
namespace {

TEST(BuildId, FormattedAndParsedInOnePlace) {
  EXPECT_EQ(BuildIdOf(12), "b12");
  EXPECT_EQ(BaselineOfBuildId("b12"), 12);
  EXPECT_EQ(BaselineOfBuildId(BuildIdOf(INT64_MAX)), INT64_MAX);
  for (const char* bad : {"", "b", "12", "b0", "b012", "b-1", "b+1", "b1x", "B1", "b 1",
                          "b99999999999999999999"}) {
    EXPECT_EQ(BaselineOfBuildId(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace ste
