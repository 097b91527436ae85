// The scheduler: the gRPC service of proto/ste/v1/scheduler.proto, a thin
// adapter over BuildSession (record builds) and SelectForCheckout
// (selection queries, selection_pipeline.h) on one baseline store.
//
//   ste scheduler --listen ADDR   a SchedulerServer on a port, for workers on
//                                 many machines;
//   ste record (embedded)         the same service in process (LocalScheduler),
//                                 reached through an in-process channel by
//                                 local workers: one code path.
//
// Builds: CreateBuild begins a baseline ("building") and returns build id
// "b<baseline id>".
//
// Resumable builds (options.instance_id set: `ste scheduler`; the embedded
// `ste record` has none, and its builds end with its process). Each build
// is begun with an owner, this instance, and a build lease in the store
// (baseline_store.h "Resumable record builds"); accepted results are
// journaled in batches, and a Report stream is acknowledged only once its
// results are in the store. A thread renews the lease of every build this
// instance runs (every build_lease / 4) and sweeps the store's build rows:
//   - a build whose row names this instance (this scheduler restarted) or
//     whose owner's lease has expired (its scheduler was killed, or is
//     stuck) is claimed and resumed (BuildSession::Resume): workers that
//     call in are told to register again, their results of leases given
//     out before are taken once, only tests without an accepted result
//     are leased again, and watchers get the build's progress again;
//   - one whose lease expired more than abandon_after ago (no scheduler
//     came back to it in time) is claimed and marked failed instead: the
//     previous complete baseline stays in use;
//   - one another instance holds a live lease on is not touched. Calls
//     naming it are answered UNAVAILABLE ("run by scheduler X"), which
//     workers and clients retry (with several scheduler addresses, on
//     another one).
// A call naming a build that is not in memory claims and resumes it the
// same way at once (no need to wait for the sweep). A build that lost its
// claim (the store refuses its writes: another took it over) is dropped
// here; calls naming it get UNAVAILABLE. A building baseline without a
// build row (an embedded `ste record` running, or one begun by a ste
// before resumable builds) is never touched: NOT_FOUND.
// Shutdown() (SIGTERM) fails the running builds, after any baseline being
// stored has been stored: a stop asked for is the end of the build.

// Every call is authorised first (token, constant-time compare) when the
// service has a token; a refused call is logged with its peer.
#ifndef STE_SCHEDULER_SERVICE_H_
#define STE_SCHEDULER_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ste/baseline_loader.h"
#include "ste/build_session.h"
#include "ste/v1/scheduler.grpc.pb.h"

namespace ste {

struct SchedulerOptions {
  std::string store_url;   // sqlite:PATH or postgresql://...
  std::string store_root;  // relative sqlite paths and the PG blob cache
  std::string token;       // "" for none
  absl::Duration lease_timeout = absl::Seconds(30);
  absl::Duration heartbeat_interval = absl::Seconds(5);
  // The clock lease timeouts are measured on (tests move one by hand).
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // Resumable builds (see above): this scheduler's instance id, unique
  // among the schedulers of a store that run at once and the same across
  // restarts where it can be (`ste scheduler --instance-id`); "" for none.
  std::string instance_id;
  // How long a build stays this instance's without a renewal (on the
  // store's clock); another scheduler takes it over once it expires.
  absl::Duration build_lease = absl::Seconds(10);
  // A build nobody renewed for longer than this past its lease is failed,
  // not resumed.
  absl::Duration abandon_after = absl::Minutes(10);
  size_t journal_batch = 64;  // accepted results per journal transaction
  // One line per event; may be empty. Called from any thread, serialised.
  std::function<void(const std::string&)> log;
};

class SchedulerService final : public ste::v1::Scheduler::Service {
 public:
  explicit SchedulerService(SchedulerOptions options);
  ~SchedulerService() override;

  // Fails every running build with `why` (waiting for one being stored),
  // and stops renewing and sweeping.
  void Shutdown(const std::string& why);

  // Starts the thread of RenewAndSweep (with an instance id): called by
  // SchedulerServer::Start once it listens.
  void StartOwnership();

  // One pass of the ownership thread: renews this instance's builds,
  // drops the lost ones, resumes or fails what the store's build rows say
  // (see "Resumable builds"). Called by the thread; public for tests, and
  // never to be called while the thread runs (one store object of its own).
  void RenewAndSweep();

  grpc::Status CreateBuild(grpc::ServerContext* ctx, const v1::CreateBuildRequest* req,
                           v1::CreateBuildResponse* resp) override;
  grpc::Status RegisterWorker(grpc::ServerContext* ctx, const v1::RegisterWorkerRequest* req,
                              v1::RegisterWorkerResponse* resp) override;
  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                         v1::HeartbeatResponse* resp) override;
  grpc::Status Lease(grpc::ServerContext* ctx, const v1::LeaseRequest* req,
                     v1::LeaseResponse* resp) override;
  grpc::Status Report(grpc::ServerContext* ctx, grpc::ServerReader<v1::ReportMessage>* reader,
                      v1::ReportSummary* summary) override;
  grpc::Status WatchBuild(grpc::ServerContext* ctx, const v1::WatchBuildRequest* req,
                          grpc::ServerWriter<v1::BuildProgress>* writer) override;
  grpc::Status Select(grpc::ServerContext* ctx, const v1::SelectRequest* req,
                      v1::SelectResponse* resp) override;
  grpc::Status GetBaseline(grpc::ServerContext* ctx, const v1::GetBaselineRequest* req,
                           v1::GetBaselineResponse* resp) override;

 private:
  void Log(const std::string& line);
  grpc::Status Authorize(grpc::ServerContext* ctx, const char* method);
  // The build of `build_id`; NOT_FOUND (and a stale baseline marked failed)
  // when this run of the service does not know it.
  grpc::Status FindBuild(const std::string& build_id, std::shared_ptr<BuildSession>* out);
  // Splits "b3/w1" into the build and the coordinator's worker id.
  grpc::Status FindWorker(const std::string& worker_id, std::shared_ptr<BuildSession>* build,
                          std::string* worker);
  absl::StatusOr<std::unique_ptr<Store>> OpenStore();
  BuildSession::Options SessionOptions();
  // Claims build `baseline` for this instance and resumes it (or fails
  // it, abandoned, when `abandoned`). *out is the session, or null when
  // the build is not this instance's to take (`why` says whose it is).
  absl::Status ClaimAndResume(int64_t baseline, bool abandoned, std::shared_ptr<BuildSession>* out,
                              std::string* why);
  void OwnershipLoop();
  // Authorizes, then finds the worker's build; *build is reset (and OK
  // returned) when that build is over: the caller answers build_done.
  grpc::Status RunningWorker(grpc::ServerContext* ctx, const char* method,
                             const std::string& worker_id, std::shared_ptr<BuildSession>* build,
                             std::string* worker);
  // Baselines loaded for GetBaseline and Select: the last few kept, so a
  // client's GetBaseline and Select load one once.
  static constexpr size_t kLoadedBaselinesKept = 4;

  const SchedulerOptions options_;
  CachingBaselineSource baselines_;
  std::mutex log_mu_;
  std::mutex mu_;  // guards builds_, shutting_down_
  std::condition_variable stop_cv_;  // with mu_: shutting_down_ set
  std::map<std::string, std::shared_ptr<BuildSession>> builds_;
  bool shutting_down_ = false;
  std::mutex resume_mu_;  // one claim and resumption at a time
  std::thread ownership_;  // RenewAndSweep, with an instance id
  std::unique_ptr<Store> sweep_store_;  // RenewAndSweep's only
};

// A gRPC server running a SchedulerService.
class SchedulerServer {
 public:
  struct Listen {
    std::string address;     // HOST:PORT (port 0: any free port) or unix:PATH;
                             // "" for in-process only
    std::string tls_cert;    // PEM; with tls_key: TLS
    std::string tls_key;
    int max_message_bytes = 0;  // 0: kDefaultMaxMessageBytes
  };
  // Refuses a non-loopback address without a token (FailedPrecondition),
  // and an address it cannot bind (Unavailable).
  static absl::StatusOr<std::unique_ptr<SchedulerServer>> Start(SchedulerOptions options,
                                                                 Listen listen);
  ~SchedulerServer();

  // The address it listens on, with the port it got ("" in process only).
  const std::string& address() const { return address_; }
  // A channel to it that needs no network (same process).
  std::shared_ptr<grpc::Channel> InProcessChannel();
  // Fails running builds, then stops, waiting up to `grace` for calls.
  void Shutdown(const std::string& why, absl::Duration grace);
  void Wait();

 private:
  SchedulerServer() = default;
  std::unique_ptr<SchedulerService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  int max_message_bytes_ = 0;
  std::atomic<bool> stopped_{false};
};

}  // namespace ste

#endif  // STE_SCHEDULER_SERVICE_H_
