// `ste record [-j N] [--progress auto|plain|none] [--mri N]
//             [--scheduler ADDR [--wait]]`
//
// One code path for both: the tree is inventoried here, a build is created
// on a scheduler and watched to its end. Embedded (no --scheduler), the
// scheduler is an in-process SchedulerServer on the store of ste.toml and
// the worker runs in this process, on the in-process channel.
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <map>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "flags.h"
#include "repo_context.h"
#include "rpc_flags.h"
#include "ste/git.h"
#include "ste/json.h"
#include "ste/scheduler_service.h"
#include "ste/selection.h"
#include "ste/traced_run.h"
#include "ste/v1/scheduler.grpc.pb.h"
#include "ste/worker.h"

namespace ste::cli {
namespace {

const std::vector<FlagSpec> kRecordFlags = WithClientFlags(
    {
        {"jobs", 'j', true, "N", "tests to run at a time (default: runner.jobs)"},
        {"progress", 0, true, "MODE",
         "auto (a bar on a terminal, lines otherwise), plain (a line per test), none"},
        {"mri", 0, true, "N",
         "the baseline's monotonic revision id (default: git rev-list --count HEAD; "
         "outside git, one more than the store's highest)"},
        {"wait", 0, false, "", "with --scheduler: wait for the build, printing progress"},
        {"config", 0, true, "FILE", "ste.toml to use (default: found from the current directory up)"},
    },
    "start the build on this scheduler (HOST:PORT or unix:PATH) for workers to run, "
    "instead of running it here");

constexpr char kRecordHelp[] =
    "Usage: ste record [-j N] [--progress auto|plain|none] [--mri N]\n"
    "       ste record --scheduler ADDR [--wait] [--token-file F] [--mri N]\n"
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
    "Exit status: 0 the baseline is stored (failing tests are recorded as\n"
    "failed and will be selected next time), or the build was started\n"
    "(--scheduler without --wait); 1 it could not be recorded; 2 bad usage or\n"
    "configuration.\n"
    "\n";

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

const char* StatusWord(const v1::FinishedTest& t) {
  switch (t.outcome()) {
    case v1::TEST_OUTCOME_PASSED: return "ok";
    case v1::TEST_OUTCOME_FAILED: return "FAIL";
    default: return "ERROR";
  }
}

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
  const bool remote = flags->Has("scheduler");
  if (flags->Has("wait") && !remote) return UsageError("record", "--wait goes with --scheduler");
  if (remote && flags->Has("jobs")) {
    return UsageError("record", "-j is for the embedded record; workers take their own -j");
  }
  const bool wait = !remote || flags->Has("wait");
  std::optional<RpcAuth> auth = ClientAuth("record", *flags);
  if (!auth) return 2;

  int exit_code = 0;
  std::optional<Config> config = LoadRepoConfig("record", flags->Get("config"), &exit_code);
  if (!config) return exit_code;
  auto fail = [](const std::string& what) {
    std::fprintf(stderr, "ste record: %s\n", what.c_str());
    return 1;
  };
  auto phase = [&](const char* name) {
    if (progress != "none") std::fprintf(stderr, "ste record: %s...\n", name);
  };

  // The local store (embedded): for the MRI outside git and the stat cache.
  std::unique_ptr<BaselineStore> store;
  Inventory previous_inventory;
  bool have_previous = false;
  if (!remote) {
    absl::StatusOr<std::unique_ptr<BaselineStore>> opened =
        BaselineStore::Open(config->store_url, config->root);
    if (!opened.ok()) return fail(std::string(opened.status().message()));
    store = *std::move(opened);
    absl::StatusOr<LoadedBaseline> previous = LoadBaseline(*store, *config, "auto");
    if (previous.ok()) {
      previous_inventory = std::move(previous->inventory);
      have_previous = true;
    }
  }
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
    if (remote) return UsageError("record", "outside git, --scheduler needs --mri N");
    absl::StatusOr<int64_t> next = store->NextMri();
    if (!next.ok()) return fail(std::string(next.status().message()));
    mri = *next;
  }

  // 1. The tree, before anything runs.
  phase("inventory");
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<GlobSet> ignore = GlobSet::Compile(config->inventory_ignore);
  if (!ignore.ok()) return fail(std::string(ignore.status().message()));
  ScanOptions scan;
  scan.root = config->root;
  scan.ignore = *ignore;
  scan.threads = std::max(1, jobs > 0 ? jobs : config->jobs);
  absl::StatusOr<Inventory> inventory = Inventory::Scan(scan, have_previous ? &previous_inventory : nullptr);
  if (!inventory.ok()) return fail(std::string(inventory.status().message()));
  const double inventory_seconds = Since(start);
  absl::StatusOr<std::vector<std::string>> discovered = DiscoverTests(*config, *inventory);
  if (!discovered.ok()) return fail(std::string(discovered.status().message()));
  std::vector<std::string> tests = *std::move(discovered);
  if (tests.empty()) {
    return fail(config->runner_kind == "ctest"
                    ? absl::StrCat("no CTest test in ", config->runner_build_dir, " matches tests.include")
                    : absl::StrCat("no test file matches tests.include in ", config->config_path));
  }

  // 2. The scheduler: in process, or the one given.
  std::unique_ptr<SchedulerServer> local;
  std::shared_ptr<grpc::Channel> channel;
  if (remote) {
    channel = MakeChannel(flags->Get("scheduler"), *auth);
  } else {
    store.reset();  // the scheduler opens its own
    SchedulerOptions options;
    options.store_url = config->store_url;
    options.store_root = config->root;
    absl::StatusOr<std::unique_ptr<SchedulerServer>> started =
        SchedulerServer::Start(options, SchedulerServer::Listen{});
    if (!started.ok()) return fail(std::string(started.status().message()));
    local = *std::move(started);
    channel = local->InProcessChannel();
  }
  std::unique_ptr<v1::Scheduler::Stub> stub = v1::Scheduler::NewStub(channel);
  v1::CreateBuildRequest create;
  create.set_commit(commit);
  create.set_mri(mri);
  create.set_no_external(!config->inventory_external);
  for (const std::string& t : tests) create.add_tests()->set_test(t);
  create.set_inventory(inventory->Serialize());
  v1::CreateBuildResponse created;
  {
    auto ctx = NewCallContext(*auth, 120);
    grpc::Status s = stub->CreateBuild(ctx.get(), create, &created);
    if (!s.ok()) return fail(absl::StrCat("cannot create the build: ", s.error_message()));
  }
  const std::string build_id = created.build_id();
  if (!wait) {
    std::printf("ste record: build %s started on %s: %zu tests, mri %lld; workers join with "
                "'ste worker --scheduler %s'\n",
                build_id.c_str(), flags->Get("scheduler").c_str(), tests.size(),
                static_cast<long long>(mri), flags->Get("scheduler").c_str());
    return 0;
  }

  // 3. Embedded: the local worker, N slots.
  std::thread worker;
  absl::Status worker_status;
  std::string scratch;
  WorkerOptions wo;
  if (local) {
    absl::StatusOr<std::string> preload = FindPreloadLibrary();
    if (!preload.ok()) return fail(std::string(preload.status().message()));
    scratch = absl::StrCat(DefaultScratchRoot(), "/ste-record-XXXXXX");
    if (mkdtemp(scratch.data()) == nullptr) return fail("cannot create a scratch directory");
    if (config->batch_runner()) {
      absl::StatusOr<std::string> integrations = FindIntegrationsDir();
      if (!integrations.ok()) return fail(std::string(integrations.status().message()));
      wo.integrations_dir = *integrations;
    }
    wo.config = *config;
    wo.preload_library = *preload;
    wo.scratch_dir = scratch;
    wo.slots = std::max(1, jobs > 0 ? jobs : config->jobs);
    wo.build_id = build_id;
    wo.commit = commit;
    wo.name = "local";
    worker = std::thread([&] {
      absl::StatusOr<WorkerSummary> done = RunWorker(channel, wo);
      if (!done.ok()) worker_status = done.status();
    });
  }

  // 4. Watch it to its end: a line per test, then the summary.
  phase("tests");
  start = std::chrono::steady_clock::now();
  v1::BuildProgress last;
  std::vector<v1::FinishedTest> finished;
  absl::Time unreachable_since = absl::InfiniteFuture();
  std::string lost;
  for (bool over = false; !over;) {
    v1::WatchBuildRequest req;
    req.set_build_id(build_id);
    auto ctx = NewCallContext(*auth, 0);
    std::unique_ptr<grpc::ClientReader<v1::BuildProgress>> reader = stub->WatchBuild(ctx.get(), req);
    v1::BuildProgress p;
    while (reader->Read(&p)) {
      unreachable_since = absl::InfiniteFuture();
      for (const v1::FinishedTest& t : p.finished()) {
        finished.push_back(t);
        if (progress == "none") continue;
        if (progress == "bar") {
          const int width = 30;
          int filled = p.total() ? static_cast<int>(width * finished.size() / p.total()) : 0;
          std::fprintf(stderr, "\r\033[K[%s%s] %zu/%u %s %s", std::string(filled, '#').c_str(),
                       std::string(width - filled, '.').c_str(), finished.size(), p.total(),
                       StatusWord(t), EscapeForText(t.test()).c_str());
          if (finished.size() == p.total()) std::fputc('\n', stderr);
        } else {
          std::fprintf(stderr, "[%zu/%u] %-5s %s (%s)\n", finished.size(), p.total(), StatusWord(t),
                       EscapeForText(t.test()).c_str(), Seconds(t.seconds()).c_str());
        }
      }
      last = p;
      if (p.state() != v1::BUILD_STATE_RUNNING) over = true;
    }
    grpc::Status s = reader->Finish();
    if (over) break;
    if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
      if (unreachable_since == absl::InfiniteFuture()) unreachable_since = absl::Now();
      if (absl::Now() - unreachable_since < absl::Seconds(30)) {
        absl::SleepFor(absl::Milliseconds(500));
        continue;
      }
    }
    lost = s.ok() ? "the scheduler ended the watch early" : s.error_message();
    break;
  }
  const double tests_seconds = Since(start);
  if (local) {
    if (!lost.empty() || last.state() != v1::BUILD_STATE_COMPLETE) {
      local->Shutdown("the record was given up", absl::Seconds(5));
    }
    worker.join();
    rmdir(scratch.c_str());
  }
  if (!lost.empty()) return fail(absl::StrCat("build ", build_id, ": ", lost));
  if (last.state() != v1::BUILD_STATE_COMPLETE) {
    return fail(absl::StrCat("build ", build_id, " failed: ", last.failure(),
                             worker_status.ok() ? "" : absl::StrCat(" (worker: ", worker_status.message(), ")")));
  }
  size_t failed = 0, errors = 0, opaque = 0;
  for (const v1::FinishedTest& t : finished) {
    failed += t.outcome() == v1::TEST_OUTCOME_FAILED;
    errors += t.outcome() == v1::TEST_OUTCOME_ERROR;
    opaque += t.opaque();
  }
  std::sort(finished.begin(), finished.end(),
            [](const v1::FinishedTest& a, const v1::FinishedTest& b) { return a.test() < b.test(); });
  std::printf("ste record: baseline %lld (mri %lld%s%s): %zu tests, %zu passed, %zu failed, "
              "%zu errors, %zu opaque\n",
              static_cast<long long>(last.baseline_id()), static_cast<long long>(mri),
              commit.empty() ? "" : ", commit ", commit.substr(0, 12).c_str(), finished.size(),
              finished.size() - failed - errors, failed, errors, opaque);
  std::printf("ste record: inventory %llu entries in %s, tests in %s, index %llu bytes (build %s%s%s)\n",
              static_cast<unsigned long long>(last.inventory_entries()),
              Seconds(inventory_seconds).c_str(), Seconds(tests_seconds).c_str(),
              static_cast<unsigned long long>(last.index_bytes()), build_id.c_str(),
              remote ? " on " : "", remote ? flags->Get("scheduler").c_str() : "");
  for (const v1::FinishedTest& t : finished) {
    if (t.outcome() == v1::TEST_OUTCOME_ERROR) {
      std::printf("  error  %s: %s\n", EscapeForText(t.test()).c_str(), t.detail().c_str());
    } else if (t.outcome() == v1::TEST_OUTCOME_FAILED) {
      std::printf("  failed %s (exit %d)\n", EscapeForText(t.test()).c_str(), t.exit_code());
    }
    if (t.opaque()) {
      std::printf("  opaque %s: %s\n", EscapeForText(t.test()).c_str(), t.detail().c_str());
    }
  }
  return 0;
}

}  // namespace ste::cli
