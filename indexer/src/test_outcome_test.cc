#include "ste/test_outcome.h"

#include "gtest/gtest.h"

namespace ste {
namespace {

TEST(TestOutcomeVocabulary, EveryOutcomeHasANameThatParsesBack) {
  for (TestOutcome o : kTestOutcomes) {
    EXPECT_NE(TestOutcomeName(o), "unknown");
    EXPECT_EQ(ParseTestOutcome(TestOutcomeName(o)), o);
  }
  EXPECT_EQ(TestOutcomeName(static_cast<TestOutcome>(7)), "unknown");
  EXPECT_EQ(ParseTestOutcome("unknown"), std::nullopt);
  EXPECT_EQ(ParseTestOutcome("Passed"), std::nullopt);
  EXPECT_EQ(ParseTestOutcome(""), std::nullopt);
}

}  // namespace
}  // namespace ste
