// Test cases' own dependencies (case_split.h).
#include "ste/case_split.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "ste/selection_index.h"
#include "ste/test_scope.h"

namespace ste {
namespace {

constexpr std::string_view kUnitText = "\x01ste-def:";
constexpr std::string_view kUnitPlace = "\x01ste-at:";

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // the rule writes uppercase only
}

// TestDependencies::case_order of the test whose scope is `own`: its case
// scopes (one level beneath `own`) by the n of their first entry, when one
// process entered them all and every case scope in `deps` is among them;
// otherwise empty.
std::vector<std::string> CaseOrder(const TestDependencies& all, const std::string& own,
                                   const TestDependencies& deps) {
  auto is_case = [&](const std::string& scope) {
    return scope.size() > own.size() + 1 && ScopeContains(own, scope) &&
           scope.find('/', own.size() + 1) == std::string::npos;
  };
  std::vector<std::pair<uint64_t, std::string>> entered;  // (n, name)
  uint32_t pid = 0;
  for (const auto& [scope, entry] : all.scope_entries) {
    if (!is_case(scope)) continue;
    if (entry.first == 0 || (pid != 0 && entry.first != pid)) return {};
    pid = entry.first;
    entered.emplace_back(entry.second, scope.substr(own.size() + 1));
  }
  for (const ScopeDependencies& s : deps.scopes) {
    if (is_case(s.scope) && !all.scope_entries.count(s.scope)) return {};
  }
  std::sort(entered.begin(), entered.end());
  std::vector<std::string> order;
  for (auto& [n, name] : entered) {
    if (!order.empty() && order.back() == name) return {};  // (two scopes, one name: cannot be)
    order.push_back(std::move(name));
  }
  return order;
}

}  // namespace

bool IsCaseOwnKind(const DepKey& key) {
  if (key.kind != DepKind::kContent) return false;
  const std::string_view path = key.path;
  const size_t slash = path.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return last.substr(0, kUnitText.size()) == kUnitText ||
         last.substr(0, kUnitPlace.size()) == kUnitPlace;
}

// A content key of a plain file (no view: views hold \x01 in their path).
bool IsPlainRead(const DepKey& key) {
  return key.kind == DepKind::kContent && key.path.find('\x01') == std::string::npos;
}

void SplitCaseScopes(const TestDependencies& all, const std::string& test, TestDependencies* deps,
                     bool reads_own) {
  const std::string own = ScopeOfTest(test);
  deps->case_order = CaseOrder(all, own, *deps);
  std::set<DepKey> lifted;
  std::vector<ScopeDependencies> kept;
  for (ScopeDependencies& s : deps->scopes) {
    if (s.scope == own || !ScopeContains(own, s.scope)) {
      kept.push_back(std::move(s));
      continue;
    }
    const bool case_scope = s.scope.find('/', own.size() + 1) == std::string::npos;
    const bool split = case_scope && !all.unsplit_scopes.count(s.scope);
    ScopeDependencies mine{s.scope, {}};
    for (DepKey& k : s.deps) {
      if (split && (IsCaseOwnKind(k) || (reads_own && IsPlainRead(k)))) {
        mine.deps.push_back(std::move(k));
      } else {
        lifted.insert(std::move(k));
      }
    }
    if (!mine.deps.empty()) kept.push_back(std::move(mine));
  }
  if (!lifted.empty()) {
    auto it = std::find_if(kept.begin(), kept.end(),
                           [&](const ScopeDependencies& s) { return s.scope == own; });
    if (it == kept.end()) {
      kept.push_back(ScopeDependencies{own, {}});
      it = kept.end() - 1;
    }
    std::vector<DepKey> merged;
    std::set_union(it->deps.begin(), it->deps.end(), lifted.begin(), lifted.end(),
                   std::back_inserter(merged));
    it->deps = std::move(merged);
  }
  std::sort(kept.begin(), kept.end(),
            [](const ScopeDependencies& a, const ScopeDependencies& b) { return a.scope < b.scope; });
  deps->scopes = std::move(kept);
}

std::optional<std::string> CaseOfScopeName(std::string_view name) {
  if (name.empty() || name == "%") return std::nullopt;
  std::string out;
  for (size_t i = 0; i < name.size(); i++) {
    if (name[i] != '%') {
      out += name[i];
      continue;
    }
    if (i + 2 >= name.size()) return std::nullopt;
    const int hi = HexDigit(name[i + 1]), lo = HexDigit(name[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;  // "%~<hash>" among them
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

}  // namespace ste
