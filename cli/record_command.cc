// `ste record [-j N] [--progress auto|plain|none] [--mri N]`
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "flags.h"
#include "repo_context.h"
#include "ste/git.h"
#include "ste/record_build.h"
#include "ste/traced_run.h"

namespace ste::cli {
namespace {

const std::vector<FlagSpec> kRecordFlags = {
    {"jobs", 'j', true, "N", "tests to run at a time (default: runner.jobs)"},
    {"progress", 0, true, "MODE",
     "auto (a bar on a terminal, lines otherwise), plain (a line per test), none"},
    {"mri", 0, true, "N",
     "the baseline's monotonic revision id (default: git rev-list --count HEAD; "
     "outside git, one more than the store's highest)"},
    {"config", 0, true, "FILE", "ste.toml to use (default: found from the current directory up)"},
};

constexpr char kRecordHelp[] =
    "Usage: ste record [-j N] [--progress auto|plain|none] [--mri N]\n"
    "\n"
    "Records a baseline of the repository holding ste.toml: hashes the tree\n"
    "(before any test runs), runs every test file (tests.include) under the\n"
    "interceptor with runner.command, N at a time, inverts what each test\n"
    "touched into the selection index, and stores index, inventory and\n"
    "results as one baseline in the store (store.url, default\n"
    ".ste/ste.db). The baseline becomes visible to 'ste select' only once\n"
    "complete: an interrupted record leaves the previous one in use.\n"
    "\n"
    "Exit status: 0 the baseline is stored (failing tests are recorded as\n"
    "failed and will be selected next time); 1 it could not be recorded;\n"
    "2 bad usage or configuration.\n"
    "\n";

}  // namespace

int RecordCommand(const std::vector<std::string>& args) {
  auto flags = ParseFlags(args, kRecordFlags);
  if (!flags.ok()) return UsageError("record", std::string(flags.status().message()));
  if (flags->Has("help")) {
    std::printf("%s%s", kRecordHelp, FlagsHelp(kRecordFlags).c_str());
    return 0;
  }
  if (!flags->positional.empty()) return UsageError("record", "takes no arguments");
  int jobs = 0;
  if (flags->Has("jobs") && (!absl::SimpleAtoi(flags->Get("jobs"), &jobs) || jobs < 1)) {
    return UsageError("record", "-j needs a positive number");
  }
  std::string progress = flags->Get("progress", "auto");
  if (progress != "auto" && progress != "plain" && progress != "none") {
    return UsageError("record", "--progress is auto, plain or none");
  }
  if (progress == "auto") progress = isatty(2) ? "bar" : "plain";
  int64_t mri = -1;
  if (flags->Has("mri") && (!absl::SimpleAtoi(flags->Get("mri"), &mri) || mri < 0)) {
    return UsageError("record", "--mri needs a number >= 0");
  }

  int exit_code = 0;
  std::optional<Config> config = LoadRepoConfig("record", flags->Get("config"), &exit_code);
  if (!config) return exit_code;
  auto fail = [](const std::string& what) {
    std::fprintf(stderr, "ste record: %s\n", what.c_str());
    return 1;
  };
  absl::StatusOr<std::string> preload = FindPreloadLibrary();
  if (!preload.ok()) return fail(std::string(preload.status().message()));
  absl::StatusOr<std::unique_ptr<BaselineStore>> store =
      BaselineStore::Open(config->store_url, config->root);
  if (!store.ok()) return fail(std::string(store.status().message()));

  std::string commit;
  if (IsGitRepo(config->root)) {
    absl::StatusOr<std::string> head = GitHead(config->root);
    if (head.ok()) commit = *head;
    if (mri < 0) {
      absl::StatusOr<int64_t> count = GitMri(config->root, "HEAD");
      if (!count.ok()) return fail(std::string(count.status().message()));
      mri = *count;
    }
  }
  if (mri < 0) {
    absl::StatusOr<int64_t> next = (*store)->NextMri();
    if (!next.ok()) return fail(std::string(next.status().message()));
    mri = *next;
  }

  RecordBuildOptions options;
  options.jobs = jobs;
  options.preload_library = *preload;
  // What the previous baseline knew: hashes to reuse, durations to order by.
  Inventory previous_inventory;
  absl::StatusOr<LoadedBaseline> previous = LoadBaseline(**store, *config, "auto");
  if (previous.ok()) {
    previous_inventory = std::move(previous->inventory);
    options.previous_inventory = &previous_inventory;
    absl::StatusOr<std::vector<TestResult>> results = (*store)->Results(previous->info.id);
    if (results.ok()) {
      for (const TestResult& r : *results) options.previous_seconds[r.test] = r.seconds;
    }
  }
  std::string scratch = absl::StrCat(DefaultScratchRoot(), "/ste-record-XXXXXX");
  if (mkdtemp(scratch.data()) == nullptr) return fail("cannot create a scratch directory");
  options.scratch_dir = scratch;
  options.phase = [&](const char* phase) {
    if (progress != "none") std::fprintf(stderr, "ste record: %s...\n", phase);
  };
  options.progress = [&](const RecordProgress& p) {
    if (progress == "none") return;
    const TestRecord& t = *p.last;
    const char* status = !t.started ? "ERROR" : t.exit_code == 0 ? "ok" : "FAIL";
    if (progress == "bar") {
      const int width = 30;
      int filled = static_cast<int>(width * p.done / p.total);
      std::fprintf(stderr, "\r\033[K[%s%s] %zu/%zu %s %s", std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), p.done, p.total, status,
                   t.test.c_str());
      if (p.done == p.total) std::fputc('\n', stderr);
    } else {
      std::fprintf(stderr, "[%zu/%zu] %-5s %s (%s)\n", p.done, p.total, status,
                   t.test.c_str(), Seconds(t.seconds).c_str());
    }
  };

  absl::StatusOr<int64_t> id = (*store)->Begin(commit, mri);
  if (!id.ok()) return fail(std::string(id.status().message()));
  absl::StatusOr<RecordBuildOutput> build = RunRecordBuild(*config, options);
  rmdir(scratch.c_str());
  if (!build.ok()) {
    (void)(*store)->MarkFailed(*id, std::string(build.status().message()));
    return fail(std::string(build.status().message()));
  }
  std::vector<TestResult> results;
  size_t failed = 0, errors = 0, opaque = 0;
  for (const TestRecord& t : build->tests) {
    TestResult r;
    r.test = t.test;
    r.exit_code = t.exit_code;
    r.seconds = t.seconds;
    r.opaque = t.deps.opaque;
    r.outcome = !t.started ? TestOutcome::kError
                : t.exit_code != 0 ? TestOutcome::kFailed
                                   : TestOutcome::kPassed;
    failed += r.outcome == TestOutcome::kFailed;
    errors += r.outcome == TestOutcome::kError;
    opaque += r.opaque;
    results.push_back(std::move(r));
  }
  absl::Status stored = (*store)->PutBlob(*id, "index", build->index);
  if (stored.ok()) stored = (*store)->PutBlob(*id, "inventory", build->inventory.Serialize());
  if (stored.ok()) stored = (*store)->PutResults(*id, results);
  if (stored.ok()) stored = (*store)->Complete(*id);
  if (!stored.ok()) {
    (void)(*store)->MarkFailed(*id, std::string(stored.message()));
    return fail(std::string(stored.message()));
  }
  std::printf("ste record: baseline %lld (mri %lld%s%s): %zu tests, %zu passed, %zu failed, "
              "%zu errors, %zu opaque\n",
              static_cast<long long>(*id), static_cast<long long>(mri),
              commit.empty() ? "" : ", commit ", commit.substr(0, 12).c_str(),
              results.size(), results.size() - failed - errors, failed, errors, opaque);
  std::printf("ste record: inventory %zu entries in %s, tests in %s, index %zu bytes in %s\n",
              build->inventory.size(), Seconds(build->inventory_seconds).c_str(),
              Seconds(build->tests_seconds).c_str(), build->index.size(),
              Seconds(build->index_seconds).c_str());
  for (const TestRecord& t : build->tests) {
    if (!t.started) {
      std::printf("  error  %s: %s\n", t.test.c_str(), t.error.c_str());
    } else if (t.exit_code != 0) {
      std::printf("  failed %s (exit %d)\n", t.test.c_str(), t.exit_code);
    }
    if (t.deps.opaque) {
      std::printf("  opaque %s: %s\n", t.test.c_str(),
                  t.deps.opaque_reasons.empty() ? "" : t.deps.opaque_reasons[0].c_str());
    }
  }
  return 0;
}

}  // namespace ste::cli
