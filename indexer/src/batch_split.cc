// The batch split (batch_split.h): a batch runner's results file and
// reduced logs divided into one outcome and one dependency set per test.
#include "ste/batch_split.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ste/selection_index.h"

namespace ste {

std::map<std::string, RunnerResult> ParseRunnerResults(std::string_view text) {
  std::map<std::string, RunnerResult> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) break;  // a torn last line: skipped
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    std::vector<std::string_view> f;
    for (size_t i = 0, start = 0; i <= line.size(); i++) {
      if (f.size() < 3 && (i == line.size() || line[i] == '\t')) {
        f.push_back(line.substr(start, i - start));
        start = i + 1;
        if (f.size() == 3 && i < line.size()) f.push_back(line.substr(start));
      }
    }
    if (f.size() != 4 || f[3].empty()) continue;
    RunnerResult r;
    std::optional<TestOutcome> outcome = ParseTestOutcome(f[0]);
    if (!outcome) continue;
    r.outcome = *outcome;
    if (!absl::SimpleAtoi(absl::string_view(f[1].data(), f[1].size()), &r.exit_code)) continue;
    // A duration is wall time: "nan", "inf" or "-1" (which SimpleAtod
    // reads) would reach the store, whose exports refuse them.
    if (!absl::SimpleAtod(absl::string_view(f[2].data(), f[2].size()), &r.seconds) ||
        !std::isfinite(r.seconds) || r.seconds < 0) {
      r.seconds = 0;
    }
    out[std::string(f[3])] = r;
  }
  return out;
}

BatchTestOutcome OutcomeInBatch(const std::map<std::string, RunnerResult>& results,
                                const std::string& test, int runner_exit_code,
                                double runner_seconds, size_t batch_size,
                                std::string_view kind_name) {
  BatchTestOutcome out;
  const std::string kind(kind_name);
  auto it = results.find(test);
  if (it == results.end()) {
    out.started = false;
    out.exit_code = runner_exit_code;
    out.seconds = runner_seconds / static_cast<double>(batch_size);
    out.error = absl::StrCat("the ", kind, " runner gave no result for it (runner exit ",
                             runner_exit_code, ")");
  } else if (it->second.outcome == TestOutcome::kError) {
    out.started = false;
    out.exit_code = it->second.exit_code;
    out.seconds = it->second.seconds;
    out.error = absl::StrCat("the ", kind, " runner could not run it (exit ", it->second.exit_code, ")");
  } else {
    out.exit_code = it->second.outcome == TestOutcome::kPassed ? 0 : (it->second.exit_code ? it->second.exit_code : 1);
    out.seconds = it->second.seconds;
  }
  return out;
}

std::vector<TestDependencies> SplitBatchDependencies(const TestDependencies& whole,
                                                     const std::vector<std::string>& tests) {
  TestDependencies all = whole;
  // The runner's parent touches the test files it was given (a stat, an
  // existence check) before forking, in the shared scope: such a record is
  // the dependency of that test alone, not of every test. So is the module
  // view of a test file there (definition granularity: a check of a source
  // is its module view). Any other part of a test file recorded there (a
  // unit the parent ran, a constant it named: conftest.py importing from a
  // test file) stays shared: another test's child that runs it again does
  // not record it again (the tracker pins what the parent ran; ste_defs.py).
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < tests.size(); i++) index_of[tests[i]] = i;
  std::vector<std::vector<DepKey>> moved(tests.size());
  for (ScopeDependencies& s : all.scopes) {
    bool shared = false;
    for (const std::string& t : tests) {
      shared = shared || (ScopeContains(s.scope, ScopeOfTest(t)) && s.scope != ScopeOfTest(t));
    }
    if (!shared) continue;
    std::vector<DepKey> kept;
    for (DepKey& k : s.deps) {
      std::optional<View> view = ParseView(k.path);
      const bool module_view = view && view->kind == ViewKind::kDefinition && view->part == DefinitionPart::kModule;
      auto it = index_of.find(module_view ? view->dir : k.path);
      if (it != index_of.end() && (!view || module_view)) {
        moved[it->second].push_back(std::move(k));
      } else {
        kept.push_back(std::move(k));
      }
    }
    s.deps = std::move(kept);
  }
  std::vector<TestDependencies> out(tests.size());
  for (size_t i = 0; i < tests.size(); i++) {
    TestDependencies& d = out[i];
    const std::string own = ScopeOfTest(tests[i]);
    auto related = [&](const std::string& scope) {
      return ScopeContains(scope, own) || ScopeContains(own, scope);
    };
    for (const ScopeDependencies& s : all.scopes) {
      if (related(s.scope) && !s.deps.empty()) d.scopes.push_back(s);
    }
    if (!moved[i].empty()) {
      std::sort(moved[i].begin(), moved[i].end());
      moved[i].erase(std::unique(moved[i].begin(), moved[i].end()), moved[i].end());
      ScopeDependencies* mine = nullptr;
      for (ScopeDependencies& s : d.scopes) {
        if (s.scope == own) mine = &s;
      }
      if (mine == nullptr) {
        d.scopes.push_back(ScopeDependencies{own, {}});
        mine = &d.scopes.back();
      }
      std::vector<DepKey> merged;
      std::set_union(mine->deps.begin(), mine->deps.end(), moved[i].begin(), moved[i].end(),
                     std::back_inserter(merged));
      mine->deps = std::move(merged);
      std::sort(d.scopes.begin(), d.scopes.end(),
                [](const ScopeDependencies& a, const ScopeDependencies& b) { return a.scope < b.scope; });
    }
    for (size_t k = 0; k < all.opaque_reasons.size(); k++) {
      const std::string& scope = k < all.opaque_scopes.size() ? all.opaque_scopes[k] : "";
      if (scope.empty() || related(scope)) {
        d.opaque = true;
        d.opaque_reasons.push_back(all.opaque_reasons[k]);
        d.opaque_scopes.push_back(scope);
      }
    }
    // What a test's scope (or one beneath it) wrote is the test's; the
    // runner's own scopes above it write for every test: no one's.
    for (const auto& [scope, paths] : all.writes) {
      if (ScopeContains(own, scope)) d.writes[scope] = paths;
    }
    ApplyDefinitionFallback(all, tests[i], &d);
  }
  return out;
}

}  // namespace ste
