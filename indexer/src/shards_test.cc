// Copyright: the ste authors.
#include "ste/shards.h"

#include <map>
#include <set>

#include "gtest/gtest.h"

namespace ste {
namespace {

std::vector<ShardInput> Inputs(const std::map<std::string, std::optional<double>>& m) {
  std::vector<ShardInput> out;
  for (const auto& [test, seconds] : m) out.push_back({test, seconds});
  return out;
}

TEST(Shards, NoTestsGiveNoShards) {
  EXPECT_TRUE(SplitIntoShards({}, 4).empty());
}

TEST(Shards, NeverMoreShardsThanTestsAndNoneEmpty) {
  std::vector<Shard> s = SplitIntoShards(Inputs({{"a", 1.0}, {"b", 2.0}}), 5);
  ASSERT_EQ(s.size(), 2u);
  for (const Shard& shard : s) EXPECT_EQ(shard.tests.size(), 1u);
  EXPECT_EQ(s[0].index, 1u);
  EXPECT_EQ(s[1].index, 2u);
}

TEST(Shards, ZeroMeansOne) {
  std::vector<Shard> s = SplitIntoShards(Inputs({{"a", 1.0}, {"b", 2.0}}), 0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].tests, (std::vector<std::string>{"a", "b"}));
  EXPECT_DOUBLE_EQ(s[0].seconds, 3.0);
}

TEST(Shards, LongestFirstOntoTheLeastLoaded) {
  // 8, 7, 6, 5, 4 onto 2 shards: 8 -> 1; 7 -> 2; 6 -> 2 (7 < 8); 5 -> 1
  // (8 < 13); 4 -> 1 (13 = 13: the lower index).
  std::vector<Shard> s =
      SplitIntoShards(Inputs({{"t8", 8.0}, {"t7", 7.0}, {"t6", 6.0}, {"t5", 5.0}, {"t4", 4.0}}), 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].tests, (std::vector<std::string>{"t4", "t5", "t8"}));
  EXPECT_EQ(s[1].tests, (std::vector<std::string>{"t6", "t7"}));
  EXPECT_DOUBLE_EQ(s[0].seconds, 17.0);
  EXPECT_DOUBLE_EQ(s[1].seconds, 13.0);
}

TEST(Shards, AnUnknownDurationCountsAsTheMedian) {
  EXPECT_DOUBLE_EQ(DefaultTestSeconds(Inputs({{"a", 1.0}, {"b", 3.0}, {"c", 10.0}, {"d", std::nullopt}})), 3.0);
  EXPECT_DOUBLE_EQ(DefaultTestSeconds(Inputs({{"a", 1.0}, {"b", 3.0}})), 2.0);
  EXPECT_DOUBLE_EQ(DefaultTestSeconds(Inputs({{"a", std::nullopt}})), 1.0);
  // A negative or non-finite recorded value is no duration.
  EXPECT_DOUBLE_EQ(DefaultTestSeconds(Inputs({{"a", -1.0}, {"b", 4.0}})), 4.0);
  std::vector<Shard> s = SplitIntoShards(Inputs({{"a", 1.0}, {"b", 3.0}, {"c", 10.0}, {"new", std::nullopt}}), 2);
  ASSERT_EQ(s.size(), 2u);
  // 10 -> 1; 3 (b) and 3 (new, the median): b -> 2, new -> 2 (3 < 10); 1 -> 2 (6 < 10).
  EXPECT_EQ(s[0].tests, (std::vector<std::string>{"c"}));
  EXPECT_EQ(s[1].tests, (std::vector<std::string>{"a", "b", "new"}));
  EXPECT_DOUBLE_EQ(s[1].seconds, 7.0);
}

TEST(Shards, EveryTestExactlyOnceAndTheSameSplitEveryTime) {
  std::vector<ShardInput> in;
  for (int i = 0; i < 1000; i++) {
    std::optional<double> d;
    if (i % 7) d = (i * 37 % 101) / 10.0;
    in.push_back({"tests/t" + std::to_string(i) + ".py", d});
  }
  for (size_t n : {1u, 2u, 3u, 7u, 64u}) {
    std::vector<Shard> a = SplitIntoShards(in, n);
    std::vector<ShardInput> reversed(in.rbegin(), in.rend());
    std::vector<Shard> b = SplitIntoShards(reversed, n);
    ASSERT_EQ(a.size(), n);
    std::multiset<std::string> seen;
    double max = 0, min = 1e300;
    for (size_t i = 0; i < a.size(); i++) {
      EXPECT_EQ(a[i].tests, b[i].tests) << "the input order must not matter";
      seen.insert(a[i].tests.begin(), a[i].tests.end());
      max = std::max(max, a[i].seconds);
      min = std::min(min, a[i].seconds);
    }
    EXPECT_EQ(seen.size(), in.size());
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), in.size());
    // LPT: no shard exceeds the lightest by more than the longest test.
    EXPECT_LE(max - min, 10.0 + 1e-9) << n;
  }
}

}  // namespace
}  // namespace ste
