// A record build on this machine: inventory, every test under the
// interceptor (N at a time), the selection index.
//
//   1. inventory of the repo, taken before any test runs;
//   2. the test files (tests.include minus tests.exclude) in it;
//   3. RunOneTest for each, `jobs` at a time, longest first when the
//      previous durations are known; each TestRecord is fed to the index
//      builder as it arrives (the consumer of the unit of work);
//   4. the files outside the repo that the tests read are inventoried too
//      (when inventory.external is on) and merged into the inventory;
//   5. the index is built.
// The store is not touched here: the caller stores what comes out.
#ifndef STE_RECORD_BUILD_H_
#define STE_RECORD_BUILD_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/config.h"
#include "ste/inventory.h"
#include "ste/test_recorder.h"

namespace ste {

struct RecordProgress {
  size_t done = 0;
  size_t total = 0;
  const TestRecord* last = nullptr;  // the test that just finished
};

struct RecordBuildOptions {
  int jobs = 0;                       // 0: config.jobs
  std::string preload_library;
  std::string scratch_dir;            // per-test log dirs go under it
  const Inventory* previous_inventory = nullptr;  // stat cache
  std::map<std::string, double> previous_seconds;  // test -> duration
  std::function<void(const RecordProgress&)> progress;  // any thread, serialised
  std::function<void(const char* phase)> phase;          // "inventory", ...
};

struct RecordBuildOutput {
  Inventory inventory;            // repo (before tests) + external files
  std::string index;              // the selection index image
  std::vector<TestRecord> tests;  // sorted by test
  double inventory_seconds = 0;
  double tests_seconds = 0;
  double index_seconds = 0;
};

// Errors: the inventory fails, no test file matches, the index cannot be
// built. A test that fails or cannot start is not an error (see TestRecord).
absl::StatusOr<RecordBuildOutput> RunRecordBuild(const Config& config,
                                                 const RecordBuildOptions& options);

}  // namespace ste

#endif  // STE_RECORD_BUILD_H_
