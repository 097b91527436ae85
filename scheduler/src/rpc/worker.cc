#include "ste/worker.h"

#include "proto_convert.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <future>
#include <tuple>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ste/build_session.h"
#include "ste/definitions.h"
#include "ste/inventory.h"
#include "ste/status_macros.h"
#include "ste/test_output.h"
#include "ste/v1/scheduler.grpc.pb.h"

namespace ste {
namespace {

constexpr size_t kResultsPerStream = 256;

bool Retryable(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ||
         s.error_code() == grpc::StatusCode::ABORTED ||
         s.error_code() == grpc::StatusCode::INTERNAL;
}

}  // namespace

namespace {

class Worker {
 public:
  Worker(std::shared_ptr<grpc::Channel> channel, const WorkerOptions& options)
      : stub_(v1::Scheduler::NewStub(channel)), o_(options) {
    // selection.granularity = "definition": this checkout's definitions,
    // fingerprinted once for the tests that ran them (definitions.h), and
    // kept on disk by content for the next record of this checkout (in
    // .ste/, which the inventory ignores).
    if (o_.config.selection_definitions && !o_.integrations_dir.empty()) {
      definitions_ = std::make_unique<DefinitionCache>(Fingerprinter::ForIntegrations(o_.integrations_dir),
                                                       o_.config.root + "/" + kFingerprintCacheDir);
      definitions_->PruneDisk(kFingerprintCacheDays);
    }
  }

  absl::StatusOr<WorkerSummary> Run();

 private:
  struct Pending {
    uint64_t lease_id = 0;
    TestRecord record;
    int attempts = 0;
  };

  void Log(const std::string& line) {
    if (!o_.log) return;
    std::lock_guard<std::mutex> lock(log_mu_);
    o_.log(line);
  }
  void Warn(const std::string& line) {
    if (!o_.warn) return Log(line);
    std::lock_guard<std::mutex> lock(log_mu_);
    o_.warn(line);
  }
  void Fatal(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (fatal_.empty()) fatal_ = why;
    stop_ = true;
    cv_.notify_all();
  }
  bool Stopping() {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  }
  std::string WorkerId() {
    std::lock_guard<std::mutex> lock(mu_);
    return worker_id_;
  }
  // Registers (again, if `stale` is still the current id).
  grpc::Status Register(const std::string& stale);
  // Handles a failed call: true to retry it (after a pause).
  bool ShouldRetry(const grpc::Status& s, const char* what, const std::string& id);
  void Slot();
  void Heartbeats();
  void Reporter();
  // Makes the record safe to send: paths the scheduler would refuse are
  // dropped and make the test opaque.
  void Sanitize(TestRecord* record);
  // The log file `name` (test_output.h) in the output directory, its
  // directory made; "" when output is not captured.
  absl::StatusOr<std::string> OutputFile(const std::string& name);
  // Runs the leased tests (one, or a batch) with their output captured.
  std::vector<TestRecord> RunLeased(const v1::LeaseResponse& leases, RunOneTestOptions run);
  // Adds the records' slow trackers to the summary (WorkerSummary).
  void CountSlowTrackers(const std::vector<TestRecord>& records, bool batch);
  // The ExternalFiles message for the absolute paths of `record` that this
  // stream has not described yet; false when there are none. A path it can
  // make no entry for is dropped from `record`, which becomes opaque.
  bool ExternalMessage(TestRecord* record, std::set<std::string>* sent,
                       v1::ReportMessage* out);

  std::unique_ptr<v1::Scheduler::Stub> stub_;
  const WorkerOptions& o_;
  std::mutex log_mu_;

  std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::string worker_id_, build_id_;
  absl::Duration heartbeat_ = absl::Seconds(5);
  bool stop_ = false;        // stop leasing (build done, or fatal)
  bool slots_done_ = false;  // no more results will be queued
  std::string fatal_;
  absl::Time unreachable_since_ = absl::InfiniteFuture();
  std::deque<Pending> queue_;
  WorkerSummary summary_;
  std::string output_dir_;  // set before the slots start; "" not captured
  absl::flat_hash_map<std::string, InventoryEntry> external_;  // hashed here
  std::unique_ptr<DefinitionCache> definitions_;  // null: file level
  // The checkout's files, for imports (ImportsHold), made at the first:
  // the tree does not change while the worker runs its tests.
  std::optional<ImportTree> import_tree_;
};

grpc::Status Worker::Register(const std::string& stale) {
  std::lock_guard<std::mutex> lock(mu_);
  if (worker_id_ != stale) return grpc::Status::OK;  // someone did it
  v1::RegisterWorkerRequest req;
  req.set_build_id(build_id_.empty() ? o_.build_id : build_id_);
  req.set_worker_name(o_.name);
  req.set_slots(o_.slots);
  req.set_commit(o_.commit);
  v1::RegisterWorkerResponse resp;
  auto ctx = NewCallContext(o_.auth, 30);
  grpc::Status s = stub_->RegisterWorker(ctx.get(), req, &resp);
  if (!s.ok()) return s;
  worker_id_ = resp.worker_id();
  build_id_ = resp.build_id();
  summary_.build_id = build_id_;
  if (resp.heartbeat_interval_ms() > 0) heartbeat_ = absl::Milliseconds(resp.heartbeat_interval_ms());
  return s;
}

bool Worker::ShouldRetry(const grpc::Status& s, const char* what, const std::string& id) {
  if (s.ok()) return false;
  if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
      s.error_message().find("register again") != std::string::npos) {
    Log(absl::StrCat(what, ": the scheduler gave up on ", id, "; registering again"));
    grpc::Status again = Register(id);
    if (again.ok()) return true;
    // A scheduler that is down or hands the build over: the call is
    // retried (and asks to register again) within the grace.
    if (Retryable(again)) return ShouldRetry(again, "register again", id);
    Fatal(absl::StrCat("cannot register again: ", again.error_message()));
    return false;
  }
  if (Retryable(s)) {
    absl::Time now = absl::Now();
    std::lock_guard<std::mutex> lock(mu_);
    if (unreachable_since_ == absl::InfiniteFuture()) unreachable_since_ = now;
    if (now - unreachable_since_ <= o_.unavailable_grace) return true;
  }
  Fatal(absl::StrCat(what, ": ", s.error_message()));
  return false;
}

void Worker::Sanitize(TestRecord* r) {
  for (ScopeDependencies& s : r->deps.scopes) {
    std::vector<DepKey> kept;
    kept.reserve(s.deps.size());
    for (DepKey& k : s.deps) {
      absl::Status valid = ValidateDependencyPath(k.path);
      if (valid.ok()) {
        kept.push_back(std::move(k));
      } else {
        r->deps.opaque = true;
        r->deps.opaque_reasons.push_back(absl::StrCat("a path the scheduler cannot take: ", valid.message()));
      }
    }
    s.deps = std::move(kept);
  }
}

bool Worker::ExternalMessage(TestRecord* record, std::set<std::string>* sent,
                             v1::ReportMessage* out) {
  // Files outside the repo (unless inventory.external = false) and every
  // view (inventory.h, "Views"; outside ones follow inventory.external):
  // the scheduler needs an entry for each, and cannot compute one.
  std::vector<std::string> wanted, unhashed, views;
  for (const ScopeDependencies& s : record->deps.scopes) {
    for (const DepKey& k : s.deps) {
      const bool outside = k.path[0] == '/' && !IsEnvViewPath(k.path);
      if (outside ? !o_.config.inventory_external : !IsViewPath(k.path)) continue;
      if (!sent->count(k.path)) wanted.push_back(k.path);
    }
  }
  if (wanted.empty()) return false;
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  std::vector<std::pair<std::string, View>> definitions;
  for (const std::string& p : wanted) {
    if (external_.count(p)) continue;
    std::optional<View> v = IsViewPath(p) ? ParseView(p) : std::nullopt;
    if (v && v->kind == ViewKind::kDefinition) {
      definitions.emplace_back(p, *std::move(v));
    } else {
      (IsViewPath(p) ? views : unhashed).push_back(p);
    }
  }
  // Definition views: the fingerprints of this checkout's files (the ones
  // the tests' code records were resolved with).
  for (const auto& [p, v] : definitions) {
    if (definitions_ == nullptr) break;
    std::shared_ptr<const FileDefinitions> defs = definitions_->Get(o_.config.root + "/" + v.dir);
    std::string content;
    if (!defs->parsed) {
      std::ifstream in(o_.config.root + "/" + v.dir, std::ios::binary);
      content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    // A package's imports that only bind names, against this checkout's
    // files (ImportsHold).
    bool hold = false, stdlib_hold = false;
    if (defs->parsed && !defs->imports.empty() && v.part == DefinitionPart::kModule) {
      if (!import_tree_) import_tree_ = ImportTreeOnDisk(o_.config.root);
      std::vector<std::shared_ptr<const FileDefinitions>> held;
      hold = ImportsHold(v.dir, *defs, *import_tree_, [&](const std::string& rel) -> const FileDefinitions* {
        held.push_back(definitions_->Get(o_.config.root + "/" + rel));
        return held.back().get();
      });
      stdlib_hold = StdlibImportsHold(*defs, *import_tree_);
    }
    if (std::optional<InventoryEntry> e = DefinitionViewEntry(p, v, *defs, content, hold, stdlib_hold)) {
      external_.emplace(p, *std::move(e));
    }
  }
  if (!unhashed.empty()) {
    // Hashed as the embedded record does: each as one entry, from a root
    // that holds nothing.
    std::string empty_root = o_.scratch_dir + "/external-XXXXXX";
    if (mkdtemp(empty_root.data()) != nullptr) {
      ScanOptions scan;
      scan.root = empty_root;
      scan.external_paths = unhashed;
      scan.threads = 1;
      absl::StatusOr<Inventory> hashed = Inventory::Scan(scan, nullptr);
      rmdir(empty_root.c_str());
      if (hashed.ok()) {
        for (const InventoryEntry& e : *hashed) {
          if (e.path[0] == '/') external_.emplace(e.path, e);
        }
      } else {
        Warn(absl::StrCat("cannot hash files outside the repo: ", hashed.status().message()));
      }
    }
  }
  if (!views.empty()) {
    // Against this worker's checkout (a repo view, with its ignores) or
    // the absolute directory they name.
    absl::StatusOr<std::vector<InventoryEntry>> computed =
        ComputeViews(o_.config.root, views, o_.config.inventory_ignore, nullptr);
    if (computed.ok()) {
      for (InventoryEntry& e : *computed) external_.emplace(e.path, std::move(e));
    } else {
      Warn(absl::StrCat("cannot compute the views tests used: ", computed.status().message()));
    }
  }
  std::vector<InventoryEntry> entries;
  std::set<std::string> unknown;
  for (const std::string& p : wanted) {
    auto it = external_.find(p);
    if (it != external_.end()) {
      entries.push_back(it->second);
    } else {
      unknown.insert(p);
    }
  }
  if (!unknown.empty()) {
    // No entry (the hashing above failed): the scheduler would refuse the
    // result. It goes without those dependencies, opaque (run by every
    // selection) with the reason.
    for (ScopeDependencies& s : record->deps.scopes) {
      s.deps.erase(std::remove_if(s.deps.begin(), s.deps.end(),
                                  [&](const DepKey& k) { return unknown.count(k.path) > 0; }),
                   s.deps.end());
    }
    const std::string first = absl::CHexEscape(unknown.begin()->substr(0, 200));
    const std::string more = unknown.size() > 1 ? absl::StrCat(" and ", unknown.size() - 1, " more") : "";
    record->deps.opaque = true;
    record->deps.opaque_reasons.push_back(
        absl::StrCat("the worker could not make an entry for '", first, "'", more, ", which it used"));
    Warn(absl::StrCat(record->test, ": no entry for '", first, "'", more, ": reported opaque"));
  }
  absl::StatusOr<Inventory> inv = Inventory::FromEntries(std::move(entries), 0);
  if (!inv.ok()) return false;
  for (const InventoryEntry& e : *inv) sent->insert(e.path);
  out->mutable_external()->set_inventory(inv->Serialize());
  return true;
}

absl::StatusOr<std::string> Worker::OutputFile(const std::string& name) {
  if (output_dir_.empty()) return std::string();
  std::string file = absl::StrCat(output_dir_, "/", name);
  STE_RETURN_IF_ERROR(MakeDirectories(file.substr(0, file.rfind('/'))));
  return file;
}

std::vector<TestRecord> Worker::RunLeased(const v1::LeaseResponse& resp, RunOneTestOptions run) {
  std::vector<TestRecord> records;
  auto unrun = [&](const std::string& test, const absl::Status& why) {
    TestRecord r;
    r.test = test;
    r.started = false;
    r.error = absl::StrCat("cannot capture its output: ", why.message());
    r.deps.opaque = true;
    r.deps.opaque_reasons.push_back(r.error);
    records.push_back(std::move(r));
  };
  if (o_.config.batch_runner()) {
    std::vector<std::string> tests;
    for (const v1::Lease& l : resp.leases()) tests.push_back(l.test());
    absl::StatusOr<std::string> file = OutputFile(BatchLogName(resp.leases(0).lease_id()));
    if (!file.ok()) {
      for (const std::string& t : tests) unrun(t, file.status());
      return records;
    }
    run.output_file = *file;
    records = RunBatch(o_.config, tests, run);
  } else {
    for (const v1::Lease& l : resp.leases()) {
      absl::StatusOr<std::string> file = OutputFile(OutputLogName(l.test()));
      if (!file.ok()) {
        unrun(l.test(), file.status());
        continue;
      }
      run.output_file = *file;
      records.push_back(RunOneTest(o_.config, l.test(), run));
    }
  }
  // runner.retries: a test that ran and did not pass runs again, alone,
  // its output beside its log ("<log>%retry-<k>.log": no test's log can
  // have that name, test_output.h). One that then passes is flaky: passed,
  // with the dependencies of every run and the failing run's output.
  for (TestRecord& r : records) {
    for (int k = 1; k <= o_.config.runner_retries && r.started && OutcomeOf(r) != TestOutcome::kPassed; k++) {
      std::string name = OutputLogName(r.test);
      name = absl::StrCat(name.substr(0, name.size() - 4), "%retry-", k, ".log");
      absl::StatusOr<std::string> file = OutputFile(name);
      if (!file.ok()) break;
      RunOneTestOptions again = run;
      again.output_file = *file;
      std::vector<TestRecord> rerun = o_.config.batch_runner()
                                          ? RunBatch(o_.config, {r.test}, again)
                                          : std::vector<TestRecord>{RunOneTest(o_.config, r.test, again)};
      if (rerun.empty()) break;
      TestRecord& next = rerun[0];
      if (OutcomeOf(next) == TestOutcome::kPassed) {
        MergeDependencies(&next.deps, r.deps);
        next.flaky = true;
        next.output_log = r.output_log;
        next.output_shared = r.output_shared;
        r = std::move(next);
      } else {
        MergeDependencies(&r.deps, next.deps);
      }
    }
  }
  // The tail of what did not pass goes with its result (a batch's log is
  // read once).
  std::string read_log;
  absl::StatusOr<OutputTail> tail = absl::NotFoundError("");
  for (TestRecord& r : records) {
    if (OutcomeOf(r) == TestOutcome::kPassed || r.output_log.empty()) continue;
    if (r.output_log != read_log) {
      read_log = r.output_log;
      tail = ReadOutputTail(read_log);
    }
    if (!tail.ok()) continue;
    r.output_tail = tail->text;
    r.output_bytes = tail->file_bytes;
  }
  return records;
}

void Worker::Slot() {
  RunOneTestOptions run;
  run.preload_library = o_.preload_library;
  run.scratch_dir = o_.scratch_dir;
  run.integrations_dir = o_.integrations_dir;
  run.definitions = definitions_.get();
  run.jobs = o_.slots;
  const bool batch = o_.config.batch_runner();
  auto lease = [this, batch](const std::string& id, v1::LeaseResponse* resp) {
    v1::LeaseRequest req;
    req.set_worker_id(id);
    req.set_max_tests(batch ? static_cast<uint32_t>(o_.config.runner_batch) : 1);
    auto ctx = NewCallContext(o_.auth, 30);
    return stub_->Lease(ctx.get(), req, resp);
  };
  // The next test is asked for while the current one runs (one test
  // ahead, no more: the end of a longest-first build stays balanced).
  std::future<std::pair<grpc::Status, v1::LeaseResponse>> ahead;
  while (!Stopping()) {
    std::string id = WorkerId();
    v1::LeaseResponse resp;
    grpc::Status s;
    if (ahead.valid()) {
      std::tie(s, resp) = ahead.get();
    } else {
      s = lease(id, &resp);
    }
    if (!s.ok()) {
      if (!ShouldRetry(s, "lease", id)) return;
      absl::SleepFor(absl::Milliseconds(200));
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      unreachable_since_ = absl::InfiniteFuture();
    }
    if (resp.leases().empty()) {
      if (resp.build_done()) {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
        cv_.notify_all();
        return;
      }
      // Everything left is leased to others; one of them may die.
      absl::SleepFor(absl::Milliseconds(100));
      continue;
    }
    if (!batch && !resp.build_done()) {
      ahead = std::async(std::launch::async, [lease, id] {
        std::pair<grpc::Status, v1::LeaseResponse> r;
        r.first = lease(id, &r.second);
        return r;
      });
    }
    std::vector<TestRecord> records = RunLeased(resp, run);
    CountSlowTrackers(records, batch);
    for (int i = 0; i < resp.leases_size(); i++) {
      const v1::Lease& l = resp.leases(i);
      Pending p;
      p.lease_id = l.lease_id();
      p.record = std::move(records[i]);
      Sanitize(&p.record);
      const TestOutcome outcome = OutcomeOf(p.record);
      Log(absl::StrCat("ran ", p.record.test, ": ", std::string(TestOutcomeName(outcome)), " in ",
                       absl::StrFormat("%.2fs", p.record.seconds),
                       outcome == TestOutcome::kPassed || p.record.output_log.empty()
                           ? ""
                           : absl::StrCat(", output in ", p.record.output_log)));
      std::lock_guard<std::mutex> lock(mu_);
      summary_.tests_run++;
      queue_.push_back(std::move(p));
      cv_.notify_all();
    }
  }
}

void Worker::CountSlowTrackers(const std::vector<TestRecord>& records, bool batch) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < records.size(); i++) {
    const std::map<std::string, size_t>& slow = records[i].deps.slow_trackers;
    if (slow.empty()) continue;
    summary_.slow_tracker_tests++;
    if (batch && i > 0) continue;  // the same processes as the first test's
    for (const auto& [why, n] : slow) summary_.slow_trackers[why] += n;
  }
}

void Worker::Heartbeats() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, absl::ToChronoMilliseconds(heartbeat_), [&] { return slots_done_; });
      if (slots_done_) return;
    }
    std::string id = WorkerId();
    v1::HeartbeatRequest req;
    req.set_worker_id(id);
    v1::HeartbeatResponse resp;
    auto ctx = NewCallContext(o_.auth, 10);
    grpc::Status s = stub_->Heartbeat(ctx.get(), req, &resp);
    if (!s.ok()) {
      if (!ShouldRetry(s, "heartbeat", id)) return;
    } else if (resp.build_done()) {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      cv_.notify_all();
    }
  }
}

void Worker::Reporter() {
  ReportEncoder encoder(o_.max_ids_per_message);
  std::vector<Pending> on_stream;  // written on the open stream, unconfirmed
  std::unique_ptr<grpc::ClientContext> ctx;
  std::unique_ptr<grpc::ClientWriter<v1::ReportMessage>> writer;
  v1::ReportSummary summary;
  std::set<std::string> external_sent;
  std::deque<Pending> replay;

  // Closes the stream; on failure its results go to `replay`. False when
  // the worker must stop.
  auto close = [&]() -> bool {
    if (!writer) return true;
    writer->WritesDone();
    grpc::Status s = writer->Finish();
    writer.reset();
    ctx.reset();
    if (s.ok() && summary.refused() > 0) {
      Warn(absl::StrCat("the scheduler refused ", summary.refused(), " result(s) of this stream, taken as errors"));
    }
    if (s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      summary_.accepted += summary.accepted();
      summary_.duplicates += summary.duplicates();
      summary_.refused += summary.refused();
      unreachable_since_ = absl::InfiniteFuture();
      on_stream.clear();
      return true;
    }
    bool refused = s.error_code() == grpc::StatusCode::INVALID_ARGUMENT;
    if (refused) {
      Warn(absl::StrCat("the scheduler refused a report: ", s.error_message()));
      std::lock_guard<std::mutex> lock(mu_);
      summary_.refused++;
    } else if (!ShouldRetry(s, "report", WorkerId())) {
      return false;
    } else {
      absl::SleepFor(absl::Milliseconds(200));
    }
    // Replayed on the next stream: the scheduler takes each result once.
    // A refused stream is tried 3 times; one that could not be delivered
    // (the scheduler down or restarting, within the grace) until it is.
    for (Pending& p : on_stream) {
      if (!refused || ++p.attempts <= 3) replay.push_back(std::move(p));
    }
    on_stream.clear();
    return true;
  };

  for (;;) {
    Pending item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (replay.empty()) {
        cv_.wait_for(lock, std::chrono::milliseconds(200),
                     [&] { return !queue_.empty() || slots_done_ || !fatal_.empty(); });
      }
      if (!fatal_.empty()) return;
      if (!replay.empty()) {
        item = std::move(replay.front());
        replay.pop_front();
      } else if (!queue_.empty()) {
        item = std::move(queue_.front());
        queue_.pop_front();
      } else {
        bool finished = slots_done_;
        lock.unlock();
        // Idle: close the stream, which confirms what is on it.
        if (!close()) return;
        if (finished && replay.empty()) return;
        continue;
      }
    }
    if (!writer) {
      ctx = NewCallContext(o_.auth, 0);
      summary.Clear();
      writer = stub_->Report(ctx.get(), &summary);
      encoder.Reset();
      external_sent.clear();
    }
    std::vector<v1::ReportMessage> messages;
    messages.emplace_back();
    if (!ExternalMessage(&item.record, &external_sent, &messages.back())) messages.pop_back();
    encoder.Encode(item.lease_id, item.record, &messages);
    if (on_stream.empty()) messages.front().set_worker_id(WorkerId());
    bool written = true;
    for (const v1::ReportMessage& m : messages) {
      if (!writer->Write(m)) {
        written = false;
        break;
      }
    }
    on_stream.push_back(std::move(item));
    if (!written || on_stream.size() >= kResultsPerStream) {
      if (!close()) return;
    }
  }
}

absl::StatusOr<WorkerSummary> Worker::Run() {
  if (!o_.output_dir.empty()) {  // before joining: a worker that cannot log takes no test
    absl::Status made = MakeDirectories(o_.output_dir);
    if (!made.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot make the output directory: ", made.message()));
    }
  }
  // Join a build: retried while none runs yet or the scheduler is not up.
  absl::Time deadline = absl::Now() + o_.wait_for_build;
  bool said = false;
  absl::Duration pause = absl::Milliseconds(10);
  for (;;) {
    grpc::Status s = Register("");
    if (s.ok()) break;
    bool wait = s.error_code() == grpc::StatusCode::NOT_FOUND && o_.build_id.empty();
    if ((!wait && !Retryable(s)) || absl::Now() > deadline) {
      return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                          absl::StrCat("cannot join a build: ", s.error_message()));
    }
    if (!said) {
      Log(absl::StrCat("waiting for a build: ", s.error_message()));
      said = true;
    }
    // Soon at first (a build is often created a moment after its
    // workers start), then every 250 ms.
    absl::SleepFor(pause);
    pause = std::min(pause * 2, absl::Milliseconds(250));
  }
  if (!o_.output_dir.empty()) {
    output_dir_ = o_.output_per_build ? absl::StrCat(o_.output_dir, "/", build_id_) : o_.output_dir;
    absl::Status made = MakeDirectories(output_dir_);
    if (!made.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot make the output directory: ", made.message()));
    }
    summary_.output_dir = output_dir_;
  }
  Log(absl::StrCat("joined build ", build_id_, " as ", worker_id_, " with ", o_.slots, " slots",
                   output_dir_.empty() ? "" : absl::StrCat(", test output in ", output_dir_)));
  std::thread heartbeats([this] { Heartbeats(); });
  std::thread reporter([this] { Reporter(); });
  std::vector<std::thread> slots;
  const int threads = o_.config.batch_runner() ? 1 : std::max(1, o_.slots);
  for (int i = 0; i < threads; i++) slots.emplace_back([this] { Slot(); });
  for (std::thread& t : slots) t.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    slots_done_ = true;
    cv_.notify_all();
  }
  reporter.join();
  heartbeats.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (definitions_ != nullptr) {
    DefinitionCache::Counts counts = definitions_->counts();
    summary_.files_fingerprinted = counts.fingerprinted;
    summary_.fingerprints_reused = counts.from_disk;
    Log(absl::StrCat("definitions: ", counts.fingerprinted, " sources fingerprinted, ", counts.from_disk,
                     " more unchanged since a record (", kFingerprintCacheDir, ")"));
  }
  if (!fatal_.empty()) return absl::UnavailableError(fatal_);
  return summary_;
}

}  // namespace

absl::StatusOr<WorkerSummary> RunWorker(std::shared_ptr<grpc::Channel> channel,
                                        const WorkerOptions& options) {
  Worker w(std::move(channel), options);
  return w.Run();
}

}  // namespace ste
