// `ste worker --scheduler ADDR [--build ID] [-j N] [--output-dir DIR]`
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "invocation.h"
#include "output_format.h"
#include "repo_context.h"
#include "rpc_flags.h"
#include "ste/checkout.h"
#include "ste/git.h"
#include "ste/test_output.h"
#include "ste/test_recorder.h"
#include "ste/traced_run.h"
#include "ste/worker.h"

namespace ste::cli {
namespace {

const std::vector<FlagSpec> kWorkerFlags = WithClientFlags(
    {
        {"jobs", 'j', true, "N", "tests to run at a time (default: runner.jobs)"},
        {"build", 0, true, "ID",
         "the build to join (default: the newest running build of this checkout's commit)"},
        {"wait", 0, true, "SECONDS",
         "how long to wait for a build to start (default 60)"},
        {"name", 0, true, "NAME", "for the scheduler's log (default host:pid)"},
        {"quiet", 'q', false, "", "no line per test"},
        {"output-dir", 0, true, "DIR",
         "each test's stdout and stderr to DIR/<test path>.log (default: this checkout's "
         ".ste/output/<build id>/)"},
        {"config", 0, true, "FILE", "ste.toml to use"},
    },
    "the scheduler (HOST:PORT or unix:PATH; ipv4:H:P,H:P for several on one store, first reachable first); required");

constexpr char kWorkerHelp[] =
    "Usage: ste worker --scheduler ADDR [-j N] [--build ID] [--token-file F]\n"
    "                  [--output-dir DIR]\n"
    "\n"
    "Joins a record build on a scheduler, from a checkout of the same\n"
    "commit: leases tests (longest first), runs each under the interceptor\n"
    "with runner.command, and streams its result and what it touched to the\n"
    "scheduler; heartbeats meanwhile. Exits when the build has every result.\n"
    "\n"
    "Each test's stdout and stderr go to its log on this machine, as with\n"
    "the embedded 'ste record' (see 'ste record --help': a file, so isatty()\n"
    "is false for the test; stdin left as it is); the last 20 lines of a\n"
    "failing test's log go with its result, for 'ste record --wait' to show.\n"
    "\n"
    "Exit status: 0 the build is done; 1 the worker could not go on (the\n"
    "build is gone, refused this checkout, or the scheduler stayed\n"
    "unreachable); 2 bad usage or configuration.\n"
    "\n";

}  // namespace

int WorkerCommand(const std::vector<std::string>& args) {
  Invocation in({"worker", kWorkerHelp, kWorkerFlags});
  if (std::optional<int> done = in.Parse(args)) return *done;
  const ParsedFlags* flags = &in.flags();
  if (!flags->positional.empty()) return in.UsageError("takes no arguments");
  if (!flags->Has("scheduler")) return in.UsageError("--scheduler ADDR is required");
  int jobs = 0;
  if (flags->Has("jobs") && (!absl::SimpleAtoi(flags->Get("jobs"), &jobs) || jobs < 1)) {
    return in.UsageError("-j needs a positive number");
  }
  double wait = 60;
  if (flags->Has("wait") && (!absl::SimpleAtod(flags->Get("wait"), &wait) || wait < 0)) {
    return in.UsageError("--wait takes a number of seconds");
  }
  std::optional<RpcAuth> auth = ClientAuth("worker", *flags);
  if (!auth) return ExitCode(Outcome::kUsage);
  const Config* config = in.config();
  if (config == nullptr) return in.exit_code();
  absl::StatusOr<std::string> preload = FindPreloadLibrary();
  if (!preload.ok()) return in.Fail(preload.status());
  WorkerOptions o;
  std::string warning;
  absl::StatusOr<std::string> integrations = IntegrationsDirForRuns(*config, &warning);
  if (!integrations.ok()) return in.Fail(integrations.status());
  if (!warning.empty()) std::fprintf(stderr, "ste worker: warning: %s\n", warning.c_str());
  o.integrations_dir = *integrations;
  o.config = *config;
  o.preload_library = *preload;
  o.slots = jobs > 0 ? jobs : config->jobs;
  o.build_id = flags->Get("build");
  o.auth = *auth;
  o.wait_for_build = absl::Seconds(wait);
  if (flags->Has("output-dir")) {
    if (flags->Get("output-dir").empty()) return in.UsageError("--output-dir needs a directory");
    o.output_dir = AbsolutePath(flags->Get("output-dir"));
    if (std::string warning = OutputDirWarning(*config, o.output_dir); !warning.empty()) {
      std::fprintf(stderr, "ste worker: warning: %s\n", warning.c_str());
    }
  } else {
    o.output_dir = config->root + "/.ste/output";
    o.output_per_build = true;
  }
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  o.name = flags->Get("name", absl::StrCat(host, ":", getpid()));
  // The commit this checkout is at: the worker joins only a build of it.
  const CommitFacts facts = ReadCommitFacts(config->root);
  if (facts.state == CommitFacts::State::kUnreadable) {
    return in.Fail("cannot read the git history: " + facts.error);
  }
  if (facts.state == CommitFacts::State::kReadable) {
    absl::StatusOr<std::string> head = GitHead(config->root);
    if (!head.ok()) return in.Fail(head.status());
    o.commit = *head;
  }
  const bool quiet = flags->Has("quiet");
  o.log = [quiet](const std::string& line) {
    if (quiet && line.rfind("ran ", 0) == 0) return;
    std::fprintf(stderr, "ste worker: %s\n", line.c_str());
  };
  absl::StatusOr<std::string> made = MakeScratchDir("ste-worker");
  if (!made.ok()) return in.Fail(made.status());
  const std::string scratch = *made;
  o.scratch_dir = scratch;
  absl::StatusOr<WorkerSummary> done = RunWorker(MakeChannel(flags->Get("scheduler"), *auth), o);
  rmdir(scratch.c_str());
  if (!done.ok()) return in.Fail(done.status());
  std::fprintf(stderr,
               "ste worker: build %s done: ran %zu tests (%zu results accepted, %zu duplicates, "
               "%zu refused)\n",
               done->build_id.c_str(), done->tests_run, done->accepted, done->duplicates,
               done->refused);
  if (std::string note = SlowTrackerNote(done->slow_tracker_tests, done->slow_trackers); !note.empty()) {
    std::fprintf(stderr, "ste worker: %s\n", note.c_str());
  }
  return ExitCode(Outcome::kSuccess);
}

}  // namespace ste::cli
