// The scheduler service through a real server: every test starts a
// SchedulerServer on 127.0.0.1:0 (or a unix socket) over a fresh SQLite
// store in its own temp directory, and talks to it with raw stubs on real
// channels (MakeChannel), so auth, TLS, message limits and the wire rules
// of proto/ste/v1/scheduler.proto are exercised as a remote worker sees
// them. Results are hand-built messages (no test is run), which lets each
// test send exactly the malformed or late message it is about.
//
// Longer than ~600 lines on purpose: one test per wire rule of the proto,
// all on the same fixture and message builders (sections: auth and
// listening, reports, restarts, watching and selecting).
#include "ste/scheduler_service.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "ste/baseline_loader.h"
#include "ste/baseline_store.h"
#include "ste/inventory.h"
#include "ste/rpc_common.h"
#include "ste/selection_index.h"
#include "ste/test_recorder.h"
#include "ste/v1/scheduler.grpc.pb.h"
#include "report_test_messages.h"
#include "ste/worker.h"
#include "test_support.h"

namespace ste {
namespace {

using grpc::StatusCode;
using report_test::Paths;
using report_test::Result;

// ---------------------------------------------------------------------------
// Helpers.

::testing::AssertionResult HasStatus(const grpc::Status& s, StatusCode code,
                                     const std::string& part) {
  if (s.error_code() == code &&
      s.error_message().find(part) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got code " << s.error_code() << " '" << s.error_message()
         << "', want code " << code << " with '" << part << "'";
}

::testing::AssertionResult IsOk(const grpc::Status& s) {
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "code " << s.error_code() << ": " << s.error_message();
}

std::string EmptyInventory() {
  return Inventory::FromEntries({}, 0)->Serialize();
}

SchedulerServer::Listen At(const std::string& address) {
  SchedulerServer::Listen listen;
  listen.address = address;
  return listen;
}

int64_t BaselineOf(const std::string& build_id) {
  return std::stoll(build_id.substr(1));
}

v1::CreateBuildRequest BuildRequest(
    const std::vector<std::string>& tests,
    const std::string& inventory = EmptyInventory(), int64_t mri = 1,
    bool no_external = false) {
  v1::CreateBuildRequest req;
  req.set_commit("c" + std::to_string(mri));
  req.set_mri(mri);
  for (const std::string& t : tests) req.add_tests()->set_test(t);
  req.set_inventory(inventory);
  req.set_no_external(no_external);
  return req;
}

v1::ReportMessage External(const std::vector<InventoryEntry>& entries) {
  v1::ReportMessage m;
  m.mutable_external()->set_inventory(
      Inventory::FromEntries(entries, 0)->Serialize());
  return m;
}

InventoryEntry Entry(const std::string& path, FileType type, uint64_t hash) {
  InventoryEntry e;
  e.path = path;
  e.type = type;
  e.mode = type == FileType::kDirectory ? 040755 : 0100644;
  e.size = type == FileType::kRegular ? 10 : 0;
  e.hash = XXH128_hash_t{hash, 0};
  return e;
}

// Every key of an index as "kind:path".
std::set<std::string> Keys(const SelectionIndex& index) {
  std::set<std::string> keys;
  for (size_t i = 0; i < index.key_count(); i++)
    keys.insert(DepKeyDebugString(index.KeyAt(i).value()));
  return keys;
}

// A client of one server: raw stub, one context per call.
struct Client {
  Client(const std::string& address, RpcAuth a)
      : stub(v1::Scheduler::NewStub(MakeChannel(address, a))),
        auth(std::move(a)) {}

  std::unique_ptr<grpc::ClientContext> Context() {
    return NewCallContext(auth, 10);
  }

  grpc::Status CreateBuild(const v1::CreateBuildRequest& req,
                           std::string* build_id = nullptr) {
    v1::CreateBuildResponse resp;
    grpc::Status s = stub->CreateBuild(Context().get(), req, &resp);
    if (build_id) *build_id = resp.build_id();
    return s;
  }
  grpc::Status Register(const std::string& build_id,
                        std::string* worker_id = nullptr) {
    v1::RegisterWorkerRequest req;
    req.set_build_id(build_id);
    req.set_worker_name("test");
    req.set_slots(1);
    v1::RegisterWorkerResponse resp;
    grpc::Status s = stub->RegisterWorker(Context().get(), req, &resp);
    if (worker_id) *worker_id = resp.worker_id();
    return s;
  }
  grpc::Status Heartbeat(const std::string& worker_id) {
    v1::HeartbeatRequest req;
    req.set_worker_id(worker_id);
    v1::HeartbeatResponse resp;
    return stub->Heartbeat(Context().get(), req, &resp);
  }
  // Leases up to `n` tests; `leases` maps test -> lease id.
  grpc::Status Lease(const std::string& worker_id, uint32_t n,
                     std::map<std::string, uint64_t>* leases,
                     bool* done = nullptr) {
    v1::LeaseRequest req;
    req.set_worker_id(worker_id);
    req.set_max_tests(n);
    v1::LeaseResponse resp;
    grpc::Status s = stub->Lease(Context().get(), req, &resp);
    for (const v1::Lease& l : resp.leases()) (*leases)[l.test()] = l.lease_id();
    if (done) *done = resp.build_done();
    return s;
  }
  // One Report stream: `worker_id` (if not empty) goes in the first message.
  grpc::Status Report(const std::string& worker_id,
                      std::vector<v1::ReportMessage> messages,
                      v1::ReportSummary* summary = nullptr) {
    if (!messages.empty() && !worker_id.empty())
      messages[0].set_worker_id(worker_id);
    auto ctx = Context();
    v1::ReportSummary ignored;
    v1::ReportSummary* out = summary ? summary : &ignored;
    std::unique_ptr<grpc::ClientWriter<v1::ReportMessage>> w =
        stub->Report(ctx.get(), out);
    for (const v1::ReportMessage& m : messages) {
      if (!w->Write(m)) break;  // the server has answered already
    }
    w->WritesDone();
    return w->Finish();
  }
  // Every message of a WatchBuild stream.
  grpc::Status Watch(const std::string& build_id,
                     std::vector<v1::BuildProgress>* out) {
    v1::WatchBuildRequest req;
    req.set_build_id(build_id);
    auto ctx = Context();
    auto reader = stub->WatchBuild(ctx.get(), req);
    v1::BuildProgress p;
    while (reader->Read(&p)) out->push_back(p);
    return reader->Finish();
  }
  grpc::Status GetBaseline(int64_t mri, int64_t id,
                           v1::GetBaselineResponse* resp) {
    v1::GetBaselineRequest req;
    req.set_mri(mri);
    req.set_baseline_id(id);
    return stub->GetBaseline(Context().get(), req, resp);
  }
  grpc::Status Select(const v1::SelectRequest& req, v1::SelectResponse* resp) {
    return stub->Select(Context().get(), req, resp);
  }

  std::unique_ptr<v1::Scheduler::Stub> stub;
  RpcAuth auth;
};

// A registered worker holding leases of a build.
struct Joined {
  std::string build_id;
  std::string worker_id;
  std::map<std::string, uint64_t> lease;  // test -> lease id
};

class SchedulerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = NewDir(); }
  void TearDown() override {
    for (const std::string& d : dirs_) std::filesystem::remove_all(d);
  }

  std::string NewDir() {
    dirs_.push_back(ste::testing::MakeTempDir());
    return dirs_.back();
  }
  static std::string UrlOf(const std::string& dir) {
    return "sqlite:" + dir + "/ste.db";
  }

  SchedulerOptions Options(const std::string& token = "",
                           const std::string& dir = "") {
    SchedulerOptions o;
    o.store_url = UrlOf(dir.empty() ? dir_ : dir);
    o.store_root = dir.empty() ? dir_ : dir;
    o.token = token;
    return o;
  }
  std::unique_ptr<SchedulerServer> Start(SchedulerOptions o,
                                         SchedulerServer::Listen listen = {}) {
    if (listen.address.empty()) listen.address = "127.0.0.1:0";
    absl::StatusOr<std::unique_ptr<SchedulerServer>> s =
        SchedulerServer::Start(o, listen);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }
  std::unique_ptr<Store> OpenStore(const std::string& dir = "") {
    absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(
        UrlOf(dir.empty() ? dir_ : dir), dir.empty() ? dir_ : dir);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }
  LoadedBaseline Load(int64_t id, const std::string& dir = "") {
    std::unique_ptr<Store> store = OpenStore(dir);
    absl::StatusOr<LoadedBaseline> b =
        LoadCompletedBaseline(*store, INT64_MAX, id);
    EXPECT_TRUE(b.ok()) << b.status();
    return b.ok() ? *std::move(b) : LoadedBaseline{};
  }

  // CreateBuild of `tests`, one worker registered, every test leased.
  Joined CreateAndLease(Client& c, const v1::CreateBuildRequest& req) {
    Joined j;
    EXPECT_TRUE(IsOk(c.CreateBuild(req, &j.build_id)));
    EXPECT_TRUE(IsOk(c.Register(j.build_id, &j.worker_id)));
    EXPECT_TRUE(IsOk(c.Lease(j.worker_id, req.tests_size(), &j.lease)));
    EXPECT_EQ(j.lease.size(), static_cast<size_t>(req.tests_size()));
    return j;
  }

  std::string dir_;
  std::vector<std::string> dirs_;
};

// ---------------------------------------------------------------------------
// Auth and listening.

TEST(RpcCommonTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("Bearer s3cret", "Bearer s3cret"));
  EXPECT_TRUE(ConstantTimeEquals(std::string_view("a\0b", 3),
                                 std::string_view("a\0b", 3)));
  EXPECT_FALSE(ConstantTimeEquals("Bearer s3cret", "Bearer s3creT"));
  EXPECT_FALSE(ConstantTimeEquals("xearer s3cret", "Bearer s3cret"));
  // Different lengths, and a prefix either way.
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_FALSE(ConstantTimeEquals("a", ""));
  EXPECT_FALSE(ConstantTimeEquals("Bearer s3cre", "Bearer s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("Bearer s3cret", "Bearer s3cre"));
  EXPECT_FALSE(ConstantTimeEquals("Bearer s3cret", "Bearer s3cretX"));
  // A longer one padded with what a zero-padding compare would not see.
  EXPECT_FALSE(ConstantTimeEquals(std::string_view("ab\0", 3), "ab"));
  EXPECT_FALSE(ConstantTimeEquals("\xff", "\x7f"));
}

TEST(RpcCommonTest, IsLoopbackAddress) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:0"));
  EXPECT_TRUE(IsLoopbackAddress("127.1.2.3:8080"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:50051"));
  EXPECT_TRUE(IsLoopbackAddress("localhost:50051"));
  EXPECT_TRUE(IsLoopbackAddress("unix:/tmp/ste.sock"));
  EXPECT_TRUE(IsLoopbackAddress("unix:relative.sock"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0:0"));
  EXPECT_FALSE(IsLoopbackAddress("[::]:0"));
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.1:50051"));
  EXPECT_FALSE(IsLoopbackAddress("example.com:50051"));
  EXPECT_FALSE(IsLoopbackAddress("localhost.example.com:50051"));
  EXPECT_FALSE(IsLoopbackAddress("128.0.0.1:1"));
  EXPECT_FALSE(IsLoopbackAddress(
      "127.0.0.1"));  // no port: not an address gRPC listens on
  EXPECT_FALSE(IsLoopbackAddress(""));
  // A host name that merely starts with "127." resolves wherever its DNS says.
  EXPECT_FALSE(IsLoopbackAddress("127.example.com:80"));
  EXPECT_FALSE(IsLoopbackAddress("127.0.0.1.nip.io:80"));
}

TEST_F(SchedulerServiceTest,
       EveryRpcRefusesAMissingOrWrongTokenAndTakesTheRightOne) {
  // On a unix socket in the temp dir (the TCP listener is covered below).
  std::unique_ptr<SchedulerServer> server =
      Start(Options("s3cret"), At("unix:" + dir_ + "/scheduler.sock"));
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->address(), "unix:" + dir_ + "/scheduler.sock");

  struct Bad {
    RpcAuth auth;
    std::string why;
  };
  for (const Bad& bad :
       {Bad{RpcAuth{}, "no token"}, Bad{RpcAuth{"s3creT", ""}, "wrong token"},
        Bad{RpcAuth{"s3cre", ""}, "wrong token"},
        Bad{RpcAuth{"s3cretX", ""}, "wrong token"}}) {
    SCOPED_TRACE(bad.auth.token);
    Client c(server->address(), bad.auth);
    std::map<std::string, uint64_t> leases;
    EXPECT_TRUE(HasStatus(c.CreateBuild(BuildRequest({"t/a.py"})),
                          StatusCode::UNAUTHENTICATED, bad.why));
    EXPECT_TRUE(
        HasStatus(c.Register("b1"), StatusCode::UNAUTHENTICATED, bad.why));
    EXPECT_TRUE(
        HasStatus(c.Heartbeat("b1/w1"), StatusCode::UNAUTHENTICATED, bad.why));
    EXPECT_TRUE(HasStatus(c.Lease("b1/w1", 1, &leases),
                          StatusCode::UNAUTHENTICATED, bad.why));
    EXPECT_TRUE(HasStatus(c.Report("b1/w1", {Paths(0, {"a"})}),
                          StatusCode::UNAUTHENTICATED, bad.why));
    std::vector<v1::BuildProgress> progress;
    EXPECT_TRUE(HasStatus(c.Watch("b1", &progress), StatusCode::UNAUTHENTICATED,
                          bad.why));
    EXPECT_TRUE(progress.empty());
    v1::GetBaselineResponse base;
    EXPECT_TRUE(HasStatus(c.GetBaseline(INT64_MAX, 0, &base),
                          StatusCode::UNAUTHENTICATED, bad.why));
    v1::SelectResponse sel;
    EXPECT_TRUE(HasStatus(c.Select(v1::SelectRequest(), &sel),
                          StatusCode::UNAUTHENTICATED, bad.why));
  }
  {
    // The token itself without "Bearer ".
    Client c(server->address(), RpcAuth{});
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "s3cret");
    v1::GetBaselineResponse resp;
    EXPECT_TRUE(
        HasStatus(c.stub->GetBaseline(&ctx, v1::GetBaselineRequest(), &resp),
                  StatusCode::UNAUTHENTICATED, "wrong token"));
  }
  // Nothing of the refused calls happened.
  std::unique_ptr<Store> store = OpenStore();
  EXPECT_TRUE(store->List()->empty());

  Client c(server->address(), RpcAuth{"s3cret", ""});
  std::string build, worker;
  ASSERT_TRUE(IsOk(c.CreateBuild(BuildRequest({"t/a.py"}), &build)));
  ASSERT_TRUE(IsOk(c.Register(build, &worker)));
  EXPECT_TRUE(IsOk(c.Heartbeat(worker)));
  std::map<std::string, uint64_t> leases;
  ASSERT_TRUE(IsOk(c.Lease(worker, 1, &leases)));
  v1::ReportSummary summary;
  ASSERT_TRUE(IsOk(c.Report(
      worker, {Paths(0, {"t/a.py"}), Result(leases["t/a.py"], "t/a.py", {0})},
      &summary)));
  EXPECT_EQ(summary.accepted(), 1u);
  std::vector<v1::BuildProgress> progress;
  ASSERT_TRUE(IsOk(c.Watch(build, &progress)));
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), v1::BUILD_STATE_COMPLETE);
  v1::GetBaselineResponse base;
  ASSERT_TRUE(IsOk(c.GetBaseline(INT64_MAX, 0, &base)));
  EXPECT_TRUE(base.found());
  v1::SelectRequest req;
  req.set_config(
      "[tests]\ninclude = [\"t/*.py\"]\n[runner]\ncommand = \"sh {test}\"\n");
  req.set_inventory(EmptyInventory());
  v1::SelectResponse sel;
  EXPECT_TRUE(IsOk(c.Select(req, &sel)));
  // The selection it made is in the store's history (`ste report`).
  absl::StatusOr<std::vector<SelectionEntry>> history = OpenStore()->Selections(0);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ(history->back().origin, "scheduler");
  const char* mode = sel.mode() == v1::SELECTION_MODE_ALL      ? "all"
                     : sel.mode() == v1::SELECTION_MODE_SUBSET ? "subset"
                                                               : "none";
  EXPECT_EQ(history->back().mode, mode);
}

TEST_F(SchedulerServiceTest, NonLoopbackNeedsAToken) {
  for (const char* address : {"0.0.0.0:0", "[::]:0"}) {
    absl::StatusOr<std::unique_ptr<SchedulerServer>> refused =
        SchedulerServer::Start(Options(), At(address));
    ASSERT_FALSE(refused.ok()) << address;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find("without a token"),
              std::string::npos)
        << refused.status();
  }
  std::unique_ptr<SchedulerServer> server =
      Start(Options("tok"), At("0.0.0.0:0"));
  ASSERT_NE(server, nullptr);
  const std::string& address = server->address();
  ASSERT_EQ(address.rfind("0.0.0.0:", 0), 0u) << address;
  std::string port = address.substr(address.rfind(':') + 1);
  EXPECT_NE(port, "0");
  Client c("127.0.0.1:" + port, RpcAuth{"tok", ""});
  v1::GetBaselineResponse base;
  ASSERT_TRUE(IsOk(c.GetBaseline(INT64_MAX, 0, &base)));
  EXPECT_FALSE(base.found());
  Client anonymous("127.0.0.1:" + port, RpcAuth{});
  EXPECT_TRUE(HasStatus(anonymous.GetBaseline(INT64_MAX, 0, &base),
                        StatusCode::UNAUTHENTICATED, "no token"));
}

// gRPC builds no server at all then: Start must not touch it (it did, in
// the destructor of the half-made SchedulerServer: a crash).
TEST_F(SchedulerServiceTest, AnAddressItCannotBindIsUnavailable) {
  absl::StatusOr<std::unique_ptr<SchedulerServer>> s = SchedulerServer::Start(
      Options(), At("unix:" + dir_ + "/no/such/dir/s.sock"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable) << s.status();
  EXPECT_NE(s.status().message().find("cannot listen"), std::string::npos)
      << s.status();
}

// A second scheduler on a port already taken must not start: with
// SO_REUSEPORT both would listen, the kernel would split the calls between
// them, and each would fail the builds of the other as unknown.
TEST_F(SchedulerServiceTest, APortInUseIsUnavailable) {
  std::unique_ptr<SchedulerServer> first = Start(Options());
  ASSERT_NE(first, nullptr);
  absl::StatusOr<std::unique_ptr<SchedulerServer>> second =
      SchedulerServer::Start(Options(), At(first->address()));
  ASSERT_FALSE(second.ok()) << "two schedulers listen on " << first->address();
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable)
      << second.status();
  EXPECT_NE(
      second.status().message().find("cannot listen on " + first->address()),
      std::string::npos)
      << second.status();
  // The first one is still the one answering.
  Client c(first->address(), RpcAuth{});
  v1::GetBaselineResponse base;
  EXPECT_TRUE(IsOk(c.GetBaseline(INT64_MAX, 0, &base)));
}

// The same on a unix socket (gRPC would unlink the first one's socket and
// bind a new one in its place); a stale socket file nobody listens on is
// taken over.
TEST_F(SchedulerServiceTest, AUnixSocketInUseIsUnavailable) {
  const std::string address = "unix:" + dir_ + "/s.sock";
  {
    std::unique_ptr<SchedulerServer> first = Start(Options(), At(address));
    ASSERT_NE(first, nullptr);
    for (const std::string& same : {address, "unix://" + dir_ + "/s.sock"}) {
      absl::StatusOr<std::unique_ptr<SchedulerServer>> second =
          SchedulerServer::Start(Options(), At(same));
      ASSERT_FALSE(second.ok()) << "two schedulers on " << same;
      EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable)
          << second.status();
      EXPECT_NE(second.status().message().find("another process listens there"),
                std::string::npos)
          << second.status();
    }
    Client c(address, RpcAuth{});
    v1::GetBaselineResponse base;
    EXPECT_TRUE(IsOk(c.GetBaseline(INT64_MAX, 0, &base)));
  }
  // A socket file left behind (nothing listening): a new scheduler starts.
  {
    const std::string stale = dir_ + "/stale.sock";
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, stale.c_str(), stale.size());
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)), 0);
    close(fd);  // the socket file stays, nobody listens
  }
  std::unique_ptr<SchedulerServer> again =
      Start(Options(), At("unix:" + dir_ + "/stale.sock"));
  ASSERT_NE(again, nullptr);
  std::unique_ptr<SchedulerServer> restarted = Start(Options(), At(address));
  ASSERT_NE(restarted, nullptr);
  Client c(address, RpcAuth{});
  v1::GetBaselineResponse base;
  EXPECT_TRUE(IsOk(c.GetBaseline(INT64_MAX, 0, &base)));
}

TEST_F(SchedulerServiceTest, Tls) {
  ste::testing::Spawned made = ste::testing::Spawn(
      {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
       "key.pem", "-out", "cert.pem", "-days", "1", "-subj", "/CN=localhost",
       "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"},
      {}, dir_);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::string cert = ste::testing::ReadFile(dir_ + "/cert.pem");
  std::string key = ste::testing::ReadFile(dir_ + "/key.pem");
  ASSERT_NE(cert.find("BEGIN CERTIFICATE"), std::string::npos);

  SchedulerServer::Listen listen;
  listen.address = "127.0.0.1:0";
  listen.tls_cert = cert;
  listen.tls_key = key;
  std::unique_ptr<SchedulerServer> server = Start(Options("tok"), listen);
  ASSERT_NE(server, nullptr);
  std::string port = server->address().substr(server->address().rfind(':') + 1);

  Client tls("localhost:" + port, RpcAuth{"tok", cert});
  std::string build;
  ASSERT_TRUE(IsOk(tls.CreateBuild(BuildRequest({"t/a.py"}), &build)));
  EXPECT_EQ(build.rfind("b", 0), 0u);
  v1::GetBaselineResponse base;
  EXPECT_TRUE(IsOk(tls.GetBaseline(INT64_MAX, 0, &base)));

  // Plaintext to the TLS port: no connection, whatever the token.
  Client plain("127.0.0.1:" + port, RpcAuth{"tok", ""});
  grpc::Status s = plain.GetBaseline(INT64_MAX, 0, &base);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  std::string message = absl::AsciiStrToLower(s.error_message());
  EXPECT_NE(message.find("connect"), std::string::npos) << s.error_message();

  // No key, or one that is not PEM: gRPC builds no server, and Start says
  // so as for an address it cannot bind.
  for (const std::string& bad_key : {std::string(), std::string("not a key")}) {
    SchedulerServer::Listen wrong = listen;
    wrong.tls_key = bad_key;
    absl::StatusOr<std::unique_ptr<SchedulerServer>> refused =
        SchedulerServer::Start(Options("tok"), wrong);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable)
        << refused.status();
    EXPECT_NE(refused.status().message().find("cannot listen on 127.0.0.1:0"),
              std::string::npos)
        << refused.status();
  }
}

TEST_F(SchedulerServiceTest, AMessageOverTheLimitIsRefusedAndTheServerGoesOn) {
  SchedulerServer::Listen listen;
  listen.max_message_bytes = 64 << 10;
  std::unique_ptr<SchedulerServer> server = Start(Options(), listen);
  ASSERT_NE(server, nullptr);
  Client c(server->address(), RpcAuth{});
  v1::CreateBuildRequest big = BuildRequest({"t/a.py"});
  big.set_inventory(std::string(1 << 20, 'x'));
  EXPECT_TRUE(HasStatus(c.CreateBuild(big), StatusCode::RESOURCE_EXHAUSTED,
                        "larger than max"));
  // Nothing begun in the store, and the next (small) call is served.
  EXPECT_TRUE(OpenStore()->List()->empty());
  std::string build;
  EXPECT_TRUE(IsOk(c.CreateBuild(BuildRequest({"t/a.py"}), &build)));
  EXPECT_EQ(build, "b1");
}

// ---------------------------------------------------------------------------
// Reports.

TEST_F(SchedulerServiceTest,
       MalformedReportsAreRefusedWholeAndTheBuildStillCompletes) {
  std::unique_ptr<SchedulerServer> server = Start(Options());
  ASSERT_NE(server, nullptr);
  Client c(server->address(), RpcAuth{});
  const std::string a = "t/test_a.py", b = "t/test_b.py", ok = "t/test_c.py";
  Joined j = CreateAndLease(c, BuildRequest({a, b, ok}));
  const std::string w = j.worker_id;

  // Bad paths in a table: the stream is refused, naming the path.
  struct BadPath {
    std::string path;
    std::string says;
  };
  for (const BadPath& bad :
       {BadPath{"../etc/passwd", "'../etc/passwd'"},
        BadPath{"a/../../b", "'a/../../b'"},
        BadPath{std::string("a\0b", 3), "NUL byte"}, BadPath{"a//b", "'a//b'"},
        BadPath{"/a/./b", "not normalised: '/a/./b'"}, BadPath{"./a", "'./a'"},
        BadPath{"", "empty path"}}) {
    SCOPED_TRACE(bad.says);
    EXPECT_TRUE(HasStatus(c.Report(w, {Paths(0, {"lib/fine.py", bad.path})}),
                          StatusCode::INVALID_ARGUMENT, bad.says));
  }
  // The first message does not name the worker.
  EXPECT_TRUE(HasStatus(c.Report("", {Paths(0, {"lib/fine.py"})}),
                        StatusCode::INVALID_ARGUMENT, "must name its worker"));
  // A second table that does not continue the first.
  EXPECT_TRUE(HasStatus(c.Report(w, {Paths(0, {"x", "y"}), Paths(1, {"z"})}),
                        StatusCode::INVALID_ARGUMENT,
                        "path table starts at 1, expected 2"));
  // A path id not in the table: test a's result is refused whole.
  EXPECT_TRUE(HasStatus(c.Report(w, {Paths(0, {"lib/refused_a.py"}),
                                     Result(j.lease[a], a, {0, 7})}),
                        StatusCode::INVALID_ARGUMENT,
                        "path id 7 not in the stream's path table"));
  // A lease never issued, and a test that is not the lease's.
  EXPECT_TRUE(HasStatus(
      c.Report(w, {Paths(0, {"lib/refused.py"}), Result(999, ok, {0})}),
      StatusCode::INVALID_ARGUMENT, "no lease 999"));
  EXPECT_TRUE(HasStatus(
      c.Report(w, {Paths(0, {"lib/refused.py"}), Result(j.lease[ok], b, {0})}),
      StatusCode::INVALID_ARGUMENT, "is for 't/test_c.py', not 't/test_b.py'"));
  // Test b's result in another test's scope: refused alone, taken as an
  // error of b; the stream goes on, and the well-behaved result after it
  // completes the build.
  v1::ReportSummary summary;
  ASSERT_TRUE(IsOk(c.Report(w,
                            {Paths(0, {"lib/refused_b.py"}), Result(j.lease[b], b, {0}, "//r/other.py"),
                             Paths(1, {"lib/c.py", ok}), Result(j.lease[ok], ok, {1, 2})},
                            &summary)));
  EXPECT_EQ(summary.refused(), 1u);
  EXPECT_EQ(summary.accepted(), 1u);
  EXPECT_EQ(summary.duplicates(), 0u);

  // a and b were taken as errors, opaque; c as it said.
  int64_t id = BaselineOf(j.build_id);
  std::unique_ptr<Store> store = OpenStore();
  EXPECT_EQ(store->Get(id)->state, BaselineState::kComplete);
  absl::StatusOr<std::vector<TestResult>> results = store->Results(id);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 3u);
  EXPECT_EQ((*results)[0].test, a);
  EXPECT_EQ((*results)[0].outcome, TestOutcome::kError);
  EXPECT_TRUE((*results)[0].opaque);
  EXPECT_EQ((*results)[1].test, b);
  EXPECT_EQ((*results)[1].outcome, TestOutcome::kError);
  EXPECT_TRUE((*results)[1].opaque);
  EXPECT_EQ((*results)[2].test, ok);
  EXPECT_EQ((*results)[2].outcome, TestOutcome::kPassed);
  EXPECT_FALSE((*results)[2].opaque);

  // Nothing of the refused results (nor of the refused tables) is a key.
  LoadedBaseline loaded = Load(id);
  ASSERT_NE(loaded.index, nullptr);
  EXPECT_EQ(Keys(*loaded.index),
            (std::set<std::string>{"content:lib/c.py", "content:" + ok}));
  EXPECT_TRUE(loaded.index->opaque(*loaded.index->FindTest(ScopeOfTest(a))));
  EXPECT_TRUE(loaded.index->opaque(*loaded.index->FindTest(ScopeOfTest(b))));
  EXPECT_FALSE(loaded.index->opaque(*loaded.index->FindTest(ScopeOfTest(ok))));

  // Watchers are told why.
  std::vector<v1::BuildProgress> progress;
  ASSERT_TRUE(IsOk(c.Watch(j.build_id, &progress)));
  ASSERT_EQ(progress.size(), 1u);
  ASSERT_EQ(progress[0].finished_size(), 3);
  EXPECT_EQ(progress[0].finished(0).test(), a);
  EXPECT_EQ(progress[0].finished(0).outcome(), v1::TEST_OUTCOME_ERROR);
  EXPECT_NE(progress[0].finished(0).detail().find("its report was refused: "),
            std::string::npos)
      << progress[0].finished(0).detail();
}

TEST_F(SchedulerServiceTest, AnAbsolutePathNeedsItsExternalFilesEntryFirst) {
  std::unique_ptr<SchedulerServer> server = Start(Options());
  ASSERT_NE(server, nullptr);
  Client c(server->address(), RpcAuth{});
  const std::string a = "t/test_a.py", b = "t/test_b.py";
  const std::string ext = "/usr/lib/python3/x.py";
  Joined j = CreateAndLease(c, BuildRequest({a, b}));

  // Without it: the result is refused, taken as an error of a (opaque).
  v1::ReportSummary refused;
  ASSERT_TRUE(IsOk(c.Report(j.worker_id, {Paths(0, {ext}), Result(j.lease[a], a, {0})}, &refused)));
  EXPECT_EQ(refused.refused(), 1u);
  EXPECT_EQ(refused.accepted(), 0u);
  // An external entry must be absolute.
  EXPECT_TRUE(HasStatus(
      c.Report(j.worker_id,
               {External({Entry("lib/x.py", FileType::kRegular, 1)})}),
      StatusCode::INVALID_ARGUMENT, "must be an absolute path"));
  v1::ReportSummary summary;
  ASSERT_TRUE(IsOk(c.Report(j.worker_id,
                            {External({Entry(ext, FileType::kRegular, 42)}),
                             Paths(0, {ext, b}), Result(j.lease[b], b, {0, 1})},
                            &summary)));
  EXPECT_EQ(summary.accepted(), 1u);

  int64_t id = BaselineOf(j.build_id);
  LoadedBaseline loaded = Load(id);
  ASSERT_NE(loaded.index, nullptr);
  EXPECT_EQ(Keys(*loaded.index),
            (std::set<std::string>{"content:" + ext, "content:" + b}));
  const InventoryEntry* e = loaded.inventory.Find(ext);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->hash.low64, 42u);
  v1::GetBaselineResponse base;
  ASSERT_TRUE(IsOk(c.GetBaseline(INT64_MAX, 0, &base)));
  ASSERT_TRUE(base.found());
  EXPECT_EQ(base.baseline().id(), id);
  ASSERT_EQ(base.external_paths_size(), 1);
  EXPECT_EQ(base.external_paths(0), ext);

  // With no_external, an absolute path needs no entry.
  Joined k = CreateAndLease(
      c, BuildRequest({a}, EmptyInventory(), 2, /*no_external=*/true));
  ASSERT_TRUE(IsOk(c.Report(
      k.worker_id, {Paths(0, {ext}), Result(k.lease[a], a, {0})}, &summary)));
  EXPECT_EQ(summary.accepted(), 1u);
}

TEST_F(SchedulerServiceTest, AResultIsTakenOnceWhicheverStreamBringsIt) {
  std::unique_ptr<SchedulerServer> server = Start(Options());
  ASSERT_NE(server, nullptr);
  Client c(server->address(), RpcAuth{});
  const std::string a = "t/test_a.py", b = "t/test_b.py";
  Joined j = CreateAndLease(c, BuildRequest({a, b}));
  std::vector<v1::ReportMessage> report = {Paths(0, {"lib/a.py"}),
                                           Result(j.lease[a], a, {0})};
  v1::ReportSummary first, second;
  ASSERT_TRUE(IsOk(c.Report(j.worker_id, report, &first)));
  ASSERT_TRUE(IsOk(c.Report(j.worker_id, report, &second)));
  EXPECT_EQ(first.accepted(), 1u);
  EXPECT_EQ(first.duplicates(), 0u);
  EXPECT_EQ(second.accepted(), 0u);
  EXPECT_EQ(second.duplicates(), 1u);
  // Twice on one stream too; then b completes the build, and a replay
  // after completion is still only a duplicate.
  v1::ReportSummary third;
  ASSERT_TRUE(
      IsOk(c.Report(j.worker_id,
                    {Paths(0, {"lib/a.py", "lib/b.py"}),
                     Result(j.lease[a], a, {0}), Result(j.lease[b], b, {1})},
                    &third)));
  EXPECT_EQ(third.accepted(), 1u);
  EXPECT_EQ(third.duplicates(), 1u);
  v1::ReportSummary after;
  ASSERT_TRUE(IsOk(c.Report(j.worker_id, report, &after)));
  EXPECT_EQ(after.accepted(), 0u);
  EXPECT_EQ(after.duplicates(), 1u);

  int64_t id = BaselineOf(j.build_id);
  EXPECT_EQ(OpenStore()->Results(id)->size(), 2u);
  EXPECT_EQ(Keys(*Load(id).index),
            (std::set<std::string>{"content:lib/a.py", "content:lib/b.py"}));
}

// Late streams (a replay, an expired worker) keep sending path tables
// while the last result stores the baseline: the index is whole and holds
// nothing of them (the builder's path table must not grow while Finish
// writes the index: BuildSession::Finalize holds paths_mu_ for it).
TEST_F(SchedulerServiceTest, LatePathTablesWhileTheBaselineIsStored) {
  std::unique_ptr<SchedulerServer> server = Start(Options());
  ASSERT_NE(server, nullptr);
  Client c(server->address(), RpcAuth{});
  const std::string a = "t/test_a.py", b = "t/test_b.py";
  Joined j = CreateAndLease(c, BuildRequest({a, b}));
  std::vector<std::string> paths;
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < 5000; i++) {
    paths.push_back("lib/p" + std::to_string(i));
    ids.push_back(i);
  }
  ASSERT_TRUE(IsOk(
      c.Report(j.worker_id, {Paths(0, paths), Result(j.lease[a], a, ids)})));

  std::atomic<bool> stop{false};
  std::atomic<int> late_streams{0};
  std::thread late([&] {
    Client other(server->address(), RpcAuth{});
    for (int n = 0; !stop.load(); n++) {
      std::vector<std::string> fresh;
      for (int i = 0; i < 200; i++)
        fresh.push_back("late/" + std::to_string(n) + "/" + std::to_string(i));
      EXPECT_TRUE(IsOk(other.Report(j.worker_id, {Paths(0, fresh)})));
      late_streams++;
    }
  });
  while (late_streams.load() < 2) absl::SleepFor(absl::Milliseconds(1));
  v1::ReportSummary summary;
  ASSERT_TRUE(IsOk(c.Report(
      j.worker_id, {Paths(0, {"lib/b.py"}), Result(j.lease[b], b, {0})},
      &summary)));
  EXPECT_EQ(summary.accepted(), 1u);
  int at_end = late_streams.load();
  while (late_streams.load() < at_end + 2)
    absl::SleepFor(absl::Milliseconds(1));
  stop = true;
  late.join();

  LoadedBaseline loaded = Load(BaselineOf(j.build_id));
  ASSERT_NE(loaded.index, nullptr);
  EXPECT_EQ(loaded.index->key_count(), 5001u);
  absl::StatusOr<Roaring> late_key =
      loaded.index->Lookup("late/0/0", DepKind::kContent);
  ASSERT_TRUE(late_key.ok());
  EXPECT_TRUE(late_key->isEmpty());
}

// The results of tests a, b, c as a fault-free worker sends them.
std::vector<v1::ReportMessage> CleanResults(const Joined& j) {
  return {Paths(0, {"lib/a.py", "lib/b.py", "lib/c.py", "lib/shared.py"}),
          Result(j.lease.at("t/test_a.py"), "t/test_a.py", {0, 3}),
          Result(j.lease.at("t/test_b.py"), "t/test_b.py", {1, 3}),
          Result(j.lease.at("t/test_c.py"), "t/test_c.py", {2})};
}

TEST_F(SchedulerServiceTest,
       ALateResultAfterExpiryIsADuplicateAndChangesNothing) {
  const std::vector<std::string> tests = {"t/test_a.py", "t/test_b.py",
                                          "t/test_c.py"};
  // The index of a build without a fault, in a store of its own.
  std::string clean_dir = NewDir();
  std::string clean_index;
  {
    std::unique_ptr<SchedulerServer> server = Start(Options("", clean_dir));
    ASSERT_NE(server, nullptr);
    Client c(server->address(), RpcAuth{});
    Joined j = CreateAndLease(c, BuildRequest(tests));
    v1::ReportSummary summary;
    ASSERT_TRUE(IsOk(c.Report(j.worker_id, CleanResults(j), &summary)));
    EXPECT_EQ(summary.accepted(), 3u);
    absl::StatusOr<std::string> dump =
        Load(BaselineOf(j.build_id), clean_dir).index->DumpJson();
    ASSERT_TRUE(dump.ok());
    clean_index = *dump;
  }

  // A clock moved by hand: w1's silence, and w2's calls in time, do not
  // depend on how fast this machine runs the test.
  std::atomic<int64_t> now_s{1000};
  SchedulerOptions o = Options();
  o.lease_timeout = absl::Seconds(30);
  o.now = [&now_s] { return absl::FromUnixSeconds(now_s.load()); };
  std::unique_ptr<SchedulerServer> server = Start(o);
  ASSERT_NE(server, nullptr);
  Client c(server->address(), RpcAuth{});
  std::string build, w1, w2;
  ASSERT_TRUE(IsOk(c.CreateBuild(BuildRequest(tests), &build)));
  ASSERT_TRUE(IsOk(c.Register(build, &w1)));
  ASSERT_TRUE(IsOk(c.Register(build, &w2)));
  std::map<std::string, uint64_t> first, second;
  ASSERT_TRUE(IsOk(c.Lease(w1, 1, &first)));
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(first.begin()->first, "t/test_a.py");
  ASSERT_TRUE(IsOk(c.Lease(w2, 2, &second)));
  ASSERT_EQ(second.size(), 2u);
  // w1 stays silent for 40 s, past the 30 s lease timeout; w2 calls in at
  // 20 s and at 40 s, and its next lease is a's, given back.
  now_s += 20;
  ASSERT_TRUE(IsOk(c.Heartbeat(w2)));
  now_s += 20;
  ASSERT_TRUE(IsOk(c.Lease(w2, 1, &second)));
  ASSERT_EQ(second.count("t/test_a.py"), 1u) << "a's lease did not come back";
  EXPECT_NE(second["t/test_a.py"], first["t/test_a.py"]);
  EXPECT_TRUE(HasStatus(c.Heartbeat(w1), StatusCode::FAILED_PRECONDITION,
                        "register again"));

  Joined j2{build, w2, second};
  std::vector<v1::ReportMessage> clean = CleanResults(j2);
  v1::ReportSummary summary;
  ASSERT_TRUE(IsOk(c.Report(w2, {clean[0], clean[1]}, &summary)));
  EXPECT_EQ(summary.accepted(), 1u);
  // w1 comes back with its result for a (other dependencies, other
  // outcome): a duplicate, while the build still runs.
  v1::ReportSummary late;
  ASSERT_TRUE(IsOk(c.Report(
      w1,
      {Paths(0, {"lib/late.py"}), Result(first["t/test_a.py"], "t/test_a.py",
                                         {0}, "", v1::TEST_OUTCOME_FAILED, 1)},
      &late)));
  EXPECT_EQ(late.accepted(), 0u);
  EXPECT_EQ(late.duplicates(), 1u);
  ASSERT_TRUE(IsOk(c.Report(w2, {clean[0], clean[2], clean[3]}, &summary)));
  EXPECT_EQ(summary.accepted(), 2u);

  int64_t id = BaselineOf(build);
  absl::StatusOr<std::vector<TestResult>> results = OpenStore()->Results(id);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 3u);
  EXPECT_EQ((*results)[0].outcome, TestOutcome::kPassed);
  absl::StatusOr<std::string> dump = Load(id).index->DumpJson();
  ASSERT_TRUE(dump.ok());
  EXPECT_EQ(*dump, clean_index);
}

TEST_F(SchedulerServiceTest,
       ReportEncoderSplitsABigResultAndTheServerMergesIt) {
  TestRecord record;
  record.test = "t/test_a.py";
  record.seconds = 1.5;
  ScopeDependencies own{ScopeOfTest(record.test), {}};
  for (int i = 0; i < 8; i++)
    own.deps.push_back(DepKey{"lib/m" + std::to_string(i) + ".py"});
  own.deps.push_back(DepKey{"lib/gone.py", DepKind::kAbsent});
  own.deps.push_back(DepKey{"lib", DepKind::kListing});
  ScopeDependencies sub{ScopeOfTest(record.test) + "/child",
                        {DepKey{"lib/sub.py"}}};
  record.deps.scopes = {own, sub};
  record.output_log = "/w/out/t/test_a.py.log";
  record.output_tail = "the end\n";
  record.output_bytes = 99;
  record.deps.case_order = {"child"};

  ReportEncoder encoder(3);
  std::vector<v1::ReportMessage> messages;
  encoder.Encode(7, record, &messages);
  EXPECT_EQ(encoder.paths(), 11u);
  // 11 paths in tables of 3, then 11 ids in results of 3.
  std::vector<const v1::TestResult*> results;
  uint32_t next_id = 0;
  for (const v1::ReportMessage& m : messages) {
    if (m.has_paths()) {
      EXPECT_TRUE(results.empty()) << "a table after a result";
      EXPECT_EQ(m.paths().first_id(), next_id);
      EXPECT_LE(m.paths().paths_size(), 3);
      next_id += m.paths().paths_size();
    } else {
      ASSERT_TRUE(m.has_result());
      results.push_back(&m.result());
    }
  }
  EXPECT_EQ(next_id, 11u);
  ASSERT_EQ(results.size(), 4u);
  for (size_t i = 0; i < results.size(); i++) {
    EXPECT_EQ(results[i]->lease_id(), 7u);
    EXPECT_EQ(results[i]->test(), record.test);
    EXPECT_EQ(results[i]->continued(), i + 1 < results.size()) << i;
    // The output once, in the first part.
    EXPECT_EQ(results[i]->output_log(), i == 0 ? record.output_log : "") << i;
    EXPECT_EQ(results[i]->output_tail(), i == 0 ? record.output_tail : "") << i;
    EXPECT_EQ(results[i]->output_bytes(), i == 0 ? 99u : 0u) << i;
    EXPECT_EQ(results[i]->case_order_size(), i == 0 ? 1 : 0) << i;
    if (i == 0) {
      EXPECT_EQ(results[i]->case_order(0), "child");
    }
    int ids = 0;
    for (const v1::ScopeDependencies& s : results[i]->scopes()) {
      ids += s.content_size() + s.absent_size() + s.listing_size();
    }
    EXPECT_LE(ids, 3) << i;
    EXPECT_GT(ids, 0) << i;
  }

  // Through the server, with the lease it really got.
  std::unique_ptr<SchedulerServer> server = Start(Options());
  ASSERT_NE(server, nullptr);
  Client c(server->address(), RpcAuth{});
  Joined j = CreateAndLease(c, BuildRequest({record.test, "t/test_b.py"}));
  messages.clear();
  encoder.Reset();
  encoder.Encode(j.lease[record.test], record, &messages);
  // A stream cut inside the continued result is refused and takes nothing.
  std::vector<v1::ReportMessage> cut(messages.begin(), messages.end() - 1);
  EXPECT_TRUE(HasStatus(c.Report(j.worker_id, cut),
                        StatusCode::INVALID_ARGUMENT,
                        "continued without an end"));
  v1::ReportSummary summary;
  ASSERT_TRUE(IsOk(c.Report(j.worker_id, messages, &summary)));
  EXPECT_EQ(summary.accepted(), 1u);
  ASSERT_TRUE(IsOk(c.Report(j.worker_id,
                            {Result(j.lease["t/test_b.py"], "t/test_b.py", {})},
                            &summary)));

  LoadedBaseline loaded = Load(BaselineOf(j.build_id));
  ASSERT_NE(loaded.index, nullptr);
  std::optional<uint32_t> a = loaded.index->FindTest(ScopeOfTest(record.test));
  ASSERT_TRUE(a.has_value());
  absl::StatusOr<std::vector<DepKey>> deps = loaded.index->DependenciesOf(*a);
  ASSERT_TRUE(deps.ok());
  std::set<std::string> got, want;
  for (const DepKey& k : *deps) got.insert(DepKeyDebugString(k));
  for (const ScopeDependencies& s : record.deps.scopes) {
    for (const DepKey& k : s.deps) want.insert(DepKeyDebugString(k));
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(loaded.index->key_count(), 11u);
}

// ---------------------------------------------------------------------------
// Restarts.

// A building baseline with no build row (an embedded `ste record` running,
// or begun by a ste before resumable builds) is nobody's to resume or
// fail: a scheduler leaves it as it is (issue 14: it used to mark it
// failed, which failed live builds of another process on the store).
TEST_F(SchedulerServiceTest, ARestartedSchedulerLeavesBuildsItDoesNotRunAlone) {
  std::string complete, stopped;
  {
    std::unique_ptr<SchedulerServer> first = Start(Options());
    ASSERT_NE(first, nullptr);
    Client c(first->address(), RpcAuth{});
    Joined j =
        CreateAndLease(c, BuildRequest({"t/test_a.py"}, EmptyInventory(), 1));
    ASSERT_TRUE(IsOk(c.Report(
        j.worker_id, {Result(j.lease["t/test_a.py"], "t/test_a.py", {})})));
    complete = j.build_id;
    ASSERT_TRUE(IsOk(c.CreateBuild(
        BuildRequest({"t/test_a.py"}, EmptyInventory(), 2), &stopped)));
    EXPECT_EQ(OpenStore()->Get(BaselineOf(stopped))->state,
              BaselineState::kBuilding);
  }  // The destructor fails the running build.
  std::unique_ptr<Store> store = OpenStore();
  absl::StatusOr<BaselineInfo> info = store->Get(BaselineOf(stopped));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, BaselineState::kFailed);
  EXPECT_NE(info->failure.find("the scheduler stopped"), std::string::npos)
      << info->failure;

  // Builds begun without a build row, still "building".
  absl::StatusOr<int64_t> killed1 = store->Begin("c3", 3);
  absl::StatusOr<int64_t> killed2 = store->Begin("c4", 4);
  ASSERT_TRUE(killed1.ok() && killed2.ok());

  std::unique_ptr<SchedulerServer> second = Start(Options());
  ASSERT_NE(second, nullptr);
  Client c(second->address(), RpcAuth{});
  EXPECT_TRUE(HasStatus(c.Register(stopped), StatusCode::NOT_FOUND,
                        "is not running in this scheduler (it failed"));
  EXPECT_TRUE(
      HasStatus(c.Register(complete), StatusCode::NOT_FOUND, "it is complete"));
  EXPECT_TRUE(HasStatus(c.Register("b" + std::to_string(*killed1)),
                        StatusCode::NOT_FOUND,
                        "not running in this scheduler"));
  std::vector<v1::BuildProgress> progress;
  EXPECT_TRUE(HasStatus(c.Watch("b" + std::to_string(*killed2), &progress),
                        StatusCode::NOT_FOUND,
                        "not running in this scheduler"));
  EXPECT_TRUE(progress.empty());
  for (int64_t id : {*killed1, *killed2}) {
    info = store->Get(id);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->state, BaselineState::kBuilding) << id;
  }
  // Workers of those builds are told the same.
  EXPECT_TRUE(HasStatus(c.Heartbeat("b" + std::to_string(*killed1) + "/w1"),
                        StatusCode::NOT_FOUND, "not running"));
  EXPECT_TRUE(
      HasStatus(c.Register("b999"), StatusCode::NOT_FOUND, "no build 'b999'"));
  EXPECT_TRUE(HasStatus(c.Register("nonsense"), StatusCode::NOT_FOUND,
                        "no build 'nonsense'"));

  absl::StatusOr<std::optional<BaselineInfo>> latest =
      store->LatestCompleted(INT64_MAX);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->id, BaselineOf(complete));
  v1::GetBaselineResponse base;
  ASSERT_TRUE(IsOk(c.GetBaseline(INT64_MAX, 0, &base)));
  EXPECT_TRUE(base.found());
  EXPECT_EQ(base.baseline().id(), BaselineOf(complete));
}

// A build whose scheduler was killed (its session gone without a word, its
// lease expired) is resumed by another instance on the first call that
// names it: the journaled result stays accepted, the old worker is told to
// register again, its late result of an old lease is taken once, only the
// rest is leased, and the baseline completes with every result.
TEST_F(SchedulerServiceTest, AKilledSchedulersBuildIsResumedByAnotherInstance) {
  int64_t baseline = 0;
  {
    BuildSpec spec;
    spec.commit = "c1";
    spec.mri = 1;
    spec.tests = {{"t/test_a.py", 0}, {"t/test_b.py", 0}, {"t/test_c.py", 0}};
    BuildSession::Options o;
    o.owner = "killed-instance";
    o.lease_ms = 0;  // expired at once
    absl::StatusOr<std::unique_ptr<BuildSession>> killed =
        BuildSession::Create(std::move(spec), OpenStore(), o);
    ASSERT_TRUE(killed.ok()) << killed.status();
    baseline = (*killed)->baseline_id();
    const std::string w = (*killed)->coordinator().RegisterWorker("old");
    bool done = false;
    absl::StatusOr<std::vector<TestLease>> leases = (*killed)->coordinator().Lease(w, 3, &done);
    ASSERT_TRUE(leases.ok() && leases->size() == 3);
    for (const TestLease& l : *leases) {
      if (l.test != "t/test_a.py") continue;
      LeaseResult r;
      r.lease_id = l.lease_id;
      r.test = l.test;
      ASSERT_TRUE((*killed)->Submit(r).ok());
    }
    ASSERT_TRUE((*killed)->Flush().ok());
  }  // "SIGKILL": nothing failed it, nothing renews it
  SchedulerOptions options = Options();
  options.instance_id = "second-instance";
  options.build_lease = absl::Seconds(60);
  std::unique_ptr<SchedulerServer> second = Start(options);
  ASSERT_NE(second, nullptr);
  Client c(second->address(), RpcAuth{});
  const std::string build = "b" + std::to_string(baseline);
  EXPECT_TRUE(HasStatus(c.Heartbeat(build + "/w1"), StatusCode::FAILED_PRECONDITION,
                        "register again"));
  std::string worker;
  ASSERT_TRUE(IsOk(c.Register(build, &worker)));
  EXPECT_EQ(worker, build + "/g2w1");
  std::map<std::string, uint64_t> leases;
  ASSERT_TRUE(IsOk(c.Lease(worker, 10, &leases)));
  ASSERT_EQ(leases.size(), 2u);  // a was accepted before the kill
  EXPECT_FALSE(leases.count("t/test_a.py"));
  EXPECT_GE(BuildCoordinator::LeaseGeneration(leases["t/test_b.py"]), 2u);
  // The old worker's result for b, of a lease from before: taken once.
  v1::ReportSummary late;
  ASSERT_TRUE(IsOk(c.Report(build + "/w1", {Result(2, "t/test_b.py", {})}, &late)));
  EXPECT_EQ(late.accepted(), 1u);
  v1::ReportSummary again;
  ASSERT_TRUE(IsOk(c.Report(worker, {Result(leases["t/test_b.py"], "t/test_b.py", {}),
                                     Result(1, "t/test_a.py", {})}, &again)));
  EXPECT_EQ(again.accepted(), 0u);
  EXPECT_EQ(again.duplicates(), 2u);
  ASSERT_TRUE(IsOk(c.Report(worker, {Result(leases["t/test_c.py"], "t/test_c.py", {})})));
  std::vector<v1::BuildProgress> progress;
  ASSERT_TRUE(IsOk(c.Watch(build, &progress)));
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), v1::BUILD_STATE_COMPLETE);
  std::set<std::string> finished;
  for (const v1::BuildProgress& p : progress) {
    for (const v1::FinishedTest& f : p.finished()) EXPECT_TRUE(finished.insert(f.test()).second);
  }
  EXPECT_EQ(finished.size(), 3u);
  absl::StatusOr<std::vector<TestResult>> results = OpenStore()->Results(baseline);
  ASSERT_TRUE(results.ok());
  EXPECT_EQ(results->size(), 3u);
  EXPECT_EQ(OpenStore()->Get(baseline)->state, BaselineState::kComplete);
}

// A build another instance holds a live lease on: calls naming it are
// UNAVAILABLE (workers retry, or go to another address). That it is left
// untouched is OwnedBuilds' (build_ownership_test.cc
// AnotherInstancesLiveLeaseIsNotTouched); here, the code on the wire.
TEST_F(SchedulerServiceTest, ABuildAnotherInstanceRunsIsUnavailableAndUntouched) {
  BuildSpec spec;
  spec.tests = {{"t/test_a.py", 0}};
  BuildSession::Options o;
  o.owner = "live-elsewhere";
  o.lease_ms = 600000;
  absl::StatusOr<std::unique_ptr<BuildSession>> elsewhere =
      BuildSession::Create(std::move(spec), OpenStore(), o);
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.status();
  SchedulerOptions options = Options();
  options.instance_id = "here";
  std::unique_ptr<SchedulerServer> here = Start(options);
  ASSERT_NE(here, nullptr);
  Client c(here->address(), RpcAuth{});
  EXPECT_TRUE(HasStatus(c.Register((*elsewhere)->id()), StatusCode::UNAVAILABLE,
                        "run by scheduler live-elsewhere"));
  EXPECT_TRUE((*elsewhere)->Renew());
}

// ---------------------------------------------------------------------------
// Watching and selecting.

TEST_F(SchedulerServiceTest, WatchBuildStreamsFinishedTestsUntilComplete) {
  std::unique_ptr<SchedulerServer> server = Start(Options());
  ASSERT_NE(server, nullptr);
  Client c(server->address(), RpcAuth{});
  const std::string a = "t/test_a.py", b = "t/test_b.py";
  Joined j = CreateAndLease(c, BuildRequest({a, b}, EmptyInventory(), 9));

  std::vector<v1::BuildProgress> progress;
  grpc::Status watched;
  std::thread watcher([&] { watched = c.Watch(j.build_id, &progress); });
  ASSERT_TRUE(IsOk(c.Report(
      j.worker_id, {Paths(0, {"lib/a.py"}), Result(j.lease[a], a, {0})})));
  ASSERT_TRUE(IsOk(
      c.Report(j.worker_id,
               {Result(j.lease[b], b, {}, "", v1::TEST_OUTCOME_FAILED, 3)})));
  watcher.join();

  ASSERT_TRUE(watched.ok()) << watched.error_message();
  ASSERT_FALSE(progress.empty());
  std::vector<v1::FinishedTest> finished;
  for (size_t i = 0; i < progress.size(); i++) {
    const v1::BuildProgress& p = progress[i];
    EXPECT_EQ(p.state(), i + 1 < progress.size() ? v1::BUILD_STATE_RUNNING
                                                 : v1::BUILD_STATE_COMPLETE);
    EXPECT_EQ(p.total(), 2u);
    EXPECT_EQ(p.mri(), 9);
    EXPECT_EQ(p.commit(), "c9");
    EXPECT_EQ(p.baseline_id(), BaselineOf(j.build_id));
    for (const v1::FinishedTest& f : p.finished()) finished.push_back(f);
  }
  const v1::BuildProgress& last = progress.back();
  EXPECT_EQ(last.done(), 2u);
  EXPECT_GT(last.index_bytes(), 0u);
  ASSERT_EQ(finished.size(), 2u);  // each once, in order
  EXPECT_EQ(finished[0].test(), a);
  EXPECT_EQ(finished[0].outcome(), v1::TEST_OUTCOME_PASSED);
  EXPECT_EQ(finished[1].test(), b);
  EXPECT_EQ(finished[1].outcome(), v1::TEST_OUTCOME_FAILED);
  EXPECT_EQ(finished[1].exit_code(), 3);
  EXPECT_DOUBLE_EQ(finished[1].seconds(), 0.25);

  progress.clear();
  EXPECT_TRUE(HasStatus(c.Watch("b999", &progress), StatusCode::NOT_FOUND,
                        "no build 'b999'"));
}

TEST_F(SchedulerServiceTest, AFailingTestsOutputTailReachesTheWatcherBounded) {
  std::unique_ptr<SchedulerServer> server = Start(Options());
  ASSERT_NE(server, nullptr);
  Client c(server->address(), RpcAuth{});
  const std::string a = "t/test_a.py", b = "t/test_b.py";
  Joined j = CreateAndLease(c, BuildRequest({a, b}, EmptyInventory(), 9));

  std::vector<v1::BuildProgress> progress;
  grpc::Status watched;
  std::thread watcher([&] { watched = c.Watch(j.build_id, &progress); });
  v1::ReportMessage failed = Result(j.lease[a], a, {}, "", v1::TEST_OUTCOME_FAILED, 1);
  failed.mutable_result()->set_output_log("/w/.ste/output/b1/t/test_a.py.log");
  failed.mutable_result()->set_output_tail("last words\n");
  failed.mutable_result()->set_output_bytes(11);
  // Over the bounds: a tail is cut to its last 8 KiB, a log path dropped.
  v1::ReportMessage big = Result(j.lease[b], b, {}, "", v1::TEST_OUTCOME_FAILED, 2);
  big.mutable_result()->set_output_log(std::string(5000, 'x'));
  big.mutable_result()->set_output_shared(true);
  big.mutable_result()->set_output_tail(std::string(100, 'a') + std::string(kMaxOutputTailBytes, 'z'));
  ASSERT_TRUE(IsOk(c.Report(j.worker_id, {failed, big})));
  watcher.join();
  ASSERT_TRUE(watched.ok()) << watched.error_message();

  std::vector<v1::FinishedTest> finished;
  for (const v1::BuildProgress& p : progress) {
    for (const v1::FinishedTest& f : p.finished()) finished.push_back(f);
  }
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_EQ(finished[0].output_log(), "/w/.ste/output/b1/t/test_a.py.log");
  EXPECT_EQ(finished[0].output_tail(), "last words\n");
  EXPECT_EQ(finished[0].output_bytes(), 11u);
  EXPECT_FALSE(finished[0].output_shared());
  EXPECT_EQ(finished[0].worker_name().rfind("test (", 0), 0u) << finished[0].worker_name();
  EXPECT_EQ(finished[1].output_log(), "");
  EXPECT_TRUE(finished[1].output_shared());
  EXPECT_EQ(finished[1].output_tail(), std::string(kMaxOutputTailBytes, 'z'));
}

TEST_F(SchedulerServiceTest, SelectAndGetBaselineOnACompletedBuild) {
  const std::vector<std::string> tests = {"t/test_a.py", "t/test_b.py",
                                          "t/test_c.py"};
  std::vector<InventoryEntry> entries = {
      Entry(".", FileType::kDirectory, 1),
      Entry("ci", FileType::kDirectory, 2),
      Entry("ci/run.sh", FileType::kRegular, 3),
      Entry("lib", FileType::kDirectory, 4),
      Entry("lib/a.py", FileType::kRegular, 5),
      Entry("lib/b.py", FileType::kRegular, 6),
      Entry("lib/c.py", FileType::kRegular, 7),
      Entry("t", FileType::kDirectory, 8),
      Entry("t/test_a.py", FileType::kRegular, 9),
      Entry("t/test_b.py", FileType::kRegular, 10),
      Entry("t/test_c.py", FileType::kRegular, 11)};
  absl::StatusOr<Inventory> base_inventory = Inventory::FromEntries(entries, 0);
  ASSERT_TRUE(base_inventory.ok());
  auto changed_inventory = [&](const std::string& path) {
    std::vector<InventoryEntry> head = entries;
    for (InventoryEntry& e : head) {
      if (e.path == path) e.hash.low64 += 100;
    }
    return Inventory::FromEntries(head, 0)->Serialize();
  };

  std::unique_ptr<SchedulerServer> server = Start(Options());
  ASSERT_NE(server, nullptr);
  Client c(server->address(), RpcAuth{});
  Joined j =
      CreateAndLease(c, BuildRequest(tests, base_inventory->Serialize(), 5));
  v1::ReportSummary summary;
  ASSERT_TRUE(
      IsOk(c.Report(j.worker_id,
                    {Paths(0, {"lib/a.py", "lib/b.py", "lib/c.py",
                               "t/test_a.py", "t/test_b.py", "t/test_c.py"}),
                     Result(j.lease["t/test_a.py"], "t/test_a.py", {0, 3}),
                     Result(j.lease["t/test_b.py"], "t/test_b.py", {1, 4}),
                     Result(j.lease["t/test_c.py"], "t/test_c.py", {2, 5})},
                    &summary)));
  ASSERT_EQ(summary.accepted(), 3u);
  const int64_t id = BaselineOf(j.build_id);

  v1::GetBaselineResponse base;
  ASSERT_TRUE(IsOk(c.GetBaseline(INT64_MAX, 0, &base)));
  ASSERT_TRUE(base.found());
  EXPECT_EQ(base.baseline().id(), id);
  EXPECT_EQ(base.baseline().mri(), 5);
  EXPECT_EQ(base.baseline().commit(), "c5");
  EXPECT_EQ(base.external_paths_size(), 0);
  ASSERT_TRUE(IsOk(c.GetBaseline(0, id, &base)));
  EXPECT_TRUE(base.found());
  ASSERT_TRUE(IsOk(c.GetBaseline(4, 0, &base)));  // older than any baseline
  EXPECT_FALSE(base.found());
  EXPECT_NE(base.why_not().find("no completed baseline with mri <= 4"),
            std::string::npos)
      << base.why_not();

  auto request = [&]() {
    v1::SelectRequest req;
    req.set_commit("c6");
    req.set_mri(6);
    req.set_config(
        "[tests]\ninclude = [\"t/test_*.py\"]\n[runner]\ncommand = \"sh "
        "{test}\"\n"
        "[selection]\nrun_all = [\"ci/**\"]\n");
    for (const std::string& t : tests) req.add_head_tests(t);
    return req;
  };
  auto names = [](const v1::SelectResponse& r) {
    std::vector<std::string> out;
    for (const v1::SelectedTest& t : r.tests()) out.push_back(t.test());
    return out;
  };

  {  // One file changed: the test that read it.
    v1::SelectRequest req = request();
    req.set_inventory(changed_inventory("lib/a.py"));
    v1::SelectResponse resp;
    ASSERT_TRUE(IsOk(c.Select(req, &resp)));
    EXPECT_EQ(resp.mode(), v1::SELECTION_MODE_SUBSET) << resp.reason();
    EXPECT_EQ(resp.baseline().id(), id);
    EXPECT_EQ(names(resp), std::vector<std::string>{"t/test_a.py"});
    ASSERT_EQ(resp.tests(0).reasons_size(), 1);
    EXPECT_EQ(resp.tests(0).reasons(0).path(), "lib/a.py");
    EXPECT_EQ(resp.tests(0).reasons(0).kind(), "content");
    EXPECT_EQ(resp.tests(0).reasons(0).change(), "modified");
    ASSERT_EQ(resp.changed_size(), 1);
    EXPECT_EQ(resp.changed(0).path(), "lib/a.py");
    EXPECT_EQ(resp.changed(0).change(), "modified");
    EXPECT_EQ(resp.changed(0).type(), "regular");
  }
  {  // Nothing changed.
    v1::SelectRequest req = request();
    req.set_inventory(base_inventory->Serialize());
    v1::SelectResponse resp;
    ASSERT_TRUE(IsOk(c.Select(req, &resp)));
    EXPECT_EQ(resp.mode(), v1::SELECTION_MODE_NONE);
    EXPECT_EQ(resp.reason(), "nothing changed since the baseline");
    EXPECT_EQ(resp.tests_size(), 0);
  }
  {  // A run_all path changed.
    v1::SelectRequest req = request();
    req.set_inventory(changed_inventory("ci/run.sh"));
    v1::SelectResponse resp;
    ASSERT_TRUE(IsOk(c.Select(req, &resp)));
    EXPECT_EQ(resp.mode(), v1::SELECTION_MODE_ALL);
    EXPECT_NE(
        resp.reason().find("ci/run.sh changed and matches selection.run_all"),
        std::string::npos)
        << resp.reason();
    EXPECT_EQ(names(resp), tests);
  }
  {  // The change as a list of paths, against an explicit baseline.
    v1::SelectRequest req = request();
    req.set_baseline_id(id);
    v1::Change* change = req.mutable_changed()->add_changes();
    change->set_path("lib/b.py");
    change->set_change("modified");
    v1::SelectResponse resp;
    ASSERT_TRUE(IsOk(c.Select(req, &resp)));
    EXPECT_EQ(resp.mode(), v1::SELECTION_MODE_SUBSET) << resp.reason();
    EXPECT_EQ(names(resp), std::vector<std::string>{"t/test_b.py"});
    EXPECT_EQ(resp.baseline().id(), id);
  }
  {  // A changed path that could escape the repo is refused.
    v1::SelectRequest req = request();
    req.mutable_changed()->add_changes()->set_path("../x");
    v1::SelectResponse resp;
    EXPECT_TRUE(HasStatus(c.Select(req, &resp), StatusCode::INVALID_ARGUMENT,
                          "changed: "));
  }
  {  // Forced by the client.
    v1::SelectRequest req = request();
    req.set_inventory(base_inventory->Serialize());
    req.set_force_all(true);
    req.set_force_reason("[test all] in a commit message");
    v1::SelectResponse resp;
    ASSERT_TRUE(IsOk(c.Select(req, &resp)));
    EXPECT_EQ(resp.mode(), v1::SELECTION_MODE_ALL);
    EXPECT_EQ(resp.reason(), "[test all] in a commit message");
  }
  {  // No baseline at or below this mri: all, with the reason.
    v1::SelectRequest req = request();
    req.set_mri(4);
    req.set_inventory(base_inventory->Serialize());
    v1::SelectResponse resp;
    ASSERT_TRUE(IsOk(c.Select(req, &resp)));
    EXPECT_EQ(resp.mode(), v1::SELECTION_MODE_ALL);
    EXPECT_NE(resp.reason().find(
                  "no usable baseline: no completed baseline with mri <= 4"),
              std::string::npos)
        << resp.reason();
    EXPECT_FALSE(resp.has_baseline());
    EXPECT_EQ(names(resp), tests);
  }

  // A scheduler on an empty store.
  std::string empty_dir = NewDir();
  std::unique_ptr<SchedulerServer> empty = Start(Options("", empty_dir));
  ASSERT_NE(empty, nullptr);
  Client e(empty->address(), RpcAuth{});
  v1::SelectRequest req = request();
  req.set_inventory(base_inventory->Serialize());
  v1::SelectResponse resp;
  ASSERT_TRUE(IsOk(e.Select(req, &resp)));
  EXPECT_EQ(resp.mode(), v1::SELECTION_MODE_ALL);
  EXPECT_NE(resp.reason().find("no usable baseline"), std::string::npos)
      << resp.reason();
  EXPECT_FALSE(resp.has_baseline());
  EXPECT_EQ(names(resp), tests);
  ASSERT_TRUE(IsOk(e.GetBaseline(INT64_MAX, 0, &base)));
  EXPECT_FALSE(base.found());
  EXPECT_NE(base.why_not().find("no completed baseline in the store"),
            std::string::npos)
      << base.why_not();
}

}  // namespace
}  // namespace ste
