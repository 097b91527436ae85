// Copyright: the ste authors. The scheduler service (scheduler_service.h):
// authorisation, conversions and streams over OwnedBuilds, BuildSession
// and SelectForCheckout.
#include "ste/scheduler_service.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "report_decoder.h"
#include "ste/baseline_loader.h"
#include "ste/config.h"
#include "ste/repo_path.h"
#include "proto_convert.h"
#include "ste/rpc_common.h"
#include "ste/selection.h"
#include "ste/selection_pipeline.h"
#include "ste/test_recorder.h"

namespace ste {
namespace {

using grpc::Status;
using grpc::StatusCode;

Status Invalid(const std::string& what) { return Status(StatusCode::INVALID_ARGUMENT, what); }

// True when something accepts connections on the unix socket of `address`
// ("unix:PATH" or "unix:///PATH"). gRPC unlinks whatever is at PATH before
// it binds, so a second scheduler would silently take the socket of a
// running one; this is checked first (best effort: not atomic with bind).
bool UnixSocketInUse(const std::string& address) {
  std::string path = address.substr(5);
  if (path.rfind("//", 0) == 0) path = path.substr(2);
  sockaddr_un sa{};
  if (path.empty() || path.size() >= sizeof(sa.sun_path)) return false;
  sa.sun_family = AF_UNIX;
  memcpy(sa.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool in_use = connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) == 0;
  close(fd);
  return in_use;
}

void FillProgress(const BuildSnapshot& s, const BuildSession& b, v1::BuildProgress* p) {
  p->set_state(ToProto(s.state));
  p->set_done(s.done);
  p->set_total(s.total);
  p->set_workers(s.workers);
  p->set_baseline_id(s.baseline_id);
  p->set_failure(s.failure);
  p->set_mri(b.mri());
  p->set_commit(b.commit());
  p->set_index_bytes(s.index_bytes);
  p->set_inventory_entries(s.inventory_entries);
  for (const FinishedTest& f : s.finished) ToProto(f, p->add_finished());
}

}  // namespace

SchedulerService::SchedulerService(SchedulerOptions options)
    : options_(std::move(options)),
      baselines_([this] { return OpenStore(); }, kLoadedBaselinesKept),
      builds_(OwnershipOptions()) {}

SchedulerService::~SchedulerService() = default;

OwnedBuilds::Options SchedulerService::OwnershipOptions() {
  OwnedBuilds::Options o;
  o.instance_id = options_.instance_id;
  o.build_lease = options_.build_lease;
  o.abandon_after = options_.abandon_after;
  o.session.coordinator.lease_timeout = options_.lease_timeout;
  o.session.coordinator.now = options_.now;
  o.session.log = [this](const std::string& line) { Log(line); };
  o.session.journal_batch = options_.journal_batch;
  o.session.cases = options_.cases;
  o.open_store = [this] { return OpenStore(); };
  o.log = [this](const std::string& line) { Log(line); };
  return o;
}

void SchedulerService::StartOwnership() { builds_.Start(); }

void SchedulerService::Log(const std::string& line) {
  if (!options_.log) return;
  std::lock_guard<std::mutex> lock(log_mu_);
  options_.log(line);
}

Status SchedulerService::Authorize(grpc::ServerContext* ctx, const char* method) {
  if (options_.token.empty()) return Status::OK;
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  std::string why;
  if (it == md.end()) {
    why = "no token";
  } else {
    std::string_view given(it->second.data(), it->second.size());
    const std::string expected = "Bearer " + options_.token;
    if (ConstantTimeEquals(given, expected)) return Status::OK;
    why = "wrong token";
  }
  Log(absl::StrCat("refused ", method, " from ", ctx->peer(), ": ", why));
  return Status(StatusCode::UNAUTHENTICATED, why + " (this scheduler requires --token-file)");
}

absl::StatusOr<std::unique_ptr<Store>> SchedulerService::OpenStore() {
  return Store::Open(options_.store_url, options_.store_root);
}

void SchedulerService::Shutdown(const std::string& why) { builds_.Shutdown(why); }

Status SchedulerService::FindBuild(const std::string& build_id,
                                   std::shared_ptr<BuildSession>* out) {
  absl::StatusOr<std::shared_ptr<BuildSession>> found = builds_.Find(build_id);
  if (!found.ok()) return ToGrpcStatus(found.status());
  *out = *std::move(found);
  return Status::OK;
}

Status SchedulerService::FindWorker(const std::string& worker_id,
                                    std::shared_ptr<BuildSession>* build, std::string* worker) {
  size_t slash = worker_id.find('/');
  if (slash == std::string::npos) return Invalid(absl::StrCat("bad worker id '", worker_id, "'"));
  *worker = worker_id.substr(slash + 1);
  return FindBuild(worker_id.substr(0, slash), build);
}

Status SchedulerService::RunningWorker(grpc::ServerContext* ctx, const char* method,
                                       const std::string& worker_id,
                                       std::shared_ptr<BuildSession>* build, std::string* worker) {
  if (Status a = Authorize(ctx, method); !a.ok()) return a;
  if (Status s = FindWorker(worker_id, build, worker); !s.ok()) return s;
  if ((*build)->lost()) {
    return Status(StatusCode::UNAVAILABLE,
                  absl::StrCat("build ", (*build)->id(), " is run by another scheduler now"));
  }
  if (!(*build)->running()) build->reset();
  return Status::OK;
}

Status SchedulerService::CreateBuild(grpc::ServerContext* ctx, const v1::CreateBuildRequest* req,
                                     v1::CreateBuildResponse* resp) {
  if (Status a = Authorize(ctx, "CreateBuild"); !a.ok()) return a;
  if (builds_.stopping()) return Status(StatusCode::UNAVAILABLE, "the scheduler is stopping");
  BuildSpec spec;
  spec.commit = req->commit();
  spec.mri = req->mri();
  spec.external = !req->no_external();
  spec.cases = req->cases();
  spec.case_reads = req->case_reads();
  if (spec.mri < 0) return Invalid("mri must be >= 0");
  for (const v1::TestSpec& t : req->tests()) {
    if (!(t.historical_seconds() >= 0)) return Invalid("historical_seconds must be >= 0");
    spec.tests.push_back(BuildTest{t.test(), t.historical_seconds()});
  }
  absl::StatusOr<Inventory> inventory = Inventory::Parse(req->inventory());
  if (!inventory.ok()) return Invalid(absl::StrCat("inventory: ", inventory.status().message()));
  spec.inventory = *std::move(inventory);
  absl::StatusOr<std::shared_ptr<BuildSession>> build = builds_.Create(std::move(spec));
  if (!build.ok()) {
    Log(absl::StrCat("refused CreateBuild from ", ctx->peer(), ": ", build.status().message()));
    return ToGrpcStatus(build.status());
  }
  resp->set_build_id((*build)->id());
  return Status::OK;
}

Status SchedulerService::RegisterWorker(grpc::ServerContext* ctx,
                                        const v1::RegisterWorkerRequest* req,
                                        v1::RegisterWorkerResponse* resp) {
  if (Status a = Authorize(ctx, "RegisterWorker"); !a.ok()) return a;
  std::shared_ptr<BuildSession> build;
  if (!req->build_id().empty()) {
    if (Status s = FindBuild(req->build_id(), &build); !s.ok()) return s;
  } else {
    build = builds_.LatestRunning(req->commit());
    if (!build) {
      return Status(StatusCode::NOT_FOUND,
                    absl::StrCat("no running build", req->commit().empty() ? "" : " of commit ",
                                 req->commit().substr(0, 12), " yet"));
    }
  }
  if (build->lost()) {
    return Status(StatusCode::UNAVAILABLE,
                  absl::StrCat("build ", build->id(), " is run by another scheduler now"));
  }
  if (!build->running()) {
    return Status(StatusCode::FAILED_PRECONDITION, absl::StrCat("build ", build->id(), " is over"));
  }
  if (!req->commit().empty() && !build->commit().empty() && req->commit() != build->commit()) {
    return Status(StatusCode::FAILED_PRECONDITION,
                  absl::StrCat("build ", build->id(), " records commit ", build->commit(),
                               "; this checkout is at ", req->commit()));
  }
  std::string name = absl::StrCat(req->worker_name(), " (", ctx->peer(), ")");
  std::string w = build->coordinator().RegisterWorker(name);
  resp->set_worker_id(absl::StrCat(build->id(), "/", w));
  resp->set_build_id(build->id());
  resp->set_heartbeat_interval_ms(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(options_.heartbeat_interval)));
  resp->set_lease_timeout_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(options_.lease_timeout)));
  Log(absl::StrCat("build ", build->id(), ": worker ", w, " joined: ", name, ", ", req->slots(),
                   " slots"));
  return Status::OK;
}

Status SchedulerService::Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                                   v1::HeartbeatResponse* resp) {
  std::shared_ptr<BuildSession> build;
  std::string w;
  if (Status s = RunningWorker(ctx, "Heartbeat", req->worker_id(), &build, &w); !s.ok()) return s;
  if (!build) {
    resp->set_build_done(true);
    return Status::OK;
  }
  absl::Status alive = build->coordinator().Heartbeat(w);
  if (!alive.ok()) return ToGrpcStatus(alive);
  resp->set_build_done(build->coordinator().complete());
  return Status::OK;
}

Status SchedulerService::Lease(grpc::ServerContext* ctx, const v1::LeaseRequest* req,
                               v1::LeaseResponse* resp) {
  std::shared_ptr<BuildSession> build;
  std::string w;
  if (Status s = RunningWorker(ctx, "Lease", req->worker_id(), &build, &w); !s.ok()) return s;
  if (!build) {
    resp->set_build_done(true);
    return Status::OK;
  }
  bool done = false;
  absl::StatusOr<std::vector<TestLease>> leases =
      build->coordinator().Lease(w, std::min<uint32_t>(std::max<uint32_t>(req->max_tests(), 1), 1024), &done);
  if (!leases.ok()) return ToGrpcStatus(leases.status());
  for (const TestLease& l : *leases) {
    v1::Lease* out = resp->add_leases();
    out->set_lease_id(l.lease_id);
    out->set_test(l.test);
  }
  resp->set_build_done(done);
  return Status::OK;
}

namespace {

// The build a Report stream feeds, for its decoder.
class SessionTarget final : public ReportTarget {
 public:
  explicit SessionTarget(BuildSession& build) : build_(build) {}
  absl::StatusOr<uint32_t> InternPath(std::string_view path) override {
    return build_.InternPath(path);
  }
  absl::Status AddExternal(const Inventory& external) override {
    return build_.AddExternal(external);
  }

 private:
  BuildSession& build_;
};

}  // namespace

Status SchedulerService::Report(grpc::ServerContext* ctx,
                                grpc::ServerReader<v1::ReportMessage>* reader,
                                v1::ReportSummary* summary) {
  if (Status a = Authorize(ctx, "Report"); !a.ok()) return a;
  ReportStreamDecoder decoder;
  std::shared_ptr<BuildSession> build;
  auto refuse = [&](const absl::Status& s) {
    const std::string& from = decoder.worker_id();
    Log(absl::StrCat("refused a report from ", from.empty() ? ctx->peer() : from, ": ",
                     s.message()));
    return ToGrpcStatus(s);
  };
  v1::ReportMessage m;
  while (reader->Read(&m)) {
    absl::StatusOr<bool> named = decoder.TakeWorker(m);
    if (!named.ok()) return refuse(named.status());
    if (*named) {
      std::string w;
      if (Status s = FindWorker(decoder.worker_id(), &build, &w); !s.ok()) return s;
    }
    SessionTarget target(*build);
    std::optional<LeaseResult> refused;
    absl::StatusOr<std::optional<LeaseResult>> whole = decoder.Decode(m, target, &refused);
    // A refused result is taken as an error (RefusedResult), so that the
    // build can finish.
    if (refused.has_value()) (void)build->Submit(*refused);
    if (!whole.ok()) return refuse(whole.status());
    if (!whole->has_value()) continue;
    const LeaseResult& result = **whole;
    absl::StatusOr<BuildCoordinator::Acceptance> taken = build->Submit(result);
    if (!taken.ok()) {
      if (absl::IsFailedPrecondition(taken.status()) || absl::IsUnavailable(taken.status())) {
        return ToGrpcStatus(taken.status());  // over, or handed over: nothing refused
      }
      // Taken as an error of its test; the stream goes on (the results
      // after it are the worker's to give, not lost with it).
      absl::StatusOr<BuildCoordinator::Acceptance> as_error =
          build->Submit(RefusedResult(result.lease_id, result.test, taken.status().message()));
      if (!as_error.ok()) return refuse(taken.status());
      Log(absl::StrCat("build ", build->id(), ": refused the result for ", result.test, " from ",
                       decoder.worker_id(), ", taken as an error: ", taken.status().message()));
      summary->set_refused(summary->refused() + 1);
      continue;
    }
    if (*taken == BuildCoordinator::Acceptance::kAccepted) {
      summary->set_accepted(summary->accepted() + 1);
    } else {
      summary->set_duplicates(summary->duplicates() + 1);
      Log(absl::StrCat("build ", build->id(), ": duplicate result for ", result.test, " from ",
                       decoder.worker_id(), " ignored"));
    }
  }
  if (absl::Status end = decoder.Finish(); !end.ok()) return refuse(end);
  // Acknowledged only once its results are in the store: a worker told
  // OK never sends them again. Otherwise it replays the stream (each
  // result is then a duplicate here, and journaled with the next flush).
  if (build) {
    absl::Status journaled = build->Flush();
    if (!journaled.ok()) {
      return Status(StatusCode::UNAVAILABLE,
                    absl::StrCat("the results are not in the store yet: ", journaled.message()));
    }
  }
  return Status::OK;
}

Status SchedulerService::WatchBuild(grpc::ServerContext* ctx, const v1::WatchBuildRequest* req,
                                    grpc::ServerWriter<v1::BuildProgress>* writer) {
  if (Status a = Authorize(ctx, "WatchBuild"); !a.ok()) return a;
  std::shared_ptr<BuildSession> build;
  if (Status s = FindBuild(req->build_id(), &build); !s.ok()) return s;
  size_t from = 0;
  for (;;) {
    BuildSnapshot snap = build->Snapshot(from, absl::Seconds(1));
    from += snap.finished.size();
    v1::BuildProgress p;
    FillProgress(snap, *build, &p);
    if (snap.handed_over) {
      return Status(StatusCode::UNAVAILABLE,
                    absl::StrCat("build ", build->id(), " is run by another scheduler now"));
    }
    if (!writer->Write(p)) return Status(StatusCode::CANCELLED, "the watcher went away");
    if (snap.state != BaselineState::kBuilding) return Status::OK;
    if (ctx->IsCancelled()) return Status(StatusCode::CANCELLED, "cancelled");
  }
}

Status SchedulerService::GetBaseline(grpc::ServerContext* ctx, const v1::GetBaselineRequest* req,
                                     v1::GetBaselineResponse* resp) {
  if (Status a = Authorize(ctx, "GetBaseline"); !a.ok()) return a;
  absl::StatusOr<std::shared_ptr<const LoadedBaseline>> base = baselines_.Load(LookupOf(*req));
  if (!base.ok()) {
    resp->set_why_not(std::string(base.status().message()));
    return Status::OK;
  }
  resp->set_found(true);
  ToProto((*base)->info, resp->mutable_baseline());
  std::vector<InventoryEntry> definitions;
  for (const std::string& p : RequestedPaths(*(*base)->index)) {
    resp->add_external_paths(p);
    std::optional<View> v = ParseView(p);
    if (!v || v->kind != ViewKind::kDefinition) continue;
    for (const std::string* path : {&p, static_cast<const std::string*>(&v->dir)}) {
      if (const InventoryEntry* e = (*base)->inventory.Find(*path)) definitions.push_back(*e);
    }
  }
  if (!definitions.empty()) {
    std::sort(definitions.begin(), definitions.end(),
              [](const InventoryEntry& a, const InventoryEntry& b) { return a.path < b.path; });
    definitions.erase(std::unique(definitions.begin(), definitions.end(),
                                  [](const InventoryEntry& a, const InventoryEntry& b) { return a.path == b.path; }),
                      definitions.end());
    absl::StatusOr<Inventory> inv = Inventory::FromEntries(std::move(definitions), 0);
    if (inv.ok()) resp->set_definition_inventory(inv->Serialize());
  }
  return Status::OK;
}

namespace {

// The checkout of a client's SelectRequest: the rules of the ste.toml it
// sent, the tree as it hashed it (or its changed paths), its tests, and
// the force reason it decided on. Nothing here reads a file.
class SubmittedCheckout final : public Checkout {
 public:
  static absl::StatusOr<std::unique_ptr<SubmittedCheckout>> FromRequest(const v1::SelectRequest& req) {
    const std::string name = req.config_name().empty() ? "ste.toml" : req.config_name();
    if (name.find('/') != std::string::npos || !IsCleanRelative(name)) {
      return absl::InvalidArgumentError(absl::StrCat("config_name '", name, "' is not a file name"));
    }
    absl::StatusOr<Config> config = ParseConfig(req.config(), name, /*root=*/"");
    if (!config.ok()) return config.status();
    std::unique_ptr<SubmittedCheckout> c(new SubmittedCheckout);
    c->rules_ = config->selection;
    c->lookup_ = LookupOf(req);
    for (const std::string& t : req.head_tests()) {
      absl::Status valid = ValidateTestPath(t);
      if (!valid.ok()) return absl::InvalidArgumentError(absl::StrCat("head_tests: ", valid.message()));
      c->tree_.tests.push_back(t);
    }
    std::sort(c->tree_.tests.begin(), c->tree_.tests.end());
    if (req.tree_case() == v1::SelectRequest::kInventory) {
      absl::StatusOr<Inventory> parsed = Inventory::Parse(req.inventory());
      if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat("inventory: ", parsed.status().message()));
      c->tree_.inventory = *std::move(parsed);
    } else if (req.tree_case() == v1::SelectRequest::kChanged) {
      for (const v1::Change& change : req.changed().changes()) {
        absl::Status valid = ValidateDependencyPath(change.path());
        if (valid.ok()) valid = ValidateChangeWord(change.change());
        if (!valid.ok()) return absl::InvalidArgumentError(absl::StrCat("changed: ", valid.message()));
        c->tree_.changed_paths.emplace_back(change.path(), change.change());
      }
    } else {
      return absl::InvalidArgumentError("a select needs the checkout's inventory or its changed paths");
    }
    if (req.force_all()) c->force_ = req.force_reason().empty() ? "forced by the client" : req.force_reason();
    return c;
  }

  const SelectionRules& rules() const override { return rules_; }
  BaselineLookup Lookup(const BaselineQuery&) override { return lookup_; }
  absl::StatusOr<TreeNow> ReadTree(const Inventory*, const std::vector<std::string>&) override {
    return tree_;  // hashed by the client, with the external paths GetBaseline gave it
  }
  std::string ForceReason(const std::string&) override { return force_; }

 private:
  SubmittedCheckout() = default;
  SelectionRules rules_;
  BaselineLookup lookup_;
  TreeNow tree_;
  std::string force_;
};

}  // namespace

Status SchedulerService::Select(grpc::ServerContext* ctx, const v1::SelectRequest* req,
                                v1::SelectResponse* resp) {
  if (Status a = Authorize(ctx, "Select"); !a.ok()) return a;
  absl::StatusOr<std::unique_ptr<SubmittedCheckout>> checkout = SubmittedCheckout::FromRequest(*req);
  if (!checkout.ok()) return Invalid(std::string(checkout.status().message()));
  const absl::Time start = absl::Now();
  SelectionOutcome out = SelectForCheckout(**checkout, baselines_, BaselineQuery{});
  ToProto(out.selection, out.baseline, resp);
  // The store's history (`ste report`), best effort: a store that cannot
  // take the row changes nothing of the answer.
  if (absl::StatusOr<std::unique_ptr<Store>> store = OpenStore(); store.ok()) {
    (void)AppendToHistory(store->get(),
                          HistoryEntryOf(out, absl::ToDoubleSeconds(absl::Now() - start), "", "scheduler"));
  }
  return Status::OK;
}

// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<SchedulerServer>> SchedulerServer::Start(SchedulerOptions options,
                                                                       Listen listen) {
  if (!listen.address.empty() && options.token.empty() && !IsLoopbackAddress(listen.address)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to listen on ", listen.address,
        " without a token: give --token-file, or listen on loopback (127.0.0.1:PORT) or a "
        "unix socket (unix:PATH)"));
  }
  if (listen.address.rfind("unix:", 0) == 0 && UnixSocketInUse(listen.address)) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", listen.address, ": another process listens there"));
  }
  std::unique_ptr<SchedulerServer> s(new SchedulerServer());
  s->max_message_bytes_ = listen.max_message_bytes > 0 ? listen.max_message_bytes : kDefaultMaxMessageBytes;
  s->service_ = std::make_unique<SchedulerService>(std::move(options));
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(s->max_message_bytes_);
  builder.SetMaxSendMessageSize(kDefaultMaxMessageBytes);
  // gRPC sets SO_REUSEPORT by default: a second scheduler on a taken port
  // would start, share its calls with the first, and each would fail the
  // other's builds as unknown. A taken port is an error instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(s->service_.get());
  int port = 0;
  if (!listen.address.empty()) {
    std::shared_ptr<grpc::ServerCredentials> creds;
    if (!listen.tls_cert.empty()) {
      grpc::SslServerCredentialsOptions ssl;
      ssl.pem_key_cert_pairs.push_back({listen.tls_key, listen.tls_cert});
      creds = grpc::SslServerCredentials(ssl);
    } else {
      creds = grpc::InsecureServerCredentials();
    }
    builder.AddListeningPort(listen.address, creds, &port);
  }
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || (!listen.address.empty() && port == 0 &&
                      listen.address.rfind("unix:", 0) != 0)) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", listen.address));
  }
  if (listen.address.rfind("unix:", 0) == 0) {
    s->address_ = listen.address;
  } else if (!listen.address.empty()) {
    s->address_ = absl::StrCat(listen.address.substr(0, listen.address.rfind(':')), ":", port);
  }
  // Only now, listening on its address (which no other process can): a
  // scheduler that could not start never claims a build.
  s->service_->StartOwnership();
  return s;
}

SchedulerServer::~SchedulerServer() { Shutdown("the scheduler stopped", absl::Seconds(5)); }

std::shared_ptr<grpc::Channel> SchedulerServer::InProcessChannel() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kDefaultMaxMessageBytes);
  args.SetMaxSendMessageSize(max_message_bytes_);
  return server_->InProcessChannel(args);
}

void SchedulerServer::Shutdown(const std::string& why, absl::Duration grace) {
  if (stopped_.exchange(true)) return;
  service_->Shutdown(why);
  if (!server_) return;  // Start failed: BuildAndStart gave no server
  server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(grace));
  server_->Wait();
}

void SchedulerServer::Wait() {
  if (server_) server_->Wait();
}

}  // namespace ste
