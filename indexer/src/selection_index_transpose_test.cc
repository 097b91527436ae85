// Copyright: the ste authors.
#include "selection_index_transpose.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace ste {
namespace index_build {
namespace {

using ::testing::ElementsAre;

// The canonical run list, checking the IdSet invariants on the way.
RunList Canon(const IdSet& set) {
  for (size_t i = 1; i < set.runs.size(); i += 2) EXPECT_GE(set.runs[i], 2u);
  EXPECT_TRUE(std::is_sorted(set.singles.begin(), set.singles.end()));
  RunList runs;
  ToRunList(set, &runs);
  return runs;
}

std::vector<uint32_t> Expand(const IdSet& set) {
  const RunList runs = Canon(set);
  std::vector<uint32_t> out;
  for (size_t i = 0; i < runs.size(); i += 2) {
    EXPECT_GE(runs[i + 1], 1u);
    if (i > 0) {  // ascending, disjoint, not adjacent
      EXPECT_GT(uint64_t{runs[i]}, uint64_t{runs[i - 2]} + runs[i - 1]);
    }
    for (uint64_t v = runs[i]; v < uint64_t{runs[i]} + runs[i + 1]; ++v) {
      out.push_back(static_cast<uint32_t>(v));
    }
  }
  EXPECT_EQ(out.size(), set.size());
  return out;
}

void Add(std::vector<uint32_t> ids, IdSet* set) {
  AddIds(ids.data(), ids.size(), set);
}

TEST(SelectionIndexRunListTest, EncodesRuns) {
  IdSet set;
  Add({1, 2, 3, 3, 5, 7, 8}, &set);
  EXPECT_THAT(Canon(set), ElementsAre(1, 3, 5, 1, 7, 2));
  EXPECT_THAT(set.singles, ElementsAre(5));
  EXPECT_EQ(set.size(), 6u);
  Add({10, 11, 13}, &set);  // appended
  EXPECT_THAT(Canon(set), ElementsAre(1, 3, 5, 1, 7, 2, 10, 2, 13, 1));
  Add({4, 6, 9, 12}, &set);  // merged, runs fuse
  EXPECT_THAT(Canon(set), ElementsAre(1, 13));
  EXPECT_TRUE(set.singles.empty());
  Add({}, &set);
  EXPECT_THAT(Canon(set), ElementsAre(1, 13));
  IdSet top;
  Add({UINT32_MAX - 1, UINT32_MAX - 2, 0}, &top);
  EXPECT_THAT(Canon(top), ElementsAre(0, 1, UINT32_MAX - 2, 2));
}

TEST(SelectionIndexRunListTest, ShuffledDenseInput) {
  std::mt19937 rng(3);
  for (uint32_t base : {0u, 1000u, UINT32_MAX - 1000}) {
    std::vector<uint32_t> ids;
    std::set<uint32_t> want;
    for (uint32_t v = base; v < base + 999; ++v) {
      if (v % 64 == 63 || rng() % 7 != 0) {  // runs across word boundaries
        ids.push_back(v);
        ids.push_back(v);  // duplicates
        want.insert(v);
      }
    }
    std::shuffle(ids.begin(), ids.end(), rng);
    IdSet runs;
    Add(ids, &runs);
    ASSERT_EQ(Expand(runs), std::vector<uint32_t>(want.begin(), want.end()))
        << "base " << base;
  }
  {  // sparse in a wide range: sorted instead
    std::vector<uint32_t> sparse;
    for (int i = 0; i < 3000; ++i) sparse.push_back(rng() % 100000000);
    std::set<uint32_t> want(sparse.begin(), sparse.end());
    IdSet set;
    Add(sparse, &set);
    ASSERT_EQ(Expand(set), std::vector<uint32_t>(want.begin(), want.end()));
  }
  IdSet all;  // one run spanning many words
  std::vector<uint32_t> ids(4096);
  std::iota(ids.begin(), ids.end(), 5);
  std::shuffle(ids.begin(), ids.end(), rng);
  Add(ids, &all);
  EXPECT_THAT(Canon(all), ElementsAre(5, 4096));
}

TEST(SelectionIndexRunListTest, MatchesASetForAnyInputOrder) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    IdSet runs;
    std::set<uint32_t> want;
    const int calls = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < calls; ++c) {
      std::vector<uint32_t> ids;
      const int stretches = 1 + static_cast<int>(rng() % 30);  // < and > 16
      for (int s = 0; s < stretches; ++s) {
        uint32_t v = rng() % 5000;
        const int len = static_cast<int>(rng() % 40);
        for (int i = 0; i < len; ++i) {
          ids.push_back(v);
          v += rng() % 3;  // repeats, steps of 1 (runs) and gaps
        }
      }
      if (round % 5 == 0) std::shuffle(ids.begin(), ids.end(), rng);
      want.insert(ids.begin(), ids.end());
      Add(ids, &runs);
    }
    ASSERT_EQ(Expand(runs), std::vector<uint32_t>(want.begin(), want.end()))
        << "round " << round;
  }
}

TEST(SelectionIndexRunListTest, TransposeMatchesRows) {
  std::mt19937 rng(11);
  const uint32_t n_paths = 70000;  // several slices and buckets
  std::vector<TestRow> rows(300);
  // want[k][p]: the tests holding path p with kind index k.
  std::vector<std::vector<uint32_t>> want[kDepKindCount];
  for (auto& w : want) w.resize(n_paths);
  uint64_t pairs = 0;
  for (uint32_t t = 0; t < rows.size(); ++t) {
    for (int k = 0; k < kDepKindCount; ++k) {
      std::vector<uint32_t> ids;
      if (k == 0) {  // a shared block most tests read, for long runs
        for (uint32_t p = 30000; p < 40000; ++p) {
          if (rng() % 50 != 0) ids.push_back(p);
        }
      }
      for (int i = 0; i < 30; ++i) ids.push_back(rng() % n_paths);
      for (uint32_t p : ids) {
        if (want[k][p].empty() || want[k][p].back() != t) {
          want[k][p].push_back(t);
          ++pairs;
        }
      }
      Add(ids, &rows[t].by_kind[k]);
    }
  }
  for (int threads : {1, 2, 5}) {
    Columns columns = Columns::Transpose(rows, n_paths, threads);
    for (int k = 0; k < kDepKindCount; ++k) {
      for (uint32_t p = 0; p < n_paths; ++p) {
        const Roaring* col = columns.Find(p, static_cast<DepKind>(k + 1));
        std::vector<uint32_t> got(col->cardinality());
        col->toUint32Array(got.data());
        ASSERT_EQ(got, want[k][p]) << "path " << p << " kind " << k + 1;
      }
    }
    EXPECT_EQ(columns.pairs(), pairs);
    EXPECT_LE(columns.runs(), pairs);
  }
}

TEST(SelectionIndexRunListTest, TransposeNothing) {
  std::vector<TestRow> rows(3);
  Columns none = Columns::Transpose(rows, 0, 2);
  EXPECT_EQ(none.pairs(), 0u);
  Columns empty_rows = Columns::Transpose(rows, 5, 2);
  EXPECT_TRUE(empty_rows.Find(4, DepKind::kListing)->isEmpty());
  Columns no_tests = Columns::Transpose({}, 5, 2);
  EXPECT_TRUE(no_tests.Find(0, DepKind::kContent)->isEmpty());
}

}  // namespace
}  // namespace index_build
}  // namespace ste
