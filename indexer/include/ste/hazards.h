// Hazards between tests: an order dependence seen in a baseline.
//
// A test that writes a file and leaves it behind (TestDependencies::writes:
// outside its private temporary directory, its logs and inventory.ignore)
// can change the outcome of a test that reads that file, or looks for it,
// or lists its directory, when it runs first. Such a pair (writer, reader)
// is a hazard: the two tests pass or fail by the order they run in. Found
// from the baseline: its writes (the blob kWritesBlob, baseline_loader.h)
// and its index (who depends on the written path: content, absent, or the
// listing of its directory). A test is never its own reader.
#ifndef STE_HAZARDS_H_
#define STE_HAZARDS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/dependency.h"
#include "ste/selection_index.h"

namespace ste {

struct Hazard {
  std::string writer;  // the test that writes `path`
  std::string path;    // repo-relative, or absolute outside the repo
  std::string reader;  // a test that depends on it
  DepKind kind = DepKind::kContent;  // how: content, absent, listing (of path's directory)
};

// Every hazard, sorted by writer, path, reader, kind; with a `limit`, the
// first `limit` found (writers in order, then their paths, then readers by
// id), sorted, and in *total how many there are in all, counted without
// making them (a file most tests read, written by a test, is as many
// hazards as readers). An unreadable bitmap of the index is the error.
absl::StatusOr<std::vector<Hazard>> FindHazards(const SelectionIndex& index,
                                                const std::map<std::string, std::vector<std::string>>& writes,
                                                size_t limit = SIZE_MAX, size_t* total = nullptr);

}  // namespace ste

#endif  // STE_HAZARDS_H_
