// Copyright: the ste authors. What store_crasher writes, so that the crash
// test can check every byte of it afterwards.
#ifndef STE_TESTS_STORE_CRASH_DATA_H_
#define STE_TESTS_STORE_CRASH_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ste/baseline_store.h"
#include "store_test_util.h"

namespace ste {
namespace crash_data {

// Baseline n (1, 2, 3 ...) has commit "commit-n" and mri n.
inline std::string Commit(int n) { return absl::StrCat("commit-", n); }

// Baseline 2's index is large (50 MB) so that a kill from a thread lands
// inside its write; the others are small.
inline size_t IndexSize(int n) { return n == 2 ? size_t{50} << 20 : 2 << 20; }

inline std::string Index(int n) {
  return testing_util::PatternBytes(absl::StrCat("index-", n), IndexSize(n));
}

inline std::string Inventory(int n) {
  return testing_util::PatternBytes(absl::StrCat("inventory-", n), 300000);
}

inline std::vector<TestResult> Results(int n) {
  std::vector<TestResult> results;
  for (int i = 0; i < 200; ++i) {
    TestResult r;
    r.test = absl::StrFormat("tests/t%03d_test.py", i);
    r.outcome = static_cast<TestOutcome>((i + n) % 3);
    r.exit_code = (i + n) % 3 == 0 ? 0 : i;
    r.seconds = 0.25 * i + n;
    r.opaque = (i + n) % 7 == 0;
    results.push_back(r);
  }
  return results;
}

}  // namespace crash_data
}  // namespace ste

#endif  // STE_TESTS_STORE_CRASH_DATA_H_
