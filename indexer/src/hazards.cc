// Copyright: the ste authors. Hazards between tests (ste/hazards.h).
#include "ste/hazards.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "absl/container/flat_hash_map.h"
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

std::vector<std::vector<std::string>> HazardGroups(const std::vector<Hazard>& hazards,
                                                    const std::vector<std::string>& tests,
                                                    size_t max_readers, size_t max_group) {
  absl::flat_hash_map<std::string_view, size_t> index;
  for (size_t i = 0; i < tests.size(); i++) index.emplace(tests[i], i);
  // Distinct readers per writer.
  std::map<std::string_view, std::set<std::string_view>> readers;
  for (const Hazard& h : hazards) readers[h.writer].insert(h.reader);
  // The pairs kept, as edges first -> then (test indexes).
  std::vector<std::pair<size_t, size_t>> edges;
  std::vector<size_t> parent(tests.size());
  for (size_t i = 0; i < parent.size(); i++) parent[i] = i;
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const Hazard& h : hazards) {
    if (readers[h.writer].size() > max_readers) continue;
    auto w = index.find(h.writer), r = index.find(h.reader);
    if (w == index.end() || r == index.end() || w->second == r->second) continue;
    if (h.kind == DepKind::kAbsent) {
      edges.emplace_back(r->second, w->second);
    } else {
      edges.emplace_back(w->second, r->second);
    }
    parent[find(w->second)] = find(r->second);
  }
  std::map<size_t, std::vector<size_t>> members;  // by root; members in test order
  for (const auto& [a, b] : edges) {
    members[find(a)];
    (void)b;
  }
  for (size_t i = 0; i < tests.size(); i++) {
    auto it = members.find(find(i));
    if (it != members.end()) it->second.push_back(i);
  }
  std::vector<std::vector<std::string>> groups;
  for (auto& [root, group] : members) {
    if (group.size() < 2 || group.size() > max_group) continue;
    // Kahn's order over the group's edges, the earliest test first; what a
    // cycle leaves, in test order.
    std::map<size_t, std::vector<size_t>> after;
    std::map<size_t, size_t> before;
    for (const auto& [a, b] : edges) {
      if (find(a) != root) continue;
      after[a].push_back(b);
      before[b]++;
    }
    std::set<size_t> ready, placed;
    for (size_t t : group) {
      if (before[t] == 0) ready.insert(t);
    }
    std::vector<std::string> order;
    while (!ready.empty()) {
      const size_t t = *ready.begin();
      ready.erase(ready.begin());
      placed.insert(t);
      order.push_back(tests[t]);
      for (size_t next : after[t]) {
        if (--before[next] == 0 && !placed.count(next)) ready.insert(next);
      }
    }
    for (size_t t : group) {
      if (!placed.count(t)) order.push_back(tests[t]);
    }
    groups.push_back(std::move(order));
  }
  return groups;
}

}  // namespace ste
