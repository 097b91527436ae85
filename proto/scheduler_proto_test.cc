// The ste.v1 protocol as generated: messages round-trip paths of any
// bytes, the service has the methods the design names, and the generated
// gRPC stubs talk over a real (in-process) channel.
#include <iterator>
#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ste/v1/scheduler.grpc.pb.h"
#include "ste/v1/scheduler.pb.h"

namespace ste::v1 {
namespace {

TEST(SchedulerProto, ReportsRoundTripPathsOfAnyBytes) {
  const std::string odd_path("dir/new\nline \xff\xfe.txt", 20);
  ReportMessage table;
  table.set_worker_id("w1");
  table.mutable_paths()->set_first_id(0);
  table.mutable_paths()->add_paths("lib/a.py");
  table.mutable_paths()->add_paths(odd_path);

  ReportMessage result;
  TestResult* r = result.mutable_result();
  r->set_lease_id(7);
  r->set_test("tests/test_a.py");
  r->set_outcome(TEST_OUTCOME_FAILED);
  r->set_exit_code(1);
  ScopeDependencies* s = r->add_scopes();
  s->set_scope("//r/tests/test_a.py");
  s->add_content(0);
  s->add_absent(1);

  for (const ReportMessage* m : {&table, &result}) {
    std::string wire;
    ASSERT_TRUE(m->SerializeToString(&wire));
    ReportMessage back;
    ASSERT_TRUE(back.ParseFromString(wire));
    EXPECT_EQ(back.SerializeAsString(), wire);
  }
  ReportMessage back;
  ASSERT_TRUE(back.ParseFromString(table.SerializeAsString()));
  EXPECT_EQ(back.paths().paths(1), odd_path) << "bytes fields keep every byte";
  ASSERT_TRUE(back.ParseFromString(result.SerializeAsString()));
  EXPECT_EQ(back.result().scopes(0).absent(0), 1u);
  EXPECT_EQ(back.result().outcome(), TEST_OUTCOME_FAILED);
}

TEST(SchedulerProto, StringFieldsRefuseInvalidUtf8WhichIsWhyPathsAreBytes) {
  // proto3 `string` must be UTF-8; a path is not. Parsing a string field
  // holding a non-UTF-8 path fails, so every path field is `bytes`.
  Lease lease;
  lease.set_test("bytes\xff");  // a bytes field: any bytes
  Lease back;
  EXPECT_TRUE(back.ParseFromString(lease.SerializeAsString()));
  EXPECT_EQ(back.test(), "bytes\xff");
  // The same bytes as field 1 of a message where field 1 is a string
  // (WatchBuildRequest.build_id): refused.
  WatchBuildRequest as_string;
  std::string forged;
  forged.push_back(static_cast<char>((1 << 3) | 2));  // field 1, length-delimited
  forged.push_back(6);
  forged.append("bytes\xff");
  EXPECT_FALSE(as_string.ParseFromString(forged));
}

TEST(SchedulerProto, ServiceHasTheDesignedMethods) {
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("ste.v1.Scheduler");
  ASSERT_NE(service, nullptr);
  struct Expected {
    const char* name;
    bool client_streaming;
    bool server_streaming;
  };
  const Expected expected[] = {
      {"CreateBuild", false, false}, {"RegisterWorker", false, false},
      {"Heartbeat", false, false},   {"Lease", false, false},
      {"Report", true, false},       {"WatchBuild", false, true},
      {"Select", false, false},
      {"GetBaseline", false, false},
  };
  ASSERT_EQ(service->method_count(), static_cast<int>(std::size(expected)));
  for (const Expected& e : expected) {
    const google::protobuf::MethodDescriptor* m = service->FindMethodByName(e.name);
    ASSERT_NE(m, nullptr) << e.name;
    EXPECT_EQ(m->client_streaming(), e.client_streaming) << e.name;
    EXPECT_EQ(m->server_streaming(), e.server_streaming) << e.name;
  }
}

// A handler defined here, only to show that the generated server and
// client stubs work together over a real channel.
class CountingScheduler final : public Scheduler::Service {
 public:
  grpc::Status Report(grpc::ServerContext*, grpc::ServerReader<ReportMessage>* reader,
                      ReportSummary* summary) override {
    ReportMessage m;
    while (reader->Read(&m)) {
      if (m.has_result()) summary->set_accepted(summary->accepted() + 1);
    }
    return grpc::Status::OK;
  }
};

TEST(SchedulerProto, GeneratedStubsTalkOverAnInProcessChannel) {
  CountingScheduler service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Scheduler::Stub> stub =
      Scheduler::NewStub(server->InProcessChannel(grpc::ChannelArguments()));

  grpc::ClientContext context;
  ReportSummary summary;
  std::unique_ptr<grpc::ClientWriter<ReportMessage>> writer = stub->Report(&context, &summary);
  ReportMessage paths;
  paths.mutable_paths()->add_paths("lib/a.py");
  ASSERT_TRUE(writer->Write(paths));
  for (int i = 0; i < 3; i++) {
    ReportMessage result;
    result.mutable_result()->set_lease_id(i);
    ASSERT_TRUE(writer->Write(result));
  }
  ASSERT_TRUE(writer->WritesDone());
  grpc::Status status = writer->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(summary.accepted(), 3u);

  grpc::ClientContext unimplemented;
  SelectResponse response;
  EXPECT_EQ(stub->Select(&unimplemented, SelectRequest(), &response).error_code(),
            grpc::StatusCode::UNIMPLEMENTED)
      << "methods a service does not override answer UNIMPLEMENTED";
  server->Shutdown();
}

}  // namespace
}  // namespace ste::v1
