#include "ste/test_recorder.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ste/traced_run.h"

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

void RemoveTree(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      RemoveTree(path);
    } else {
      unlink(path.c_str());
    }
  }
  closedir(d);
  rmdir(dir.c_str());
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

}  // namespace

std::string RepoRelative(const std::string& root, const std::string& abs) {
  if (abs == root) return ".";
  if (root == "/") return abs.substr(1);
  if (Under(root, abs)) return abs.substr(root.size() + 1);
  return abs;
}

std::string TestScope(const std::string& test) { return "//r/" + test; }

TestDependencies ReduceLogs(const std::vector<ProcessLog>& logs,
                            const absl::Status& read_status,
                            const PathPolicy& policy) {
  TestDependencies out;
  if (!read_status.ok()) {
    out.opaque = true;
    out.opaque_reasons.push_back(
        absl::StrCat("logs unreadable: ", read_status.message()));
  }
  std::map<std::string, std::set<DepKey>> by_scope;
  absl::flat_hash_set<std::string> written;
  DirectoryResolver resolver;
  for (const ProcessLog& log : logs) {
    for (const LogRecord& r : log.records) {
      if (r.path == policy.log_dir || Under(policy.log_dir, r.path)) continue;
      if (r.kind == RecordKind::kUnfollowed) {
        out.opaque = true;
        out.opaque_reasons.push_back(absl::StrCat("unfollowed: ", r.path));
        continue;
      }
      if (r.kind == RecordKind::kWrite) {
        written.insert(r.path);
        continue;
      }
      DepKind kind = r.kind == RecordKind::kContent  ? DepKind::kContent
                     : r.kind == RecordKind::kAbsent ? DepKind::kAbsent
                                                     : DepKind::kListing;
      // A path read through a symlinked directory names a file the
      // inventory does not walk: depend on the real one too.
      std::string canonical = resolver.Canonical(r.path);
      for (const std::string* abs : {&r.path, static_cast<const std::string*>(&canonical)}) {
        if (abs->empty()) continue;
        std::string path = RepoRelative(policy.root, *abs);
        if (path[0] != '/' && path != "." && policy.ignore.Matches(path)) continue;
        by_scope[r.scope].insert(DepKey{std::move(path), kind});
      }
    }
  }
  // Temporary files the test created and removed are not dependencies.
  auto exists = policy.exists ? policy.exists : LstatExists;
  for (const std::string& abs : written) {
    if (exists(abs)) continue;
    DepKey key{RepoRelative(policy.root, abs), DepKind::kContent};
    for (auto& [scope, deps] : by_scope) deps.erase(key);
  }
  for (auto& [scope, deps] : by_scope) {
    if (deps.empty()) continue;
    out.scopes.push_back(ScopeDependencies{scope, {deps.begin(), deps.end()}});
  }
  return out;
}

TestRecord RunOneTest(const Config& config, const std::string& test,
                      const RunOneTestOptions& options) {
  TestRecord record;
  record.test = test;
  std::string pattern = options.scratch_dir + "/logs-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    record.started = false;
    record.error = absl::StrCat("cannot create a log directory in ",
                                options.scratch_dir, ": ", std::strerror(errno));
    record.deps.opaque = true;
    record.deps.opaque_reasons.push_back(record.error);
    return record;
  }
  TracedRunOptions run;
  run.argv = {"/bin/sh", "-c", config.CommandFor(test)};
  run.scope = TestScope(test);
  run.log_dir = pattern;
  run.preload_library = options.preload_library;
  run.working_directory = config.root;
  absl::StatusOr<TracedExit> exit = RunTraced(run);
  if (!exit.ok()) {
    record.started = false;
    record.error = std::string(exit.status().message());
    record.deps.opaque = true;
    record.deps.opaque_reasons.push_back(record.error);
  } else {
    record.exit_code = exit->exit_code;
    record.seconds = exit->seconds;
    std::vector<ProcessLog> logs;
    absl::Status read = ReadLogDir(pattern, &logs);
    if (read.ok() && logs.empty()) {
      read = absl::DataLossError("the test left no logs");
    }
    PathPolicy policy;
    policy.root = config.root;
    auto ignore = GlobSet::Compile(config.inventory_ignore);
    if (ignore.ok()) policy.ignore = *std::move(ignore);
    policy.log_dir = pattern;
    record.deps = ReduceLogs(logs, read, policy);
  }
  if (!options.keep_logs) RemoveTree(pattern);
  return record;
}

}  // namespace ste
