// Questions to a baseline: `ste why PATH`, `ste deps TEST`, `ste hazards`,
// `ste index dump`, and `ste inventory [--diff OTHER]`; each prints text or
// JSON (output_format.h).
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "commands.h"
#include "invocation.h"
#include "output_format.h"
#include "repo_context.h"
#include "ste/hazards.h"
#include "ste/json.h"
#include "ste/repo_path.h"
#include "ste/test_recorder.h"

namespace ste::cli {
namespace {

const FlagSpec kBaseFlag = {"base", 0, true, "auto|ID", "baseline to ask (default auto)"};
const FlagSpec kConfigFlag = {"config", 0, true, "FILE", "ste.toml to use"};
const std::vector<OutputFormat> kTextOrJson = {OutputFormat::kText, OutputFormat::kJson};

const CommandSpec kWhySpec = {
    "why",
    "Usage: ste why [--format text|json] PATH\n\nThe tests that depend on PATH in the baseline, one per line\n"
    "with the kind of dependency: content (read it), absent (looked for it),\n"
    "listing (listed it); for a directory also its views ('view NAME', what a\n"
    "test used of its listing, e.g. view ste-dists: its *.dist-info names).\n"
    "PATH is relative to the current directory or absolute.\n"
    "json: {\"path\",\"tests\":[{\"test\",\"kind\",\"view\",\"description\"}],\"version\":1}\n"
    "(view and description for kind view only).\n"
    "Exit status: 0 (also when no test depends on it), 1 no baseline, 2 bad usage.\n\n",
    {kBaseFlag, kConfigFlag},
    kTextOrJson};

const CommandSpec kDepsSpec = {
    "deps",
    "Usage: ste deps [--format text|json] TEST\n\nWhat TEST (a test file's repo-relative path) depended on in\n"
    "the baseline, one 'kind<TAB>path' per line, sorted.\n"
    "json: {\"test\",\"baseline\",\"opaque\",\"deps\":[{\"path\",\"kind\"}],\"version\":1}.\n"
    "Exit status: 0, 1 no baseline or no such test, 2 bad usage.\n\n",
    {kBaseFlag, kConfigFlag},
    kTextOrJson};

const CommandSpec kIndexSpec = {
    "index dump",
    "Usage: ste index dump [--format json] [--base auto|ID]\n\n"
    "Every test of the baseline's index with its sorted dependencies, one JSON\n"
    "object per line: {\"test\",\"opaque\",\"deps\":[{\"path\",\"kind\"}],\"version\":1}.\n"
    "Two indexes with the same dump select identically. json is the only\n"
    "format (--json is accepted too).\n\n",
    {kBaseFlag, kConfigFlag},
    {OutputFormat::kJson}};

const CommandSpec kInventorySpec = {
    "inventory",
    "Usage: ste inventory [--format text|json] [-o FILE] [--diff OTHER]\n\nHashes the repository "
    "(XXH3-128, parallel, minus inventory.ignore and the tool\ncaches) and prints 'type size "
    "hash path' per entry; with --diff, the changes\nfrom OTHER to now ('change type path').\n"
    "json: one JSON object per entry (or per change with --diff), each with \"version\":1.\n"
    "Exit status: 0, 1 the tree or OTHER cannot be read, 2 bad usage.\n\n",
    {{"output", 'o', true, "FILE", "also write the inventory to FILE (ste's binary format)"},
     {"diff", 0, true, "OTHER",
      "compare with OTHER: an inventory file, or 'baseline' (the latest baseline's)"},
     kConfigFlag},
    kTextOrJson};

const CommandSpec kHazardsSpec = {
    "hazards",
    "Usage: ste hazards [--format text|json] [--base auto|ID]\n\n"
    "Order dependences between the tests of the baseline: a test that wrote a\n"
    "file and left it behind (outside its own temporary directory and\n"
    "inventory.ignore), and each other test that read it (content), looked for\n"
    "it (absent) or listed its directory (listing). Such a reader may pass or\n"
    "fail by whether the writer ran first: run them in one order, or have the\n"
    "writer clean up. One 'WRITER writes PATH, which READER <kind>' per line.\n"
    "A baseline recorded before ste kept writes has none to show.\n"
    "json: {\"baseline\",\"hazards\":[{\"writer\",\"path\",\"reader\",\"kind\"}],\"version\":1}.\n"
    "Exit status: 0 (hazards or not), 1 no baseline or an unreadable one, 2 bad usage.\n\n",
    {kBaseFlag, kConfigFlag},
    kTextOrJson};

// A path as the index names it: repo-relative inside the repo (given
// relative to the current directory or absolute), absolute outside.
}  // namespace

int WhyCommand(const std::vector<std::string>& args) {
  Invocation in(kWhySpec);
  if (std::optional<int> done = in.Parse(args)) return *done;
  if (in.flags().positional.size() != 1) return in.UsageError("expected one PATH");
  LoadedBaseline* base = in.Baseline();
  if (base == nullptr) return in.exit_code();
  std::string path = IndexPath(*in.config(), in.flags().positional[0]);
  auto keys = base->index->KeysMatchingPath(path);
  if (!keys.ok()) return in.Fail(keys.status());
  std::vector<Dependent> dependents;
  for (const auto& [key, tests] : *keys) {
    for (uint32_t id : tests) {
      dependents.push_back(
          {std::string(TestOfScope(base->index->test_scope(id))), std::string(DepKindName(key.kind)), "", ""});
    }
  }
  // The views of PATH as a directory (inventory.h, "Views"): what the
  // tests used of its listing instead of listing it.
  auto views = base->index->ViewsOf(path);
  if (!views.ok()) return in.Fail(views.status());
  for (const auto& [key, tests] : *views) {
    std::optional<View> view = ParseView(key.path);
    if (!view) continue;
    for (uint32_t id : tests) {
      dependents.push_back(
          {std::string(TestOfScope(base->index->test_scope(id))), "view", view->name, DescribeView(*view)});
    }
  }
  const std::string out = in.json() ? WhyJson(path, dependents) : WhyText(dependents);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fprintf(stderr, "ste why: %zu test dependencies on %s\n", dependents.size(),
               EscapeForText(path).c_str());
  return ExitCode(Outcome::kSuccess);
}

int HazardsCommand(const std::vector<std::string>& args) {
  Invocation in(kHazardsSpec);
  if (std::optional<int> done = in.Parse(args)) return *done;
  if (!in.flags().positional.empty()) return in.UsageError("takes no arguments");
  LoadedBaseline* base = in.Baseline();
  if (base == nullptr) return in.exit_code();
  absl::StatusOr<Store*> store = in.store(StoreAccess::kReadWrite);
  if (!store.ok()) return in.Fail(store.status());
  std::map<std::string, std::vector<std::string>> writes;
  absl::StatusOr<std::optional<std::string>> blob = ReadOptionalBlob(**store, base->info.id, kWritesBlob);
  if (!blob.ok()) return in.Fail(blob.status());
  if (blob->has_value()) {
    absl::StatusOr<std::map<std::string, std::vector<std::string>>> decoded = DecodeWrites(**blob);
    if (!decoded.ok()) return in.Fail(decoded.status());
    writes = *std::move(decoded);
  }
  absl::StatusOr<std::vector<Hazard>> hazards = FindHazards(*base->index, writes);
  if (!hazards.ok()) return in.Fail(hazards.status());
  std::string out;
  if (in.json()) {
    JsonWriter j;
    j.BeginObject().Key("baseline").Int(base->info.id).Key("hazards").BeginArray();
    for (const Hazard& h : *hazards) {
      j.BeginObject().PathMember("writer", h.writer).PathMember("path", h.path).PathMember("reader", h.reader);
      j.Key("kind").String(DepKindName(h.kind)).EndObject();
    }
    j.EndArray().VersionMember().EndObject();
    out = j.Take() + "\n";
  } else {
    for (const Hazard& h : *hazards) {
      const char* how = h.kind == DepKind::kContent  ? "reads"
                        : h.kind == DepKind::kAbsent ? "looks for"
                                                     : "lists the directory of";
      absl::StrAppend(&out, EscapeForText(h.writer), " writes ", EscapeForText(h.path), ", which ",
                      EscapeForText(h.reader), " ", how, "\n");
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  size_t writers = 0;
  for (const auto& [test, paths] : writes) writers += paths.empty() ? 0 : 1;
  std::fprintf(stderr, "ste hazards: %zu in baseline %lld (%zu tests left files behind)\n", hazards->size(),
               static_cast<long long>(base->info.id), writers);
  return ExitCode(Outcome::kSuccess);
}

int DepsCommand(const std::vector<std::string>& args) {
  Invocation in(kDepsSpec);
  if (std::optional<int> done = in.Parse(args)) return *done;
  if (in.flags().positional.size() != 1) return in.UsageError("expected one TEST");
  LoadedBaseline* base = in.Baseline();
  if (base == nullptr) return in.exit_code();
  TestDependencies deps;
  deps.test = IndexPath(*in.config(), in.flags().positional[0]);
  deps.baseline = base->info.id;
  std::optional<uint32_t> id = base->index->FindTest(ScopeOfTest(deps.test));
  if (!id) {
    return in.Fail(absl::StrCat(deps.test, " is not a test of baseline ", base->info.id));
  }
  auto found = base->index->DependenciesOf(*id);
  if (!found.ok()) return in.Fail(found.status());
  deps.deps = *std::move(found);
  deps.opaque = base->index->opaque(*id);
  const std::string out = in.json() ? DepsJson(deps) : DepsText(deps);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return ExitCode(Outcome::kSuccess);
}

int IndexCommand(const std::vector<std::string>& args) {
  Invocation in(kIndexSpec);
  if (args.empty() || args[0] != "dump") {
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) return *in.Parse({"--help"});
    return UsageError("index", "expected 'dump'");
  }
  if (std::optional<int> done = in.Parse({args.begin() + 1, args.end()})) return *done;
  LoadedBaseline* base = in.Baseline();
  if (base == nullptr) return in.exit_code();
  auto dump = base->index->DumpJson();
  if (!dump.ok()) return in.Fail(dump.status());
  const std::string out = AddVersionToJsonLines(*dump);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return ExitCode(Outcome::kSuccess);
}

int InventoryCommand(const std::vector<std::string>& args) {
  Invocation in(kInventorySpec);
  if (std::optional<int> done = in.Parse(args)) return *done;
  const ParsedFlags& flags = in.flags();
  Config* config = in.config();
  if (config == nullptr) return in.exit_code();
  std::optional<Inventory> other;
  if (flags.Has("diff")) {
    if (flags.Get("diff") == "baseline") {
      LoadedBaseline* base = in.Baseline();  // the latest: inventory has no --base
      if (base == nullptr) return in.exit_code();
      other = std::move(base->inventory);
    } else {
      absl::StatusOr<Inventory> read = Inventory::ReadFile(flags.Get("diff"));
      if (!read.ok()) return in.Fail(read.status());
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
  if (!now.ok()) return in.Fail(now.status());
  if (flags.Has("output")) {
    absl::Status written = now->WriteFile(flags.Get("output"));
    if (!written.ok()) return in.Fail(written);
  }
  if (other) {
    InventoryDiff diff = Inventory::Diff(*other, *now);
    if (in.json()) {
      std::fputs(AddVersionToJsonLines(diff.ToJsonLines()).c_str(), stdout);
    } else {
      for (const InventoryChange& c : diff.changes) {
        const char* change = c.change == ChangeKind::kAdded     ? "added"
                             : c.change == ChangeKind::kDeleted ? "deleted"
                                                                : "modified";
        std::printf("%s\t%s\t%s\n", change, std::string(FileTypeName(c.type)).c_str(),
                    EscapeForText(c.path).c_str());
      }
    }
    return ExitCode(Outcome::kSuccess);
  }
  if (in.json()) {
    std::fputs(AddVersionToJsonLines(now->ToJsonLines()).c_str(), stdout);
  } else {
    for (const InventoryEntry& e : now->entries()) {
      std::printf("%s\t%llu\t%016llx%016llx\t%s\n", std::string(FileTypeName(e.type)).c_str(),
                  static_cast<unsigned long long>(e.size),
                  static_cast<unsigned long long>(e.hash.high64),
                  static_cast<unsigned long long>(e.hash.low64), EscapeForText(e.path).c_str());
    }
  }
  std::fprintf(stderr, "ste inventory: %zu entries\n", now->size());
  return ExitCode(Outcome::kSuccess);
}

}  // namespace ste::cli
