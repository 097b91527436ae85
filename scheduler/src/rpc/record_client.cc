#include "ste/record_client.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "proto_convert.h"
#include "ste/baseline_loader.h"
#include "ste/checkout.h"
#include "ste/environment.h"
#include "ste/scheduler_service.h"
#include "ste/selection.h"
#include "ste/test_output.h"
#include "ste/test_recorder.h"
#include "ste/traced_run.h"
#include "ste/v1/scheduler.grpc.pb.h"
#include "ste/worker.h"

namespace ste {
namespace {

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A scheduler unreachable for longer than this ends the watch.
constexpr absl::Duration kUnreachableGrace = absl::Seconds(30);

// The embedded scheduler's local worker, on its own thread.
class LocalWorker {
 public:
  ~LocalWorker() { (void)Join(); }

  absl::Status Start(std::shared_ptr<grpc::Channel> channel, const RecordOptions& o,
                     const std::string& build_id, const std::string& commit) {
    absl::StatusOr<std::string> preload = FindPreloadLibrary();
    if (!preload.ok()) return preload.status();
    absl::StatusOr<std::string> scratch = MakeScratchDir("ste-record");
    if (!scratch.ok()) return scratch.status();
    scratch_ = *scratch;
    WorkerOptions wo;
    std::string warning;
    absl::StatusOr<std::string> integrations = IntegrationsDirForRuns(o.config, &warning);
    if (!integrations.ok()) return integrations.status();
    if (!warning.empty() && o.on_warning) o.on_warning(warning);
    wo.integrations_dir = *integrations;
    wo.config = o.config;
    wo.preload_library = *preload;
    wo.scratch_dir = scratch_;
    wo.slots = std::max(1, o.jobs > 0 ? o.jobs : o.config.jobs);
    wo.build_id = build_id;
    wo.commit = commit;
    wo.name = "local";
    wo.output_dir = o.output_dir.empty() ? o.config.root + "/.ste/output" : o.output_dir;
    wo.output_per_build = o.output_dir.empty();
    if (o.on_warning) wo.warn = o.on_warning;
    thread_ = std::thread([this, channel, wo] {
      absl::StatusOr<WorkerSummary> done = RunWorker(channel, wo);
      if (!done.ok()) status_ = done.status();
      else summary_ = *std::move(done);
    });
    return absl::OkStatus();
  }

  // Waits for the worker; its error, if it had one.
  absl::Status Join() {
    if (thread_.joinable()) thread_.join();
    if (!scratch_.empty()) rmdir(scratch_.c_str());
    scratch_.clear();
    return status_;
  }

  // What it ran (after Join; empty when it failed).
  const WorkerSummary& summary() const { return summary_; }

 private:
  std::thread thread_;
  std::string scratch_;
  absl::Status status_;  // written by the thread, read after join
  WorkerSummary summary_;  // likewise
};

// Follows build `build_id` to its end; `last` is its final progress.
// An error when the watch was lost (the scheduler gone for too long, or
// it ended the watch early).
absl::Status Watch(v1::Scheduler::Stub& stub, const RecordOptions& o, const std::string& build_id,
                   std::vector<FinishedTest>* finished, v1::BuildProgress* last) {
  absl::Time unreachable_since = absl::InfiniteFuture();
  // A watch that starts again (the scheduler restarted, or another took
  // the build over) gets every finished test again, in another order:
  // each is reported once.
  std::set<std::string> seen;
  for (const FinishedTest& f : *finished) seen.insert(f.test);
  for (;;) {
    v1::WatchBuildRequest req;
    req.set_build_id(build_id);
    auto ctx = NewCallContext(o.auth, 0);
    std::unique_ptr<grpc::ClientReader<v1::BuildProgress>> reader = stub.WatchBuild(ctx.get(), req);
    v1::BuildProgress p;
    bool over = false;
    while (reader->Read(&p)) {
      unreachable_since = absl::InfiniteFuture();
      for (const v1::FinishedTest& t : p.finished()) {
        absl::StatusOr<FinishedTest> f = FromProto(t);
        if (!f.ok()) {
          ctx->TryCancel();
          reader->Finish();
          return absl::DataLossError(absl::StrCat("the scheduler's progress is unreadable: ",
                                                  f.status().message()));
        }
        if (!seen.insert(f->test).second) continue;
        finished->push_back(*std::move(f));
        if (o.on_test) o.on_test(finished->back(), finished->size(), p.total());
      }
      *last = p;
      if (p.state() != v1::BUILD_STATE_RUNNING) over = true;
    }
    grpc::Status s = reader->Finish();
    if (over) return absl::OkStatus();
    if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
      if (unreachable_since == absl::InfiniteFuture()) unreachable_since = absl::Now();
      if (absl::Now() - unreachable_since < kUnreachableGrace) {
        absl::SleepFor(absl::Milliseconds(500));  // a retry interval, not a synchronisation
        continue;
      }
    }
    return absl::UnavailableError(s.ok() ? "the scheduler ended the watch early" : s.error_message());
  }
}

// Errors of the work itself are never InvalidArgument, which the contract
// keeps for options that do not go together.
absl::Status WorkError(const absl::Status& s) {
  return absl::IsInvalidArgument(s) ? absl::FailedPreconditionError(s.message()) : s;
}

}  // namespace

absl::StatusOr<RecordSummary> RecordBaseline(const RecordOptions& o) {
  const Config& config = o.config;
  const bool remote = !o.scheduler.empty();
  auto phase = [&](const char* name) {
    if (o.on_phase) o.on_phase(name);
  };
  RecordSummary sum;
  if (remote && !o.output_dir.empty()) {
    return absl::InvalidArgumentError(
        "the output directory is the workers' with --scheduler ('ste worker --output-dir DIR')");
  }
  if (!remote && !o.output_dir.empty() && o.on_warning) {
    if (std::string warning = OutputDirWarning(config, o.output_dir); !warning.empty()) {
      o.on_warning(warning);
    }
  }

  // 1. The local store (embedded: the MRI outside git, the stat cache),
  // the commit and the MRI.
  std::unique_ptr<Store> store;
  std::optional<LoadedBaseline> previous;
  if (!remote) {
    absl::StatusOr<std::unique_ptr<Store>> opened =
        Store::Open(config.store_url, config.root);
    if (!opened.ok()) return WorkError(opened.status());
    store = *std::move(opened);
  }
  sum.mri = o.mri;
  const CommitFacts facts = ReadCommitFacts(config.root);
  switch (facts.state) {
    case CommitFacts::State::kReadable:
      sum.commit = facts.head;
      if (sum.mri < 0 && !facts.shallow) sum.mri = facts.mri;
      break;
    case CommitFacts::State::kUnreadable:
      return absl::FailedPreconditionError(absl::StrCat("cannot read the git history: ", facts.error));
    case CommitFacts::State::kNoCommits:
      if (sum.mri < 0) {
        return absl::FailedPreconditionError(
            "the repository has no commit yet: commit first, or give --mri");
      }
      break;
    case CommitFacts::State::kNotGit:
      break;
  }
  if (sum.mri < 0 && !o.base_commit.empty()) {
    // One more than the baseline of the commit this one is based on.
    Store* from = store.get();
    if (!from) {
      return absl::InvalidArgumentError("--base-commit needs the local store; with --scheduler pass --mri N");
    }
    BaselineLookup which;
    which.commit = o.base_commit;
    absl::StatusOr<BaselineInfo> base = FindCompletedBaseline(*from, which);
    if (!base.ok()) return WorkError(base.status());
    sum.mri = base->mri + 1;
  }
  if (sum.mri < 0 && facts.shallow) {
    return absl::InvalidArgumentError(
        "this is a shallow clone, whose commit count is no MRI: pass --mri N ($STE_MRI; e.g. the "
        "CI's run number, larger for later commits), or --base-commit SHA of a recorded commit "
        "(the MRI is then one more than its baseline's), or fetch the full history "
        "(actions/checkout fetch-depth: 0)");
  }
  if (sum.mri < 0) {
    if (remote) return absl::InvalidArgumentError("outside git, --scheduler needs --mri N");
    absl::StatusOr<int64_t> next = store->NextMri();
    if (!next.ok()) return WorkError(next.status());
    sum.mri = *next;
  }
  if (store) {
    // The previous baseline is only a stat cache here: none is fine.
    absl::StatusOr<LoadedBaseline> loaded = LoadCompletedBaseline(*store, sum.mri, 0);
    if (loaded.ok()) previous = *std::move(loaded);
  }

  // 2. The tree, before anything runs.
  phase("inventory");
  auto start = std::chrono::steady_clock::now();
  ScanOptions scan;
  scan.root = config.root;
  scan.ignore = config.inventory_ignore;
  scan.threads = std::max(1, o.jobs > 0 ? o.jobs : config.jobs);
  // The variables selection.env_run_all names, as this process has them
  // (environment.h): a select compares them whether or not a test read one.
  const Environment env = Environment::OfProcess();
  scan.environment = &env;
  scan.view_paths = EnvRunAllViews(config.selection.env_run_all, env);
  absl::StatusOr<Inventory> inventory = Inventory::Scan(scan, previous ? &previous->inventory : nullptr);
  if (!inventory.ok()) return WorkError(inventory.status());
  previous.reset();
  sum.inventory_seconds = Since(start);
  absl::StatusOr<std::vector<std::string>> tests = DiscoverTests(config, *inventory);
  if (!tests.ok()) return WorkError(tests.status());
  if (tests->empty()) {
    return absl::FailedPreconditionError(
        TestsAreCTestNames(config.runner_kind)
            ? absl::StrCat("no CTest test in ", config.runner_build_dir, " matches tests.include")
            : absl::StrCat("no test file matches tests.include in ", config.config_path));
  }
  sum.tests = tests->size();

  // 3. The scheduler: in process, or the one given.
  std::unique_ptr<SchedulerServer> local;
  std::shared_ptr<grpc::Channel> channel;
  if (remote) {
    channel = MakeChannel(o.scheduler, o.auth);
  } else {
    store.reset();  // the scheduler opens its own
    SchedulerOptions options;
    options.store_url = config.store_url;
    options.store_root = config.root;
    options.cases = config.selection.cases;
    absl::StatusOr<std::unique_ptr<SchedulerServer>> started =
        SchedulerServer::Start(options, SchedulerServer::Listen{});
    if (!started.ok()) return WorkError(started.status());
    local = *std::move(started);
    channel = local->InProcessChannel();
  }
  std::unique_ptr<v1::Scheduler::Stub> stub = v1::Scheduler::NewStub(channel);
  v1::CreateBuildRequest create;
  create.set_commit(sum.commit);
  create.set_mri(sum.mri);
  create.set_no_external(!config.inventory_external);
  create.set_cases(config.selection.cases);
  create.set_case_reads(config.selection.cases && CaseReadsOwn(config.runner_kind));
  for (const std::string& t : *tests) create.add_tests()->set_test(t);
  create.set_inventory(inventory->Serialize());
  v1::CreateBuildResponse created;
  grpc::Status made = stub->CreateBuild(NewCallContext(o.auth, 120).get(), create, &created);
  if (!made.ok()) return absl::UnavailableError(absl::StrCat("cannot create the build: ", made.error_message()));
  sum.build_id = created.build_id();
  if (!remote) {
    sum.output_dir = o.output_dir.empty() ? absl::StrCat(config.root, "/.ste/output/", sum.build_id)
                                          : o.output_dir;
  }
  if (remote && !o.wait) {
    sum.started_only = true;
    return sum;
  }

  // 4. Embedded: the local worker.
  LocalWorker worker;
  if (local) {
    absl::Status started = worker.Start(channel, o, sum.build_id, sum.commit);
    if (!started.ok()) return WorkError(started);
  }

  // 5. Watch it to its end.
  phase("tests");
  start = std::chrono::steady_clock::now();
  v1::BuildProgress last;
  absl::Status watched = Watch(*stub, o, sum.build_id, &sum.finished, &last);
  sum.tests_seconds = Since(start);
  absl::Status worker_status;
  if (local) {
    if (!watched.ok() || last.state() != v1::BUILD_STATE_COMPLETE) {
      local->Shutdown("the record was given up", absl::Seconds(5));
    }
    worker_status = worker.Join();
    sum.slow_tracker_tests = worker.summary().slow_tracker_tests;
    sum.slow_trackers = worker.summary().slow_trackers;
    sum.files_fingerprinted = worker.summary().files_fingerprinted;
    sum.fingerprints_reused = worker.summary().fingerprints_reused;
  }
  if (!watched.ok()) {
    return absl::Status(watched.code(), absl::StrCat("build ", sum.build_id, ": ", watched.message()));
  }
  if (last.state() != v1::BUILD_STATE_COMPLETE) {
    return absl::AbortedError(absl::StrCat(
        "build ", sum.build_id, " failed: ", last.failure(),
        worker_status.ok() ? "" : absl::StrCat(" (worker: ", worker_status.message(), ")")));
  }
  sum.baseline_id = last.baseline_id();
  sum.inventory_entries = last.inventory_entries();
  sum.index_bytes = last.index_bytes();
  for (const FinishedTest& t : sum.finished) {
    sum.failed += t.outcome == TestOutcome::kFailed;
    sum.errors += t.outcome == TestOutcome::kError;
    sum.opaque += t.opaque;
  }
  sum.passed = sum.finished.size() - sum.failed - sum.errors;
  std::sort(sum.finished.begin(), sum.finished.end(),
            [](const FinishedTest& a, const FinishedTest& b) { return a.test < b.test; });
  return sum;
}

}  // namespace ste
