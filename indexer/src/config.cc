#include "ste/config.h"

// This is the only translation unit that includes toml++; it is built
// without exceptions so that parse errors come back as values.
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

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
#include "ste/glob.h"

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
  if (store_url.rfind("sqlite:", 0) != 0) return "";
  std::string path = store_url.substr(7);  // after "sqlite:"
  return path[0] == '/' ? path : root + "/" + path;
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
      {"tests", {"include", "exclude"}},
      {"runner", {"kind", "command", "jobs", "batch", "preload", "case_scopes", "build_dir",
                  "private_tmp", "python_imports"}},
      {"inventory", {"ignore", "tool_caches", "external"}},
      {"selection", {"run_all", "skip_all", "mandatory", "force_tags", "granularity"}},
      {"store", {"url"}},
  });
  if (!s.ok()) return s;

  Config c;
  c.root = root;
  std::vector<std::string> include, exclude, ignore, run_all, skip_all, mandatory;
  std::string kind = "generic";
  const std::vector<std::string> tool_cache_names = ToolCacheNames();
  c.inventory_tool_caches = tool_cache_names;
  std::string python_imports = "names";
  std::string granularity = "file";
  for (absl::Status step : {
           r.Globs("tests", "include", false, &include),
           r.Globs("tests", "exclude", false, &exclude),
           r.String("runner", "kind", false, &kind),
           r.String("runner", "command", false, &c.runner_command),
           r.Int("runner", "jobs", 1, 1024, &c.jobs),
           r.Int("runner", "batch", 1, 1024, &c.runner_batch),
           r.Globs("runner", "preload", false, &c.runner_preload),
           r.Bool("runner", "case_scopes", &c.runner_case_scopes),
           r.Bool("runner", "private_tmp", &c.runner_private_tmp),
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
  if (python_imports == "names" || python_imports == "listing") {
    c.runner_python_imports =
        python_imports == "names" ? PythonImports::kNames : PythonImports::kListing;
  } else {
    return Error(name, *r.Find("runner", "python_imports"),
                 absl::StrCat("'runner.python_imports' must be \"names\" or \"listing\", not '",
                              python_imports, "'"));
  }
  if (granularity == "file" || granularity == "definition") {
    c.selection_definitions = granularity == "definition";
  } else {
    return Error(name, *r.Find("selection", "granularity"),
                 absl::StrCat("'selection.granularity' must be \"file\" or \"definition\", not '",
                              granularity, "'"));
  }
  if (c.selection_definitions && c.runner_python_imports != PythonImports::kNames) {
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
  // Every glob was validated above, so these compile.
  struct {
    const std::vector<std::string>* patterns;
    GlobSet* out;
  } compile[] = {{&include, &c.test_include},       {&exclude, &c.test_exclude},
                 {&ignored, &c.inventory_ignore},   {&run_all, &c.selection.run_all},
                 {&skip_all, &c.selection.skip_all}, {&mandatory, &c.selection.mandatory}};
  for (auto& [patterns, out] : compile) {
    absl::StatusOr<GlobSet> set = GlobSet::Compile(*patterns);
    if (!set.ok()) return absl::InvalidArgumentError(absl::StrCat(name, ": ", set.status().message()));
    *out = *std::move(set);
  }
  c.selection.config_file = name.substr(name.rfind('/') + 1);
  const bool sqlite = c.store_url.rfind("sqlite:", 0) == 0 && c.store_url.size() > 7;
  const bool postgres = c.store_url.rfind("postgresql://", 0) == 0 ||
                        c.store_url.rfind("postgres://", 0) == 0;
  if (!sqlite && !postgres) {
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
