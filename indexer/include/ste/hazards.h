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

// The tests a record build keeps on one worker, each group in the order
// its pairs ran when they were recorded: a reader of what the writer left
// (content, listing) after the writer; one that looked for it and did not
// find it (absent) before. Only tests in `tests` (the build's, in lease
// priority order) are grouped; ties and cycles are broken by that order.
// Left out, so that one file cannot put the build on one worker: a
// writer with more than `max_readers` readers (a file most tests read),
// and a group that would hold more than `max_group` tests. Every group has
// at least two tests; no test is in two.
std::vector<std::vector<std::string>> HazardGroups(const std::vector<Hazard>& hazards,
                                                    const std::vector<std::string>& tests,
                                                    size_t max_readers = 16, size_t max_group = 32);

}  // namespace ste

#endif  // STE_HAZARDS_H_
