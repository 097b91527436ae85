// Log reduction (log_reduction.h): the logs of one traced run to its
// dependency set, per scope. Pure but for lstat and realpath (a written
// file that is gone, a symlinked directory); the definition tracker's
// records are resolved in definition_resolution.cc.
#include "ste/log_reduction.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "definition_resolution.h"
#include "ste/environment.h"
#include "ste/inventory.h"

namespace ste {
namespace {

bool LstatExists(const std::string& abs) {
  struct stat st;
  return lstat(abs.c_str(), &st) == 0;
}

bool Under(const std::string& dir, const std::string& path) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

// Resolves the directory part of absolute paths through symlinks, once per
// directory. The file name itself is left alone: a symlinked *file* is an
// inventory entry whose hash covers what it points to.
class DirectoryResolver {
 public:
  // The path with its directory resolved, or "" if that changes nothing
  // (or the directory cannot be resolved).
  std::string Canonical(const std::string& abs) {
    size_t slash = abs.rfind('/');
    if (slash == 0 || slash == std::string::npos) return "";
    std::string dir = abs.substr(0, slash);
    auto [it, added] = dirs_.try_emplace(dir);
    if (added) {
      char real[PATH_MAX];
      if (realpath(dir.c_str(), real) != nullptr && dir != real) it->second = real;
    }
    if (it->second.empty()) return "";
    return it->second + abs.substr(slash);
  }

 private:
  absl::flat_hash_map<std::string, std::string> dirs_;  // "" = itself
};

// The directory of a view path: "." for one in the root, "/" for one in /.
std::string ViewDirectory(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The tracker's "/\x01ste-defs-scope:<pid>.<n>" (ste_defs.py): it made
// this scope's records afresh.
bool IsScopeMarker(const LogRecord& r) {
  constexpr std::string_view kPrefix = "/\x01ste-defs-scope:";
  return (r.kind == RecordKind::kAbsent || r.kind == RecordKind::kContent) &&
         std::string_view(r.path).substr(0, kPrefix.size()) == kPrefix;
}

// The (pid, n) of a `scope` marker; none when its name is malformed.
std::optional<std::pair<uint32_t, uint64_t>> ScopeMarkerEntry(const LogRecord& r) {
  constexpr std::string_view kPrefix = "/\x01ste-defs-scope:";
  const std::string_view rest = std::string_view(r.path).substr(kPrefix.size());
  const size_t dot = rest.find('.');
  uint32_t pid = 0;
  uint64_t n = 0;
  if (dot == std::string_view::npos || !absl::SimpleAtoi(absl::string_view(rest.data(), dot), &pid) ||
      !absl::SimpleAtoi(absl::string_view(rest.data() + dot + 1, rest.size() - dot - 1), &n) || pid == 0) {
    return std::nullopt;
  }
  return std::make_pair(pid, n);
}

// TestDependencies::scope_entries: the first entry of r.scope, or pid 0
// (no one order) when a second pid entered it too or a marker is
// malformed.
void NoteScopeEntry(const LogRecord& r, TestDependencies* out) {
  const std::optional<std::pair<uint32_t, uint64_t>> entry = ScopeMarkerEntry(r);
  auto [it, added] = out->scope_entries.try_emplace(r.scope, entry.value_or(std::make_pair(0u, uint64_t{0})));
  if (added || it->second.first == 0) return;
  if (!entry || entry->first != it->second.first) {
    it->second = {0, 0};
  } else if (entry->second < it->second.second) {
    it->second.second = entry->second;
  }
}

// TestDependencies::unsplit_scopes: where a tracked process recorded
// without a `scope` marker. (A module imported in a case, its own code
// run there, is cached for the later cases: what that import ran is the
// case's own and so selects it and every later case, the run-order rule.)
void NoteUnsplitScopes(const std::vector<ProcessCode>& code,
                       const std::vector<std::set<std::string>>& fresh, TestDependencies* out) {
  for (size_t li = 0; li < code.size(); li++) {
    const ProcessCode& c = code[li];
    if (!c.begin) continue;  // no tracker: no definition records at all
    for (const std::string& scope : c.scopes) {
      if (!fresh[li].count(scope)) out->unsplit_scopes.insert(scope);
    }
    for (const auto& [scope, files] : c.lines) {
      if (!fresh[li].count(scope)) out->unsplit_scopes.insert(scope);
    }
  }
}

// ste-pytest-ini (inventory.h, "Views"): the files one process's pytest
// read for its table only. Its startup hook stats "<file>/\x01ste-pytest-
// ini" around pytest's read, and "<file>/\x01ste-file-read" when the
// process's Python code opened the file otherwise: the `content` record of
// such a file is dropped (the view stands for it) unless the second came
// too. The second is no dependency itself.
constexpr absl::string_view kPytestIniMark = "/\x01ste-pytest-ini";
constexpr absl::string_view kFileReadMark = "/\x01ste-file-read";

// The files of `log` whose content record the pytest view stands for.
absl::flat_hash_set<std::string> ReadOnlyByPytest(const ProcessLog& log) {
  absl::flat_hash_set<std::string> pytest, whole;
  for (const LogRecord& r : log.records) {
    if (r.kind != RecordKind::kAbsent && r.kind != RecordKind::kContent) continue;
    if (absl::EndsWith(r.path, kPytestIniMark)) {
      pytest.insert(r.path.substr(0, r.path.size() - kPytestIniMark.size()));
    } else if (absl::EndsWith(r.path, kFileReadMark)) {
      whole.insert(r.path.substr(0, r.path.size() - kFileReadMark.size()));
    }
  }
  for (const std::string& file : whole) pytest.erase(file);
  return pytest;
}

// True iff `path` is an environment variable's view whose name
// selection.env_ignore names (a name with '/' never: globs read it as a
// path).
bool EnvIgnored(const std::string& path, const GlobSet& env_ignore) {
  if (!IsEnvViewPath(path) || env_ignore.empty()) return false;
  std::optional<View> v = ParseView(path);
  return v.has_value() && v->arg.find('/') == std::string::npos && env_ignore.Matches(v->arg);
}

}  // namespace

std::string RepoRelative(const std::string& root, const std::string& abs) {
  if (abs == root) return ".";
  if (root == "/") return abs.substr(1);
  if (Under(root, abs)) return abs.substr(root.size() + 1);
  return abs;
}


TestDependencies ReduceLogs(const std::vector<ProcessLog>& logs,
                            const absl::Status& read_status,
                            const PathPolicy& policy) {
  TestDependencies out;
  if (!read_status.ok()) {
    out.opaque = true;
    out.opaque_reasons.push_back(
        absl::StrCat("logs unreadable: ", read_status.message()));
    out.opaque_scopes.push_back("");
  }
  std::map<std::string, std::set<DepKey>> by_scope;
  absl::flat_hash_set<std::string> written;
  std::map<std::string, std::string> written_by;  // path -> scope
  DirectoryResolver resolver;
  // Definition granularity: what each process's tracker said, and which
  // processes recorded each repo file's content in each scope.
  std::vector<ProcessCode> code(logs.size());
  std::vector<std::set<std::string>> fresh_scopes(logs.size());  // `scope` markers
  ContentRecorders content_by;
  for (size_t li = 0; li < logs.size(); li++) {
    const ProcessLog& log = logs[li];
    const absl::flat_hash_set<std::string> pytest_only = ReadOnlyByPytest(log);
    for (const LogRecord& r : log.records) {
      if (r.path == policy.log_dir || Under(policy.log_dir, r.path)) continue;
      if (absl::EndsWith(r.path, kFileReadMark)) continue;
      if (r.kind == RecordKind::kContent && pytest_only.contains(r.path)) continue;
      if (r.kind != RecordKind::kUnfollowed && !policy.private_tmp.empty() &&
          (r.path == policy.private_tmp || Under(policy.private_tmp, r.path))) {
        continue;
      }
      // The definition tracker's records are never dependencies themselves.
      if (IsScopeMarker(r)) {
        fresh_scopes[li].insert(r.scope);
        NoteScopeEntry(r, &out);
        continue;
      }
      if (code[li].Take(r)) continue;
      code[li].Touch(r.scope);
      if (r.kind == RecordKind::kUnfollowed) {
        out.opaque = true;
        out.opaque_reasons.push_back(absl::StrCat("unfollowed: ", r.path));
        out.opaque_scopes.push_back(r.scope);
        continue;
      }
      if (r.kind == RecordKind::kWrite) {
        written.insert(r.path);
        written_by.emplace(r.path, r.scope);  // the first scope that wrote it
        continue;
      }
      DepKind kind = r.kind == RecordKind::kContent  ? DepKind::kContent
                     : r.kind == RecordKind::kAbsent ? DepKind::kAbsent
                                                     : DepKind::kListing;
      // A stat of "<dir>/\x01<view>" records a view (inventory.h, "Views").
      const bool view = kind != DepKind::kListing && IsViewPath(r.path);
      // A path read through a symlinked directory names a file the
      // inventory does not walk: depend on the real one too.
      std::string canonical = resolver.Canonical(r.path);
      for (const std::string* abs : {&r.path, static_cast<const std::string*>(&canonical)}) {
        if (abs->empty()) continue;
        std::string path = RepoRelative(policy.root, *abs);
        if (view) {
          // A known view is a content dependency on its path; an unknown
          // one the listing of its directory (coarser, never lost).
          // inventory.ignore applies to the directory.
          // A variable env_ignore names is no dependency (environment.h).
          if (EnvIgnored(path, policy.env_ignore)) break;
          std::optional<View> known = ParseView(path);
          if (known && known->kind == ViewKind::kDefinition) known.reset();  // only ste makes those
          std::string dir = ViewDirectory(path);
          if (dir[0] != '/' && dir != "." && policy.ignore.Matches(dir)) continue;
          by_scope[r.scope].insert(known ? DepKey{std::move(path), DepKind::kContent}
                                         : DepKey{std::move(dir), DepKind::kListing});
          continue;
        }
        if (path[0] != '/' && path != "." && policy.ignore.Matches(path)) continue;
        if (policy.definitions != nullptr && kind == DepKind::kContent && path[0] != '/') {
          content_by[r.scope][path].insert(li);
        }
        by_scope[r.scope].insert(DepKey{std::move(path), kind});
      }
    }
  }
  // Temporary files the test created and removed are not dependencies;
  // what it left behind is a write (TestDependencies::writes).
  auto exists = policy.exists ? policy.exists : LstatExists;
  for (const auto& [abs, scope] : written_by) {
    if (!exists(abs)) continue;
    std::string path = RepoRelative(policy.root, abs);
    if (path[0] != '/' && path != "." && policy.ignore.Matches(path)) continue;
    out.writes[scope].push_back(std::move(path));
  }
  for (auto& [scope, paths] : out.writes) {
    std::sort(paths.begin(), paths.end());
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  }
  for (const std::string& abs : written) {
    if (exists(abs)) continue;
    for (const std::string& path : {abs, resolver.Canonical(abs)}) {
      if (path.empty()) continue;
      DepKey key{RepoRelative(policy.root, path), DepKind::kContent};
      for (auto& [scope, deps] : by_scope) deps.erase(key);
    }
  }
  if (policy.definitions != nullptr) ResolveDefinitions(code, content_by, policy, &by_scope, &out);
  CountSlowTrackers(code, &out);
  NoteUnsplitScopes(code, fresh_scopes, &out);
  for (auto& [scope, deps] : by_scope) {
    if (deps.empty()) continue;
    out.scopes.push_back(ScopeDependencies{scope, {deps.begin(), deps.end()}});
  }
  return out;
}

}  // namespace ste

namespace ste {

void MergeDependencies(TestDependencies* into, const TestDependencies& from) {
  std::map<std::string, std::set<DepKey>> scopes;
  for (const TestDependencies* d : {static_cast<const TestDependencies*>(into), &from}) {
    for (const ScopeDependencies& s : d->scopes) scopes[s.scope].insert(s.deps.begin(), s.deps.end());
  }
  into->scopes.clear();
  for (auto& [scope, deps] : scopes) into->scopes.push_back(ScopeDependencies{scope, {deps.begin(), deps.end()}});
  into->opaque = into->opaque || from.opaque;
  into->opaque_reasons.insert(into->opaque_reasons.end(), from.opaque_reasons.begin(), from.opaque_reasons.end());
  into->opaque_scopes.insert(into->opaque_scopes.end(), from.opaque_scopes.begin(), from.opaque_scopes.end());
  for (const auto& [scope, files] : from.definition_files) {
    std::vector<std::string>& mine = into->definition_files[scope];
    std::set<std::string> all(mine.begin(), mine.end());
    all.insert(files.begin(), files.end());
    mine.assign(all.begin(), all.end());
  }
  into->untracked_scopes.insert(from.untracked_scopes.begin(), from.untracked_scopes.end());
  into->unsplit_scopes.insert(from.unsplit_scopes.begin(), from.unsplit_scopes.end());
  for (const auto& [why, n] : from.slow_trackers) into->slow_trackers[why] += n;
  for (const auto& [scope, paths] : from.writes) {
    std::vector<std::string>& mine = into->writes[scope];
    std::set<std::string> all(mine.begin(), mine.end());
    all.insert(paths.begin(), paths.end());
    mine.assign(all.begin(), all.end());
  }
}

}  // namespace ste
