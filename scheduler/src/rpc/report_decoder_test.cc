// Copyright: the ste authors. ReportStreamDecoder alone: hand-built streams
// through a fake build (no server, no session), one table row per wire rule
// of a Report stream. The same rules through a real server are in
// scheduler_service_test.cc.
#include "report_decoder.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "report_test_messages.h"
#include "ste/inventory.h"

namespace ste {
namespace {

using report_test::Paths;
using report_test::Result;

// A build that numbers the paths it is given from 100 on, refuses the path
// "bad", and keeps the external files it is given.
class FakeTarget final : public ReportTarget {
 public:
  absl::StatusOr<uint32_t> InternPath(std::string_view path) override {
    if (path == "bad") return absl::InvalidArgumentError("bad path 'bad'");
    paths.emplace_back(path);
    return static_cast<uint32_t>(99 + paths.size());
  }
  absl::Status AddExternal(const Inventory& external) override {
    if (refuse_external) return absl::InvalidArgumentError("not absolute");
    externals.push_back(external.size());
    return absl::OkStatus();
  }

  bool refuse_external = false;
  std::vector<std::string> paths;
  std::vector<size_t> externals;  // entries of each AddExternal
};

constexpr char kWorker[] = "b1/w1";

// `m` with more parts of its result to follow.
v1::ReportMessage Continued(v1::ReportMessage m) {
  m.mutable_result()->set_continued(true);
  return m;
}

v1::ReportMessage External(const std::string& inventory_bytes) {
  v1::ReportMessage m;
  m.mutable_external()->set_inventory(inventory_bytes);
  return m;
}

std::string OneExternalFile() {
  InventoryEntry e;
  e.path = "/usr/lib/x.so";
  e.type = FileType::kRegular;
  e.mode = 0100644;
  e.size = 10;
  e.hash = XXH128_hash_t{7, 0};
  return Inventory::FromEntries({e}, 0)->Serialize();
}

v1::ReportMessage WithWorker(v1::ReportMessage m, const std::string& worker) {
  m.set_worker_id(worker);
  return m;
}

// "lease test outcome [scope: content/absent/listing ids]..." of a result.
std::string Describe(const LeaseResult& r) {
  std::string out = absl::StrCat(r.lease_id, " ", r.test, " ",
                                 std::string(TestOutcomeName(r.outcome)));
  if (r.opaque) absl::StrAppend(&out, " opaque");
  if (!r.error.empty()) absl::StrAppend(&out, " error=\"", r.error, "\"");
  for (const ResultScope& s : r.scopes) {
    absl::StrAppend(
        &out, " [", s.scope, ": ",
        absl::StrJoin(s.ids[static_cast<int>(DepKind::kContent)], ","), "/",
        absl::StrJoin(s.ids[static_cast<int>(DepKind::kAbsent)], ","), "/",
        absl::StrJoin(s.ids[static_cast<int>(DepKind::kListing)], ","), "]");
  }
  return out;
}

// What a stream decoded to, driven as SchedulerService::Report drives it:
// stops at the first error; Finish() at the end.
struct Decoded {
  // Describe() of each complete result, and "refused: " + Describe() of
  // each stand-in for a refused one, in the order they were given.
  std::vector<std::string> results;
  std::vector<bool> named;  // TakeWorker() of each message
  std::string error;        // "" when the stream was taken
};

Decoded Decode(const std::vector<v1::ReportMessage>& messages,
               FakeTarget& target) {
  ReportStreamDecoder decoder;
  Decoded out;
  for (const v1::ReportMessage& m : messages) {
    absl::StatusOr<bool> named = decoder.TakeWorker(m);
    if (!named.ok()) {
      out.error = std::string(named.status().message());
      return out;
    }
    out.named.push_back(*named);
    std::optional<LeaseResult> refused;
    absl::StatusOr<std::optional<LeaseResult>> whole =
        decoder.Decode(m, target, &refused);
    if (refused.has_value()) {
      out.results.push_back("refused: " + Describe(*refused));
    }
    if (!whole.ok()) {
      EXPECT_TRUE(absl::IsInvalidArgument(whole.status())) << whole.status();
      out.error = std::string(whole.status().message());
      return out;
    }
    if (whole->has_value()) out.results.push_back(Describe(**whole));
  }
  absl::Status end = decoder.Finish();
  if (!end.ok()) out.error = std::string(end.message());
  return out;
}

// A stream whose first message names kWorker.
struct StreamCase {
  const char* name;
  std::vector<v1::ReportMessage> messages;
  std::vector<std::string> results;  // as Decoded::results
  std::string error;                 // the stream's refusal, "" for none
};

std::vector<StreamCase> StreamCases() {
  return {
      {"a path table, then results through it",
       {Paths(0, {"lib/a.py", "lib/b.py"}), Result(3, "t/a.py", {1, 0}),
        Result(4, "t/b.py", {})},
       {"3 t/a.py passed [//r/t/a.py: 101,100//]", "4 t/b.py passed"},
       ""},
      {"a second path table goes on from the first",
       {Paths(0, {"a"}), Paths(1, {"b", "c"}), Result(3, "t/a.py", {2, 0})},
       {"3 t/a.py passed [//r/t/a.py: 102,100//]"},
       ""},
      {"an empty path table is fine",
       {Paths(0, {}), Paths(0, {"a"}), Result(3, "t/a.py", {0})},
       {"3 t/a.py passed [//r/t/a.py: 100//]"},
       ""},
      {"a first path table that does not start at 0",
       {Paths(1, {"a"})},
       {},
       "path table starts at 1, expected 0"},
      {"a path table that skips ids",
       {Paths(0, {"a", "b"}), Paths(3, {"c"})},
       {},
       "path table starts at 3, expected 2"},
      {"a path table sent twice",
       {Paths(0, {"a"}), Paths(0, {"a"})},
       {},
       "path table starts at 0, expected 1"},
      {"a path the build refuses",
       {Paths(0, {"a", "bad", "c"})},
       {},
       "path table: bad path 'bad'"},
      {"an unknown path id refuses the result",
       {Paths(0, {"a", "b"}), Result(3, "t/a.py", {0, 2})},
       {"refused: 3 t/a.py error opaque error=\"its report was refused: "
        "result of lease 3: path id 2 not in the stream's path table (2 "
        "paths)\""},
       "result of lease 3: path id 2 not in the stream's path table (2 paths)"},
      {"a path id before any path table",
       {Result(3, "t/a.py", {0})},
       {"refused: 3 t/a.py error opaque error=\"its report was refused: "
        "result of lease 3: path id 0 not in the stream's path table (0 "
        "paths)\""},
       "result of lease 3: path id 0 not in the stream's path table (0 paths)"},
      {"continued parts are merged into one result",
       {Paths(0, {"a", "b", "c"}), Continued(Result(5, "t/a.py", {0})),
        Continued(Result(5, "t/a.py", {1})), Result(5, "t/a.py", {2})},
       {"5 t/a.py passed [//r/t/a.py: 100,101,102//]"},
       ""},
      {"continued results of two leases, interleaved",
       {Paths(0, {"a", "b"}), Continued(Result(5, "t/a.py", {0})),
        Continued(Result(6, "t/b.py", {1})), Result(6, "t/b.py", {0}),
        Result(5, "t/a.py", {1})},
       {"6 t/b.py passed [//r/t/b.py: 101,100//]",
        "5 t/a.py passed [//r/t/a.py: 100,101//]"},
       ""},
      {"the stream ends inside a continued result",
       {Paths(0, {"a"}), Continued(Result(5, "t/a.py", {0})),
        Result(6, "t/b.py", {0})},
       {"6 t/b.py passed [//r/t/b.py: 100//]"},
       "the stream ended inside the result of lease 5 (continued without an "
       "end)"},
      {"one stream naming two workers",
       {Paths(0, {"a"}), WithWorker(Result(3, "t/a.py", {0}), "b1/w2")},
       {},
       "one stream, one worker"},
      {"a later message naming the same worker again",
       {Paths(0, {"a"}), WithWorker(Result(3, "t/a.py", {0}), kWorker)},
       {"3 t/a.py passed [//r/t/a.py: 100//]"},
       ""},
      {"an empty message",
       {v1::ReportMessage()},
       {},
       "an empty report message"},
      {"an empty message after a result",
       {Result(3, "t/a.py", {}), v1::ReportMessage()},
       {"3 t/a.py passed"},
       "an empty report message"},
      {"a result with no outcome",
       {Result(3, "t/a.py", {}, "", v1::TEST_OUTCOME_UNSPECIFIED)},
       {"refused: 3 t/a.py error opaque error=\"its report was refused: "
        "result of lease 3: no outcome\""},
       "result of lease 3: no outcome"},
      {"every outcome",
       {Result(3, "t/p", {}, "", v1::TEST_OUTCOME_PASSED),
        Result(4, "t/f", {}, "", v1::TEST_OUTCOME_FAILED),
        Result(5, "t/e", {}, "", v1::TEST_OUTCOME_ERROR)},
       {"3 t/p passed", "4 t/f failed", "5 t/e error"},
       ""},
      {"external files are taken",
       {External(OneExternalFile()), Result(3, "t/a.py", {})},
       {"3 t/a.py passed"},
       ""},
      {"external files that do not parse",
       {External("not an inventory")},
       {},
       "external files: "},  // then the parser's words
  };
}

TEST(ReportStreamDecoderTest, Streams) {
  for (StreamCase& c : StreamCases()) {
    SCOPED_TRACE(c.name);
    c.messages.front().set_worker_id(kWorker);
    FakeTarget target;
    Decoded got = Decode(c.messages, target);
    EXPECT_EQ(got.results, c.results);
    if (c.error == "external files: ") {
      EXPECT_EQ(got.error.rfind(c.error, 0), 0u) << got.error;
      EXPECT_GT(got.error.size(), c.error.size());
    } else {
      EXPECT_EQ(got.error, c.error);
    }
  }
}

TEST(ReportStreamDecoderTest, TheFirstMessageMustNameTheWorker) {
  FakeTarget target;
  Decoded got =
      Decode({Paths(0, {"a"}), WithWorker(Paths(1, {"b"}), kWorker)}, target);
  EXPECT_EQ(got.error, "the first message of a report must name its worker");
  EXPECT_TRUE(got.named.empty());
  EXPECT_TRUE(target.paths.empty());
}

TEST(ReportStreamDecoderTest, OnlyTheFirstMessageNamesANewWorker) {
  FakeTarget target;
  Decoded got = Decode({WithWorker(Paths(0, {"a"}), kWorker), Paths(1, {"b"}),
                        WithWorker(Result(3, "t/a.py", {1}), kWorker)},
                       target);
  EXPECT_EQ(got.error, "");
  EXPECT_EQ(got.named, (std::vector<bool>{true, false, false}));
}

TEST(ReportStreamDecoderTest, PathTablesAreInternedInOrder) {
  FakeTarget target;
  Decoded got = Decode(
      {WithWorker(Paths(0, {"a", "b"}), kWorker), Paths(2, {"c"})}, target);
  EXPECT_EQ(got.error, "");
  EXPECT_EQ(target.paths, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ReportStreamDecoderTest, ExternalFilesGoToTheBuildOrTheirRefusalIsNamed) {
  FakeTarget target;
  EXPECT_EQ(
      Decode({WithWorker(External(OneExternalFile()), kWorker)}, target).error,
      "");
  EXPECT_EQ(target.externals, std::vector<size_t>{1});

  FakeTarget refusing;
  refusing.refuse_external = true;
  EXPECT_EQ(Decode({WithWorker(External(OneExternalFile()), kWorker)}, refusing)
                .error,
            "external files: not absolute");
}

// Scopes of a continued result are merged by name; each kind keeps its own
// ids; opaque, an error and the output from any part stay; reasons add up; the last
// part's outcome and exit code win.
TEST(ReportStreamDecoderTest, ContinuedPartsMergeScopesKindsAndOpaqueness) {
  v1::ReportMessage first = Continued(Result(5, "t/a.py", {0}));
  v1::TestResult* r = first.mutable_result();
  r->set_opaque(true);
  r->set_error("could not run");
  r->add_opaque_reasons("static child");
  r->set_output_log("/w/out/t/a.py.log");
  r->set_output_shared(true);
  r->set_output_tail("tail\n");
  r->set_output_bytes(5);
  r->mutable_scopes(0)->add_absent(1);
  v1::ScopeDependencies* parent = r->add_scopes();
  parent->set_scope("//r");
  parent->add_listing(2);

  v1::ReportMessage last =
      Result(5, "t/a.py", {1}, "", v1::TEST_OUTCOME_FAILED);
  r = last.mutable_result();
  r->set_exit_code(3);
  r->add_opaque_reasons("unreadable log");
  r->mutable_scopes(0)->add_listing(0);
  r->add_scopes()->set_scope("//r");
  r->mutable_scopes(1)->add_content(2);

  ReportStreamDecoder decoder;
  FakeTarget target;
  std::optional<LeaseResult> refused;
  v1::ReportMessage paths = WithWorker(Paths(0, {"a", "b", "c"}), kWorker);
  ASSERT_TRUE(decoder.TakeWorker(paths).ok());
  ASSERT_TRUE(decoder.Decode(paths, target, &refused).ok());
  absl::StatusOr<std::optional<LeaseResult>> part =
      decoder.Decode(first, target, &refused);
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_FALSE(part->has_value());
  absl::StatusOr<std::optional<LeaseResult>> whole =
      decoder.Decode(last, target, &refused);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE(whole->has_value());
  EXPECT_FALSE(refused.has_value());
  EXPECT_TRUE(decoder.Finish().ok());

  const LeaseResult& got = **whole;
  EXPECT_EQ(Describe(got),
            "5 t/a.py failed opaque error=\"could not run\" "
            "[//r/t/a.py: 100,101/101/100] [//r: 102//102]");
  EXPECT_EQ(got.exit_code, 3);
  EXPECT_EQ(got.opaque_reasons,
            (std::vector<std::string>{"static child", "unreadable log"}));
  // The output, sent with the first part, stays.
  EXPECT_EQ(got.output_log, "/w/out/t/a.py.log");
  EXPECT_TRUE(got.output_shared);
  EXPECT_EQ(got.output_tail, "tail\n");
  EXPECT_EQ(got.output_bytes, 5u);
}

TEST(ReportStreamDecoderTest, RefusedResultStandsInAsAnOpaqueError) {
  LeaseResult r = RefusedResult(9, "t/a.py", "unknown lease 9");
  EXPECT_EQ(r.lease_id, 9u);
  EXPECT_EQ(r.test, "t/a.py");
  EXPECT_EQ(r.outcome, TestOutcome::kError);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_TRUE(r.opaque);
  EXPECT_EQ(r.error, "its report was refused: unknown lease 9");
  EXPECT_EQ(r.opaque_reasons, std::vector<std::string>{r.error});
  EXPECT_TRUE(r.scopes.empty());
}

}  // namespace
}  // namespace ste
