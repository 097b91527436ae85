// `ste baseline export|import|list|gc`: baselines as files, and retention.
//
// Flags and printing only: the file format and import/export are in
// store/include/ste/baseline_archive.h, the retention rule in
// scheduler/include/ste/baseline_retention.h.
#include <cstdio>
#include <ctime>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "commands.h"
#include "invocation.h"
#include "output_format.h"
#include "ste/baseline_archive.h"
#include "ste/baseline_retention.h"
#include "ste/baseline_store.h"
#include "ste/json.h"

namespace ste::cli {
namespace {

const FlagSpec kConfigFlag = {"config", 0, true, "FILE", "ste.toml to use (default: found from the current directory up)"};
// The store, overriding ste.toml's store.url: a job selecting for a change
// it does not trust names the store itself (docs/SECURITY.md).
const FlagSpec kStoreFlag = {"store", 0, true, "URL",
                             "the store to use instead of ste.toml's store.url (sqlite:PATH or "
                             "postgresql://...)"};

constexpr char kBaselineHelp[] =
    "Usage: ste baseline export [ID|latest] -o FILE\n"
    "       ste baseline import FILE\n"
    "       ste baseline list [--format text|json]\n"
    "       ste baseline gc --keep N [--abandoned-after AGE] [--dry-run]\n"
    "\n"
    "Baselines as files, for CIs that carry state in a cache or an artifact\n"
    "instead of a database, and how many a store keeps. Each works on the\n"
    "store of ste.toml (store.url: SQLite or PostgreSQL).\n"
    "\n"
    "Run 'ste baseline <subcommand> --help' for each one's flags.\n";

constexpr char kExportHelp[] =
    "Usage: ste baseline export [ID|latest] -o FILE\n"
    "\n"
    "Writes one complete baseline (default latest: the highest mri, then the\n"
    "highest id) to FILE: its commit, mri and times, the selection index,\n"
    "the inventory, every test's result and duration, and the flaky tests,\n"
    "why each opaque test is and what tests left behind (format version 2;\n"
    "version 1 files, without them, are still imported), in one versioned,\n"
    "checksummed file (format: store/include/ste/baseline_archive.h).\n"
    "The blobs are checked against their recorded hashes, and index and\n"
    "inventory read with their own readers, before anything is written. FILE is\n"
    "written to a temp file beside it, fsynced and renamed into place: a\n"
    "killed export leaves FILE as it was.\n"
    "\n"
    "Exit status: 0 written; 1 no such complete baseline, the store or the\n"
    "file failed; 2 bad usage or configuration.\n"
    "\n";

constexpr char kImportHelp[] =
    "Usage: ste baseline import FILE\n"
    "\n"
    "Reads a file 'ste baseline export' wrote and stores it as a complete\n"
    "baseline (same commit, mri, times, index, inventory and results), which\n"
    "'ste select' then uses as it would the original. Everything is checked\n"
    "before the store is even opened: magic, version, every length, every\n"
    "checksum, that index and inventory read with their own readers and the\n"
    "results are well formed; a damaged, truncated or foreign file is\n"
    "refused, saying what is wrong, and the store is left as it was.\n"
    "Importing a baseline the store already holds (same commit, mri, index,\n"
    "inventory and results) does nothing, and says so.\n"
    "\n"
    "Exit status: 0 imported, or already there; 1 refused (the file) or the\n"
    "store failed; 2 bad usage or configuration.\n"
    "\n";

constexpr char kListHelp[] =
    "Usage: ste baseline list [--format text|json]\n"
    "\n"
    "Every baseline of the store, newest (highest id) first: id, mri,\n"
    "commit, state (building, complete, failed), tests, size (its blobs),\n"
    "age (since its record build began). A building one says whether a\n"
    "writer still holds it; a failed one, why it failed. json (or --json):\n"
    "{\"baselines\":[{\"id\",\"mri\",\"commit\",\"state\",\"tests\",\"bytes\",\n"
    "\"created_unix\",\"completed_unix\",\"age_seconds\",\"writer_alive\" (null\n"
    "unless building),\"failure\"}],\"version\":1}.\n"
    "\n"
    "Exit status: 0; 1 the store failed; 2 bad usage or configuration.\n"
    "\n";

constexpr char kGcHelp[] =
    "Usage: ste baseline gc --keep N [--abandoned-after AGE] [--dry-run]\n"
    "\n"
    "Removes from the store, with their blob files (PostgreSQL: this\n"
    "machine's cached copies) and hash stamps:\n"
    "  - complete baselines older than the newest N (highest mri, then\n"
    "    highest id); the newest complete one is never removed (N >= 1);\n"
    "  - failed ones;\n"
    "  - abandoned ones: building, no process holds its writer lock (its\n"
    "    writer died, or let go without finishing), and begun at least AGE\n"
    "    ago (default 24h; e.g. 90m, 6h, 2d, 0s). A build whose\n"
    "    writer is alive ('ste baseline list': writer alive) is kept\n"
    "    however old; the age is the second guard, for builds that hold no\n"
    "    lock (begun by an older ste, or a PostgreSQL connection lost\n"
    "    mid-build).\n"
    "and then files no baseline needs (temp files of killed writes, blob\n"
    "files and cache copies no row names, stale hash stamps and lock files),\n"
    "and this checkout's test logs of record builds whose baseline is gone\n"
    "(.ste/output/b<id>).\n"
    "Rows go before files: a concurrent 'ste select' that then finds a\n"
    "removed baseline's files gone looks for its baseline again (one that\n"
    "had them open already finishes with them).\n"
    "\n"
    "Exit status: 0 done (also when nothing was to remove); 1 the store\n"
    "failed, or a baseline could not be removed (the others were); 2 bad\n"
    "usage or configuration.\n"
    "\n";

// "512 B", "2.1 KiB", "3.4 MiB", "1.2 GiB".
std::string Size(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return absl::StrFormat("%.1f %s", v, units[u]);
}

int64_t Now() { return static_cast<int64_t>(std::time(nullptr)); }

// The store of ste.toml (or --store); prints the error.
Store* OpenStore(Invocation& in) {
  if (in.config() == nullptr) return nullptr;  // printed: exit 2
  absl::StatusOr<Store*> store = in.store(StoreAccess::kReadWrite);
  if (!store.ok()) {
    in.Fail("store unusable: " + std::string(store.status().message()));
    return nullptr;
  }
  return *store;
}

int Export(const std::vector<std::string>& args) {
  Invocation in({"baseline export", kExportHelp,
                 {{"output", 'o', true, "FILE", "the file to write (required)"}, kConfigFlag,
                  kStoreFlag}});
  if (std::optional<int> done = in.Parse(args)) return *done;
  const ParsedFlags* flags = &in.flags();
  if (flags->positional.size() > 1) return in.UsageError("takes one baseline: ID or latest");
  int64_t id = 0;
  if (!flags->positional.empty() && flags->positional[0] != "latest" &&
      (!absl::SimpleAtoi(flags->positional[0], &id) || id <= 0)) {
    return in.UsageError(absl::StrCat("the baseline is an id (a number > 0) or 'latest', not '",
                                      flags->positional[0], "'"));
  }
  if (flags->Get("output").empty()) return in.UsageError("-o FILE is required");
  Store* store = OpenStore(in);
  if (store == nullptr) return in.exit_code();
  absl::StatusOr<BaselineArchive> archive = ArchiveFromStore(*store, id);
  if (!archive.ok()) return in.Fail(archive.status());
  const std::string file = flags->Get("output");
  absl::Status written = WriteBaselineArchiveFile(*archive, file);
  if (!written.ok()) return in.Fail(written);
  std::printf("ste baseline export: baseline %lld (commit %s, mri %lld, %zu tests; index %s, "
              "inventory %s) written to %s\n",
              static_cast<long long>(archive->origin_id),
              archive->commit.empty() ? "none" : archive->commit.substr(0, 12).c_str(),
              static_cast<long long>(archive->mri), archive->results.size(),
              Size(static_cast<int64_t>(archive->index.size())).c_str(),
              Size(static_cast<int64_t>(archive->inventory.size())).c_str(), file.c_str());
  return ExitCode(Outcome::kSuccess);
}

int Import(const std::vector<std::string>& args) {
  Invocation in({"baseline import", kImportHelp, {kConfigFlag, kStoreFlag}});
  if (std::optional<int> done = in.Parse(args)) return *done;
  if (in.flags().positional.size() != 1) return in.UsageError("expected one FILE");
  const std::string file = in.flags().positional[0];
  // Everything is checked before the store is opened (opening may create it).
  absl::StatusOr<BaselineArchive> archive = ReadBaselineArchiveFile(file);
  if (!archive.ok()) return in.Fail("refused: " + std::string(archive.status().message()));
  Store* store = OpenStore(in);
  if (store == nullptr) return in.exit_code();
  absl::StatusOr<ImportOutcome> imported = ImportBaseline(*store, *archive);
  if (!imported.ok()) return in.Fail(imported.status());
  const std::string what = absl::StrFormat(
      "commit %s, mri %d, %d tests",
      archive->commit.empty() ? "none" : archive->commit.substr(0, 12), archive->mri,
      archive->results.size());
  if (imported->already) {
    std::printf("ste baseline import: %s is already in the store as baseline %lld (%s): nothing "
                "imported\n",
                file.c_str(), static_cast<long long>(imported->baseline), what.c_str());
  } else {
    std::printf("ste baseline import: %s imported as baseline %lld (%s)\n", file.c_str(),
                static_cast<long long>(imported->baseline), what.c_str());
  }
  return ExitCode(Outcome::kSuccess);
}

int List(const std::vector<std::string>& args) {
  Invocation in({"baseline list", kListHelp, {kConfigFlag, kStoreFlag},
                 {OutputFormat::kText, OutputFormat::kJson}});
  if (std::optional<int> done = in.Parse(args)) return *done;
  if (!in.flags().positional.empty()) return in.UsageError("takes no arguments");
  Store* store = OpenStore(in);
  if (store == nullptr) return in.exit_code();
  absl::StatusOr<std::vector<BaselineSummary>> list = store->ListSummaries();
  if (!list.ok()) return in.Fail(list.status());
  const int64_t now = Now();
  if (in.json()) {
    std::fputs(BaselineListJson(*list, now).c_str(), stdout);
    return ExitCode(Outcome::kSuccess);
  }
  std::printf("%6s %8s  %-12s  %-8s %6s %10s %5s\n", "ID", "MRI", "COMMIT", "STATE", "TESTS", "SIZE",
              "AGE");
  for (const BaselineSummary& b : *list) {
    std::string note;
    if (b.info.state == BaselineState::kBuilding) {
      note = b.writer_alive ? "  writer alive" : "  no writer";
    } else if (b.info.state == BaselineState::kFailed && !b.info.failure.empty()) {
      note = "  " + EscapeForText(b.info.failure);
    }
    std::printf("%6lld %8lld  %-12s  %-8s %6lld %10s %5s%s\n", static_cast<long long>(b.info.id),
                static_cast<long long>(b.info.mri),
                b.info.commit.empty() ? "-" : EscapeForText(b.info.commit.substr(0, 12)).c_str(),
                std::string(BaselineStateName(b.info.state)).c_str(),
                static_cast<long long>(b.tests), Size(b.blob_bytes).c_str(),
                DescribeAge(now - b.info.created_unix).c_str(), note.c_str());
  }
  std::fprintf(stderr, "ste baseline list: %zu baselines\n", list->size());
  return ExitCode(Outcome::kSuccess);
}

// "90m", "6h", "2d", "0s" (absl durations, plus whole days).
std::optional<int64_t> ParseAge(const std::string& text) {
  absl::string_view days = text;
  int64_t n = 0;
  if (absl::ConsumeSuffix(&days, "d")) {
    if (!absl::SimpleAtoi(days, &n) || n < 0) return std::nullopt;
    return n * 86400;
  }
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d < absl::ZeroDuration()) return std::nullopt;
  return absl::ToInt64Seconds(d);
}

int Gc(const std::vector<std::string>& args) {
  const std::string cmd = "baseline gc";
  const std::vector<FlagSpec> specs = {
      {"keep", 0, true, "N", "complete baselines to keep, the newest (N >= 1; required)"},
      {"abandoned-after", 0, true, "AGE",
       "a building baseline nothing holds is abandoned once this old (default 24h)"},
      {"dry-run", 0, false, "", "print what would be removed; remove nothing"},
      kConfigFlag, kStoreFlag};
  Invocation in({cmd, kGcHelp, specs});
  if (std::optional<int> done = in.Parse(args)) return *done;
  const ParsedFlags* flags = &in.flags();
  if (!flags->positional.empty()) return in.UsageError("takes no arguments");
  GcOptions options;
  int64_t keep = 0;
  if (!flags->Has("keep")) return in.UsageError("--keep N is required");
  if (!absl::SimpleAtoi(flags->Get("keep"), &keep) || keep < 1) {
    return in.UsageError(absl::StrCat("--keep needs a number >= 1 (the newest complete baseline "
                                        "is never removed), not '",
                                        flags->Get("keep"), "'"));
  }
  options.keep = static_cast<size_t>(keep);
  if (flags->Has("abandoned-after")) {
    std::optional<int64_t> age = ParseAge(flags->Get("abandoned-after"));
    if (!age) {
      return in.UsageError(absl::StrCat("--abandoned-after needs a duration such as 90m, 6h, "
                                          "2d or 0s, not '",
                                          flags->Get("abandoned-after"), "'"));
    }
    options.abandoned_after_seconds = *age;
  }
  options.dry_run = flags->Has("dry-run");
  Store* store = OpenStore(in);
  if (store == nullptr) return in.exit_code();
  options.output_dir = in.config()->root + "/.ste/output";
  absl::StatusOr<GcReport> report = CollectGarbage(*store, options, Now());
  if (!report.ok()) return in.Fail(report.status());
  size_t kept = 0;
  for (const GcDecision& d : report->decisions) {
    const bool removed = d.remove && (options.dry_run || std::count(report->removed.begin(),
                                                                    report->removed.end(),
                                                                    d.baseline.info.id) > 0);
    kept += !removed;
    std::printf("%-13s baseline %lld (%s, mri %lld): %s\n",
                removed ? (options.dry_run ? "would remove" : "removed") : "kept",
                static_cast<long long>(d.baseline.info.id),
                std::string(BaselineStateName(d.baseline.info.state)).c_str(),
                static_cast<long long>(d.baseline.info.mri), EscapeForText(d.why).c_str());
  }
  for (const std::string& k : report->kept_after_all) {
    std::printf("kept after all: baseline %s\n", EscapeForText(k).c_str());
  }
  for (const std::string& f : report->stale_files) {
    std::printf("removed stale file %s\n", EscapeForText(f).c_str());
  }
  for (const std::string& d : report->output_dirs) {
    std::printf("removed test logs %s\n", EscapeForText(d).c_str());
  }
  if (options.dry_run) {
    std::fprintf(stderr, "ste baseline gc: dry run: nothing removed\n");
    return ExitCode(Outcome::kSuccess);
  }
  std::fprintf(stderr,
               "ste baseline gc: removed %zu baselines (%s), %zu stale files and %zu test log "
               "folders; kept %zu\n",
               report->removed.size(), Size(report->removed_bytes).c_str(),
               report->stale_files.size(), report->output_dirs.size(), kept);
  if (!report->status.ok()) return in.Fail(report->status);
  return ExitCode(Outcome::kSuccess);
}

}  // namespace

int BaselineCommand(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kBaselineHelp, stderr);
    return ExitCode(Outcome::kUsage);
  }
  const std::string sub = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kBaselineHelp, stdout);
    return ExitCode(Outcome::kSuccess);
  }
  if (sub == "export") return Export(rest);
  if (sub == "import") return Import(rest);
  if (sub == "list") return List(rest);
  if (sub == "gc") return Gc(rest);
  return UsageError("baseline", absl::StrCat("unknown subcommand '", sub,
                                            "' (export, import, list or gc)"));
}

}  // namespace ste::cli
