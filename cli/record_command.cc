// `ste record [-j N] [--progress auto|plain|none] [--mri N]
//             [--output-dir DIR] [--junit FILE] [--scheduler ADDR [--wait]]`
//
// Flags and printing only: the build is driven by RecordBaseline
// (scheduler/include/ste/record_client.h), embedded or on a scheduler;
// what is printed while it runs is record_progress.h's; the JUnit file is
// junit_report.h's.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "invocation.h"
#include "output_format.h"
#include "record_progress.h"
#include "repo_context.h"
#include "rpc_flags.h"
#include "ste/audit.h"
#include "ste/checkout.h"
#include "ste/definitions.h"
#include "ste/json.h"
#include "ste/junit_report.h"
#include "ste/record_client.h"
#include "ste/selection_pipeline.h"

namespace ste::cli {
namespace {

const std::vector<FlagSpec> kRecordFlags = WithClientFlags(
    {
        {"jobs", 'j', true, "N", "tests to run at a time (default: runner.jobs)"},
        {"progress", 0, true, "MODE",
         "auto (a bar on a terminal, lines otherwise), plain (a line per test), none"},
        {"mri", 0, true, "N",
         "the baseline's monotonic revision id (default: $STE_MRI, else git rev-list --count "
         "HEAD; outside git, one more than the store's highest; a shallow clone needs this or "
         "--base-commit)"},
        {"base-commit", 0, true, "SHA",
         "the MRI is one more than that of this commit's baseline (a shallow clone of a change "
         "based on a recorded commit)"},
        {"output-dir", 0, true, "DIR",
         "each test's stdout and stderr to DIR/<test path>.log (default "
         ".ste/output/<build id>/); embedded only: workers take their own"},
        {"junit", 0, true, "FILE", "write JUnit XML of the run to FILE (when the baseline is stored)"},
        {"allow-failures", 0, false, "",
         "exit 0 when tests failed (the baseline is stored either way)"},
        {"wait", 0, false, "", "with --scheduler: wait for the build, printing progress"},
        {"observe", 0, false, "",
         "observation mode: make the selection ste select would make before every test runs, then "
         "name each test it would have left out that did not pass (a miss)"},
        {"config", 0, true, "FILE", "ste.toml to use (default: found from the current directory up)"},
    },
    "start the build on this scheduler (HOST:PORT or unix:PATH; ipv4:H:P,H:P for several on one store, first reachable first) for workers to run, "
    "instead of running it here");

constexpr char kRecordHelp[] =
    "Usage: ste record [-j N] [--progress auto|plain|none] [--mri N | --base-commit SHA]\n"
    "                  [--output-dir DIR] [--junit FILE] [--allow-failures] [--observe]\n"
    "       ste record --scheduler ADDR [--wait] [--token-file F] [--mri N] [--junit FILE]\n"
    "\n"
    "Records a baseline of the repository holding ste.toml: hashes the tree\n"
    "(before any test runs), runs every test file (tests.include) under the\n"
    "interceptor with runner.command, inverts what each test touched into\n"
    "the selection index, and stores index, inventory and results as one\n"
    "baseline. The baseline becomes visible to 'ste select' only once\n"
    "complete: an interrupted record leaves the previous one in use.\n"
    "\n"
    "Embedded (default): an in-process scheduler on the store of ste.toml\n"
    "(store.url, default .ste/ste.db) and N local workers. With --scheduler:\n"
    "the build is created on that scheduler and run by the workers that join\n"
    "it ('ste worker --scheduler ADDR' in checkouts of the same commit);\n"
    "--wait follows it to its end.\n"
    "\n"
    "Test output: each test's stdout and stderr go to one file, its log,\n"
    ".ste/output/<build id>/<test path>.log (odd bytes in the path escaped as\n"
    "%XX), or DIR/<test path>.log with --output-dir; a batch runner's\n"
    "(runner.kind pytest, unittest, minitest, rspec) to one log per batch,\n"
    "%batch-<n>.log beside them. So for a test stdout and stderr are files,\n"
    "not a terminal: isatty() is false (programs that ask print no colours\n"
    "and buffer fully); stdin is left as it is. Nothing there is a dependency\n"
    "or a change (.ste/ is never inventoried; an --output-dir inside the\n"
    "repository should be in inventory.ignore). With --scheduler the logs\n"
    "stay on the worker that ran the test (its .ste/output/ or its\n"
    "--output-dir), which sends the tail of a failing test's log with its\n"
    "result.\n"
    "\n"
    "Progress (on stderr): auto is bar on a terminal, else plain. bar: one\n"
    "line, rewritten in place; when it is done, the last 20 lines of the log\n"
    "of each test that failed or was in error, between lines naming the test\n"
    "and the log (a batch's log once). plain: a line per test, and a failing\n"
    "test's tail right after its line (for CI logs). none: nothing while it\n"
    "runs. The summary (stdout) names each failing test and its log.\n"
    "\n"
    "--observe: for a team adopting ste, a CI job that runs every test can\n"
    "say what the selection would have done: before the tests run, the\n"
    "selection `ste select` makes against the latest baseline of the local\n"
    "store; after, 'ste record: observed: ...' lines on stdout: how many tests\n"
    "it would have left out, and each of those that did not pass here (a MISS:\n"
    "the selection would have skipped a failing test), also appended to the\n"
    "store's history for `ste report`. Not with --scheduler.\n"
    "\n"
    "--junit FILE: JUnit XML of the run (a testcase per test, classname its\n"
    "directory, name its file; <failure> or <error> with the exit code;\n"
    "<system-out> the tail of its output), written atomically once the\n"
    "baseline is stored (with --scheduler: needs --wait).\n"
    "\n"
    "Exit status, as test runners have it: 0 the baseline is stored and every\n"
    "test passed, or the build was started (--scheduler without --wait);\n"
    "1 the baseline is stored but a test failed or was in error (it is\n"
    "recorded as such and selected next time; --allow-failures exits 0\n"
    "then); 2 bad usage or configuration; 3 no baseline could be recorded,\n"
    "or the JUnit file could not be written (the baseline is stored then).\n"
    "\n";

void PrintSummary(const RecordSummary& r, const std::string& scheduler) {
  std::printf("ste record: baseline %lld (mri %lld%s%s): %zu tests, %zu passed, %zu failed, "
              "%zu errors, %zu opaque\n",
              static_cast<long long>(r.baseline_id), static_cast<long long>(r.mri),
              r.commit.empty() ? "" : ", commit ", r.commit.substr(0, 12).c_str(), r.finished.size(),
              r.passed, r.failed, r.errors, r.opaque);
  std::printf("ste record: inventory %llu entries in %s, tests in %s, index %llu bytes (build %s%s%s)\n",
              static_cast<unsigned long long>(r.inventory_entries), Seconds(r.inventory_seconds).c_str(),
              Seconds(r.tests_seconds).c_str(), static_cast<unsigned long long>(r.index_bytes),
              r.build_id.c_str(), scheduler.empty() ? "" : " on ", scheduler.c_str());
  if (!r.output_dir.empty()) {
    std::printf("ste record: each test's output in %s/\n", EscapeForText(ShownPath(r.output_dir)).c_str());
  }
  if (std::string note = SlowTrackerNote(r.slow_tracker_tests, r.slow_trackers); !note.empty()) {
    std::printf("ste record: %s\n", note.c_str());
  }
  if (r.files_fingerprinted + r.fingerprints_reused > 0) {
    std::printf("ste record: definitions of %zu sources: %zu fingerprinted, %zu kept from a record of the same bytes (%s)\n",
                r.files_fingerprinted + r.fingerprints_reused, r.files_fingerprinted, r.fingerprints_reused,
                kFingerprintCacheDir);
  }
  const bool remote = !scheduler.empty();
  for (const FinishedTest& t : r.finished) {
    const std::string log =
        t.output_log.empty() ? ""
                             : absl::StrCat(", output in ", t.output_shared ? "the batch log " : "",
                                            ShownLogPath(t, remote));
    if (t.outcome == TestOutcome::kError) {
      std::printf("  error  %s: %s%s\n", EscapeForText(t.test).c_str(), t.detail.c_str(), log.c_str());
    } else if (t.outcome == TestOutcome::kFailed) {
      std::printf("  failed %s (exit %d)%s\n", EscapeForText(t.test).c_str(), t.exit_code, log.c_str());
    }
    if (t.opaque) std::printf("  opaque %s: %s\n", EscapeForText(t.test).c_str(), t.detail.c_str());
    if (t.flaky) {
      std::printf("  flaky  %s: did not pass, then passed when run again (runner.retries)%s\n",
                  EscapeForText(t.test).c_str(), log.empty() ? "" : absl::StrCat(log, " (the failing run)").c_str());
    }
  }
}

// --observe's verdict: which tests the selection made before the record
// would have left out, and which of those did not pass in it.
void PrintObservation(const SelectionOutcome& observed, const std::vector<FinishedTest>& finished) {
  const Selection& s = observed.selection;
  const std::vector<std::string> left_out = LeftOut(observed);
  const std::vector<FinishedTest> misses = ObservedMisses(left_out, finished);
  const std::string against =
      observed.baseline ? absl::StrCat("against baseline ", observed.baseline->id) : std::string("without a baseline");
  std::printf("ste record: observed: the selection %s (mode %s: %s) would have left out %zu of %zu tests\n",
              against.c_str(), std::string(SelectionModeName(s.mode)).c_str(), EscapeForText(s.reason).c_str(),
              left_out.size(), finished.size());
  for (const FinishedTest& t : misses) {
    std::printf("ste record: observed: MISS: %s was left out by the selection and did not pass here (%s, exit %d)\n",
                EscapeForText(t.test).c_str(), std::string(TestOutcomeName(t.outcome)).c_str(), t.exit_code);
  }
  if (misses.empty()) {
    std::printf("ste record: observed: no miss: every test it would have left out passed\n");
  } else {
    std::printf("ste record: observed: %zu MISS%s: the selection would have skipped %s\n", misses.size(),
                misses.size() == 1 ? "" : "ES", misses.size() == 1 ? "a failing test" : "failing tests");
  }
}

}  // namespace

int RecordCommand(const std::vector<std::string>& args) {
  Invocation in({"record", kRecordHelp, kRecordFlags});
  if (std::optional<int> done = in.Parse(args)) return *done;
  const ParsedFlags* flags = &in.flags();
  if (!flags->positional.empty()) return in.UsageError("takes no arguments");
  RecordOptions o;
  if (flags->Has("jobs") && (!absl::SimpleAtoi(flags->Get("jobs"), &o.jobs) || o.jobs < 1)) {
    return in.UsageError("-j needs a positive number");
  }
  std::string progress = flags->Get("progress", "auto");
  if (progress != "auto" && progress != "plain" && progress != "none") {
    return in.UsageError("--progress is auto, plain or none");
  }
  if (progress == "auto") progress = isatty(2) ? "bar" : "plain";
  int mri_error = 0;
  if (std::optional<int64_t> mri = MriFlag(*flags, "record", &mri_error); mri) {
    o.mri = *mri;
  } else if (mri_error) {
    return mri_error;
  }
  o.base_commit = flags->Get("base-commit");
  if (!o.base_commit.empty() && o.mri >= 0) {
    return in.UsageError("--base-commit and --mri both give the MRI: give one");
  }
  o.scheduler = flags->Get("scheduler");
  const bool remote = flags->Has("scheduler");
  if (flags->Has("wait") && !remote) return in.UsageError("--wait goes with --scheduler");
  if (remote && flags->Has("jobs")) {
    return in.UsageError("-j is for the embedded record; workers take their own -j");
  }
  o.wait = !remote || flags->Has("wait");
  if (remote && flags->Has("output-dir")) {
    return in.UsageError("--output-dir is for the embedded record; workers take their own");
  }
  if (flags->Has("output-dir")) {
    if (flags->Get("output-dir").empty()) return in.UsageError("--output-dir needs a directory");
    o.output_dir = AbsolutePath(flags->Get("output-dir"));
  }
  const std::string junit = flags->Get("junit");
  if (flags->Has("junit") && !o.wait) return in.UsageError("--junit with --scheduler needs --wait");
  if (flags->Has("junit")) {
    // Checked now, not after the whole run: its directory must be writable.
    std::filesystem::path parent = std::filesystem::path(junit).parent_path();
    const std::string dir = parent.empty() ? "." : parent.string();
    if (junit.empty() || access(dir.c_str(), W_OK | X_OK) != 0) {
      return in.UsageError("--junit FILE: cannot write in " + dir);
    }
  }
  std::optional<RpcAuth> auth = ClientAuth("record", *flags);
  if (!auth) return ExitCode(Outcome::kUsage);
  o.auth = *auth;

  const Config* config = in.config();
  if (config == nullptr) return in.exit_code();
  o.config = *config;
  if (progress != "none") {
    o.on_phase = [](const std::string& name) { std::fprintf(stderr, "ste record: %s...\n", name.c_str()); };
  }
  RecordProgress printer(progress, remote);
  o.on_test = [&printer](const FinishedTest& t, size_t done, size_t total) {
    printer.OnTest(t, done, total);
  };
  o.on_warning = [](const std::string& warning) {
    std::fprintf(stderr, "ste record: warning: %s\n", warning.c_str());
  };

  // --observe: the selection ste select would make now, before every test
  // runs (scheduler's ste/audit.h, "Observation mode").
  std::optional<SelectionOutcome> observed;
  std::string observed_commit;
  if (flags->Has("observe")) {
    if (remote) return in.UsageError("--observe selects with the local store: not with --scheduler");
    LocalCheckout checkout(*config, false);
    StoreBaselineSource source(in.TakeStore(StoreAccess::kRead));
    observed = SelectForCheckout(checkout, source, BaselineQuery{});
    observed_commit = checkout.facts().head;
  }

  absl::StatusOr<RecordSummary> recorded = RecordBaseline(o);
  printer.Finish();
  if (!recorded.ok()) {
    // A configuration the build refused is bad usage; anything else: no
    // baseline was stored.
    if (OutcomeOf(recorded.status()) == Outcome::kUsage) {
      return in.UsageError(std::string(recorded.status().message()));
    }
    return in.Fail(recorded.status(), Outcome::kNoResult);
  }
  if (recorded->started_only) {
    std::printf("ste record: build %s started on %s: %zu tests, mri %lld; workers join with "
                "'ste worker --scheduler %s'\n",
                recorded->build_id.c_str(), o.scheduler.c_str(), recorded->tests,
                static_cast<long long>(recorded->mri), o.scheduler.c_str());
    return ExitCode(Outcome::kSuccess);
  }
  PrintSummary(*recorded, o.scheduler);
  if (observed) {
    PrintObservation(*observed, recorded->finished);
    // Stored with the selections and audits (`ste report`).
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(config->store_url, config->root);
    absl::Status stored =
        store.ok() ? (*store)->AppendAudit(ObservationHistoryEntry(*observed, recorded->finished, observed_commit))
                         .status()
                   : store.status();
    if (!stored.ok()) {
      std::fprintf(stderr, "ste record: warning: the observation is not stored in the history: %s\n",
                   std::string(stored.message()).c_str());
    }
  }
  if (flags->Has("junit")) {
    JUnitOptions jo;
    jo.seconds = recorded->tests_seconds;
    jo.read_local_logs = !remote;
    if (!remote) jo.show_path = ShownPath;
    absl::Status written = WriteFileAtomically(junit, JUnitReport(recorded->finished, jo));
    if (!written.ok()) {
      return in.Fail("the baseline is stored, but not the JUnit file: " +
                         std::string(written.message()),
                     Outcome::kNoResult);
    }
  }
  // As test runners have it: a failing test fails the command (a red main
  // build), though its baseline is stored and used.
  if ((recorded->failed > 0 || recorded->errors > 0) && !flags->Has("allow-failures")) {
    if (progress != "none") std::fprintf(stderr,
                 "ste record: %zu failed, %zu errors: exit 1 (the baseline is stored and used; "
                 "--allow-failures exits 0)\n",
                 recorded->failed, recorded->errors);
    return ExitCode(Outcome::kFailure);
  }
  return ExitCode(Outcome::kSuccess);
}

}  // namespace ste::cli
