#include "ste/config.h"

#include "toml.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ste/environment.h"
#include "ste/glob.h"
#include "ste/store_url.h"

namespace ste {

const char kExampleConfig[] =
    "[tests]\n"
    "include = [\"tests/**/test_*.py\"]\n"
    "\n"
    "[runner]\n"
    "command = \"python3 -m pytest -q {test}\"\n"
    "jobs = 2\n";

namespace {

std::string Where(const std::string& name, const toml::source_region& src) {
  return absl::StrFormat("%s:%d:%d", name, src.begin.line, src.begin.column);
}

absl::Status Error(const std::string& name, const toml::node& node,
                   const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat(Where(name, node.source()), ": ", what));
}

class Reader {
 public:
  Reader(const std::string& name, const toml::table& root)
      : name_(name), root_(root) {}

  // Rejects tables and keys that are not in `allowed`.
  absl::Status CheckKeys(
      const std::vector<std::pair<std::string, std::set<std::string>>>& allowed) {
    for (const auto& [table_name, node] : root_) {
      std::string t(table_name.str());
      const std::set<std::string>* keys = nullptr;
      for (const auto& [name, set] : allowed) {
        if (name == t) keys = &set;
      }
      if (keys == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            Where(name_, table_name.source()), ": unknown table '", t, "'"));
      }
      const toml::table* table = node.as_table();
      if (table == nullptr) {
        return Error(name_, node, absl::StrCat("'", t, "' must be a table"));
      }
      for (const auto& [key, value] : *table) {
        if (keys->count(std::string(key.str())) == 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(Where(name_, key.source()), ": unknown key '", t, ".",
                           std::string(key.str()), "'"));
        }
      }
    }
    return absl::OkStatus();
  }

  const toml::node* Find(const char* table, const char* key) const {
    const toml::table* t = root_[table].as_table();
    return t ? t->get(key) : nullptr;
  }

  absl::Status String(const char* table, const char* key, bool required,
                      std::string* out) const {
    const toml::node* n = Find(table, key);
    if (n == nullptr) {
      if (!required) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": missing key '", table, ".", key, "'"));
    }
    if (!n->is_string()) {
      return Error(name_, *n, absl::StrCat("'", table, ".", key, "' must be a string"));
    }
    *out = std::string(n->as_string()->get());
    return absl::OkStatus();
  }

  absl::Status Globs(const char* table, const char* key, bool required,
                     std::vector<std::string>* out) const {
    const toml::node* n = Find(table, key);
    if (n == nullptr) {
      if (!required) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": missing key '", table, ".", key, "'"));
    }
    const toml::array* a = n->as_array();
    if (a == nullptr) {
      return Error(name_, *n,
                   absl::StrCat("'", table, ".", key, "' must be an array of glob strings"));
    }
    out->clear();
    for (const toml::node& item : *a) {
      if (!item.is_string()) {
        return Error(name_, item, absl::StrCat("'", table, ".", key,
                                               "' must hold only strings"));
      }
      std::string glob(item.as_string()->get());
      absl::Status valid = ValidateGlob(glob);
      if (!valid.ok()) {
        return Error(name_, item, absl::StrCat("'", table, ".", key, "': bad glob '",
                                               glob, "': ", valid.message()));
      }
      out->push_back(std::move(glob));
    }
    return absl::OkStatus();
  }

  absl::Status Int(const char* table, const char* key, int min, int max,
                   int* out) const {
    const toml::node* n = Find(table, key);
    if (n == nullptr) return absl::OkStatus();
    if (!n->is_integer()) {
      return Error(name_, *n, absl::StrCat("'", table, ".", key, "' must be an integer"));
    }
    int64_t v = n->as_integer()->get();
    if (v < min || v > max) {
      return Error(name_, *n, absl::StrFormat("'%s.%s' must be between %d and %d",
                                              table, key, min, max));
    }
    *out = static_cast<int>(v);
    return absl::OkStatus();
  }

  absl::Status Bool(const char* table, const char* key, bool* out) const {
    const toml::node* n = Find(table, key);
    if (n == nullptr) return absl::OkStatus();
    if (!n->is_boolean()) {
      return Error(name_, *n, absl::StrCat("'", table, ".", key, "' must be true or false"));
    }
    *out = n->as_boolean()->get();
    return absl::OkStatus();
  }

  // true (`*out` as it is: every name), false (none), or an array of names,
  // each one of `known` (`*out` becomes those, in `known` order).
  absl::Status Names(const char* table, const char* key, const std::vector<std::string>& known,
                     std::vector<std::string>* out) const {
    const toml::node* n = Find(table, key);
    if (n == nullptr) return absl::OkStatus();
    if (n->is_boolean()) {
      if (!n->as_boolean()->get()) out->clear();
      return absl::OkStatus();
    }
    const toml::array* a = n->as_array();
    if (a == nullptr) {
      return Error(name_, *n, absl::StrCat("'", table, ".", key,
                                           "' must be true, false or an array of names"));
    }
    std::set<std::string> wanted;
    for (const toml::node& item : *a) {
      std::string name = item.is_string() ? std::string(item.as_string()->get()) : "";
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        return Error(name_, item,
                     absl::StrCat("'", table, ".", key, "': ",
                                  item.is_string() ? absl::StrCat("unknown name '", name, "'")
                                                   : std::string("names are strings"),
                                  " (known: ", absl::StrJoin(known, ", "), ")"));
      }
      wanted.insert(std::move(name));
    }
    out->clear();
    for (const std::string& k : known) {
      if (wanted.count(k)) out->push_back(k);
    }
    return absl::OkStatus();
  }

 private:
  const std::string& name_;
  const toml::table& root_;
};

// The kToolCaches names, each once, in order.
std::vector<std::string> ToolCacheNames() {
  std::vector<std::string> names;
  for (const ToolCache& cache : kToolCaches) {
    if (std::find(names.begin(), names.end(), cache.name) == names.end()) {
      names.push_back(cache.name);
    }
  }
  return names;
}

// tests.unit: "file", or "case" with a runner that pushes case scopes and
// can be handed cases (pytest, unittest, minitest, rspec; ctest: the
// GoogleTest listener's cases, through GTEST_FILTER). Needs c->runner_kind.
absl::Status ParseTestUnit(const std::string& name, Reader& r, const std::string& unit, Config* c) {
  if (unit == "file") return absl::OkStatus();
  if (unit != "case") {
    return Error(name, *r.Find("tests", "unit"),
                 absl::StrCat("'tests.unit' must be \"file\" or \"case\", not '", unit, "'"));
  }
  if (c->runner_kind != RunnerKind::kPytest && c->runner_kind != RunnerKind::kUnittest &&
      c->runner_kind != RunnerKind::kMinitest && c->runner_kind != RunnerKind::kRspec &&
      c->runner_kind != RunnerKind::kCTest) {
    return Error(name, *r.Find("tests", "unit"),
                 absl::StrCat("'tests.unit' = \"case\" needs a runner that can run cases: "
                              "'runner.kind' \"pytest\", \"unittest\", \"minitest\", \"rspec\" or "
                              "\"ctest\", not '",
                              std::string(RunnerKindName(c->runner_kind)), "'"));
  }
  c->selection.cases = true;
  c->runner_case_scopes = true;
  return absl::OkStatus();
}

}  // namespace

std::string ShellQuote(std::string_view s) {
  bool plain = !s.empty();
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' ||
          c == '_' || c == '-' || c == '+' || c == ',' || c == ':' || c == '@')) {
      plain = false;
    }
  }
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string RegexEscape(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::strchr("\\^$.|?*+()[]{}", c) != nullptr) out += '\\';
    out += c;
  }
  return out;
}

std::string RegexExactly(std::string_view name) { return "^" + RegexEscape(name) + "$"; }

std::string Config::CommandFor(std::string_view test_path) const {
  const std::pair<const char*, std::string> subs[] = {
      {"{test}", ShellQuote(test_path)},
      {"{test_regex}", ShellQuote(RegexExactly(test_path))},
      {"{build_dir}", ShellQuote(runner_build_dir)},
  };
  std::string out;
  size_t at = 0;
  while (at < runner_command.size()) {
    bool replaced = false;
    for (const auto& [from, to] : subs) {
      if (runner_command.compare(at, std::strlen(from), from) == 0) {
        out += to;
        at += std::strlen(from);
        replaced = true;
        break;
      }
    }
    if (!replaced) out += runner_command[at++];
  }
  return out;
}

std::string Config::CommandForBatch(const std::vector<std::string>& tests) const {
  std::string quoted;
  for (const std::string& t : tests) {
    if (!quoted.empty()) quoted += ' ';
    quoted += ShellQuote(t);
  }
  std::string out;
  size_t at = 0;
  for (;;) {
    size_t next = runner_command.find("{tests}", at);
    if (next == std::string::npos) break;
    out.append(runner_command, at, next - at);
    out += quoted;
    at = next + 7;
  }
  out.append(runner_command, at, std::string::npos);
  return out;
}

std::string Config::BuildDir() const {
  return runner_build_dir[0] == '/' ? runner_build_dir : root + "/" + runner_build_dir;
}

std::string Config::SqlitePath() const {
  absl::StatusOr<StoreUrl> url = StoreUrl::Parse(store_url);
  return url.ok() ? url->SqliteFile(root) : "";
}

absl::StatusOr<Config> ParseConfig(std::string_view text,
                                   const std::string& name,
                                   const std::string& root) {
  toml::parse_result parsed = toml::parse(text, name);
  if (!parsed) {
    const toml::parse_error& err = parsed.error();
    return absl::InvalidArgumentError(absl::StrCat(
        Where(name, err.source()), ": ", std::string(err.description())));
  }
  const toml::table& table = parsed.table();
  Reader r(name, table);
  absl::Status s = r.CheckKeys({
      {"tests", {"include", "exclude", "unit"}},
      {"runner", {"kind", "command", "jobs", "batch", "preload", "case_scopes", "build_dir",
                  "private_tmp", "python_imports", "retries"}},
      {"inventory", {"ignore", "tool_caches", "external"}},
      {"selection", {"run_all", "skip_all", "mandatory", "force_tags", "granularity", "env_ignore",
                     "env_ignore_defaults", "env_run_all"}},
      {"store", {"url"}},
  });
  if (!s.ok()) return s;

  Config c;
  c.root = root;
  std::vector<std::string> include, exclude, ignore, run_all, skip_all, mandatory, env_ignore,
      env_run_all;
  bool env_ignore_defaults = true;
  std::string kind = "generic";
  const std::vector<std::string> tool_cache_names = ToolCacheNames();
  c.inventory_tool_caches = tool_cache_names;
  std::string python_imports = "names";
  std::string unit = "file";
  std::string granularity = "auto";
  for (absl::Status step : {
           r.Globs("tests", "include", false, &include),
           r.Globs("tests", "exclude", false, &exclude),
           r.String("tests", "unit", false, &unit),
           r.String("runner", "kind", false, &kind),
           r.String("runner", "command", false, &c.runner_command),
           r.Int("runner", "jobs", 1, 1024, &c.jobs),
           r.Int("runner", "batch", 1, 1024, &c.runner_batch),
           r.Globs("runner", "preload", false, &c.runner_preload),
           r.Bool("runner", "case_scopes", &c.runner_case_scopes),
           r.Bool("runner", "private_tmp", &c.runner_private_tmp),
           r.Int("runner", "retries", 0, 10, &c.runner_retries),
           r.String("runner", "build_dir", false, &c.runner_build_dir),
           r.String("runner", "python_imports", false, &python_imports),
           r.Globs("inventory", "ignore", false, &ignore),
           r.Names("inventory", "tool_caches", tool_cache_names, &c.inventory_tool_caches),
           r.Bool("inventory", "external", &c.inventory_external),
           r.Globs("selection", "run_all", false, &run_all),
           r.Globs("selection", "skip_all", false, &skip_all),
           r.Globs("selection", "mandatory", false, &mandatory),
           r.Bool("selection", "force_tags", &c.selection.force_tags),
           r.String("selection", "granularity", false, &granularity),
           r.Globs("selection", "env_ignore", false, &env_ignore),
           r.Bool("selection", "env_ignore_defaults", &env_ignore_defaults),
           r.Globs("selection", "env_run_all", false, &env_run_all),
           r.String("store", "url", false, &c.store_url),
       }) {
    if (!step.ok()) return step;
  }
  std::optional<RunnerKind> parsed_kind = ParseRunnerKind(kind);
  if (!parsed_kind) {
    return Error(name, *r.Find("runner", "kind"),
                 absl::StrCat("'runner.kind' must be ", RunnerKindList(), ", not '", kind, "'"));
  }
  c.runner_kind = *parsed_kind;
  if (absl::Status cases = ParseTestUnit(name, r, unit, &c); !cases.ok()) return cases;
  if (python_imports == "names" || python_imports == "listing") {
    c.runner_python_imports =
        python_imports == "names" ? PythonImports::kNames : PythonImports::kListing;
  } else {
    return Error(name, *r.Find("runner", "python_imports"),
                 absl::StrCat("'runner.python_imports' must be \"names\" or \"listing\", not '",
                              python_imports, "'"));
  }
  // "auto": definitions wherever a tracker runs, file level elsewhere. A
  // process without one (another language; Python under "listing", whose
  // tracker the "names" hook starts) leaves no account, and its files stay
  // file level (definition_resolution.h): only "definition" says the user
  // expects Python's.
  if (granularity == "auto" || granularity == "file" || granularity == "definition") {
    c.selection_definitions = granularity != "file";
  } else {
    return Error(name, *r.Find("selection", "granularity"),
                 absl::StrCat("'selection.granularity' must be \"auto\", \"file\" or \"definition\", not '",
                              granularity, "'"));
  }
  if (granularity == "definition" && c.runner_python_imports != PythonImports::kNames) {
    return Error(name, *r.Find("selection", "granularity"),
                 "'selection.granularity' = \"definition\" needs 'runner.python_imports' = "
                 "\"names\" (the Python startup hook that tracks definitions)");
  }
  if (include.empty() && TestsAreCTestNames(c.runner_kind) && r.Find("tests", "include") == nullptr) {
    include = {"**"};  // every CTest test
  } else if (r.Find("tests", "include") == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": missing key 'tests.include'"));
  } else if (include.empty()) {
    return Error(name, *r.Find("tests", "include"),
                 "'tests.include' must name at least one glob");
  }
  std::vector<std::string> ignored = {".git/**", ".ste/**"};
  for (const ToolCache& cache : kToolCaches) {
    const std::vector<std::string>& on = c.inventory_tool_caches;
    if (std::find(on.begin(), on.end(), cache.name) != on.end()) ignored.push_back(cache.glob);
  }
  for (std::string& g : ignore) {
    if (std::find(ignored.begin(), ignored.end(), g) == ignored.end()) {
      ignored.push_back(std::move(g));
    }
  }
  const toml::node* command = r.Find("runner", "command");
  if (c.runner_kind == RunnerKind::kCTest) {
    // ctest rewrites Testing/ (its logs, the cost data it also reads) on
    // every run: not an input of the tests.
    std::string dir = c.runner_build_dir;
    while (!dir.empty() && dir.back() == '/') dir.pop_back();
    if (!dir.empty() && dir[0] != '/') ignored.push_back(dir + "/Testing/**");
  }
  if (command == nullptr) {
    c.runner_command = DefaultRunnerCommand(c.runner_kind);
    if (c.runner_command.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": missing key 'runner.command' (required with ",
          c.runner_kind == RunnerKind::kGeneric ? "the generic runner"
                                                : absl::StrCat("kind '", kind, "'"),
          ")"));
    }
  } else if (!CommandHasPlaceholder(c.runner_kind, c.runner_command)) {
    std::string what =
        c.runner_kind == RunnerKind::kCTest ? "'runner.command' must contain {test} or {test_regex}"
        : c.batch_runner()
            ? absl::StrCat("'runner.command' of a ", kind,
                           " runner must contain {tests} (the batch's test files)")
            : "'runner.command' must contain {test} (the test file's path)";
    return Error(name, *command, what);
  }
  if (env_ignore_defaults) {
    env_ignore.insert(env_ignore.begin(), kDefaultEnvIgnore.begin(), kDefaultEnvIgnore.end());
  }
  // Every glob was validated above, so these compile.
  struct {
    const std::vector<std::string>* patterns;
    GlobSet* out;
  } compile[] = {{&include, &c.test_include},       {&exclude, &c.test_exclude},
                 {&ignored, &c.inventory_ignore},   {&run_all, &c.selection.run_all},
                 {&skip_all, &c.selection.skip_all}, {&mandatory, &c.selection.mandatory},
                 {&env_ignore, &c.selection.env_ignore}, {&env_run_all, &c.selection.env_run_all}};
  for (auto& [patterns, out] : compile) {
    absl::StatusOr<GlobSet> set = GlobSet::Compile(*patterns);
    if (!set.ok()) return absl::InvalidArgumentError(absl::StrCat(name, ": ", set.status().message()));
    *out = *std::move(set);
  }
  c.selection.config_file = name.substr(name.rfind('/') + 1);
  if (!StoreUrl::Parse(c.store_url).ok()) {
    const toml::node* n = r.Find("store", "url");
    return Error(name, *n,
                 "'store.url' must be sqlite:PATH or postgresql://... (a libpq "
                 "connection URI)");
  }
  return c;
}

absl::StatusOr<Config> LoadConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read"));
  std::stringstream text;
  text << in.rdbuf();
  char real[PATH_MAX];
  if (realpath(path.c_str(), real) == nullptr) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot resolve"));
  }
  std::string abs = real;
  std::string root = abs.substr(0, abs.rfind('/'));
  if (root.empty()) root = "/";
  absl::StatusOr<Config> c = ParseConfig(text.str(), path, root);
  if (c.ok()) {
    c->config_path = abs;
    c->selection.config_file = abs.substr(abs.rfind('/') + 1);
  }
  return c;
}

absl::StatusOr<std::string> FindConfig(const std::string& start) {
  char real[PATH_MAX];
  if (realpath(start.c_str(), real) == nullptr) {
    return absl::NotFoundError(absl::StrCat(start, ": cannot resolve"));
  }
  std::string dir = real;
  for (;;) {
    std::string candidate = (dir == "/" ? "" : dir) + "/ste.toml";
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0) return candidate;
    if (dir == "/") break;
    dir = dir.substr(0, dir.rfind('/'));
    if (dir.empty()) dir = "/";
  }
  return absl::NotFoundError(absl::StrCat(
      "no ste.toml in ", real,
      " or its parents; write one at the repository root, e.g.:\n",
      kExampleConfig));
}

}  // namespace ste
