// `ste select [--base auto|ID] [--explain] [--format text|json|github]
//             [--all] [--changed-files]`
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "commands.h"
#include "flags.h"
#include "repo_context.h"
#include "rpc_flags.h"
#include "ste/git.h"
#include "ste/v1/scheduler.grpc.pb.h"
#include "ste/json.h"
#include "ste/selection.h"

namespace ste::cli {
namespace {

const std::vector<FlagSpec> kSelectFlags = WithClientFlags({
    {"base", 0, true, "auto|ID",
     "baseline to compare with (default auto: the latest complete one with "
     "mri <= MRI(HEAD))"},
    {"explain", 0, false, "", "after each test, the changes that selected it"},
    {"format", 0, true, "FMT", "text (default), json, github or runner"},
    {"all", 0, false, "", "select every test (mode all)"},
    {"changed-files", 0, false, "", "print the changed paths instead of tests"},
    {"tests-file", 0, true, "FILE",
     "github format: where to write the test list (default .ste/selected-tests.txt)"},
    {"config", 0, true, "FILE", "ste.toml to use"},
},
    "ask this scheduler (HOST:PORT or unix:PATH) instead of the local store");

constexpr char kSelectHelp[] =
    "Usage: ste select [--base auto|ID] [--explain] [--format text|json|github]\n"
    "                  [--all] [--changed-files]\n"
    "\n"
    "Prints the tests the current tree's changes can affect, compared with a\n"
    "recorded baseline. Guardrails, in order: no usable baseline -> all; a\n"
    "force tag ([test all], [no filter]) in a commit message since the\n"
    "baseline, or --all -> all; only selection.skip_all paths changed ->\n"
    "none; a selection.run_all path changed -> all; else the affected tests,\n"
    "plus new test files, tests that failed in the baseline, mandatory and\n"
    "opaque tests. Any error while selecting widens to all, with the reason.\n"
    "\n"
    "Output. text: one test per line on stdout (mode all: every test; mode\n"
    "none: nothing), the mode and reason on stderr; --explain adds\n"
    "'  <- path (kind change)' lines. json: {\"mode\",\"reason\",\"baseline\",\n"
    "\"changed\",\"tests\":[{\"test\",\"reasons\":[{\"path\",\"kind\",\"change\"}]}]}.\n"
    "runner: the tests as arguments for the runner to take back, on one line,\n"
    "shell-quoted (pytest/unittest/minitest/rspec take files; ctest: one\n"
    "-R '^(name|name)$'); nothing at all\n"
    "for mode none (run no test: do not call the runner with no arguments).\n"
    "github: text on stdout, and mode=, reason=, tests_file= appended to\n"
    "$GITHUB_OUTPUT and a Markdown summary to $GITHUB_STEP_SUMMARY when set.\n"
    "\n"
    "--scheduler: the baseline and the selection come from a scheduler\n"
    "('ste scheduler') and its store; the tree is hashed here and sent. If the\n"
    "scheduler cannot answer, the selection is all, with the reason.\n"
    "\n"
    "Exit status: 0 a selection was printed (whatever its mode: on an error\n"
    "it is all, every test listed); 2 bad usage or configuration; 3 the tree\n"
    "could not be read, so no test list could be made: run everything.\n"
    "\n";

std::string ReasonText(const SelectionReason& r) {
  if (r.kind.empty()) return r.change;
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
    absl::StrAppend(&out, "],\"more_reasons\":", s.tests[i].more_reasons, "}");
  }
  out += "]}\n";
  return out;
}

std::string Text(const Selection& s, bool explain) {
  std::string out;
  for (const SelectedTest& t : s.tests) {
    absl::StrAppend(&out, EscapeForText(t.test), "\n");
    if (!explain) continue;
    for (const SelectionReason& r : t.reasons) absl::StrAppend(&out, "  <- ", ReasonText(r), "\n");
    if (t.more_reasons) absl::StrAppend(&out, "  <- and ", t.more_reasons, " more\n");
  }
  return out;
}

void AppendToFile(const char* path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}


FileType FileTypeFromName(const std::string& name) {
  for (FileType t : {FileType::kRegular, FileType::kSymlink, FileType::kDirectory,
                     FileType::kOther, FileType::kMissing}) {
    if (FileTypeName(t) == name) return t;
  }
  return FileType::kOther;
}

// The scheduler's answer, as the local Select() would have given it.
Selection FromResponse(const v1::SelectResponse& r) {
  Selection s;
  s.mode = r.mode() == v1::SELECTION_MODE_SUBSET ? SelectionMode::kSubset
           : r.mode() == v1::SELECTION_MODE_NONE ? SelectionMode::kNone
                                                 : SelectionMode::kAll;
  s.reason = r.reason();
  for (const v1::Change& c : r.changed()) {
    InventoryChange ic;
    ic.path = c.path();
    ic.type = FileTypeFromName(c.type());
    ic.old_type = ic.type;
    ic.change = c.change() == "added"     ? ChangeKind::kAdded
                : c.change() == "deleted" ? ChangeKind::kDeleted
                                          : ChangeKind::kModified;
    s.changed.push_back(std::move(ic));
  }
  for (const v1::SelectedTest& t : r.tests()) {
    SelectedTest out;
    out.test = t.test();
    out.more_reasons = t.more_reasons();
    for (const v1::SelectionReason& why : t.reasons()) {
      out.reasons.push_back(SelectionReason{why.path(), why.kind(), why.change()});
    }
    s.tests.push_back(std::move(out));
  }
  return s;
}

// Mode all over the tests of the tree, with the reason.
Selection AllOf(const std::string& reason, const std::vector<std::string>& tests) {
  Selection s;
  s.reason = reason;
  for (const std::string& t : tests) s.tests.push_back(SelectedTest{t, {}, 0});
  return s;
}

// Without the tree there is no test list either: say so (run all), exit 3.
int TreeUnreadable(const absl::Status& why, const std::string& format,
                   const std::optional<BaselineInfo>& base) {
  std::fprintf(stderr, "ste select: mode all: cannot inventory the tree: %s\n",
               std::string(why.message()).c_str());
  if (format == "json") {
    Selection all;
    all.reason = absl::StrCat("cannot inventory the tree: ", why.message());
    std::fputs(Json(all, base).c_str(), stdout);
  }
  return 3;
}

// Why every test must run whatever changed: --all, or a force tag in a
// commit message since the baseline's commit; "" otherwise.
std::string ForceReason(const ParsedFlags& flags, const Config& config,
                        const std::string& base_commit) {
  if (flags.Has("all")) return "--all given";
  std::string force;
  if (IsGitRepo(config.root)) {
    absl::StatusOr<std::string> messages = GitMessagesSince(config.root, base_commit);
    for (const char* tag : {"[test all]", "[no filter]"}) {
      if (messages.ok() && absl::StrContains(*messages, tag)) {
        force = absl::StrCat("force tag ", tag, " in a commit message");
      }
    }
  }
  return force;
}

// The selection from the local store (store.url).
int LocalSelect(const ParsedFlags& flags, const Config& config, const std::string& format,
                Selection* out, std::optional<BaselineInfo>* info) {
  SelectionInputs in;
  in.config = &config;
  std::optional<LoadedBaseline> base;
  Inventory head;
  auto store = BaselineStore::Open(config.store_url, config.root);
  if (!store.ok()) {
    in.no_baseline = absl::StrCat("store unusable: ", store.status().message());
  } else {
    absl::StatusOr<LoadedBaseline> loaded = LoadBaseline(**store, config, flags.Get("base"));
    if (!loaded.ok()) {
      in.no_baseline = std::string(loaded.status().message());
    } else {
      base = *std::move(loaded);
      in.failed_tests = base->failed_tests;
    }
  }
  // The tree now: hashed with the baseline's inventory as the stat cache,
  // with the external files the baseline's tests read.
  absl::StatusOr<GlobSet> ignore = GlobSet::Compile(config.inventory_ignore);
  ScanOptions scan;
  scan.root = config.root;
  if (ignore.ok()) scan.ignore = *ignore;
  if (base && config.inventory_external) scan.external_paths = ExternalPaths(*base->index);
  absl::StatusOr<Inventory> scanned = Inventory::Scan(scan, base ? &base->inventory : nullptr);
  if (!scanned.ok()) {
    return TreeUnreadable(scanned.status(), format,
                          base ? std::optional<BaselineInfo>(base->info) : std::nullopt);
  }
  head = *std::move(scanned);
  absl::StatusOr<std::vector<std::string>> tests = DiscoverTests(config, head);
  if (!tests.ok()) {
    return TreeUnreadable(tests.status(), format,
                          base ? std::optional<BaselineInfo>(base->info) : std::nullopt);
  }
  in.head_tests = *std::move(tests);
  if (base) {
    in.index = base->index.get();
    in.base = &base->inventory;
    in.head = &head;
  }
  in.force_all = ForceReason(flags, config, base ? base->info.commit : "");
  *out = Select(in);
  if (base) *info = base->info;
  return 0;
}

// The tree inventoried here, the selection from a scheduler.
int RemoteSelect(const ParsedFlags& flags, const Config& config, const std::string& format,
                 Selection* out, std::optional<BaselineInfo>* info) {
  std::optional<RpcAuth> auth = ClientAuth("select", flags);
  if (!auth) return 2;
  std::unique_ptr<v1::Scheduler::Stub> stub =
      v1::Scheduler::NewStub(MakeChannel(flags.Get("scheduler"), *auth));
  const std::string base = flags.Get("base", "auto");
  int64_t base_id = 0;
  if (base != "auto" && (!absl::SimpleAtoi(base, &base_id) || base_id <= 0)) {
    return UsageError("select", "--base is auto or a baseline id");
  }
  v1::GetBaselineRequest which;
  which.set_mri(CurrentMri(config));
  which.set_baseline_id(base_id);
  v1::GetBaselineResponse found;
  grpc::Status asked = stub->GetBaseline(NewCallContext(*auth, 60).get(), which, &found);

  absl::StatusOr<GlobSet> ignore = GlobSet::Compile(config.inventory_ignore);
  ScanOptions scan;
  scan.root = config.root;
  if (ignore.ok()) scan.ignore = *ignore;
  if (asked.ok() && found.found() && config.inventory_external) {
    for (const std::string& p : found.external_paths()) scan.external_paths.push_back(p);
  }
  absl::StatusOr<Inventory> head = Inventory::Scan(scan, nullptr);
  if (!head.ok()) return TreeUnreadable(head.status(), format, std::nullopt);
  absl::StatusOr<std::vector<std::string>> discovered = DiscoverTests(config, *head);
  if (!discovered.ok()) return TreeUnreadable(discovered.status(), format, std::nullopt);
  std::vector<std::string> tests = *std::move(discovered);
  if (!asked.ok()) {
    *out = AllOf(absl::StrCat("the scheduler did not answer: ", asked.error_message()), tests);
    return 0;
  }
  v1::SelectRequest req;
  req.set_mri(which.mri());
  req.set_baseline_id(found.found() ? found.baseline().id() : base_id);
  req.set_inventory(head->Serialize());
  for (const std::string& t : tests) req.add_head_tests(t);
  absl::StatusOr<std::string> text = ReadWholeFile(config.config_path);
  if (!text.ok()) {
    *out = AllOf(std::string(text.status().message()), tests);
    return 0;
  }
  req.set_config(*text);
  std::string force = ForceReason(flags, config, found.found() ? found.baseline().commit() : "");
  req.set_force_all(!force.empty());
  req.set_force_reason(force);
  v1::SelectResponse resp;
  grpc::Status selected = stub->Select(NewCallContext(*auth, 120).get(), req, &resp);
  if (!selected.ok()) {
    *out = AllOf(absl::StrCat("the scheduler did not answer: ", selected.error_message()), tests);
    return 0;
  }
  *out = FromResponse(resp);
  if (resp.has_baseline()) {
    BaselineInfo b;
    b.id = resp.baseline().id();
    b.mri = resp.baseline().mri();
    b.commit = resp.baseline().commit();
    b.state = BaselineState::kComplete;
    *info = b;
  }
  return 0;
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
  if (format != "text" && format != "json" && format != "github" && format != "runner") {
    return UsageError("select", "--format is text, json, github or runner");
  }
  int exit_code = 0;
  std::optional<Config> config = LoadRepoConfig("select", flags->Get("config"), &exit_code);
  if (!config) return exit_code;

  Selection s;
  std::optional<BaselineInfo> info;
  if (flags->Has("scheduler")) {
    int rc = RemoteSelect(*flags, *config, format, &s, &info);
    if (rc != 0) return rc;
  } else {
    int rc = LocalSelect(*flags, *config, format, &s, &info);
    if (rc != 0) return rc;
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
  if (format == "json") {
    std::fputs(Json(s, info).c_str(), stdout);
    return 0;
  }
  if (format == "runner") {
    std::string line;
    if (config->runner_kind == "ctest") {
      // One -R regex naming exactly the selected tests.
      std::string regex;
      for (const SelectedTest& t : s.tests) {
        absl::StrAppend(&regex, regex.empty() ? "" : "|", RegexEscape(t.test));
      }
      if (!regex.empty()) line = "-R " + ShellQuote("^(" + regex + ")$");
    }
    for (const SelectedTest& t : s.tests) {
      if (config->runner_kind == "ctest") break;
      absl::StrAppend(&line, line.empty() ? "" : " ", ShellQuote(t.test));
    }
    if (!line.empty()) std::printf("%s\n", line.c_str());
    return 0;
  }
  std::string text = Text(s, flags->Has("explain"));
  std::fputs(text.c_str(), stdout);
  if (format == "github") {
    std::string tests_file = flags->Get("tests-file", config->root + "/.ste/selected-tests.txt");
    std::ofstream(tests_file) << Text(s, false);
    if (const char* out = std::getenv("GITHUB_OUTPUT"); out && *out) {
      AppendToFile(out, absl::StrCat("mode=", std::string(SelectionModeName(s.mode)),
                                     "\nreason=", s.reason,
                                     "\ntests_file=", tests_file, "\n"));
    }
    if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary) {
      std::string md = absl::StrCat("### ste select: ", std::string(SelectionModeName(s.mode)),
                                    "\n\n",
                                    s.reason, "\n\n| test | why |\n|---|---|\n");
      for (const SelectedTest& t : s.tests) {
        std::string why;
        for (const SelectionReason& r : t.reasons) {
          absl::StrAppend(&why, why.empty() ? "" : "; ", ReasonText(r));
        }
        absl::StrAppend(&md, "| `", EscapeForText(t.test), "` | ", why, " |\n");
      }
      AppendToFile(summary, md);
    }
  }
  return 0;
}

}  // namespace ste::cli
