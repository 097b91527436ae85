// Definition resolution: the definition tracker's records of a run turned
// into definition dependencies (definition_resolution.h), and the per-test
// fallback to file level (ApplyDefinitionFallback, log_reduction.h).
#include "definition_resolution.h"

#include <algorithm>
#include <memory>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ste/definitions.h"
#include "ste/selection_index.h"

namespace ste {
namespace {

bool Under(const std::string& dir, const std::string& path) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

// True (and *file, *line set) for a code record "<file>/\x01ste-code:<line>".
bool ParseCodeRecord(const std::string& path, std::string* file, uint32_t* line) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return false;
  std::string_view last = std::string_view(path).substr(slash + 1);
  if (last.substr(0, kCodeRecordPrefix.size()) != kCodeRecordPrefix) return false;
  std::string_view number = last.substr(kCodeRecordPrefix.size());
  if (!absl::SimpleAtoi(absl::string_view(number.data(), number.size()), line)) return false;
  *file = path.substr(0, slash);
  return true;
}

bool IsDataRecord(const std::string& path, std::string* file) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return false;
  if (std::string_view(path).substr(slash + 1) != kDataRecordName) return false;
  *file = path.substr(0, slash);
  return true;
}

}  // namespace

void ProcessCode::Touch(const std::string& scope) {
  if (std::find(scopes.begin(), scopes.end(), scope) == scopes.end()) scopes.push_back(scope);
}

bool ProcessCode::Take(const LogRecord& r) {
  if (r.kind != RecordKind::kAbsent && r.kind != RecordKind::kContent) return false;
  if (TakeSlowTracker(r)) return true;
  std::string file;
  uint32_t line = 0;
  const std::string_view p = r.path;
  const bool opens = p.substr(0, kDefsBeginPrefix.size()) == kDefsBeginPrefix;
  if (opens || p.substr(0, kDefsEndPrefix.size()) == kDefsEndPrefix) {
    if (opens) begin = true;
    end = !opens;
    Touch(r.scope);
    return true;
  }
  if (ParseCodeRecord(r.path, &file, &line)) {
    lines[r.scope][file].insert(line);
    Touch(r.scope);
    return true;
  }
  if (IsDataRecord(r.path, &file)) {
    data.insert(file);
    data_in[r.scope].insert(file);
    Touch(r.scope);
    return true;
  }
  return false;
}

void ResolveDefinitions(const std::vector<ProcessCode>& code, const ContentRecorders& content_by,
                        const PathPolicy& policy, std::map<std::string, std::set<DepKey>>* by_scope,
                        TestDependencies* out) {
  auto repo_file = [&](const std::string& abs, std::string* rel) {
    if (!Under(policy.root, abs)) return false;
    *rel = RepoRelative(policy.root, abs);
    return !policy.ignore.Matches(*rel);
  };
  std::vector<std::set<std::string>> ran(code.size()), data(code.size());
  std::vector<std::string> files;
  for (size_t i = 0; i < code.size(); i++) {
    for (const auto& [scope, by_file] : code[i].lines) {
      for (const auto& [abs, lines] : by_file) {
        std::string rel;
        if (!repo_file(abs, &rel)) continue;
        ran[i].insert(rel);
        files.push_back(abs);
      }
    }
    for (const std::string& abs : code[i].data) {
      std::string rel;
      if (repo_file(abs, &rel)) data[i].insert(rel);
    }
    if (code[i].begin && !code[i].end) {
      const std::vector<std::string>& s = code[i].scopes;
      for (size_t k = s.size() > 1 ? 1 : 0; k < s.size(); k++) out->untracked_scopes.insert(s[k]);
    }
  }
  policy.definitions->Prefetch(files);
  for (const auto& [scope, paths] : content_by) {
    for (const auto& [rel, procs] : paths) {
      bool replace = true;
      for (size_t p : procs) {
        replace = replace && code[p].begin && code[p].end && ran[p].count(rel) && !data[p].count(rel);
      }
      if (!replace) continue;
      if (!policy.definitions->Get(absl::StrCat(policy.root, "/", rel))->parsed) continue;
      std::set<DepKey>& deps = (*by_scope)[scope];
      deps.erase(DepKey{rel, DepKind::kContent});
      deps.insert(DepKey{DefinitionViewPath(rel, ""), DepKind::kContent});
      out->definition_files[scope].push_back(rel);
    }
  }
  // A file read as data is a content dependency where it was read, whether
  // or not the interceptor recorded that read there (a forked child's read
  // of a file its parent loaded is not: the parent's record is in its scope).
  for (const ProcessCode& c : code) {
    for (const auto& [scope, files] : c.data_in) {
      for (const std::string& abs : files) {
        std::string rel;
        if (repo_file(abs, &rel)) (*by_scope)[scope].insert(DepKey{rel, DepKind::kContent});
      }
    }
  }
  for (const ProcessCode& c : code) {
    for (const auto& [scope, by_file] : c.lines) {
      for (const auto& [abs, lines] : by_file) {
        std::string rel;
        if (!repo_file(abs, &rel)) continue;
        std::shared_ptr<const FileDefinitions> defs = policy.definitions->Get(abs);
        if (!defs->parsed) continue;
        std::set<DepKey>& deps = (*by_scope)[scope];
        deps.insert(DepKey{DefinitionViewPath(rel, ""), DepKind::kContent});
        for (uint32_t line : lines) {
          if (const DefinitionUnit* u = defs->UnitAt(line)) {
            deps.insert(DepKey{DefinitionViewPath(rel, u->name), DepKind::kContent});
          }
        }
      }
    }
  }
}

void ApplyDefinitionFallback(const TestDependencies& all, const std::string& test,
                             TestDependencies* deps) {
  const std::string own = ScopeOfTest(test);
  auto related = [&](const std::string& scope) {
    return ScopeContains(scope, own) || ScopeContains(own, scope);
  };
  bool tainted = false;
  for (const std::string& s : all.untracked_scopes) tainted = tainted || related(s);
  if (!tainted) return;
  std::set<DepKey> back;
  for (const auto& [scope, files] : all.definition_files) {
    if (!related(scope)) continue;
    for (const std::string& f : files) back.insert(DepKey{f, DepKind::kContent});
  }
  if (back.empty()) return;
  ScopeDependencies* mine = nullptr;
  for (ScopeDependencies& s : deps->scopes) {
    if (s.scope == own) mine = &s;
  }
  if (mine == nullptr) {
    deps->scopes.push_back(ScopeDependencies{own, {}});
    std::sort(deps->scopes.begin(), deps->scopes.end(),
              [](const ScopeDependencies& a, const ScopeDependencies& b) { return a.scope < b.scope; });
    for (ScopeDependencies& s : deps->scopes) {
      if (s.scope == own) mine = &s;
    }
  }
  back.insert(mine->deps.begin(), mine->deps.end());
  mine->deps.assign(back.begin(), back.end());
}

// The slow tracer's note is per process, not per scope: no Touch.
bool ProcessCode::TakeSlowTracker(const LogRecord& r) {
  const std::string_view p = r.path;
  if (p.substr(0, kDefsSlowPrefix.size()) != kDefsSlowPrefix) return false;
  const std::string_view rest = p.substr(kDefsSlowPrefix.size());  // <pid>:<why>
  const size_t colon = rest.find(':');
  slow = std::string(colon == std::string_view::npos ? std::string_view("unknown") : rest.substr(colon + 1));
  return true;
}

void CountSlowTrackers(const std::vector<ProcessCode>& code, TestDependencies* out) {
  for (const ProcessCode& c : code) {
    if (!c.slow.empty()) out->slow_trackers[c.slow]++;
  }
}

}  // namespace ste
