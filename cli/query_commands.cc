// Questions to a baseline: `ste why PATH`, `ste deps TEST`,
// `ste index dump --json`, and `ste inventory [--json] [--diff OTHER]`.
#include <unistd.h>

#include <climits>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "commands.h"
#include "flags.h"
#include "repo_context.h"
#include "ste/json.h"
#include "ste/test_recorder.h"

namespace ste::cli {
namespace {

const FlagSpec kBaseFlag = {"base", 0, true, "auto|ID", "baseline to ask (default auto)"};
const FlagSpec kConfigFlag = {"config", 0, true, "FILE", "ste.toml to use"};

// Loads config + store + baseline; prints and returns an exit code on error.
std::optional<LoadedBaseline> Baseline(const std::string& command, const ParsedFlags& flags,
                                       std::optional<Config>* config, int* exit_code) {
  *config = LoadRepoConfig(command, flags.Get("config"), exit_code);
  if (!*config) return std::nullopt;
  auto store = Store::Open((*config)->store_url, (*config)->root);
  absl::StatusOr<LoadedBaseline> loaded =
      store.ok() ? LoadBaseline(**store, **config, flags.Get("base")) : store.status();
  if (!loaded.ok()) {
    std::fprintf(stderr, "ste %s: %s\n", command.c_str(),
                 std::string(loaded.status().message()).c_str());
    *exit_code = 1;
    return std::nullopt;
  }
  return *std::move(loaded);
}

// A path as the index names it: repo-relative inside the repo (given
// relative to the current directory or absolute), absolute outside.
std::string IndexPath(const Config& config, const std::string& arg) {
  std::string abs = arg;
  if (arg[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) != nullptr) abs = std::string(cwd) + "/" + arg;
  }
  // Normalise "." and ".." lexically, as the interceptor does.
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= abs.size()) {
    size_t j = abs.find('/', i);
    if (j == std::string::npos) j = abs.size();
    std::string part = abs.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string normal;
  for (const std::string& p : parts) normal += "/" + p;
  return RepoRelative(config.root, normal.empty() ? "/" : normal);
}

}  // namespace

int WhyCommand(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {kBaseFlag, kConfigFlag};
  auto flags = ParseFlags(args, specs);
  if (!flags.ok()) return UsageError("why", std::string(flags.status().message()));
  if (flags->Has("help")) {
    std::printf(
        "Usage: ste why PATH\n\nThe tests that depend on PATH in the baseline, one per line\n"
        "with the kind of dependency: content (read it), absent (looked for it),\n"
        "listing (listed it); for a directory also its views ('view NAME', what a\n"
        "test used of its listing, e.g. view ste-dists: its *.dist-info names).\n"
        "PATH is relative to the current directory or absolute.\n"
        "Exit status: 0 (also when no test depends on it), 1 no baseline, 2 bad usage.\n\n%s",
        FlagsHelp(specs).c_str());
    return 0;
  }
  if (flags->positional.size() != 1) return UsageError("why", "expected one PATH");
  std::optional<Config> config;
  int exit_code = 0;
  std::optional<LoadedBaseline> base = Baseline("why", *flags, &config, &exit_code);
  if (!base) return exit_code;
  std::string path = IndexPath(*config, flags->positional[0]);
  auto keys = base->index->KeysMatchingPath(path);
  if (!keys.ok()) {
    std::fprintf(stderr, "ste why: %s\n", std::string(keys.status().message()).c_str());
    return 1;
  }
  size_t n = 0;
  for (const auto& [key, tests] : *keys) {
    for (uint32_t id : tests) {
      std::printf("%s\t%s\n", std::string(DepKindName(key.kind)).c_str(),
                  EscapeForText(base->index->test_scope(id).substr(4)).c_str());
      n++;
    }
  }
  // The views of PATH as a directory (inventory.h, "Views"): what the
  // tests used of its listing instead of listing it.
  auto views = base->index->ViewsOf(path);
  if (!views.ok()) {
    std::fprintf(stderr, "ste why: %s\n", std::string(views.status().message()).c_str());
    return 1;
  }
  for (const auto& [key, tests] : *views) {
    std::optional<View> view = ParseView(key.path);
    if (!view) continue;
    for (uint32_t id : tests) {
      std::printf("view %s\t%s\t(%s)\n", EscapeForText(view->name).c_str(),
                  EscapeForText(base->index->test_scope(id).substr(4)).c_str(),
                  EscapeForText(DescribeView(*view)).c_str());
      n++;
    }
  }
  std::fprintf(stderr, "ste why: %zu test dependencies on %s\n", n, EscapeForText(path).c_str());
  return 0;
}

int DepsCommand(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {kBaseFlag, kConfigFlag};
  auto flags = ParseFlags(args, specs);
  if (!flags.ok()) return UsageError("deps", std::string(flags.status().message()));
  if (flags->Has("help")) {
    std::printf(
        "Usage: ste deps TEST\n\nWhat TEST (a test file's repo-relative path) depended on in\n"
        "the baseline, one 'kind<TAB>path' per line, sorted.\n"
        "Exit status: 0, 1 no baseline or no such test, 2 bad usage.\n\n%s",
        FlagsHelp(specs).c_str());
    return 0;
  }
  if (flags->positional.size() != 1) return UsageError("deps", "expected one TEST");
  std::optional<Config> config;
  int exit_code = 0;
  std::optional<LoadedBaseline> base = Baseline("deps", *flags, &config, &exit_code);
  if (!base) return exit_code;
  std::string test = IndexPath(*config, flags->positional[0]);
  std::optional<uint32_t> id = base->index->FindTest(TestScope(test));
  if (!id) {
    std::fprintf(stderr, "ste deps: %s is not a test of baseline %lld\n", test.c_str(),
                 static_cast<long long>(base->info.id));
    return 1;
  }
  auto deps = base->index->DependenciesOf(*id);
  if (!deps.ok()) {
    std::fprintf(stderr, "ste deps: %s\n", std::string(deps.status().message()).c_str());
    return 1;
  }
  for (const DepKey& k : *deps) {
    std::printf("%s\t%s\n", std::string(DepKindName(k.kind)).c_str(),
                EscapeForText(k.path).c_str());
  }
  if (base->index->opaque(*id)) std::printf("opaque\t(it ran something ste could not trace)\n");
  return 0;
}

int IndexCommand(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {{"json", 0, false, "", "JSON lines (the only format)"},
                                       kBaseFlag, kConfigFlag};
  if (args.empty() || args[0] != "dump") {
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
      std::printf("Usage: ste index dump --json [--base auto|ID]\n\nEvery test of the "
                  "baseline's index with its sorted dependencies, one JSON object\nper line: "
                  "{\"test\",\"opaque\",\"deps\":[{\"path\",\"kind\"}]}. Two indexes with the "
                  "same\ndump select identically.\n\n%s",
                  FlagsHelp(specs).c_str());
      return 0;
    }
    return UsageError("index", "expected 'dump'");
  }
  auto flags = ParseFlags({args.begin() + 1, args.end()}, specs);
  if (!flags.ok()) return UsageError("index", std::string(flags.status().message()));
  if (flags->Has("help")) return IndexCommand({"--help"});
  std::optional<Config> config;
  int exit_code = 0;
  std::optional<LoadedBaseline> base = Baseline("index", *flags, &config, &exit_code);
  if (!base) return exit_code;
  auto dump = base->index->DumpJson();
  if (!dump.ok()) {
    std::fprintf(stderr, "ste index dump: %s\n", std::string(dump.status().message()).c_str());
    return 1;
  }
  std::fputs(dump->c_str(), stdout);
  return 0;
}

int InventoryCommand(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {
      {"json", 0, false, "", "one JSON object per entry (or per change with --diff)"},
      {"output", 'o', true, "FILE", "also write the inventory to FILE (ste's binary format)"},
      {"diff", 0, true, "OTHER",
       "compare with OTHER: an inventory file, or 'baseline' (the latest baseline's)"},
      kConfigFlag};
  auto flags = ParseFlags(args, specs);
  if (!flags.ok()) return UsageError("inventory", std::string(flags.status().message()));
  if (flags->Has("help")) {
    std::printf(
        "Usage: ste inventory [--json] [-o FILE] [--diff OTHER]\n\nHashes the repository "
        "(XXH3-128, parallel, minus inventory.ignore and the tool\ncaches) and prints 'type size "
        "hash path' per entry; with --diff, the changes\nfrom OTHER to now ('change type path').\n"
        "Exit status: 0, 1 the tree or OTHER cannot be read, 2 bad usage.\n\n%s",
        FlagsHelp(specs).c_str());
    return 0;
  }
  int exit_code = 0;
  std::optional<Config> config = LoadRepoConfig("inventory", flags->Get("config"), &exit_code);
  if (!config) return exit_code;
  std::optional<Inventory> other;
  if (flags->Has("diff")) {
    if (flags->Get("diff") == "baseline") {
      auto store = Store::Open(config->store_url, config->root);
      absl::StatusOr<LoadedBaseline> base =
          store.ok() ? LoadBaseline(**store, *config, "auto") : store.status();
      if (!base.ok()) {
        std::fprintf(stderr, "ste inventory: %s\n", std::string(base.status().message()).c_str());
        return 1;
      }
      other = std::move(base->inventory);
    } else {
      absl::StatusOr<Inventory> read = Inventory::ReadFile(flags->Get("diff"));
      if (!read.ok()) {
        std::fprintf(stderr, "ste inventory: %s\n", std::string(read.status().message()).c_str());
        return 1;
      }
      other = *std::move(read);
    }
  }
  ScanOptions scan;
  scan.root = config->root;
  scan.ignore = config->inventory_ignore;
  for (const InventoryEntry& e : other ? other->entries() : std::vector<InventoryEntry>{}) {
    if (IsViewPath(e.path)) {
      scan.view_paths.push_back(e.path);
    } else if (e.path[0] == '/') {
      scan.external_paths.push_back(e.path);
    }
  }
  absl::StatusOr<Inventory> now = Inventory::Scan(scan, other ? &*other : nullptr);
  if (!now.ok()) {
    std::fprintf(stderr, "ste inventory: %s\n", std::string(now.status().message()).c_str());
    return 1;
  }
  if (flags->Has("output")) {
    absl::Status written = now->WriteFile(flags->Get("output"));
    if (!written.ok()) {
      std::fprintf(stderr, "ste inventory: %s\n", std::string(written.message()).c_str());
      return 1;
    }
  }
  if (other) {
    InventoryDiff diff = Inventory::Diff(*other, *now);
    if (flags->Has("json")) {
      std::fputs(diff.ToJsonLines().c_str(), stdout);
    } else {
      for (const InventoryChange& c : diff.changes) {
        const char* change = c.change == ChangeKind::kAdded     ? "added"
                             : c.change == ChangeKind::kDeleted ? "deleted"
                                                                : "modified";
        std::printf("%s\t%s\t%s\n", change, std::string(FileTypeName(c.type)).c_str(),
                    EscapeForText(c.path).c_str());
      }
    }
    return 0;
  }
  if (flags->Has("json")) {
    std::fputs(now->ToJsonLines().c_str(), stdout);
  } else {
    for (const InventoryEntry& e : now->entries()) {
      std::printf("%s\t%llu\t%016llx%016llx\t%s\n", std::string(FileTypeName(e.type)).c_str(),
                  static_cast<unsigned long long>(e.size),
                  static_cast<unsigned long long>(e.hash.high64),
                  static_cast<unsigned long long>(e.hash.low64), EscapeForText(e.path).c_str());
    }
  }
  std::fprintf(stderr, "ste inventory: %zu entries\n", now->size());
  return 0;
}

}  // namespace ste::cli
