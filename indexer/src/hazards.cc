// Copyright: the ste authors. Hazards between tests (ste/hazards.h).
#include "ste/hazards.h"

#include <algorithm>
#include <tuple>

#include "ste/status_macros.h"
#include "ste/test_scope.h"

namespace ste {
namespace {

// The directory a listing of which sees `path`: "." for a top-level repo
// path, "/" for a top-level absolute one.
std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

absl::StatusOr<std::vector<Hazard>> FindHazards(const SelectionIndex& index,
                                                const std::map<std::string, std::vector<std::string>>& writes,
                                                size_t limit, size_t* total) {
  std::vector<Hazard> out;
  size_t count = 0;
  for (const auto& [writer, paths] : writes) {
    const std::optional<uint32_t> writer_id = index.FindTest(ScopeOfTest(writer));
    for (const std::string& path : paths) {
      const std::pair<std::string, DepKind> keys[] = {
          {path, DepKind::kContent}, {path, DepKind::kAbsent}, {DirectoryOf(path), DepKind::kListing}};
      for (const auto& [key, kind] : keys) {
        STE_ASSIGN_OR_RETURN(Roaring readers, index.Lookup(key, kind));
        if (writer_id) readers.remove(*writer_id);
        count += readers.cardinality();
        for (uint32_t id : readers) {
          if (out.size() >= limit) break;
          out.push_back(Hazard{writer, path, std::string(TestOfScope(index.test_scope(id))), kind});
        }
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Hazard& a, const Hazard& b) {
    return std::tie(a.writer, a.path, a.reader, a.kind) < std::tie(b.writer, b.path, b.reader, b.kind);
  });
  if (total != nullptr) *total = count;
  return out;
}

}  // namespace ste
