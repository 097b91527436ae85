// Copyright: the ste authors. The build journal's records round-trip, and
// a damaged one is refused whatever the damage.
#include "build_journal.h"

#include "gmock/gmock.h"
#include "xxhash.h"
#include "gtest/gtest.h"

namespace ste {
namespace {

using ::testing::HasSubstr;

InventoryEntry Entry(const std::string& path, uint64_t size) {
  InventoryEntry e;
  e.path = path;
  e.type = FileType::kRegular;
  e.mode = 0100644;
  e.size = size;
  e.mtime_ns = 123456789;
  e.hash = {size * 7, size * 13};
  return e;
}

BuildSpec Spec() {
  BuildSpec spec;
  spec.commit = "0123456789abcdef0123456789abcdef01234567";
  spec.mri = 42;
  spec.external = false;
  spec.cases = true;
  spec.tests = {{"tests/a.sh", 1.5}, {"tests/b c.sh", 0}};
  absl::StatusOr<Inventory> inventory =
      Inventory::FromEntries({Entry("lib/x.sh", 3), Entry("tests/a.sh", 9)}, 77);
  EXPECT_TRUE(inventory.ok()) << inventory.status();
  spec.inventory = *inventory;
  return spec;
}

AcceptedRecord Record() {
  AcceptedRecord r;
  r.finished.test = "tests/a.sh";
  r.finished.outcome = TestOutcome::kFailed;
  r.finished.exit_code = -3;
  r.finished.seconds = 0.125;
  r.finished.opaque = true;
  r.finished.detail = "a static child";
  r.finished.output_log = "/var/log/ste/tests%2Fa.sh.log";
  r.finished.output_shared = true;
  r.finished.output_tail = std::string("tail\0with NUL\n", 14);
  r.finished.output_bytes = 1u << 20;
  r.finished.worker_name = "host-1 (ipv4:127.0.0.1:5)";
  JournalScope own;
  own.scope = "//r/tests/a.sh";
  own.paths[0] = {"lib/x.sh", "/usr/lib/libc.so.6"};
  own.paths[1] = {"config/t.env"};
  own.paths[2] = {"fixtures"};
  JournalScope root;
  root.scope = "//r";
  root.paths[0] = {"ste.toml"};
  r.scopes = {own, root};
  r.external = {Entry("/usr/lib/libc.so.6", 2000000)};
  r.finished.flaky = true;
  r.writes = {"out/state", "/tmp/shared dir/x"};
  r.case_order = {"test_z", "TestA::test_b"};
  return r;
}

TEST(BuildJournalTest, ASpecRoundTrips) {
  const BuildSpec spec = Spec();
  absl::StatusOr<BuildSpec> back = DecodeBuildSpec(EncodeBuildSpec(spec));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->commit, spec.commit);
  EXPECT_EQ(back->mri, 42);
  EXPECT_FALSE(back->external);
  EXPECT_TRUE(back->cases);
  ASSERT_EQ(back->tests.size(), 2u);
  EXPECT_EQ(back->tests[1].test, "tests/b c.sh");
  EXPECT_EQ(back->tests[0].historical_seconds, 1.5);
  EXPECT_EQ(back->inventory.Serialize(), spec.inventory.Serialize());
  EXPECT_FALSE(back->case_reads);
  // ctest's cases (a case owns the files it read): the same byte, 2.
  BuildSpec reads = Spec();
  reads.case_reads = true;
  const std::string bytes = EncodeBuildSpec(reads);
  absl::StatusOr<BuildSpec> reads_back = DecodeBuildSpec(bytes);
  ASSERT_TRUE(reads_back.ok()) << reads_back.status();
  EXPECT_TRUE(reads_back->cases);
  EXPECT_TRUE(reads_back->case_reads);
  // Any other value is refused.
  std::string body = bytes.substr(0, bytes.size() - 8);
  ASSERT_EQ(body.back(), 2);
  body.back() = 3;
  const uint64_t sum = XXH3_64bits(body.data(), body.size());
  for (int i = 0; i < 8; i++) body.push_back(static_cast<char>(sum >> (8 * i)));
  absl::Status bad = DecodeBuildSpec(body).status();
  EXPECT_THAT(bad.message(), HasSubstr("has a cases value of 3")) << bad;
}

TEST(BuildJournalTest, AnAcceptedRecordRoundTrips) {
  const AcceptedRecord r = Record();
  absl::StatusOr<AcceptedRecord> back = DecodeAcceptedRecord(EncodeAcceptedRecord(r));
  ASSERT_TRUE(back.ok()) << back.status();
  const FinishedTest& f = back->finished;
  EXPECT_EQ(f.test, r.finished.test);
  EXPECT_EQ(f.outcome, TestOutcome::kFailed);
  EXPECT_EQ(f.exit_code, -3);
  EXPECT_EQ(f.seconds, 0.125);
  EXPECT_TRUE(f.opaque);
  EXPECT_EQ(f.detail, r.finished.detail);
  EXPECT_EQ(f.output_log, r.finished.output_log);
  EXPECT_TRUE(f.output_shared);
  EXPECT_EQ(f.output_tail, r.finished.output_tail);
  EXPECT_EQ(f.output_bytes, r.finished.output_bytes);
  EXPECT_EQ(f.worker_name, r.finished.worker_name);
  ASSERT_EQ(back->scopes.size(), 2u);
  for (size_t i = 0; i < 2; i++) {
    EXPECT_EQ(back->scopes[i].scope, r.scopes[i].scope);
    for (int k = 0; k < kDepKindCount; k++) EXPECT_EQ(back->scopes[i].paths[k], r.scopes[i].paths[k]);
  }
  ASSERT_EQ(back->external.size(), 1u);
  EXPECT_EQ(back->external[0], r.external[0]);
  EXPECT_TRUE(f.flaky);
  EXPECT_EQ(back->writes, r.writes);
  EXPECT_EQ(back->case_order, r.case_order);
}

// A record a version-1 ste journaled (the same body without flaky and
// writes, version 1): still read, not flaky, no writes.
TEST(BuildJournalTest, AVersionOneRecordIsRead) {
  AcceptedRecord r = Record();
  r.finished.flaky = false;
  r.writes.clear();
  r.case_order.clear();
  std::string bytes = EncodeAcceptedRecord(r);
  // Drop the version-2 tail (u8 flaky, u32 0 writes, u32 0 cases) and the
  // checksum; say version 1; sum again.
  std::string body = bytes.substr(0, bytes.size() - 8 - 9);
  body[8] = 1;
  body[9] = body[10] = body[11] = 0;
  const uint64_t sum = XXH3_64bits(body.data(), body.size());
  for (int i = 0; i < 8; i++) body.push_back(static_cast<char>(sum >> (8 * i)));
  absl::StatusOr<AcceptedRecord> back = DecodeAcceptedRecord(body);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->finished.test, r.finished.test);
  EXPECT_FALSE(back->finished.flaky);
  EXPECT_TRUE(back->writes.empty());
  EXPECT_TRUE(back->case_order.empty());
  // A version this ste does not know is refused, saying so.
  body.resize(body.size() - 8);
  body[8] = 3;
  const uint64_t sum3 = XXH3_64bits(body.data(), body.size());
  for (int i = 0; i < 8; i++) body.push_back(static_cast<char>(sum3 >> (8 * i)));
  absl::Status newer = DecodeAcceptedRecord(body).status();
  EXPECT_TRUE(absl::IsDataLoss(newer)) << newer;
  EXPECT_THAT(newer.message(), HasSubstr("format version 3"));
}

TEST(BuildJournalTest, EveryDamageIsRefused) {
  const std::string good = EncodeAcceptedRecord(Record());
  // Any one byte changed, anywhere (the checksum covers all of it).
  for (size_t i = 0; i < good.size(); i++) {
    std::string bad = good;
    bad[i] ^= 0x20;
    absl::StatusOr<AcceptedRecord> r = DecodeAcceptedRecord(bad);
    EXPECT_TRUE(absl::IsDataLoss(r.status())) << "byte " << i << ": " << r.status();
  }
  // Cut short anywhere.
  for (size_t n = 0; n < good.size(); n++) {
    EXPECT_TRUE(absl::IsDataLoss(DecodeAcceptedRecord(good.substr(0, n)).status())) << n;
  }
  // The other kind of record.
  absl::Status kind = DecodeAcceptedRecord(EncodeBuildSpec(Spec())).status();
  EXPECT_TRUE(absl::IsDataLoss(kind));
  EXPECT_THAT(kind.message(), HasSubstr("kind"));
  EXPECT_TRUE(absl::IsDataLoss(DecodeBuildSpec(good).status()));
}

}  // namespace
}  // namespace ste
