#include "ste/test_outcome.h"

namespace ste {

std::string_view TestOutcomeName(TestOutcome outcome) {
  switch (outcome) {
    case TestOutcome::kPassed:
      return "passed";
    case TestOutcome::kFailed:
      return "failed";
    case TestOutcome::kError:
      return "error";
  }
  return "unknown";
}

std::optional<TestOutcome> ParseTestOutcome(std::string_view name) {
  for (TestOutcome o : kTestOutcomes) {
    if (TestOutcomeName(o) == name) return o;
  }
  return std::nullopt;
}

}  // namespace ste
