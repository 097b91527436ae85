// What became of one test run: the vocabulary every layer shares (the
// recorder's results, the store's rows, the wire, the outputs).
#ifndef STE_TEST_OUTCOME_H_
#define STE_TEST_OUTCOME_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace ste {

// Stored as these numbers (both stores, the archive): never renumber one.
enum class TestOutcome : uint8_t {
  kPassed = 0,
  kFailed = 1,  // ran and exited non-zero
  kError = 2,   // could not be run, or its records could not be trusted
};
// Every outcome, in enum order (a new one is added here too).
inline constexpr TestOutcome kTestOutcomes[] = {
    TestOutcome::kPassed, TestOutcome::kFailed, TestOutcome::kError};

// "passed"/"failed"/"error"; "unknown" for a value not in the enum.
std::string_view TestOutcomeName(TestOutcome outcome);

// The outcome named `name` (TestOutcomeName's spelling), nullopt otherwise.
std::optional<TestOutcome> ParseTestOutcome(std::string_view name);

}  // namespace ste

#endif  // STE_TEST_OUTCOME_H_
