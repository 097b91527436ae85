// Copyright: the ste authors. Internal to SelectionIndexBuilder: the rows it
// ingests (one set of path ids per test and kind) and their transposition
// into columns (one roaring bitmap of test ids per path and kind).
#ifndef STE_INDEXER_SRC_SELECTION_INDEX_TRANSPOSE_H_
#define STE_INDEXER_SRC_SELECTION_INDEX_TRANSPOSE_H_

#include <cstddef>
#include <cstdint>
#include <roaring/roaring.hh>
#include <vector>

#include "ste/dependency.h"

namespace ste {
namespace index_build {

// A set of uint32 as ascending, disjoint, non-adjacent runs, flattened:
// {start0, length0, start1, length1, ...}, every length >= 1.
using RunList = std::vector<uint32_t>;

// One test's path ids of one kind. A test's core dependencies are mostly
// consecutive path ids (a directory's files are interned together), kept as
// runs; ids with no neighbour in the set are kept apart, at 4 bytes each.
// Together they are the canonical run list of the set: `runs` holds its
// runs of length >= 2, `singles` the starts of its runs of length 1.
struct IdSet {
  RunList runs;
  std::vector<uint32_t> singles;  // ascending

  bool empty() const { return runs.empty() && singles.empty(); }
  uint64_t size() const;
};

// Adds `ids` (any order, duplicates allowed) to *set. Long ascending
// stretches cost one pass and a merge of run lists; ids out of order go
// through a bitset over their range when they are dense enough in it, else
// std::sort. Ascending input is the fast path.
void AddIds(const uint32_t* ids, size_t n, IdSet* set);

// The canonical run list of *set.
void ToRunList(const IdSet& set, RunList* out);

struct TestRow {
  IdSet by_kind[kDepKindCount];  // path ids, per kind (index kind - 1)
  bool opaque = false;
};

// The columns of the path-id space [0, n_paths): for every path and kind, the
// tests whose row holds it.
class Columns {
 public:
  // Transposes `rows` (indexed by test id) on `threads` threads.
  static Columns Transpose(const std::vector<TestRow>& rows, uint32_t n_paths,
                           int threads);

  // Requires: path_id < n_paths, kind valid.
  Roaring* Find(uint32_t path_id, DepKind kind);

  uint64_t pairs() const { return pairs_; }  // (test, path, kind) triples
  uint64_t runs() const { return runs_; }    // runs of tests they formed

 private:
  struct Slice {
    uint32_t first_path = 0;
    uint32_t end_path = 0;
    std::vector<Roaring> columns;  // (path - first_path) * kinds + kind - 1
    uint64_t pairs = 0;
    uint64_t runs = 0;
  };
  struct Scratch;  // one per thread, reused from slice to slice
  static void TransposeSlice(const std::vector<TestRow>& rows, Slice* slice,
                             Scratch* scratch);

  std::vector<uint32_t> bounds_;  // slice i covers [bounds_[i], bounds_[i+1])
  std::vector<Slice> slices_;
  uint64_t pairs_ = 0;
  uint64_t runs_ = 0;
};

}  // namespace index_build
}  // namespace ste

#endif  // STE_INDEXER_SRC_SELECTION_INDEX_TRANSPOSE_H_
