// Copyright: the ste authors. Selected tests split into shards for a CI
// matrix (`ste select --shards N --format matrix`, `--shard K/N`).
//
// The split: longest first onto the least loaded shard (LPT), by the
// seconds each test took in the baseline; a test with no recorded duration
// (new since the baseline, or no baseline) counts as the median of the
// known durations (1 s when none is known). Ties go to the lowest shard
// index, tests of equal duration in path order: the same selection always
// gives the same shards, on every machine, so each CI job can compute its
// own shard (`--shard K/N`) and the union of the N jobs is the selection,
// each test exactly once.
//
// The number of shards is min(N, number of tests): no shard is empty, and
// no tests means no shards (an empty matrix a workflow can test for).
#ifndef STE_SHARDS_H_
#define STE_SHARDS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ste {

struct ShardInput {
  std::string test;
  std::optional<double> seconds;  // recorded duration, if any
};

struct Shard {
  size_t index = 0;                // 1-based
  std::vector<std::string> tests;  // in path order
  double seconds = 0;              // expected: the sum of its tests' durations
};

// The median of the known durations (1 s when there is none): what a test
// without one counts as.
double DefaultTestSeconds(const std::vector<ShardInput>& tests);

// Splits `tests` into min(n, tests.size()) shards (n >= 1), as above.
// Shards are numbered 1.. in the order of the result.
std::vector<Shard> SplitIntoShards(const std::vector<ShardInput>& tests, size_t n);

}  // namespace ste

#endif  // STE_SHARDS_H_
