// Copyright: the ste authors. Durable blob writes and their hashes.
#include "blob_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store_test_util.h"

namespace ste {
namespace {

using ::testing::ElementsAre;
using testing_util::FileNames;
using testing_util::PatternBytes;
using testing_util::ReadWholeFile;
using testing_util::ScopedTempDir;

TEST(BlobFileTest, WritesTheBytesAndLeavesNoTempFile) {
  ScopedTempDir dir;
  const std::string bytes = PatternBytes("blob", (5 << 20) + 3);
  ASSERT_TRUE(WriteFileDurably(dir.path(), "b.blob", bytes).ok());
  EXPECT_EQ(ReadWholeFile(dir.path() + "/b.blob"), bytes);
  EXPECT_THAT(FileNames(dir.path()), ElementsAre("b.blob"));
}

TEST(BlobFileTest, ReplacesAnExistingFile) {
  ScopedTempDir dir;
  ASSERT_TRUE(WriteFileDurably(dir.path(), "b", "old, longer bytes").ok());
  ASSERT_TRUE(WriteFileDurably(dir.path(), "b", "new").ok());
  EXPECT_EQ(ReadWholeFile(dir.path() + "/b"), "new");
  EXPECT_THAT(FileNames(dir.path()), ElementsAre("b"));
}

TEST(BlobFileTest, HookSeesHalfTheBytesThenTheRename) {
  ScopedTempDir dir;
  const std::string bytes = PatternBytes("x", 3 << 20);
  std::vector<std::string> seen;
  auto hook = [&](const char* point) {
    std::vector<std::string> files = FileNames(dir.path());
    ASSERT_EQ(files.size(), 1u);
    std::string content = ReadWholeFile(dir.path() + "/" + files[0]);
    seen.push_back(std::string(point) + " " + files[0].substr(0, 7) + " " +
                   std::to_string(content.size()));
  };
  ASSERT_TRUE(WriteFileDurably(dir.path(), "b", bytes, hook).ok());
  EXPECT_THAT(
      seen, ElementsAre(
                "blob-half-written .tmp-b- " + std::to_string(bytes.size() / 2),
                "blob-renamed b " + std::to_string(bytes.size())));
}

TEST(BlobFileTest, FailsCleanlyInAMissingDirectory) {
  ScopedTempDir dir;
  absl::Status status = WriteFileDurably(dir.path() + "/nope", "b", "x");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("/nope/"));
}

TEST(BlobFileTest, HashOfFileEqualsHashOfBytes) {
  ScopedTempDir dir;
  for (size_t size : {size_t{0}, size_t{1}, size_t{240}, size_t{1} << 20,
                      (size_t{3} << 20) + 17}) {
    const std::string bytes = PatternBytes("h", size);
    ASSERT_TRUE(WriteFileDurably(dir.path(), "f", bytes).ok());
    absl::StatusOr<std::string> hash = Xxh3HexOfFile(dir.path() + "/f");
    ASSERT_TRUE(hash.ok()) << hash.status();
    EXPECT_EQ(*hash, Xxh3Hex(bytes)) << size;
    EXPECT_EQ(hash->size(), 32u);
  }
  EXPECT_TRUE(absl::IsNotFound(Xxh3HexOfFile(dir.path() + "/none").status()));
}

TEST(BlobFileTest, CachedHashReadsAnUnchangedOlderFileOnceAndAnyRewriteAgain) {
  ScopedTempDir dir;
  const std::string blobs = dir.path() + "/blobs";
  ASSERT_EQ(mkdir(blobs.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileDurably(blobs, "f", "first").ok());
  const std::string path = blobs + "/f";
  bool rehashed = false;
  absl::StatusOr<std::string> hash = Xxh3HexOfFileCached(path, &rehashed);
  ASSERT_TRUE(hash.ok()) << hash.status();
  EXPECT_EQ(*hash, Xxh3Hex("first"));
  EXPECT_TRUE(rehashed) << "nothing stamped yet";

  // A stamp is trusted only once the file is older than the stamp's whole
  // second (a change within the same tick could go unseen): wait past it.
  usleep(1100 * 1000);
  ASSERT_TRUE(Xxh3HexOfFileCached(path, &rehashed).ok());  // stamps, trusted from now
  hash = Xxh3HexOfFileCached(path, &rehashed);
  ASSERT_TRUE(hash.ok());
  EXPECT_EQ(*hash, Xxh3Hex("first"));
  EXPECT_FALSE(rehashed) << "unchanged and older than the stamp: not read again";
  EXPECT_EQ(testing_util::ReadWholeFile(dir.path() + "/verified/f").substr(0, 3), "v1 ");

  // Rewriting in place (same inode, same size) changes ctime: read again.
  testing_util::WriteWholeFile(path, "FIRST");
  hash = Xxh3HexOfFileCached(path, &rehashed);
  ASSERT_TRUE(hash.ok());
  EXPECT_TRUE(rehashed);
  EXPECT_EQ(*hash, Xxh3Hex("FIRST"));
  EXPECT_TRUE(absl::IsNotFound(Xxh3HexOfFileCached(blobs + "/none").status()));
}

}  // namespace
}  // namespace ste
