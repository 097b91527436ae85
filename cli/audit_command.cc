// `ste audit [--sample N | --fraction F] [--seed S] [--fail-on-miss]
//            [--base auto|ID | --base-commit SHA | --mri N] [--env-file FILE]
//            [--format text|json]`: the tests the selection leaves out, run,
// and a miss named loudly (scheduler's ste/audit.h).
#include <errno.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "invocation.h"
#include "output_format.h"
#include "repo_context.h"
#include "ste/audit.h"
#include "ste/checkout.h"
#include "ste/environment.h"
#include "ste/json.h"
#include "ste/selection_pipeline.h"
#include "ste/test_output.h"
#include "ste/traced_run.h"

namespace ste::cli {
namespace {

const std::vector<FlagSpec> kAuditFlags = {
    {"base", 0, true, "auto|ID", "baseline to compare with (as ste select)"},
    {"base-commit", 0, true, "SHA", "compare with the baseline recorded for this commit (as ste select)"},
    {"mri", 0, true, "N", "compare with the latest baseline with mri <= N (as ste select)"},
    {"sample", 0, true, "N", "run N of the left-out tests, chosen by --seed (default: all of them)"},
    {"fraction", 0, true, "F", "run this fraction (0 < F <= 1, rounded up) of the left-out tests"},
    {"seed", 0, true, "S", "the seed that chooses the sample (default 1): the same seed, the same tests"},
    {"fail-on-miss", 0, false, "", "exit 1 when a left-out test does not pass (a flaky one is no miss)"},
    {"reruns", 0, true, "N",
     "run a test that did not pass again, alone, up to N times (default 1; 0: never): one that then "
     "passes is flaky, not a miss"},
    {"env-file", 0, true, "FILE", "the environment to select with (as ste select)"},
    {"output-dir", 0, true, "DIR",
     "where each test's output goes (default .ste/audit/<time>-<pid>, kept)"},
    {"config", 0, true, "FILE", "ste.toml to use"},
    {"store", 0, true, "URL", "the store to use instead of ste.toml's store.url"},
};

constexpr char kAuditHelp[] =
    "Usage: ste audit [--sample N | --fraction F] [--seed S] [--reruns N] [--fail-on-miss]\n"
    "                 [--base auto|ID | --base-commit SHA | --mri N] [--env-file FILE]\n"
    "                 [--output-dir DIR] [--format text|json | --json]\n"
    "\n"
    "Measures what the selection would miss. It makes the selection `ste select`\n"
    "makes for the tree, then runs the tests it leaves out (all of them, or a\n"
    "sample chosen by --seed: the same seed on the same list runs the same\n"
    "tests), each as `ste record` runs it, under the interceptor, in its\n"
    "scope. Every test left out passed in the baseline (the selection takes\n"
    "every test that did not, and every new one), so one that does not pass\n"
    "now, nor when run again (--reruns, default once), is a MISS: the selection\n"
    "would have skipped a failing test; one that passes when run again is\n"
    "FLAKY (its outcome changed while none of its dependencies did), named,\n"
    "and no miss. Each miss\n"
    "is printed with its exit status, the end of its output, the changes since\n"
    "the baseline and what the baseline recorded it depends on: a dependency\n"
    "ste did not see (a path inventory.ignore hides, a variable a shell read, a\n"
    "service on the network), or a flaky test. An audit changes no selection\n"
    "and writes no baseline; it appends its counts and the missed and flaky\n"
    "tests to the store's history, which `ste report` reads.\n"
    "\n"
    "text: a line per test run, then each miss, then the count, on stderr.\n"
    "json: {\"mode\",\"reason\",\"baseline\",\"left_out\",\"seed\",\"ran\",\"misses\",\"flaky\",\n"
    "\"tests\":[{\"test\",\"outcome\",\"exit_code\",\"seconds\",\"miss\",\"flaky\",\"reruns\",\"output\",\n"
    "\"dependencies\":[{\"path\",\"kind\"}]}],\"version\":1} on stdout\n"
    "(dependencies for a miss only).\n"
    "\n"
    "Exit status: 0 the audit ran (misses or not, without --fail-on-miss); 1 a\n"
    "miss with --fail-on-miss; 2 bad usage or\n"
    "configuration, or an unreadable --env-file; 3 the tree could not be read.\n"
    "\n";

// "N" > 0.
bool ParseCount(const std::string& v, size_t* out) {
  uint64_t n = 0;
  if (!absl::SimpleAtoi(v, &n) || n == 0) return false;
  *out = static_cast<size_t>(n);
  return true;
}

}  // namespace

int AuditCommand(const std::vector<std::string>& args) {
  Invocation in({"audit", kAuditHelp, kAuditFlags, {OutputFormat::kText, OutputFormat::kJson}});
  if (std::optional<int> done = in.Parse(args)) return *done;
  const ParsedFlags* flags = &in.flags();
  if (!flags->positional.empty()) return in.UsageError("takes no arguments");
  AuditOptions options;
  if (flags->Has("sample") && flags->Has("fraction")) {
    return in.UsageError("--sample and --fraction do not mix");
  }
  if (flags->Has("sample") && !ParseCount(flags->Get("sample"), &options.sample)) {
    return in.UsageError("--sample takes a number of tests, 1 or more");
  }
  if (flags->Has("fraction")) {
    double f = 0;
    if (!absl::SimpleAtod(flags->Get("fraction"), &f) || !(f > 0 && f <= 1)) {
      return in.UsageError("--fraction takes a number above 0 and at most 1 (e.g. 0.1)");
    }
    options.fraction = f;
  }
  if (flags->Has("reruns")) {
    uint64_t n = 0;
    if (!absl::SimpleAtoi(flags->Get("reruns"), &n) || n > 100) {
      return in.UsageError("--reruns takes a number from 0 to 100");
    }
    options.reruns = static_cast<size_t>(n);
  }
  if (flags->Has("seed") && !absl::SimpleAtoi(flags->Get("seed"), &options.seed)) {
    return in.UsageError("--seed takes a whole number from 0 to 2^64-1");
  }
  const Config* config = in.config();
  if (config == nullptr) return in.exit_code();
  absl::StatusOr<BaselineQuery> query = BaselineQuery::FromFlag(flags->Get("base"));
  if (!query.ok()) return in.UsageError(std::string(query.status().message()));
  query->base_commit = flags->Get("base-commit");
  int mri_error = 0;
  if (std::optional<int64_t> mri = MriFlag(*flags, "audit", &mri_error); mri) {
    query->mri = *mri;
  } else if (mri_error) {
    return mri_error;
  }
  LocalCheckout checkout(*config, false);
  if (flags->Has("env-file")) {
    absl::StatusOr<Environment> env = Environment::ReadFile(flags->Get("env-file"));
    if (!env.ok()) return in.UsageError("--env-file: " + std::string(env.status().message()));
    checkout.SetEnvironment(*std::move(env));
  }

  // How the tests run: as a record's local worker runs them.
  absl::StatusOr<std::string> preload = FindPreloadLibrary();
  if (!preload.ok()) return in.Fail(preload.status());
  options.run.preload_library = *preload;
  std::string warning;
  absl::StatusOr<std::string> integrations = IntegrationsDirForRuns(*config, &warning);
  if (!integrations.ok()) return in.Fail(integrations.status(), Outcome::kUsage);
  if (!warning.empty()) std::fprintf(stderr, "ste audit: %s\n", warning.c_str());
  options.run.integrations_dir = *integrations;
  options.run.jobs = std::max(1, config->jobs);
  absl::StatusOr<std::string> made = MakeScratchDir("ste-audit");
  if (!made.ok()) return in.Fail(made.status());
  const std::string scratch = *made;
  options.run.scratch_dir = scratch;
  options.output_dir = flags->Get("output-dir");
  if (options.output_dir.empty()) {
    options.output_dir =
        absl::StrCat(config->root, "/.ste/audit/", static_cast<int64_t>(std::time(nullptr)), "-", getpid());
  }
  if (absl::Status made = MakeDirectories(options.output_dir); !made.ok()) return in.Fail(made);
  options.on_start = [](size_t i, size_t n, const std::string& test) {
    std::fprintf(stderr, "ste audit: [%zu/%zu] %s\n", i + 1, n, EscapeForText(test).c_str());
  };

  // An unusable store makes the selection all, with the reason: nothing
  // is left out, nothing to audit (said below).
  absl::StatusOr<std::unique_ptr<Store>> opened = in.TakeStore(StoreAccess::kRead);
  HistoryStore* history = opened.ok() ? opened->get() : nullptr;
  StoreBaselineSource source(std::move(opened));
  AuditResult audit = RunAudit(checkout, source, *query, *config, options);
  rmdir(scratch.c_str());
  const Selection& s = audit.selection.selection;
  if (!audit.selection.tree.ok()) {
    return in.Fail(absl::StrCat("no selection to audit: ", s.reason), Outcome::kNoResult);
  }
  // Stored with the selections (`ste report`: the misses across audits).
  if (history != nullptr) {
    absl::Status stored = history->AppendAudit(AuditHistoryEntry(audit, checkout.facts().head)).status();
    if (!stored.ok()) {
      std::fprintf(stderr, "ste audit: warning: not stored in the history: %s\n",
                   std::string(stored.message()).c_str());
    }
  }
  const int64_t baseline = audit.selection.baseline ? audit.selection.baseline->id : 0;
  if (in.json()) std::fputs(AuditJson(audit, options.seed).c_str(), stdout);
  std::fprintf(stderr, "ste audit: the selection (mode %s: %s) left out %zu of %zu tests; ran %zu (seed %llu)\n",
               std::string(SelectionModeName(s.mode)).c_str(), s.reason.c_str(), audit.left_out.size(),
               audit.selection.head_tests.size(), audit.ran.size(),
               static_cast<unsigned long long>(options.seed));
  if (s.mode == SelectionMode::kAll) {
    std::fprintf(stderr, "ste audit: nothing to audit: the selection runs every test\n");
  }
  for (const AuditedTest& t : audit.ran) {
    std::fprintf(stderr, "ste audit: %-5s %s (%.1fs)\n", t.miss ? "MISS" : t.flaky ? "FLAKY" : "ok",
                 EscapeForText(t.test).c_str(), t.seconds);
  }
  for (const AuditedTest& t : audit.ran) {
    if (!t.miss) continue;
    std::string why = t.outcome == TestOutcome::kError ? absl::StrCat("could not run: ", t.error)
                                                       : absl::StrCat("exit ", t.exit_code);
    std::fprintf(stderr,
                 "ste audit: MISS: %s was left out by the selection and does not pass (%s); it passed in "
                 "baseline %lld\n",
                 EscapeForText(t.test).c_str(), why.c_str(), static_cast<long long>(baseline));
    if (!t.output_log.empty()) std::fprintf(stderr, "  output: %s\n", t.output_log.c_str());
    if (!t.output_tail.empty()) {
      std::fprintf(stderr, "  its output ends:\n");
      size_t at = 0;
      while (at < t.output_tail.size()) {
        size_t nl = t.output_tail.find('\n', at);
        if (nl == std::string::npos) nl = t.output_tail.size();
        std::fprintf(stderr, "    | %s\n", EscapeForText(t.output_tail.substr(at, nl - at)).c_str());
        at = nl + 1;
      }
    }
    if (!t.dependencies_error.empty()) {
      std::fprintf(stderr, "  its dependencies: unknown (%s)\n", t.dependencies_error.c_str());
    } else {
      constexpr size_t kShown = 20;
      std::fprintf(stderr, "  its dependencies in the baseline (%zu)%s:\n", t.dependencies.size(),
                   t.dependencies.size() > kShown ? ", the first 20" : "");
      for (size_t i = 0; i < t.dependencies.size() && i < kShown; i++) {
        std::fprintf(stderr, "    %s %s\n", std::string(DepKindName(t.dependencies[i].kind)).c_str(),
                     EscapeForText(t.dependencies[i].path).c_str());
      }
    }
    std::fprintf(stderr,
                 "  a miss is a dependency ste did not see (a path inventory.ignore hides, a variable a shell\n"
                 "  read, a service on the network) or a flaky test: run it again to tell\n");
    std::fprintf(stderr, "  the changes since the baseline (%zu)%s:\n", s.changed.size(),
                 s.changed.size() > 20 ? ", the first 20" : "");
    for (size_t i = 0; i < s.changed.size() && i < 20; i++) {
      std::fprintf(stderr, "    %s %s\n", std::string(ChangeKindName(s.changed[i].change)).c_str(),
                   EscapeForText(s.changed[i].path).c_str());
    }
  }
  for (const AuditedTest& t : audit.ran) {
    if (!t.flaky) continue;
    std::fprintf(stderr,
                 "ste audit: FLAKY: %s did not pass (exit %d), then passed when run again (run %zu of %zu): "
                 "its outcome changed while none of its dependencies did; no miss\n",
                 EscapeForText(t.test).c_str(), t.exit_code, t.reruns, options.reruns);
    if (!t.output_log.empty()) std::fprintf(stderr, "  output of the failing run: %s\n", t.output_log.c_str());
  }
  if (audit.misses > 0) {
    std::fprintf(stderr,
                 "ste audit: %zu MISS%s in %zu left-out tests run: the selection would have skipped %s that "
                 "%s not pass\n",
                 audit.misses, audit.misses == 1 ? "" : "ES", audit.ran.size(),
                 audit.misses == 1 ? "a test" : "tests", audit.misses == 1 ? "does" : "do");
  } else {
    std::fprintf(stderr, "ste audit: no miss: every left-out test run passed\n");
  }
  if (!audit.ran.empty()) {
    std::fprintf(stderr,
                 "ste audit: measured: %zu miss%s in %zu left-out tests run: the miss rate among the tests "
                 "this selection left out is at most %.2f%% (95%% confidence)\n",
                 audit.misses, audit.misses == 1 ? "" : "es", audit.ran.size(),
                 100 * MissRateUpperBound(audit.misses, audit.ran.size(), 0.95));
  }
  // The miss rate every stored audit and observation measured together
  // (`ste report` shows the same).
  if (history != nullptr) {
    absl::StatusOr<std::vector<AuditEntry>> stored = history->Audits(0);
    if (stored.ok() && stored->size() > 1) {
      int64_t ran = 0, missed = 0;
      for (const AuditEntry& a : *stored) {
        ran += a.ran;
        missed += static_cast<int64_t>(a.missed.size());
      }
      std::fprintf(stderr,
                   "ste audit: over the %zu audits stored: %lld miss%s in %lld left-out tests run: at most %.2f%% "
                   "(95%% confidence)\n",
                   stored->size(), static_cast<long long>(missed), missed == 1 ? "" : "es",
                   static_cast<long long>(ran),
                   100 * MissRateUpperBound(static_cast<size_t>(missed), static_cast<size_t>(ran), 0.95));
    }
  }
  if (audit.misses > 0 && flags->Has("fail-on-miss")) return ExitCode(Outcome::kFailure);
  return ExitCode(Outcome::kSuccess);
}

}  // namespace ste::cli
