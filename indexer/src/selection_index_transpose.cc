// Copyright: the ste authors. Rows in, columns out (see
// selection_index_transpose.h).
//
// Transposition walks tests in id order, so for each (path, kind) it only
// has to remember the run of tests it is growing: a test that extends the
// run costs one compare. The path-id space is cut into slices narrow enough
// for their run state to stay in a core's L2 cache and holding about the
// same number of pairs; threads take slices from a queue, each reading only
// its slice of every row. Closed runs are logged, then grouped by column and
// added to that column's roaring bitmap in one go: adding each run the moment
// it closes touches a cold bitmap every time, and was the main cost of the
// first version (bench/index/README.md).
#include "selection_index_transpose.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace ste {
namespace index_build {

namespace {

// Paths per slice at most: its run state (8 bytes per path and kind used)
// then fits in L2.
constexpr uint32_t kSliceWidth = 32768;
// Granularity of the pair histogram used to cut slices.
constexpr uint32_t kBucket = 256;

// Run-length encodes ascending ids (duplicates allowed) into *out.
void EncodeSorted(const uint32_t* ids, size_t n, RunList* out) {
  out->clear();
  size_t i = 0;
  while (i < n) {
    const uint32_t start = ids[i++];
    uint64_t end = uint64_t{start} + 1;
    for (;;) {
      // Eight consecutive ids at once (vectorizes); the common case in a
      // directory of files interned together.
      while (i + 8 <= n && end + 8 <= UINT32_MAX) {
        bool consecutive = true;
        for (int j = 0; j < 8; ++j) {
          consecutive &= ids[i + j] == static_cast<uint32_t>(end) + j;
        }
        if (!consecutive) break;
        i += 8;
        end += 8;
      }
      if (i >= n || ids[i] > end) break;
      if (ids[i] == end) ++end;  // else a duplicate
      ++i;
    }
    out->push_back(start);
    out->push_back(static_cast<uint32_t>(end - start));
  }
}

// Run-length encodes ids in any order, all within [lo, hi], through a
// bitset over that range in *bits (left all zero on return).
void EncodeDense(const uint32_t* ids, size_t n, uint32_t lo, uint32_t hi,
                 std::vector<uint64_t>* bits, RunList* out) {
  const size_t words = (size_t{hi} - lo) / 64 + 1;
  if (bits->size() < words) bits->resize(words, 0);
  uint64_t* b = bits->data();
  for (size_t i = 0; i < n; ++i) {
    const uint32_t v = ids[i] - lo;
    b[v / 64] |= uint64_t{1} << (v % 64);
  }
  out->clear();
  for (size_t w = 0; w < words; ++w) {
    uint64_t word = b[w];
    b[w] = 0;
    while (word != 0) {
      const int start = __builtin_ctzll(word);
      const uint64_t rest = ~(word >> start);
      const int len = rest == 0 ? 64 - start : __builtin_ctzll(rest);
      const uint64_t first = uint64_t{lo} + w * 64 + start;
      if (!out->empty() &&
          uint64_t{(*out)[out->size() - 2]} + (*out)[out->size() - 1] ==
              first) {
        out->back() += len;  // continues the run from the previous word
      } else {
        out->push_back(static_cast<uint32_t>(first));
        out->push_back(static_cast<uint32_t>(len));
      }
      word = len + start >= 64 ? 0 : word & (~uint64_t{0} << (start + len));
    }
  }
}

// *out = a ∪ b.
void MergeRuns(const RunList& a, const RunList& b, RunList* out) {
  out->clear();
  size_t i = 0, j = 0;
  bool have = false;
  uint64_t cur_start = 0, cur_end = 0;
  auto take = [&](uint64_t s, uint64_t e) {
    if (have && s <= cur_end) {
      cur_end = std::max(cur_end, e);
      return;
    }
    if (have) {
      out->push_back(static_cast<uint32_t>(cur_start));
      out->push_back(static_cast<uint32_t>(cur_end - cur_start));
    }
    have = true;
    cur_start = s;
    cur_end = e;
  };
  while (i < a.size() || j < b.size()) {
    if (j >= b.size() || (i < a.size() && a[i] <= b[j])) {
      take(a[i], uint64_t{a[i]} + a[i + 1]);
      i += 2;
    } else {
      take(b[j], uint64_t{b[j]} + b[j + 1]);
      j += 2;
    }
  }
  if (have) {
    out->push_back(static_cast<uint32_t>(cur_start));
    out->push_back(static_cast<uint32_t>(cur_end - cur_start));
  }
}

// *set = the canonical run list `runs`, with exact capacities.
void Store(const RunList& runs, IdSet* set) {
  size_t singles = 0;
  for (size_t i = 1; i < runs.size(); i += 2) singles += runs[i] == 1;
  RunList long_runs;
  long_runs.reserve(runs.size() - 2 * singles);
  std::vector<uint32_t> single_ids;
  single_ids.reserve(singles);
  for (size_t i = 0; i < runs.size(); i += 2) {
    if (runs[i + 1] == 1) {
      single_ids.push_back(runs[i]);
    } else {
      long_runs.push_back(runs[i]);
      long_runs.push_back(runs[i + 1]);
    }
  }
  set->runs.swap(long_runs);
  set->singles.swap(single_ids);
}

}  // namespace

void AddIds(const uint32_t* ids, size_t n, IdSet* set) {
  if (n == 0) return;
  thread_local RunList fresh, part, merged;
  thread_local std::vector<uint32_t> leftover;
  thread_local std::vector<uint64_t> bits;
  // Encodes ids in no particular order: through a bitset over their range
  // (O(n + range/64)) when they are dense enough in it, else by sorting.
  auto encode_unordered = [&](const uint32_t* v, size_t count, RunList* out) {
    const auto [lo, hi] = std::minmax_element(v, v + count);
    // The bitset costs range/64 word scans, sorting ~count*log2(count)
    // compares: prefer the bitset while range/64 <= 8 * count, within 16 MiB.
    const size_t range = size_t{*hi} - *lo + 1;
    if (count >= 256 && range / 64 <= 8 * count && range <= (size_t{1} << 27)) {
      EncodeDense(v, count, *lo, *hi, &bits, out);
    } else {
      leftover.assign(v, v + count);
      std::sort(leftover.begin(), leftover.end());
      EncodeSorted(leftover.data(), leftover.size(), out);
    }
  };
  auto merge_in = [&](const RunList& more) {
    if (fresh.empty()) {
      fresh = more;
    } else {
      MergeRuns(fresh, more, &merged);
      fresh.swap(merged);
    }
  };
  // Long ascending stretches (say the core files, then the test's own) are
  // encoded as they are and merged; the ids of short ones are gathered and
  // encoded once. When most ids are in short stretches, all are encoded as
  // unordered.
  constexpr size_t kLongStretch = 64;
  constexpr int kMaxLongStretches = 64;
  size_t in_long = 0;
  for (size_t b = 0; b < n;) {
    size_t e = b + 1;
    while (e < n && ids[e] >= ids[e - 1]) ++e;
    if (e - b >= kLongStretch) in_long += e - b;
    b = e;
  }
  fresh.clear();
  if (in_long * 2 < n) {
    encode_unordered(ids, n, &fresh);
  } else {
    std::vector<uint32_t> short_ids;  // a minority
    int long_stretches = 0;
    for (size_t b = 0; b < n;) {
      size_t e = b + 1;
      while (e < n && ids[e] >= ids[e - 1]) ++e;
      if (e - b >= kLongStretch && long_stretches < kMaxLongStretches) {
        ++long_stretches;
        EncodeSorted(ids + b, e - b, &part);
        merge_in(part);
      } else {
        short_ids.insert(short_ids.end(), ids + b, ids + e);
      }
      b = e;
    }
    if (!short_ids.empty()) {
      encode_unordered(short_ids.data(), short_ids.size(), &part);
      merge_in(part);
    }
  }
  if (set->empty()) {
    Store(fresh, set);
    return;
  }
  uint64_t last_end = 0;
  if (!set->runs.empty()) {
    last_end = uint64_t{set->runs[set->runs.size() - 2]} + set->runs.back();
  }
  if (!set->singles.empty()) {
    last_end = std::max(last_end, uint64_t{set->singles.back()} + 1);
  }
  if (fresh[0] > last_end) {  // all after the set: append
    for (size_t i = 0; i < fresh.size(); i += 2) {
      if (fresh[i + 1] == 1) {
        set->singles.push_back(fresh[i]);
      } else {
        set->runs.push_back(fresh[i]);
        set->runs.push_back(fresh[i + 1]);
      }
    }
    return;
  }
  ToRunList(*set, &part);
  MergeRuns(part, fresh, &merged);
  Store(merged, set);
}

uint64_t IdSet::size() const {
  uint64_t n = singles.size();
  for (size_t i = 1; i < runs.size(); i += 2) n += runs[i];
  return n;
}

void ToRunList(const IdSet& set, RunList* out) {
  out->clear();
  out->reserve(set.runs.size() + 2 * set.singles.size());
  size_t i = 0, j = 0;
  while (i < set.runs.size() || j < set.singles.size()) {
    if (j == set.singles.size() ||
        (i < set.runs.size() && set.runs[i] < set.singles[j])) {
      out->push_back(set.runs[i]);
      out->push_back(set.runs[i + 1]);
      i += 2;
    } else {
      out->push_back(set.singles[j++]);
      out->push_back(1);
    }
  }
}

namespace {
struct Run {  // tests [start, end)
  uint32_t start = 0;
  uint32_t end = 0;
};
struct ClosedRun {
  uint32_t state_index;
  uint32_t start;
  uint32_t end;
};
}  // namespace

// Buffers kept across slices: at the harsh end (5e8 short runs) they are
// ~100 MB per slice, and allocating them afresh page-faulted for seconds.
struct Columns::Scratch {
  std::vector<uint32_t> run_start, run_end;
  std::vector<ClosedRun> closed;
  std::vector<size_t> begin, next;
  std::vector<Run> grouped;
  std::vector<uint32_t> lone;
};

Columns Columns::Transpose(const std::vector<TestRow>& rows, uint32_t n_paths,
                           int threads) {
  // Cut slices from a histogram of pairs per kBucket paths, sampled.
  const size_t n_buckets = (size_t{n_paths} + kBucket - 1) / kBucket;
  std::vector<uint64_t> histogram(n_buckets, 0);
  const size_t stride = std::max<size_t>(1, rows.size() / 4096);
  uint64_t sampled = 0;
  for (size_t t = 0; t < rows.size(); t += stride) {
    for (const IdSet& set : rows[t].by_kind) {
      for (uint32_t v : set.singles) {
        ++histogram[v / kBucket];
        ++sampled;
      }
      const RunList& runs = set.runs;
      for (size_t i = 0; i < runs.size(); i += 2) {
        uint64_t a = runs[i];
        const uint64_t b = a + runs[i + 1];
        while (a < b) {
          const uint64_t bucket_end = (a / kBucket + 1) * kBucket;
          const uint64_t e = std::min(b, bucket_end);
          histogram[a / kBucket] += e - a;
          sampled += e - a;
          a = e;
        }
      }
    }
  }
  const uint64_t target = std::max<uint64_t>(
      1, sampled / (static_cast<uint64_t>(std::max(1, threads)) * 32));
  Columns c;
  c.bounds_.push_back(0);
  uint64_t acc = 0;
  for (size_t b = 0; b < n_buckets; ++b) {
    const uint32_t bucket_end = static_cast<uint32_t>(
        std::min<uint64_t>(n_paths, uint64_t{b + 1} * kBucket));
    acc += histogram[b];
    if (acc >= target || bucket_end - c.bounds_.back() >= kSliceWidth ||
        bucket_end == n_paths) {
      c.bounds_.push_back(bucket_end);
      acc = 0;
    }
  }
  c.slices_.resize(c.bounds_.size() - 1);
  for (size_t i = 0; i < c.slices_.size(); ++i) {
    c.slices_[i].first_path = c.bounds_[i];
    c.slices_[i].end_path = c.bounds_[i + 1];
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int j = 0; j < std::max(1, threads); ++j) {
    workers.emplace_back([&rows, &c, &next] {
      Scratch scratch;
      for (size_t i; (i = next.fetch_add(1)) < c.slices_.size();) {
        TransposeSlice(rows, &c.slices_[i], &scratch);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  for (const Slice& s : c.slices_) {
    c.pairs_ += s.pairs;
    c.runs_ += s.runs;
  }
  return c;
}

Roaring* Columns::Find(uint32_t path_id, DepKind kind) {
  auto it = std::upper_bound(bounds_.begin(), bounds_.end(), path_id);
  Slice& s = slices_[(it - bounds_.begin()) - 1];
  return &s.columns[size_t{path_id - s.first_path} * kDepKindCount +
                    static_cast<int>(kind) - 1];
}

void Columns::TransposeSlice(const std::vector<TestRow>& rows, Slice* slice,
                             Scratch* scratch) {
  const uint32_t first = slice->first_path;
  const uint32_t last = slice->end_path;
  const size_t width = last - first;
  const size_t n_columns = width * kDepKindCount;
  // The run being grown per (kind, path), as two arrays indexed
  // kind_index * width + (path - first): `run_end` is read for every pair,
  // `run_start` only when a run closes. end == start is "no run"; extending
  // {0, 0} at test 0 correctly yields [0, 1).
  std::vector<uint32_t>& run_start = scratch->run_start;
  std::vector<uint32_t>& run_end = scratch->run_end;
  std::vector<ClosedRun>& closed = scratch->closed;
  run_start.assign(n_columns, 0);
  run_end.assign(n_columns, 0);
  closed.clear();
  uint64_t n_pairs = 0;
  auto restart = [&](size_t i, uint32_t t) {
    if (run_end[i] > run_start[i]) {
      closed.push_back(
          ClosedRun{static_cast<uint32_t>(i), run_start[i], run_end[i]});
    }
    run_start[i] = t;
    run_end[i] = t + 1;
  };
  for (uint32_t t = 0; t < rows.size(); ++t) {
    for (int k = 0; k < kDepKindCount; ++k) {
      const IdSet& set = rows[t].by_kind[k];
      const size_t base = width * k - first;
      uint32_t* ends = run_end.data();
      const auto single_begin =
          std::lower_bound(set.singles.begin(), set.singles.end(), first);
      for (auto it = single_begin; it != set.singles.end() && *it < last;
           ++it) {
        const size_t i = base + *it;
        ++n_pairs;
        if (ends[i] == t) {
          ends[i] = t + 1;
        } else {
          restart(i, t);
        }
      }
      const RunList& runs = set.runs;
      const size_t n_runs = runs.size() / 2;
      size_t lo = 0, hi = n_runs;  // first run ending after `first`
      while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (uint64_t{runs[2 * mid]} + runs[2 * mid + 1] <= first) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      for (size_t r = lo; r < n_runs && runs[2 * r] < last; ++r) {
        size_t i = base + std::max(runs[2 * r], first);
        const size_t e =
            base +
            std::min<uint64_t>(uint64_t{runs[2 * r]} + runs[2 * r + 1], last);
        n_pairs += e - i;
        while (i < e) {
          // Eight runs that all go on (vectorizes): the common case.
          if (i + 8 <= e) {
            bool all_extend = true;
            for (int j = 0; j < 8; ++j) all_extend &= ends[i + j] == t;
            if (all_extend) {
              for (int j = 0; j < 8; ++j) ends[i + j] = t + 1;
              i += 8;
              continue;
            }
          }
          if (ends[i] == t) {
            ends[i] = t + 1;
          } else {
            restart(i, t);
          }
          ++i;
        }
      }
    }
  }
  for (size_t i = 0; i < n_columns; ++i) {
    if (run_end[i] > run_start[i]) {
      closed.push_back(
          ClosedRun{static_cast<uint32_t>(i), run_start[i], run_end[i]});
    }
  }

  // Group by state index: count, prefix-sum, scatter (stable: each column's
  // runs stay in test order).
  std::vector<size_t>& begin = scratch->begin;
  std::vector<size_t>& next = scratch->next;
  std::vector<Run>& grouped = scratch->grouped;
  begin.assign(n_columns + 1, 0);
  for (const ClosedRun& r : closed) ++begin[r.state_index + 1];
  for (size_t i = 0; i < n_columns; ++i) begin[i + 1] += begin[i];
  grouped.resize(closed.size());
  next.assign(begin.begin(), begin.end() - 1);
  for (const ClosedRun& r : closed) {
    grouped[next[r.state_index]++] = Run{r.start, r.end};
  }
  slice->runs = closed.size();
  slice->pairs = n_pairs;

  slice->columns.resize(n_columns);
  for (int k = 0; k < kDepKindCount; ++k) {
    for (size_t off = 0; off < width; ++off) {
      const size_t i = width * k + off;
      if (begin[i] == begin[i + 1]) continue;
      roaring_bitmap_t* col = &slice->columns[off * kDepKindCount + k].roaring;
      // Lone tests go in batches through add_many, which keeps the
      // container at hand; runs go in as ranges.
      std::vector<uint32_t>& lone = scratch->lone;
      lone.clear();
      for (size_t j = begin[i]; j < begin[i + 1]; ++j) {
        const Run& r = grouped[j];
        if (r.end - r.start == 1) {
          lone.push_back(r.start);
          continue;
        }
        if (!lone.empty()) {
          roaring_bitmap_add_many(col, lone.size(), lone.data());
          lone.clear();
        }
        roaring_bitmap_add_range_closed(col, r.start, r.end - 1);
      }
      if (!lone.empty()) {
        roaring_bitmap_add_many(col, lone.size(), lone.data());
      }
      // Compact while it is in cache; keeps the peak memory near the
      // final index size.
      roaring_bitmap_run_optimize(col);
      roaring_bitmap_shrink_to_fit(col);
    }
  }
}

}  // namespace index_build
}  // namespace ste
