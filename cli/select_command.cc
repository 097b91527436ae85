// `ste select [--base auto|ID] [--explain] [--format text|json|github|runner|matrix] [--json]
//             [--shards N] [--shard K/N] [--all] [--changed-files] [--timings]
//             [--env-file FILE] [--assume-changed PATH...]`
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "commands.h"
#include "invocation.h"
#include "output_format.h"
#include "repo_context.h"
#include "client_flags.h"
#ifdef STE_WITH_RPC
#include "rpc_flags.h"
#include "ste/selection_client.h"
#else
#include "rpc_module.h"
#endif
#include "ste/checkout.h"
#include "ste/environment.h"
#include "ste/json.h"
#include "ste/selection.h"
#include "ste/selection_pipeline.h"
#include "ste/shards.h"
#include "ste/timings.h"

namespace ste::cli {
namespace {

const std::vector<FlagSpec> kSelectFlags = WithClientFlags({
    {"base", 0, true, "auto|ID",
     "baseline to compare with (default auto: the latest complete one with "
     "mri <= MRI(HEAD))"},
    {"base-commit", 0, true, "SHA",
     "compare with the baseline recorded for this commit (the one the change is based on, "
     "e.g. a pull request's base)"},
    {"mri", 0, true, "N",
     "compare with the latest baseline with mri <= N (default $STE_MRI; else MRI(HEAD), or in "
     "a shallow clone the commits it can see)"},
    {"explain", 0, false, "", "after each test, the changes that selected it"},
    {"shards", 0, true, "N",
     "matrix format (and github: a matrix= output): split the selected tests into at most N "
     "shards by their recorded durations"},
    {"shard", 0, true, "K/N", "print only shard K (1..N) of the selection split into N shards"},
    {"all", 0, false, "", "select every test (mode all)"},
    {"null", 0, false, "", "text format and tests file: each test as it is, ended by a NUL byte"},
    {"change-text", 0, true, "FILE",
     "look for force tags in FILE (the change's commit messages, title, body and labels, as the "
     "CI gives them) instead of in the commit messages git can reach"},
    {"env-file", 0, true, "FILE",
     "compare the environment variables tests read with FILE's (NAME=VALUE lines, or `env -0` "
     "output) instead of this process's: for a CI that selects in one job and tests in another"},
    {"changed-files", 0, false, "", "print the changed paths instead of tests"},
    {"tests-file", 0, true, "FILE",
     "github format: where to write the test list (default .ste/selected-tests.txt)"},
    {"config", 0, true, "FILE", "ste.toml to use"},
    {"store", 0, true, "URL",
     "the store to use instead of ste.toml's store.url (a job selecting for a change it does "
     "not trust names its store: docs/SECURITY.md)"},
    {"assume-changed", 0, false, "",
     "what if: select as if only the paths given as arguments had changed (the tree is not "
     "read; with --explain, why)"},
    {"timings", 0, false, "",
     "after the selection, where the time went, phase by phase, on stderr "
     "('ste select: timings: ...' lines)"},
},
    "ask this scheduler (HOST:PORT or unix:PATH) instead of the local store");

constexpr char kSelectHelp[] =
    "Usage: ste select [--base auto|ID | --base-commit SHA | --mri N] [--explain]\n"
    "                  [--format text|json|github|runner|matrix|gtest-filter | --json]\n"
    "                  [--shards N]\n"
    "                  [--shard K/N] [--all] [--changed-files] [--null]\n"
    "                  [--change-text FILE] [--tests-file FILE] [--timings]\n"
    "                  [--env-file FILE] [--assume-changed PATH...]\n"
    "\n"
    "Prints the tests the current tree's changes can affect, compared with a\n"
    "recorded baseline. Guardrails, in order: no usable baseline -> all; a\n"
    "force tag ([test all], [no filter]) in a commit message since the\n"
    "baseline (with --change-text FILE: in FILE instead, the change's text as\n"
    "the CI gives it: a pull request's commits, title, body and labels),\n"
    "commit messages that cannot be read (the baseline's commit is\n"
    "not in this checkout), or --all -> all; ste.toml changed -> all; only\n"
    "selection.skip_all paths changed -> none; a selection.run_all path\n"
    "changed -> all; else the affected tests,\n"
    "plus new test files, tests that failed in the baseline, mandatory and\n"
    "opaque tests. Any error while selecting widens to all, with the reason.\n"
    "\n"
    "Output. text: one test per line on stdout (mode all: every test; mode\n"
    "none: nothing), the mode and reason on stderr; --explain adds\n"
    "'  <- path (kind change)' lines. json (or --json): {\"mode\",\"reason\",\n"
    "\"baseline\",\"changed\",\"tests\":[{\"test\",\"reasons\":[{\"path\",\"kind\",\n"
    "\"change\"}],\"seconds\"}],\"wide\":[{\"path\",\"kind\",\"change\",\"tests\",\n"
    "\"entries\"}],\"version\":1} (docs/outputs.md).\n"
    "A wide selection (all because every test is affected, or more than a\n"
    "quarter of the tests) names the few changes that pulled in the most\n"
    "tests ('ste select: wide: NOTES.txt added: listing of . -> 31 tests' on\n"
    "stderr, \"wide\" in json, the GitHub summary).\n"
    "runner: the tests as arguments for the runner to take back, on one line,\n"
    "shell-quoted (pytest/unittest/minitest/rspec take files; ctest: one\n"
    "-R '^(name|name)$'); nothing at all for mode none (run no test: do\n"
    "not call the runner with no arguments). With tests.unit = \"case\" the\n"
    "batch runners take a file's cases as <file>::<case>; ctest takes the\n"
    "binaries whole, and their cases go by gtest-filter.\n"
    "gtest-filter (ctest, tests.unit = \"case\"): the GoogleTest cases to run\n"
    "as GTEST_FILTER, 'Suite.Case:Suite.Other', when every selected test was\n"
    "narrowed to cases, else '*'; nothing for mode none:\n"
    "  args=$(ste select --format runner); eval \"set -- $args\"\n"
    "  [ $# -eq 0 ] || GTEST_FILTER=\"$(ste select --format gtest-filter)\" ctest \"$@\"\n"
    "--null: text and the tests file: each test as it is, ended by a NUL byte\n"
    "(for xargs -0; a name holding a newline stays one name); without it a\n"
    "test is one line, odd bytes written as C escapes.\n"
    "github: text on stdout, the list in --tests-file, and the outputs mode,\n"
    "reason, tests_file (with --shards N also matrix, as below; ctest: also\n"
    "gtest_filter, as gtest-filter prints it) appended to\n"
    "$GITHUB_OUTPUT in GitHub's multi-line form, each with a fresh random\n"
    "delimiter (a test name or a reason cannot add or change an output); a\n"
    "Markdown summary to $GITHUB_STEP_SUMMARY when set, every name escaped,\n"
    "capped below GitHub's 1 MiB with a count of the tests left out.\n"
    "matrix (with --shards N): the selected tests split into at most N shards,\n"
    "longest first onto the least loaded, by the seconds each took in the\n"
    "baseline (a test without one counts as the median), as JSON for a\n"
    "GitHub Actions strategy.matrix: {\"include\":[{\"shard\":1,\"of\":3,\n"
    "\"count\":12,\"seconds\":40.5,\"tests\":[...],\"args\":\"<runner arguments>\"}]}.\n"
    "Mode none gives {\"include\":[]} (GitHub refuses an empty matrix: skip the\n"
    "job when mode is none); mode all splits every test.\n"
    "--shard K/N: only the K-th of those N shards, in any format (for CIs that\n"
    "give each job an index, e.g. GitLab's CI_NODE_INDEX/CI_NODE_TOTAL). The\n"
    "split depends only on the selection, so the N jobs together run each\n"
    "selected test exactly once.\n"
    "\n"
    "Environment variables: a test that read one (getenv, os.environ, ENV[],\n"
    "process.env) is selected when its value changed since the baseline (a\n"
    "hash of it is recorded, never the value); selection.env_ignore lists the\n"
    "ones that are no dependency (ste's default: the per-run CI variables),\n"
    "selection.env_run_all the ones whose change selects all. They are\n"
    "compared with this process's environment, or with --env-file FILE's:\n"
    "NAME=VALUE lines (split at the first '=', bytes as written; empty lines\n"
    "and lines starting with '#' skipped) or NUL-ended entries as `env -0`\n"
    "prints them; a variable FILE does not name is unset.\n"
    "\n"
    "--assume-changed PATH...: what if, before the change is made: the\n"
    "selection as if those paths (files or directories, relative to the\n"
    "current directory, or absolute) and nothing else had changed since the\n"
    "baseline, each modified (added if the baseline never saw it); the tree\n"
    "is not read, the baseline's tests are the list (plus a path tests.include\n"
    "names), commit messages carry no force tag, every other guardrail\n"
    "applies. The reason says it was assumed.\n"
    "\n"
    "Which baseline: --base ID, else --base-commit SHA, else --mri N\n"
    "($STE_MRI), else the latest with mri <= MRI(HEAD) (the number of commits\n"
    "reachable from HEAD); in a shallow clone, which cannot count its history,\n"
    "the latest recorded for one of the commits it can see (HEAD, its history,\n"
    "the parents its oldest commits name). When none is found the reason says\n"
    "what to pass.\n"
    "\n"
    "--scheduler: the baseline and the selection come from a scheduler\n"
    "('ste scheduler') and its store; the tree is hashed here and sent. If the\n"
    "scheduler cannot answer, the selection is all, with the reason.\n"
    "\n"
    "Exit status: 0 a selection was printed (whatever its mode: on an error\n"
    "it is all, every test listed); 1 github format: the tests file or the\n"
    "GitHub files could not be written; 2 bad usage (--base neither auto nor\n"
    "an id), configuration, an unreadable --change-text or an unreadable or\n"
    "malformed --env-file; 3 the tree\n"
    "could not be read, so no test list could be made: run everything.\n"
    "\n";

// "K/N" with 1 <= K <= N.
bool ParseShardFlag(const std::string& v, size_t* k, size_t* n) {
  size_t slash = v.find('/');
  if (slash == std::string::npos) return false;
  char* end = nullptr;
  std::string a = v.substr(0, slash), b = v.substr(slash + 1);
  if (a.empty() || b.empty()) return false;
  unsigned long long kk = std::strtoull(a.c_str(), &end, 10);
  if (*end) return false;
  unsigned long long nn = std::strtoull(b.c_str(), &end, 10);
  if (*end) return false;
  if (nn < 1 || nn > 10000 || kk < 1 || kk > nn) return false;
  *k = kk;
  *n = nn;
  return true;
}

absl::Status AppendToFile(const char* path, const std::string& text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << text;
  out.flush();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot append to ", path));
  return absl::OkStatus();
}

// $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY, when set. Every output in
// GitHub's multi-line form with a fresh delimiter, every name or reason in
// the summary escaped, the summary capped (output_format.h): a pull
// request names the files, and what GitHub reads here decides what runs.
absl::Status WriteGithubFiles(const Selection& s, const std::string& tests_file,
                              const std::string& matrix, RunnerKind kind) {
  if (const char* out = std::getenv("GITHUB_OUTPUT"); out && *out) {
    const std::string filter = TestsAreCTestNames(kind) ? GtestFilter(s) : "";
    absl::StatusOr<std::string> entries =
        GithubOutputEntries(s, tests_file, matrix, std::string(absl::StripSuffix(filter, "\n")));
    if (!entries.ok()) return entries.status();
    absl::Status written = AppendToFile(out, *entries);
    if (!written.ok()) return written;
  }
  if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary) {
    return AppendToFile(summary, GithubSummary(s));
  }
  return absl::OkStatus();
}

}  // namespace

int SelectCommand(const std::vector<std::string>& args) {
  // A select lives a fraction of a second and builds its two inventories
  // at once, from two threads: let the heaps grow in big steps and keep
  // what they hold (a 55,000-file tree: 1,353 heap-growing mprotect calls
  // down to 97, 15% less CPU; bench/README "P7").
  mallopt(M_TOP_PAD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  Invocation in({"select", kSelectHelp, kSelectFlags,
                 {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kGithub,
                  OutputFormat::kRunner, OutputFormat::kMatrix, OutputFormat::kGtestFilter}});
  if (std::optional<int> done = in.Parse(args)) return *done;
  const ParsedFlags* flags = &in.flags();
  const bool assume = flags->Has("assume-changed");
  if (assume && flags->positional.empty()) {
    return in.UsageError("--assume-changed needs the paths to assume changed");
  }
  if (!assume && !flags->positional.empty()) {
    return in.UsageError("takes no arguments (paths go with --assume-changed)");
  }
  if (assume && flags->Has("scheduler")) {
    return in.UsageError("--assume-changed asks the local store, not a scheduler");
  }
#ifndef STE_WITH_RPC
  // Asking a scheduler is gRPC: the same command in the RPC module.
  if (flags->Has("scheduler")) return RunInRpcModule("select", args);
#endif
  const OutputFormat format = in.format();
  if (flags->Has("timings")) EnableTimings();
  // Printed however the command ends (after the selection's own output).
  struct TimingsAtExit {
    ~TimingsAtExit() { std::fputs(TimingsReport("ste select").c_str(), stderr); }
  } timings_at_exit;
  size_t shards = 0, shard_k = 0, shard_n = 0;
  if (flags->Has("shards")) {
    std::string v = flags->Get("shards");
    char* end = nullptr;
    unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end || n < 1 || n > 10000) {
      return in.UsageError("--shards takes a number of shards from 1 to 10000");
    }
    shards = n;
  }
  if (format == OutputFormat::kMatrix && shards == 0) {
    return in.UsageError("--format matrix needs --shards N");
  }
  if (flags->Has("shard") && !ParseShardFlag(flags->Get("shard"), &shard_k, &shard_n)) {
    return in.UsageError("--shard takes K/N with 1 <= K <= N (e.g. --shard 2/4)");
  }
  if (shard_n && format == OutputFormat::kMatrix) {
    return in.UsageError("--shard and --format matrix do not mix");
  }
  const Config* config = nullptr;
  {
    ScopedPhase phase("configuration (ste.toml)");
    config = in.config();  // with --store
  }
  if (config == nullptr) return in.exit_code();
  if (format == OutputFormat::kGtestFilter && !TestsAreCTestNames(config->runner_kind)) {
    return in.UsageError("--format gtest-filter is for runner.kind = \"ctest\" (GoogleTest cases)");
  }

  absl::StatusOr<BaselineQuery> query = BaselineQuery::FromFlag(flags->Get("base"));
  if (!query.ok()) return in.UsageError(std::string(query.status().message()));
  query->base_commit = flags->Get("base-commit");
  int mri_error = 0;
  if (std::optional<int64_t> mri = MriFlag(*flags, "select", &mri_error); mri) {
    query->mri = *mri;
  } else if (mri_error) {
    return mri_error;
  }
#ifdef STE_WITH_RPC
  std::optional<RpcAuth> auth;
  if (flags->Has("scheduler")) {
    auth = ClientAuth("select", *flags);
    if (!auth) return ExitCode(Outcome::kUsage);
  }
#endif

  LocalCheckout checkout(*config, flags->Has("all"));
  if (flags->Has("change-text")) {
    // Unreadable is a usage error, never "no tag in it".
    const std::string path = flags->Get("change-text");
    std::ifstream file(path, std::ios::binary);
    if (!file.is_open()) return in.UsageError("--change-text: cannot open " + path);
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (file.bad()) return in.UsageError("--change-text: cannot read " + path);
    checkout.SetChangeText(std::move(text));
  }
  if (flags->Has("env-file")) {
    // Unreadable or malformed is a usage error, never a narrower selection.
    absl::StatusOr<Environment> env = Environment::ReadFile(flags->Get("env-file"));
    if (!env.ok()) return in.UsageError("--env-file: " + std::string(env.status().message()));
    checkout.SetEnvironment(*std::move(env));
  }
  if (assume) {
    std::vector<std::string> paths;
    for (const std::string& arg : flags->positional) {
      if (arg.empty() || arg.find('\0') != std::string::npos) {
        return in.UsageError("--assume-changed: an empty path");
      }
      paths.push_back(IndexPath(*config, arg));
    }
    std::sort(paths.begin(), paths.end());
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    checkout.AssumeChanged(std::move(paths));
  }
  SelectionOutcome outcome;
  // The store's history (`ste report`): this select is appended to it once
  // its output is written, best effort (a store that cannot take it
  // changes nothing). A scheduler appends the selections it makes itself;
  // a what-if and --changed-files are no selection for a build.
  std::optional<StoreBaselineSource> store;
  struct HistoryAtExit {
    HistoryStore* history = nullptr;
    std::optional<SelectionEntry> entry;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~HistoryAtExit() {
      if (history == nullptr || !entry) return;
      entry->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ScopedPhase phase("history appended");
      (void)AppendToHistory(history, *entry);
    }
  } history_at_exit;
#ifdef STE_WITH_RPC
  if (auth) {
    outcome = SelectThroughScheduler(MakeChannel(flags->Get("scheduler"), *auth), *auth, checkout, *query);
  } else
#endif
  {
    {
      ScopedPhase phase("store opened");
      absl::StatusOr<std::unique_ptr<Store>> opened = in.TakeStore(StoreAccess::kRead);
      if (opened.ok() && !assume && !flags->Has("changed-files")) history_at_exit.history = opened->get();
      store.emplace(std::move(opened));
    }
    outcome = SelectForCheckout(checkout, *store, *query);
    if (history_at_exit.history != nullptr) {
      history_at_exit.entry = HistoryEntryOf(
          outcome, 0, checkout.facts().head,
          shard_n ? absl::StrCat("select ", shard_k, "/", shard_n) : std::string("select"));
    }
  }
  ScopedPhase output_phase("output");
  Selection& s = outcome.selection;
  const std::optional<BaselineInfo>& info = outcome.baseline;
  if (assume && info) {
    absl::StrAppend(&s.reason, " (assumed: only the ", flags->positional.size() == 1 ? "path" : "paths",
                    " --assume-changed named changed)");
  }
  if (!outcome.tree.ok()) {
    // Without the tree there is no test list either: say so (run all).
    std::fprintf(stderr, "ste select: mode all: %s\n", s.reason.c_str());
    if (format == OutputFormat::kJson) std::fputs(SelectionJson(s, info).c_str(), stdout);
    return ExitCode(Outcome::kNoResult);
  }

  if (flags->Has("changed-files")) {
    for (const InventoryChange& c : s.changed) {
      std::printf("%s\n", EscapeForText(c.path).c_str());
    }
    return ExitCode(Outcome::kSuccess);
  }
  std::fprintf(stderr, "ste select: mode %s: %s%s\n",
               std::string(SelectionModeName(s.mode)).c_str(), s.reason.c_str(),
               info ? absl::StrCat(" (baseline ", info->id, ", mri ", info->mri, ")").c_str()
                    : "");
  if (std::string cases = CaseCountLine(s); !cases.empty()) {
    std::fprintf(stderr, "ste select: %s", cases.c_str());
  }
  for (const WideCause& w : s.wide) {
    std::fprintf(stderr, "ste select: wide: %s\n", EscapeForText(DescribeWideCause(w)).c_str());
  }
  const RunnerKind kind = checkout.config().runner_kind;
  if (format == OutputFormat::kMatrix) {
    std::printf("%s\n", MatrixJson(ShardsOfNames(SelectionShards(s, shards), s, kind), kind).c_str());
    return ExitCode(Outcome::kSuccess);
  }
  std::string matrix;
  if (shards) matrix = MatrixJson(ShardsOfNames(SelectionShards(s, shards), s, kind), kind);
  if (shard_n) {
    // Only shard K's tests, in their selection order (with their reasons).
    std::vector<Shard> split = SelectionShards(s, shard_n);
    std::set<std::string> mine;
    if (shard_k <= split.size()) mine.insert(split[shard_k - 1].tests.begin(), split[shard_k - 1].tests.end());
    std::vector<SelectedTest> kept;
    for (SelectedTest& t : s.tests) {
      if (mine.count(t.test)) kept.push_back(std::move(t));
    }
    s.tests = std::move(kept);
    std::fprintf(stderr, "ste select: shard %zu/%zu: %zu tests\n", shard_k, shard_n, s.tests.size());
  }
  if (format == OutputFormat::kJson) {
    std::fputs(SelectionJson(s, info).c_str(), stdout);
    return ExitCode(Outcome::kSuccess);
  }
  if (format == OutputFormat::kRunner) {
    std::fputs(RunnerLine(s, kind).c_str(), stdout);
    return ExitCode(Outcome::kSuccess);
  }
  if (format == OutputFormat::kGtestFilter) {
    std::fputs(GtestFilter(s).c_str(), stdout);
    return ExitCode(Outcome::kSuccess);
  }
  const std::string text = SelectionText(s, flags->Has("explain"), flags->Has("null"));
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (format == OutputFormat::kGithub) {
    std::string tests_file =
        flags->Get("tests-file", checkout.config().root + "/.ste/selected-tests.txt");
    std::ofstream list(tests_file, std::ios::binary);
    list << SelectionText(s, false, flags->Has("null"));
    list.flush();
    absl::Status written = list ? WriteGithubFiles(s, tests_file, matrix, kind)
                                : absl::UnavailableError(absl::StrCat("cannot write ", tests_file));
    if (!written.ok()) {
      // No outputs to read: the step must fail, not look like "no test".
      return in.Fail(written);
    }
  }
  return ExitCode(Outcome::kSuccess);
}

}  // namespace ste::cli
