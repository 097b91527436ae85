// The scheduler: the gRPC service of proto/ste/v1/scheduler.proto. It
// converts messages and streams; the work is in three units below it:
//   - OwnedBuilds (build_ownership.h): the builds this scheduler runs and
//     whose each build is: CreateBuild begins one there, every call naming
//     a build finds it there (which may claim and resume it from the
//     store), and its thread renews, sweeps and takes over (failover);
//   - BuildSession (build_session.h): one build's workers, leases,
//     results, journal and stored baseline;
//   - SelectForCheckout (selection_pipeline.h): selection queries.
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
// `ste record` has none, and its builds end with its process): each build
// has an owner, this instance, and a build lease in the store; what is
// renewed, resumed, taken over, failed as abandoned or left alone, and
// when, is written at the top of build_ownership.h. Here: a Report stream
// is acknowledged only once its results are in the store (BuildSession::
// Flush); a call naming a build another instance runs, or one this
// instance lost, is UNAVAILABLE (workers and clients retry, with several
// scheduler addresses on another one); a building baseline without a
// build row is NOT_FOUND and never touched.
// Shutdown() (SIGTERM) fails the running builds, after any baseline being
// stored has been stored: a stop asked for is the end of the build.

// Every call is authorised first (token, constant-time compare) when the
// service has a token; a refused call is logged with its peer.
#ifndef STE_SCHEDULER_SERVICE_H_
#define STE_SCHEDULER_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ste/baseline_loader.h"
#include "ste/build_ownership.h"
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
  // tests.unit = "case" for every build (BuildSession::Options::cases): the
  // embedded `ste record` sets it; `ste scheduler` keeps cases for the
  // builds whose CreateBuild asks (its `cases`, which `ste record
  // --scheduler` sets from ste.toml).
  bool cases = false;
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

  // Starts the ownership thread (OwnedBuilds::Start, with an instance
  // id): called by SchedulerServer::Start once it listens.
  void StartOwnership();

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
  // The build of `build_id` (OwnedBuilds::Find, its status as is).
  grpc::Status FindBuild(const std::string& build_id, std::shared_ptr<BuildSession>* out);
  // Splits "b3/w1" into the build and the coordinator's worker id.
  grpc::Status FindWorker(const std::string& worker_id, std::shared_ptr<BuildSession>* build,
                          std::string* worker);
  absl::StatusOr<std::unique_ptr<Store>> OpenStore();
  OwnedBuilds::Options OwnershipOptions();
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
  OwnedBuilds builds_;  // last: its thread stops before the rest goes
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
