#include "ste/test_recorder.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <climits>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/numbers.h"
#include "ste/definitions.h"
#include "ste/inventory.h"
#include "ste/selection_index.h"
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

// "VAR=dir1:dir2:<VAR as inherited>".
std::string Prepended(const char* var, const std::vector<std::string>& dirs) {
  std::string value = absl::StrJoin(dirs, ":");
  const char* old = std::getenv(var);
  if (old != nullptr && *old) absl::StrAppend(&value, value.empty() ? "" : ":", old);
  return absl::StrCat(var, "=", value);
}

// The Python startup hook of runner.python_imports = "names": "" when off
// or when there is no integrations folder.
std::string PythonHookDir(const Config& config, const RunOneTestOptions& options) {
  if (config.runner_python_imports != PythonImports::kNames) return "";
  if (options.integrations_dir.empty()) return "";
  return options.integrations_dir + "/python/ste_site";
}

// The rest of the hook's environment (integrations/python/ste_site/
// ste_names.py, "How it gets in early"): PYTHONUSERBASE set to ste's
// ste_userbase, whose .pth installs the hook before site.py scans the
// machine's site-packages, the user base it replaces in STE_PYTHONUSERBASE
// ("" for the default ~/.local) for the hook to add back, and
// STE_PYTHON_VIEWS=1.
void AddPythonHookEnv(const Config& config, const RunOneTestOptions& options,
                      std::vector<std::string>* env) {
  if (PythonHookDir(config, options).empty()) return;
  const std::string ours = options.integrations_dir + "/python/ste_userbase";
  const char* inherited = std::getenv("PYTHONUSERBASE");
  std::string real = inherited ? inherited : "";
  if (real == ours) {  // ste under ste: keep what the outer one found
    const char* outer = std::getenv("STE_PYTHONUSERBASE");
    real = outer ? outer : "";
  }
  env->push_back("PYTHONUSERBASE=" + ours);
  env->push_back("STE_PYTHONUSERBASE=" + real);
  // This ste turns the hook's views into dependencies (ReduceLogs, the
  // inventory's views): the hook may pause the listings it replaces.
  env->push_back("STE_PYTHON_VIEWS=1");
}

// selection.granularity = "definition": the trackers record what code of
// the repository ran, resolved by a DefinitionCache (definitions.h). The
// Python one is started by the hook above (ste_defs.py); the Ruby one is
// loaded before any script by RUBYOPT=-r<integrations>/ruby/ste_defs.rb,
// before the RUBYOPT inherited (RUBYOPT is split at white space: an
// integrations folder with some in its path gets none, and Ruby processes
// stay at file level).
void AddDefinitionsEnv(const Config& config, const RunOneTestOptions& options,
                       std::vector<std::string>* env) {
  if (!config.selection_definitions || options.definitions == nullptr) return;
  env->push_back("STE_DEFINITIONS=" + config.root);
  if (options.integrations_dir.empty()) return;
  const std::string tracker = options.integrations_dir + "/ruby/ste_defs.rb";
  if (tracker.find_first_of(" \t\n\v\f\r") != std::string::npos) return;
  std::string value = "-r" + tracker;
  const char* old = std::getenv("RUBYOPT");
  if (old != nullptr && *old) absl::StrAppend(&value, " ", old);
  env->push_back("RUBYOPT=" + value);
}

}  // namespace

void RemoveTree(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    unlink(path.c_str());
    return;
  }
  std::vector<std::string> names;  // read whole before anything is removed
  if (DIR* d = opendir(path.c_str())) {
    while (struct dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    closedir(d);
  }
  for (const std::string& name : names) RemoveTree(path + "/" + name);
  rmdir(path.c_str());
}

absl::StatusOr<std::string> IntegrationsDirForRuns(const Config& config, std::string* warning) {
  warning->clear();
  const bool wanted = config.batch_runner() || config.runner_python_imports == PythonImports::kNames;
  if (!wanted) return std::string();
  absl::StatusOr<std::string> dir = FindIntegrationsDir();
  if (dir.ok() || config.batch_runner()) return dir;
  *warning = absl::StrCat(dir.status().message(),
                          ": Python imports will be recorded as directory listings (coarser: a new "
                          "file in a directory on sys.path selects every test that imported "
                          "through it)");
  return std::string();
}

std::string RepoRelative(const std::string& root, const std::string& abs) {
  if (abs == root) return ".";
  if (root == "/") return abs.substr(1);
  if (Under(root, abs)) return abs.substr(root.size() + 1);
  return abs;
}

std::string TestScope(const std::string& test) { return "//r/" + test; }

namespace {

// What the definition tracker said in one process (definitions.h).
struct ProcessCode {
  bool begin = false;  // an account was opened
  bool end = false;    // ... and the last one was closed (records come in order)
  std::vector<std::string> scopes;  // where it recorded anything, in order of first use
  // scope -> abs file -> first lines of the code objects that ran
  std::map<std::string, std::map<std::string, std::set<uint32_t>>> lines;
  std::set<std::string> data;  // abs files read as data
  std::map<std::string, std::set<std::string>> data_in;  // scope -> those read there
  void Touch(const std::string& scope) {
    if (std::find(scopes.begin(), scopes.end(), scope) == scopes.end()) scopes.push_back(scope);
  }
};

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

// Definition granularity (definitions.h, docs/concepts.md "Definitions"):
// in each scope, the content dependency on a repo file F becomes F's
// module-level view when every process that recorded it there was tracked
// from start to end, ran code of F, and did not read F as data; the code
// each process ran becomes dependencies on the definitions holding it (and
// on F's module-level code), in the scope it ran in. A tracked process
// that did not end its account taints the scopes it recorded in (a forked
// child: those past the one it was forked in): their tests fall back to
// file level (ApplyDefinitionFallback). A file read as data is a content
// dependency of the scope it was read in.
void ResolveDefinitions(const std::vector<ProcessCode>& code,
                        const std::map<std::string, std::map<std::string, std::set<size_t>>>& content_by,
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

}  // namespace

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
  DirectoryResolver resolver;
  // Definition granularity: what each process's tracker said, and which
  // processes recorded each repo file's content in each scope.
  std::vector<ProcessCode> code(logs.size());
  std::map<std::string, std::map<std::string, std::set<size_t>>> content_by;  // scope -> path -> logs
  for (size_t li = 0; li < logs.size(); li++) {
    const ProcessLog& log = logs[li];
    for (const LogRecord& r : log.records) {
      if (r.path == policy.log_dir || Under(policy.log_dir, r.path)) continue;
      if (r.kind != RecordKind::kUnfollowed && !policy.private_tmp.empty() &&
          (r.path == policy.private_tmp || Under(policy.private_tmp, r.path))) {
        continue;
      }
      if (r.kind == RecordKind::kAbsent || r.kind == RecordKind::kContent) {
        // The definition tracker's records are never dependencies themselves.
        std::string file;
        uint32_t line = 0;
        const std::string_view p = r.path;
        const bool begin = p.substr(0, kDefsBeginPrefix.size()) == kDefsBeginPrefix;
        if (begin || p.substr(0, kDefsEndPrefix.size()) == kDefsEndPrefix) {
          if (begin) code[li].begin = true;
          code[li].end = !begin;
          code[li].Touch(r.scope);
          continue;
        }
        if (ParseCodeRecord(r.path, &file, &line)) {
          code[li].lines[r.scope][file].insert(line);
          code[li].Touch(r.scope);
          continue;
        }
        if (IsDataRecord(r.path, &file)) {
          code[li].data.insert(file);
          code[li].data_in[r.scope].insert(file);
          code[li].Touch(r.scope);
          continue;
        }
      }
      code[li].Touch(r.scope);
      if (r.kind == RecordKind::kUnfollowed) {
        out.opaque = true;
        out.opaque_reasons.push_back(absl::StrCat("unfollowed: ", r.path));
        out.opaque_scopes.push_back(r.scope);
        continue;
      }
      if (r.kind == RecordKind::kWrite) {
        written.insert(r.path);
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
  // Temporary files the test created and removed are not dependencies.
  auto exists = policy.exists ? policy.exists : LstatExists;
  for (const std::string& abs : written) {
    if (exists(abs)) continue;
    for (const std::string& path : {abs, resolver.Canonical(abs)}) {
      if (path.empty()) continue;
      DepKey key{RepoRelative(policy.root, path), DepKind::kContent};
      for (auto& [scope, deps] : by_scope) deps.erase(key);
    }
  }
  if (policy.definitions != nullptr) ResolveDefinitions(code, content_by, policy, &by_scope, &out);
  for (auto& [scope, deps] : by_scope) {
    if (deps.empty()) continue;
    out.scopes.push_back(ScopeDependencies{scope, {deps.begin(), deps.end()}});
  }
  return out;
}

void ApplyDefinitionFallback(const TestDependencies& all, TestRecord* record) {
  const std::string own = TestScope(record->test);
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
  for (ScopeDependencies& s : record->deps.scopes) {
    if (s.scope == own) mine = &s;
  }
  if (mine == nullptr) {
    record->deps.scopes.push_back(ScopeDependencies{own, {}});
    std::sort(record->deps.scopes.begin(), record->deps.scopes.end(),
              [](const ScopeDependencies& a, const ScopeDependencies& b) { return a.scope < b.scope; });
    for (ScopeDependencies& s : record->deps.scopes) {
      if (s.scope == own) mine = &s;
    }
  }
  back.insert(mine->deps.begin(), mine->deps.end());
  mine->deps.assign(back.begin(), back.end());
}

namespace {

// A test's private temporary directory (runner.private_tmp): created empty
// under the system's temporary directory, $TMPDIR (and TMP, TEMP) while
// the test runs, removed afterwards. "" when off or when it cannot be
// made (the test then runs with the inherited $TMPDIR: coarser, honest).
class PrivateTmp {
 public:
  explicit PrivateTmp(bool on) {
    if (!on) return;
    const char* base = std::getenv("TMPDIR");
    std::string dir = absl::StrCat(base && *base ? base : "/tmp", "/ste-tmp-XXXXXX");
    if (mkdtemp(dir.data()) != nullptr) path_ = dir;
  }
  ~PrivateTmp() {
    if (!path_.empty()) RemoveTree(path_);
  }
  const std::string& path() const { return path_; }
  void AddEnv(std::vector<std::string>* env) const {
    if (path_.empty()) return;
    for (const char* var : {"TMPDIR", "TMP", "TEMP"}) env->push_back(absl::StrCat(var, "=", path_));
  }

 private:
  std::string path_;
};

}  // namespace

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
  if (std::string hook = PythonHookDir(config, options); !hook.empty()) {
    run.extra_env.push_back(Prepended("PYTHONPATH", {hook}));
  }
  AddPythonHookEnv(config, options, &run.extra_env);
  AddDefinitionsEnv(config, options, &run.extra_env);
  PrivateTmp tmp(config.runner_private_tmp);
  tmp.AddEnv(&run.extra_env);
  run.output_file = options.output_file;
  record.output_log = options.output_file;
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
    policy.ignore = config.inventory_ignore;
    policy.log_dir = pattern;
    policy.private_tmp = tmp.path();
    policy.definitions = options.definitions;
    TestDependencies all = ReduceLogs(logs, read, policy);
    record.deps = all;
    ApplyDefinitionFallback(all, &record);
  }
  if (!options.keep_logs) RemoveTree(pattern);
  return record;
}

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
    r.outcome = std::string(f[0]);
    if (r.outcome != "passed" && r.outcome != "failed" && r.outcome != "error") continue;
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

std::vector<TestRecord> RunBatch(const Config& config, const std::vector<std::string>& tests,
                                 const RunOneTestOptions& options) {
  std::vector<TestRecord> records(tests.size());
  for (size_t i = 0; i < tests.size(); i++) {
    records[i].test = tests[i];
    records[i].output_log = options.output_file;
    records[i].output_shared = !options.output_file.empty();
  }
  auto all_fail = [&](const std::string& why) {
    for (TestRecord& r : records) {
      r.started = false;
      r.error = why;
      r.deps.opaque = true;
      r.deps.opaque_reasons.push_back(why);
    }
    return records;
  };
  std::string dir = options.scratch_dir + "/batch-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    return all_fail(absl::StrCat("cannot create a log directory in ", options.scratch_dir, ": ",
                                 std::strerror(errno)));
  }
  // The results file sits in the log directory: records of it are dropped.
  const std::string results_file = dir + "/ste-results.tsv";
  TracedRunOptions run;
  run.argv = {"/bin/sh", "-c", config.CommandForBatch(tests)};
  run.scope = "//r";
  run.log_dir = dir;
  run.preload_library = options.preload_library;
  run.working_directory = config.root;
  std::string preload;
  for (const std::string& p : config.runner_preload) absl::StrAppend(&preload, p, "\n");
  std::vector<std::string> python_path = {options.integrations_dir + "/python"};
  if (std::string hook = PythonHookDir(config, options); !hook.empty()) {
    python_path.insert(python_path.begin(), hook);
  }
  run.extra_env = {
      "STE_RESULTS=" + results_file,
      "STE_INTEGRATIONS=" + options.integrations_dir,
      absl::StrCat("STE_JOBS=", std::max(1, options.jobs)),
      "STE_PRELOAD_FILES=" + preload,
      absl::StrCat("STE_CASE_SCOPES=", config.runner_case_scopes ? "1" : "0"),
      Prepended("PYTHONPATH", python_path),
      Prepended("RUBYLIB", {options.integrations_dir + "/ruby"}),
  };
  AddPythonHookEnv(config, options, &run.extra_env);
  AddDefinitionsEnv(config, options, &run.extra_env);
  PrivateTmp tmp(config.runner_private_tmp);
  tmp.AddEnv(&run.extra_env);
  run.output_file = options.output_file;
  absl::StatusOr<TracedExit> exit = RunTraced(run);
  if (!exit.ok()) {
    if (!options.keep_logs) RemoveTree(dir);
    return all_fail(std::string(exit.status().message()));
  }
  std::map<std::string, RunnerResult> results;
  {
    std::ifstream in(results_file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    results = ParseRunnerResults(text.str());
  }
  std::vector<ProcessLog> logs;
  absl::Status read = ReadLogDir(dir, &logs);
  if (read.ok() && logs.empty()) read = absl::DataLossError("the runner left no logs");
  PathPolicy policy;
  policy.root = config.root;
  policy.ignore = config.inventory_ignore;
  policy.log_dir = dir;
  policy.private_tmp = tmp.path();
  policy.definitions = options.definitions;
  TestDependencies all = ReduceLogs(logs, read, policy);
  if (!options.keep_logs) RemoveTree(dir);

  // The runner's parent touches the test files it was given (a stat, an
  // existence check) before forking, in the shared scope: such a record is
  // the dependency of that test alone, not of every test.
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < tests.size(); i++) index_of[tests[i]] = i;
  std::vector<std::vector<DepKey>> moved(tests.size());
  for (ScopeDependencies& s : all.scopes) {
    bool shared = false;
    for (const std::string& t : tests) shared = shared || (ScopeContains(s.scope, TestScope(t)) && s.scope != TestScope(t));
    if (!shared) continue;
    std::vector<DepKey> kept;
    for (DepKey& k : s.deps) {
      auto it = index_of.find(k.path);
      if (it != index_of.end()) {
        moved[it->second].push_back(std::move(k));
      } else {
        kept.push_back(std::move(k));
      }
    }
    s.deps = std::move(kept);
  }
  for (size_t i = 0; i < records.size(); i++) {
    TestRecord& r = records[i];
    const std::string own = TestScope(r.test);
    auto related = [&](const std::string& scope) {
      return ScopeContains(scope, own) || ScopeContains(own, scope);
    };
    for (const ScopeDependencies& s : all.scopes) {
      if (related(s.scope) && !s.deps.empty()) r.deps.scopes.push_back(s);
    }
    if (!moved[i].empty()) {
      std::sort(moved[i].begin(), moved[i].end());
      moved[i].erase(std::unique(moved[i].begin(), moved[i].end()), moved[i].end());
      ScopeDependencies* mine = nullptr;
      for (ScopeDependencies& s : r.deps.scopes) {
        if (s.scope == own) mine = &s;
      }
      if (mine == nullptr) {
        r.deps.scopes.push_back(ScopeDependencies{own, {}});
        mine = &r.deps.scopes.back();
      }
      std::vector<DepKey> merged;
      std::set_union(mine->deps.begin(), mine->deps.end(), moved[i].begin(), moved[i].end(),
                     std::back_inserter(merged));
      mine->deps = std::move(merged);
      std::sort(r.deps.scopes.begin(), r.deps.scopes.end(),
                [](const ScopeDependencies& a, const ScopeDependencies& b) { return a.scope < b.scope; });
    }
    for (size_t i = 0; i < all.opaque_reasons.size(); i++) {
      const std::string& scope = i < all.opaque_scopes.size() ? all.opaque_scopes[i] : "";
      if (scope.empty() || related(scope)) {
        r.deps.opaque = true;
        r.deps.opaque_reasons.push_back(all.opaque_reasons[i]);
        r.deps.opaque_scopes.push_back(scope);
      }
    }
    ApplyDefinitionFallback(all, &r);
    auto it = results.find(r.test);
    if (it == results.end()) {
      r.started = false;
      r.exit_code = exit->exit_code;
      r.seconds = exit->seconds / static_cast<double>(tests.size());
      r.error = absl::StrCat("the ", std::string(RunnerKindName(config.runner_kind)), " runner gave no result for it (runner exit ",
                             exit->exit_code, ")");
    } else if (it->second.outcome == "error") {
      r.started = false;
      r.exit_code = it->second.exit_code;
      r.seconds = it->second.seconds;
      r.error = absl::StrCat("the ", std::string(RunnerKindName(config.runner_kind)), " runner could not run it (exit ",
                             it->second.exit_code, ")");
    } else {
      r.exit_code = it->second.outcome == "passed" ? 0 : (it->second.exit_code ? it->second.exit_code : 1);
      r.seconds = it->second.seconds;
    }
  }
  return records;
}

}  // namespace ste
