// `ste select [--base auto|ID] [--explain] [--format text|json|github|runner|matrix]
//             [--shards N] [--shard K/N] [--all] [--changed-files]`
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "commands.h"
#include "flags.h"
#include "repo_context.h"
#include "rpc_flags.h"
#include "ste/checkout.h"
#include "ste/ci_output.h"
#include "ste/json.h"
#include "ste/selection.h"
#include "ste/selection_client.h"
#include "ste/selection_pipeline.h"
#include "ste/shards.h"

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
    {"format", 0, true, "FMT", "text (default), json, github, runner or matrix"},
    {"shards", 0, true, "N",
     "matrix format (and github: a matrix= output): split the selected tests into at most N "
     "shards by their recorded durations"},
    {"shard", 0, true, "K/N", "print only shard K (1..N) of the selection split into N shards"},
    {"all", 0, false, "", "select every test (mode all)"},
    {"null", 0, false, "", "text format and tests file: each test as it is, ended by a NUL byte"},
    {"change-text", 0, true, "FILE",
     "look for force tags in FILE (the change's commit messages, title, body and labels, as the "
     "CI gives them) instead of in the commit messages git can reach"},
    {"changed-files", 0, false, "", "print the changed paths instead of tests"},
    {"tests-file", 0, true, "FILE",
     "github format: where to write the test list (default .ste/selected-tests.txt)"},
    {"config", 0, true, "FILE", "ste.toml to use"},
    {"store", 0, true, "URL",
     "the store to use instead of ste.toml's store.url (a job selecting for a change it does "
     "not trust names its store: docs/SECURITY.md)"},
},
    "ask this scheduler (HOST:PORT or unix:PATH) instead of the local store");

constexpr char kSelectHelp[] =
    "Usage: ste select [--base auto|ID | --base-commit SHA | --mri N] [--explain]\n"
    "                  [--format text|json|github|runner|matrix] [--shards N]\n"
    "                  [--shard K/N] [--all] [--changed-files] [--null]\n"
    "                  [--change-text FILE] [--tests-file FILE]\n"
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
    "'  <- path (kind change)' lines. json: {\"mode\",\"reason\",\"baseline\",\n"
    "\"changed\",\"tests\":[{\"test\",\"reasons\":[{\"path\",\"kind\",\"change\"}],\"seconds\"}],\n"
    "\"wide\":[{\"path\",\"kind\",\"change\",\"tests\",\"entries\"}]}.\n"
    "A wide selection (all because every test is affected, or more than a\n"
    "quarter of the tests) names the few changes that pulled in the most\n"
    "tests ('ste select: wide: NOTES.txt added: listing of . -> 31 tests' on\n"
    "stderr, \"wide\" in json, the GitHub summary).\n"
    "runner: the tests as arguments for the runner to take back, on one line,\n"
    "shell-quoted (pytest/unittest/minitest/rspec take files; ctest: one\n"
    "-R '^(name|name)$'); nothing at all for mode none (run no test: do\n"
    "not call the runner with no arguments).\n"
    "--null: text and the tests file: each test as it is, ended by a NUL byte\n"
    "(for xargs -0; a name holding a newline stays one name); without it a\n"
    "test is one line, odd bytes written as C escapes.\n"
    "github: text on stdout, the list in --tests-file, and the outputs mode,\n"
    "reason, tests_file (with --shards N also matrix, as below) appended to\n"
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
    "an id), configuration or an unreadable --change-text; 3 the tree\n"
    "could not be read, so no test list could be made: run everything.\n"
    "\n";

std::string ReasonText(const SelectionReason& r) {
  if (r.kind.empty()) return r.change;
  if (std::string view = DescribeViewChange(r.path, r.change); !view.empty()) {
    return EscapeForText(view);
  }
  std::string what = r.kind == "absent"    ? "was absent, now exists"
                     : r.kind == "listing" ? "listing changed"
                                           : absl::StrCat("content ", r.change);
  return absl::StrCat(EscapeForText(r.path), " (", what, ")");
}

std::string Json(const Selection& s, const std::optional<BaselineInfo>& base) {
  std::string out = "{\"mode\":";
  AppendJsonString(std::string(SelectionModeName(s.mode)), &out);
  out += ",\"reason\":";
  AppendJsonString(s.reason, &out);
  out += ",\"baseline\":";
  if (base) {
    absl::StrAppendFormat(&out, "{\"id\":%d,\"mri\":%d,\"commit\":", base->id, base->mri);
    AppendJsonString(base->commit, &out);
    out += "}";
  } else {
    out += "null";
  }
  out += ",\"changed\":[";
  for (size_t i = 0; i < s.changed.size(); i++) {
    if (i) out += ",";
    out += "{";
    AppendJsonPathField("path", s.changed[i].path, &out);
    absl::StrAppend(&out, ",\"change\":\"", std::string(ChangeWord(s.changed[i])), "\",\"type\":\"",
                    std::string(FileTypeName(s.changed[i].type)), "\"}");
  }
  out += "],\"tests\":[";
  for (size_t i = 0; i < s.tests.size(); i++) {
    if (i) out += ",";
    out += "{";
    AppendJsonPathField("test", s.tests[i].test, &out);
    out += ",\"reasons\":[";
    for (size_t j = 0; j < s.tests[i].reasons.size(); j++) {
      const SelectionReason& r = s.tests[i].reasons[j];
      if (j) out += ",";
      out += "{";
      AppendJsonPathField("path", r.path, &out);
      out += ",\"kind\":";
      AppendJsonString(r.kind, &out);
      out += ",\"change\":";
      AppendJsonString(r.change, &out);
      out += "}";
    }
    absl::StrAppend(&out, "],\"more_reasons\":", s.tests[i].more_reasons);
    if (s.tests[i].seconds) absl::StrAppendFormat(&out, ",\"seconds\":%.3f", *s.tests[i].seconds);
    out += "}";
  }
  out += "],\"wide\":[";
  for (size_t i = 0; i < s.wide.size(); i++) {
    const WideCause& w = s.wide[i];
    out += i ? ",{" : "{";
    AppendJsonPathField("path", w.path, &out);
    out += ",\"kind\":";
    AppendJsonString(w.kind, &out);
    out += ",\"change\":";
    AppendJsonString(w.change, &out);
    absl::StrAppend(&out, ",\"tests\":", w.tests, ",\"entries\":[");
    for (size_t j = 0; j < w.entries.size(); j++) {
      out += j ? ",{" : "{";
      AppendJsonPathField("path", w.entries[j].first, &out);
      out += ",\"change\":";
      AppendJsonString(w.entries[j].second, &out);
      out += "}";
    }
    absl::StrAppend(&out, "],\"more_entries\":", w.more_entries, "}");
  }
  out += "]}\n";
  return out;
}

std::vector<Shard> Shards(const Selection& s, size_t n) {
  std::vector<ShardInput> in;
  for (const SelectedTest& t : s.tests) in.push_back({t.test, t.seconds});
  return SplitIntoShards(in, n);
}

// {"include":[{"shard","of","count","seconds","tests","args"}]}: what a
// GitHub Actions strategy.matrix takes (no other top-level key: each
// would be a matrix dimension).
std::string MatrixJson(const std::vector<Shard>& shards, RunnerKind kind) {
  std::string out = "{\"include\":[";
  for (size_t i = 0; i < shards.size(); i++) {
    const Shard& sh = shards[i];
    absl::StrAppendFormat(&out, "%s{\"shard\":%d,\"of\":%d,\"count\":%d,\"seconds\":%.3f,\"tests\":[",
                          i ? "," : "", sh.index, shards.size(), sh.tests.size(), sh.seconds);
    for (size_t j = 0; j < sh.tests.size(); j++) {
      if (j) out += ",";
      AppendJsonString(sh.tests[j], &out);
    }
    out += "],\"args\":";
    AppendJsonString(RunnerArguments(kind, sh.tests), &out);
    out += "}";
  }
  out += "]}";
  return out;
}

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

std::string Text(const Selection& s, bool explain, bool null = false) {
  std::string out;
  if (null) {
    for (const SelectedTest& t : s.tests) absl::StrAppend(&out, t.test, std::string(1, '\0'));
    return out;
  }
  for (const SelectedTest& t : s.tests) {
    absl::StrAppend(&out, EscapeForText(t.test), "\n");
    if (!explain) continue;
    for (const SelectionReason& r : t.reasons) absl::StrAppend(&out, "  <- ", ReasonText(r), "\n");
    if (t.more_reasons) absl::StrAppend(&out, "  <- and ", t.more_reasons, " more\n");
  }
  return out;
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
// the summary escaped, the summary capped (ste/ci_output.h): a pull
// request names the files, and what GitHub reads here decides what runs.
absl::Status WriteGithubFiles(const Selection& s, const std::string& tests_file,
                              const std::string& matrix) {
  if (const char* out = std::getenv("GITHUB_OUTPUT"); out && *out) {
    std::string entries;
    std::vector<std::pair<std::string, std::string>> values = {
        {"mode", std::string(SelectionModeName(s.mode))},
        {"reason", s.reason},
        {"tests_file", tests_file},
    };
    if (!matrix.empty()) values.emplace_back("matrix", matrix);
    for (const auto& [name, value] : values) {
      absl::StatusOr<std::string> entry = GithubFileEntry(name, value);
      if (!entry.ok()) return entry.status();
      entries += *entry;
    }
    absl::Status written = AppendToFile(out, entries);
    if (!written.ok()) return written;
  }
  if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary) {
    CappedSummary md;
    md.AddText(absl::StrCat("### ste select: ", std::string(SelectionModeName(s.mode)), "\n\n",
                            MarkdownText(s.reason), "\n\n"));
    if (!s.wide.empty()) {
      md.AddText("Most tests came from:\n\n");
      for (const WideCause& w : s.wide) md.AddText(absl::StrCat("- ", MarkdownCode(DescribeWideCause(w)), "\n"));
      md.AddText("\n");
    }
    md.AddText("| test | why |\n|---|---|\n");
    for (const SelectedTest& t : s.tests) {
      std::string why;
      for (const SelectionReason& r : t.reasons) {
        absl::StrAppend(&why, why.empty() ? "" : "; ", MarkdownText(ReasonText(r)));
      }
      if (t.more_reasons) absl::StrAppend(&why, "; and ", t.more_reasons, " more");
      md.AddRow(absl::StrCat("| ", MarkdownCode(t.test), " | ", why, " |"));
    }
    return AppendToFile(summary, md.Finish("tests"));
  }
  return absl::OkStatus();
}

}  // namespace

int SelectCommand(const std::vector<std::string>& args) {
  auto flags = ParseFlags(args, kSelectFlags);
  if (!flags.ok()) return UsageError("select", std::string(flags.status().message()));
  if (flags->Has("help")) {
    std::printf("%s%s", kSelectHelp, FlagsHelp(kSelectFlags).c_str());
    return 0;
  }
  if (!flags->positional.empty()) return UsageError("select", "takes no arguments");
  const std::string format = flags->Get("format", "text");
  if (format != "text" && format != "json" && format != "github" && format != "runner" &&
      format != "matrix") {
    return UsageError("select", "--format is text, json, github, runner or matrix");
  }
  size_t shards = 0, shard_k = 0, shard_n = 0;
  if (flags->Has("shards")) {
    std::string v = flags->Get("shards");
    char* end = nullptr;
    unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end || n < 1 || n > 10000) {
      return UsageError("select", "--shards takes a number of shards from 1 to 10000");
    }
    shards = n;
  }
  if (format == "matrix" && shards == 0) return UsageError("select", "--format matrix needs --shards N");
  if (flags->Has("shard") && !ParseShardFlag(flags->Get("shard"), &shard_k, &shard_n)) {
    return UsageError("select", "--shard takes K/N with 1 <= K <= N (e.g. --shard 2/4)");
  }
  if (shard_n && format == "matrix") return UsageError("select", "--shard and --format matrix do not mix");
  int exit_code = 0;
  std::optional<Config> config = LoadRepoConfig("select", flags->Get("config"), &exit_code);
  if (!config) return exit_code;

  absl::StatusOr<BaselineQuery> query = BaselineQuery::FromFlag(flags->Get("base"));
  if (!query.ok()) return UsageError("select", std::string(query.status().message()));
  query->base_commit = flags->Get("base-commit");
  if (std::optional<int64_t> mri = MriFlag(*flags, "select", &exit_code); mri) {
    query->mri = *mri;
  } else if (exit_code) {
    return exit_code;
  }
  std::optional<RpcAuth> auth;
  if (flags->Has("scheduler")) {
    auth = ClientAuth("select", *flags);
    if (!auth) return 2;
  }

  if (flags->Has("store")) config->store_url = flags->Get("store");
  LocalCheckout checkout(*std::move(config), flags->Has("all"));
  if (flags->Has("change-text")) {
    // Unreadable is a usage error, never "no tag in it".
    const std::string path = flags->Get("change-text");
    std::ifstream in(path, std::ios::binary);
    if (!in.is_open()) return UsageError("select", "--change-text: cannot open " + path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return UsageError("select", "--change-text: cannot read " + path);
    checkout.SetChangeText(std::move(text));
  }
  SelectionOutcome outcome;
  if (auth) {
    outcome = SelectThroughScheduler(MakeChannel(flags->Get("scheduler"), *auth), *auth, checkout, *query);
  } else {
    StoreBaselineSource store(
        Store::OpenForReading(checkout.config().store_url, checkout.config().root));
    outcome = SelectForCheckout(checkout, store, *query);
  }
  Selection& s = outcome.selection;
  const std::optional<BaselineInfo>& info = outcome.baseline;
  if (!outcome.tree.ok()) {
    // Without the tree there is no test list either: say so (run all).
    std::fprintf(stderr, "ste select: mode all: %s\n", s.reason.c_str());
    if (format == "json") std::fputs(Json(s, info).c_str(), stdout);
    return 3;
  }

  if (flags->Has("changed-files")) {
    for (const InventoryChange& c : s.changed) {
      std::printf("%s\n", EscapeForText(c.path).c_str());
    }
    return 0;
  }
  std::fprintf(stderr, "ste select: mode %s: %s%s\n",
               std::string(SelectionModeName(s.mode)).c_str(), s.reason.c_str(),
               info ? absl::StrCat(" (baseline ", info->id, ", mri ", info->mri, ")").c_str()
                    : "");
  for (const WideCause& w : s.wide) {
    std::fprintf(stderr, "ste select: wide: %s\n", EscapeForText(DescribeWideCause(w)).c_str());
  }
  const RunnerKind kind = checkout.config().runner_kind;
  if (format == "matrix") {
    std::printf("%s\n", MatrixJson(Shards(s, shards), kind).c_str());
    return 0;
  }
  std::string matrix;
  if (shards) matrix = MatrixJson(Shards(s, shards), kind);
  if (shard_n) {
    // Only shard K's tests, in their selection order (with their reasons).
    std::vector<Shard> split = Shards(s, shard_n);
    std::set<std::string> mine;
    if (shard_k <= split.size()) mine.insert(split[shard_k - 1].tests.begin(), split[shard_k - 1].tests.end());
    std::vector<SelectedTest> kept;
    for (SelectedTest& t : s.tests) {
      if (mine.count(t.test)) kept.push_back(std::move(t));
    }
    s.tests = std::move(kept);
    std::fprintf(stderr, "ste select: shard %zu/%zu: %zu tests\n", shard_k, shard_n, s.tests.size());
  }
  if (format == "json") {
    std::fputs(Json(s, info).c_str(), stdout);
    return 0;
  }
  if (format == "runner") {
    std::vector<std::string> tests;
    for (const SelectedTest& t : s.tests) tests.push_back(t.test);
    std::string line = RunnerArguments(kind, tests);
    if (!line.empty()) std::printf("%s\n", line.c_str());
    return 0;
  }
  const std::string text = Text(s, flags->Has("explain"), flags->Has("null"));
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (format == "github") {
    std::string tests_file =
        flags->Get("tests-file", checkout.config().root + "/.ste/selected-tests.txt");
    std::ofstream list(tests_file, std::ios::binary);
    list << Text(s, false, flags->Has("null"));
    list.flush();
    absl::Status written = list ? WriteGithubFiles(s, tests_file, matrix)
                                : absl::UnavailableError(absl::StrCat("cannot write ", tests_file));
    if (!written.ok()) {
      // No outputs to read: the step must fail, not look like "no test".
      std::fprintf(stderr, "ste select: %s\n", std::string(written.message()).c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace ste::cli
