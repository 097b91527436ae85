// Copyright: the ste authors. The synthetic record of bench/distributed's
// ingest_bench (P8): what workers would report for a build, generated
// (seeded, deterministic) before anything is timed.
//
// N tests `t/test_00001.py`..., scope `//r/<test>`, each with A..B
// dependency records drawn from a universe of U repo-relative files
// `src/pkg_<p>/mod_<m>.py` (100 per package), plus a `listing` of each
// package directory the test touched and an `absent` probe
// (`src/pkg_<p>/_native.so`) per such package. Overlap between tests is
// realistic: a shared core (the first 10 packages, each file kept with
// p = 0.95), then pool packages alternating between neighbours of the
// test's home package (locality; tests are spread over the packages in
// order) and random ones (shared libraries), each file kept with p = 0.9,
// then 5% scattered files anywhere. Records come sorted, as ReduceLogs
// leaves them.
#ifndef STE_BENCH_DISTRIBUTED_SYNTHETIC_WORKLOAD_H_
#define STE_BENCH_DISTRIBUTED_SYNTHETIC_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ste/dependency.h"
#include "ste/test_recorder.h"

namespace ste::bench {

struct WorkloadModel {
  uint32_t tests = 2000;      // at most 99,999
  uint32_t min_deps = 2000;   // records per test, uniform in [min, max];
  uint32_t max_deps = 5000;   // the core alone gives ~950
  uint32_t universe = 50000;  // files, >= 100
  uint64_t seed = 1;
};

struct Workload {
  std::vector<TestRecord> records;                      // by test index
  std::vector<uint64_t> deps;                           // records per test
  absl::flat_hash_map<std::string, uint32_t> index_of;  // test -> index
  uint64_t total = 0;
  uint64_t by_kind[kDepKindCount + 1] = {};  // by DepKind
};

// Generates the workload on all cores. Requires a model as commented.
Workload GenerateWorkload(const WorkloadModel& model);

}  // namespace ste::bench

#endif  // STE_BENCH_DISTRIBUTED_SYNTHETIC_WORKLOAD_H_
