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
// "b<baseline id>". A build the service does not know (it was started by an
// earlier run of the scheduler, killed since) is marked failed in the store
// on first mention, and reported as gone: a killed scheduler never leaves a
// half-written baseline served, and the previous complete one stays in use.
// Shutdown() (SIGTERM) fails the running builds the same way, after any
// baseline being stored has been stored.
//
// Every call is authorised first (token, constant-time compare) when the
// service has a token; a refused call is logged with its peer.
#ifndef STE_SCHEDULER_SERVICE_H_
#define STE_SCHEDULER_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

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
  // One line per event; may be empty. Called from any thread, serialised.
  std::function<void(const std::string&)> log;
};

class SchedulerService final : public ste::v1::Scheduler::Service {
 public:
  explicit SchedulerService(SchedulerOptions options);
  ~SchedulerService() override;

  // Fails every running build with `why` (waiting for one being stored).
  void Shutdown(const std::string& why);

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
  absl::StatusOr<std::unique_ptr<BaselineStore>> OpenStore();
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
  std::map<std::string, std::shared_ptr<BuildSession>> builds_;
  bool shutting_down_ = false;
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
