// Copyright: the ste authors. See shards.h.
#include "ste/shards.h"

#include <algorithm>
#include <cmath>

namespace ste {

double DefaultTestSeconds(const std::vector<ShardInput>& tests) {
  std::vector<double> known;
  for (const ShardInput& t : tests) {
    if (t.seconds && std::isfinite(*t.seconds) && *t.seconds >= 0) known.push_back(*t.seconds);
  }
  if (known.empty()) return 1.0;
  std::sort(known.begin(), known.end());
  size_t mid = known.size() / 2;
  return known.size() % 2 ? known[mid] : (known[mid - 1] + known[mid]) / 2;
}

std::vector<Shard> SplitIntoShards(const std::vector<ShardInput>& tests, size_t n) {
  if (n == 0) n = 1;
  const size_t count = std::min(n, tests.size());
  std::vector<Shard> shards(count);
  for (size_t i = 0; i < count; i++) shards[i].index = i + 1;
  if (count == 0) return shards;
  const double fallback = DefaultTestSeconds(tests);
  struct Item {
    double seconds;
    const std::string* test;
  };
  std::vector<Item> items;
  items.reserve(tests.size());
  for (const ShardInput& t : tests) {
    bool usable = t.seconds && std::isfinite(*t.seconds) && *t.seconds >= 0;
    items.push_back({usable ? *t.seconds : fallback, &t.test});
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.seconds != b.seconds) return a.seconds > b.seconds;
    return *a.test < *b.test;
  });
  for (const Item& item : items) {
    // The least loaded shard; the lowest index among equals. An empty
    // shard first, so that each of the `count` shards gets a test.
    size_t best = 0;
    for (size_t i = 1; i < count; i++) {
      const Shard& s = shards[i];
      const Shard& b = shards[best];
      if (s.tests.empty() != b.tests.empty()) {
        if (s.tests.empty()) best = i;
      } else if (s.seconds < b.seconds) {
        best = i;
      }
    }
    shards[best].tests.push_back(*item.test);
    shards[best].seconds += item.seconds;
  }
  for (Shard& s : shards) std::sort(s.tests.begin(), s.tests.end());
  return shards;
}

}  // namespace ste
