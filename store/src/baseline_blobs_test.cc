// The baseline's optional blobs (baseline_loader.h): the flaky tests and
// what tests wrote, encoded and read back, and damage refused.
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ste/baseline_loader.h"

namespace ste {
namespace {

TEST(BaselineBlobs, FlakyTestNamesRoundTripSortedAndUnique) {
  const std::string bytes = EncodeTestNames({"tests/b.sh", "tests/a b.sh", "tests/b.sh"});
  EXPECT_EQ(bytes, std::string("tests/a b.sh\0tests/b.sh\0", 24));
  EXPECT_EQ(DecodeTestNames(bytes), (std::vector<std::string>{"tests/a b.sh", "tests/b.sh"}));
  EXPECT_EQ(DecodeTestNames(bytes + "tests/unended"), (std::vector<std::string>{"tests/a b.sh", "tests/b.sh"}))
      << "an unended last name is not taken";
}

TEST(BaselineBlobs, WritesRoundTripAndATruncatedBlobIsDataLoss) {
  std::map<std::string, std::vector<std::string>> writes = {
      {"tests/w.sh", {"data/a.txt", "/tmp/outside"}}, {"tests/x.sh", {"b"}}, {"tests/none.sh", {}}};
  const std::string bytes = EncodeWrites(writes);
  absl::StatusOr<std::map<std::string, std::vector<std::string>>> back = DecodeWrites(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  writes.erase("tests/none.sh");  // a test with no write is left out
  EXPECT_EQ(*back, writes);
  for (size_t n = 1; n < bytes.size(); n++) {
    absl::StatusOr<std::map<std::string, std::vector<std::string>>> cut = DecodeWrites(bytes.substr(0, n));
    // Cut at a test's end (after its closing NUL) it reads as fewer tests.
    if (n == bytes.find(std::string("\0\0", 2)) + 2) {
      EXPECT_TRUE(cut.ok()) << n;
      continue;
    }
    EXPECT_FALSE(cut.ok()) << "cut at " << n;
  }
  EXPECT_FALSE(DecodeWrites(std::string("\0", 1)).ok()) << "a test without a name";
}

}  // namespace
}  // namespace ste
