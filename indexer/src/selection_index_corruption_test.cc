// Copyright: the ste authors. Damaged selection index images: every damage
// is an error (or, inside a bitmap, an error when that bitmap is read) —
// never a crash, never a silently smaller answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "selection_index_format.h"
#include "ste/selection_index.h"

namespace ste {
namespace {

namespace fmt = index_format;
using ::testing::HasSubstr;

// A small index with every feature: scope ranges, per-test deps of each
// kind, an opaque test, byte-string paths, an absolute path and a view; in
// version 2, blocks of two keys (so four blocks).
std::string SmallImage(uint32_t version = 1) {
  SelectionIndexBuilder b(SelectionIndexBuilder::Options{1, version, /*keys_per_block=*/2});
  EXPECT_TRUE(
      b.AddTests({"//r/a/t1", "//r/a/t2", "//r/a.x", "//r/b/t3", "//r/c"})
          .ok());
  EXPECT_TRUE(
      b.AddScopeDependency("//r", "Gemfile.lock", DepKind::kContent).ok());
  EXPECT_TRUE(
      b.AddScopeDependency("//r/a", "a/helper", DepKind::kContent).ok());
  EXPECT_TRUE(b.AddTestDependency(3, "b/x\n", DepKind::kAbsent).ok());
  EXPECT_TRUE(b.AddTestDependency(4, "c\xff", DepKind::kContent).ok());
  EXPECT_TRUE(b.AddTestDependency(0, "lib", DepKind::kListing).ok());
  EXPECT_TRUE(b.AddTestDependency(2, "single", DepKind::kContent).ok());
  if (version == 2) {
    EXPECT_TRUE(b.AddTestDependency(1, "/usr/lib/x.so", DepKind::kContent).ok());
    EXPECT_TRUE(b.AddTestDependency(1, "a/\x01ste-def:f", DepKind::kContent).ok());
  }
  EXPECT_TRUE(b.SetOpaque(4).ok());
  return b.Finish().value();
}

struct Reference {
  std::vector<DepKey> keys;
  std::vector<Roaring> bitmaps;
  // Where each key's bitmap lies, and (version 2) its key block, in the
  // undamaged image.
  std::vector<std::pair<uint64_t, uint64_t>> bitmap_at, block_at;
  uint64_t bitmaps_end = 0, key_blocks_end = 0;
  std::string dump;
};

uint64_t Field(const std::string& image, size_t offset) {
  return fmt::DecodeU64(image.data() + offset);
}

Reference ReferenceOf(const std::string& image) {
  auto index = SelectionIndex::FromBytes(image).value();
  Reference ref;
  const bool v1 = index->format_version() == 1;
  ref.bitmaps_end = fmt::kHeaderSize + Field(image, fmt::kOffBitmapsSize) +
                    (v1 ? 0 : fmt::kHeaderSizeV2 - fmt::kHeaderSize);
  ref.key_blocks_end = v1 ? ref.bitmaps_end : Field(image, fmt::kOff2TestTableOffset);
  for (size_t i = 0; i < index->key_count(); ++i) {
    ref.keys.push_back(index->KeyAt(i).value());
    ref.bitmaps.push_back(index->BitmapAt(i).value());
    const char* e;
    if (v1) {
      e = image.data() + Field(image, fmt::kOffKeyTableOffset) + i * fmt::kKeyEntrySize;
      ref.block_at.emplace_back(0, 0);
    } else {
      const uint32_t kpb = fmt::DecodeU32(image.data() + fmt::kOff2KeysPerBlock);
      const char* f = image.data() + Field(image, fmt::kOff2FencesOffset) +
                      (i / kpb) * fmt::kFenceEntrySize;
      const uint64_t at = fmt::DecodeU64(f + fmt::kFenceBlockOffset);
      ref.block_at.emplace_back(at, fmt::DecodeU64(f + fmt::kFenceBlockSize));
      e = image.data() + at + (i % kpb) * fmt::kKeyEntrySize;
    }
    ref.bitmap_at.emplace_back(fmt::DecodeU64(e + fmt::kKeyBitmapOffset),
                               fmt::DecodeU64(e + fmt::kKeyBitmapSize));
  }
  ref.dump = index->DumpJson().value();
  return ref;
}

bool IsRejection(const absl::Status& s) {
  return s.code() == absl::StatusCode::kDataLoss ||
         s.code() == absl::StatusCode::kFailedPrecondition;
}

bool Within(size_t offset, std::pair<uint64_t, uint64_t> range) {
  return offset >= range.first && offset < range.first + range.second;
}

// Opening a damaged image, then reading everything: either Open fails, or
// every read yields the true answer or an error; a key whose bitmap or key
// block holds the damage is an error, every other key its true answer.
void CheckDamaged(const std::string& damaged, const Reference& ref,
                  size_t damaged_offset, bool must_fail_open) {
  auto index = SelectionIndex::FromBytes(damaged);
  if (!index.ok()) {
    EXPECT_TRUE(IsRejection(index.status())) << index.status();
    return;
  }
  ASSERT_FALSE(must_fail_open)
      << "damage at byte " << damaged_offset << " went unnoticed by Open";
  const SelectionIndex& ix = **index;
  ASSERT_EQ(ix.key_count(), ref.bitmaps.size());
  Roaring all;
  bool any_damaged = false;
  for (size_t i = 0; i < ix.key_count(); ++i) {
    const bool hit = Within(damaged_offset, ref.bitmap_at[i]) || Within(damaged_offset, ref.block_at[i]);
    any_damaged |= hit;
    absl::StatusOr<Roaring> r = ix.BitmapAt(i);
    absl::StatusOr<Roaring> found = ix.Lookup(ref.keys[i]);
    if (hit) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss)
          << "damage at byte " << damaged_offset << " inside key " << i;
      EXPECT_EQ(found.status().code(), absl::StatusCode::kDataLoss)
          << "damage at byte " << damaged_offset << " inside key " << i;
    } else {
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_TRUE(*r == ref.bitmaps[i]);
      EXPECT_EQ(ix.KeyAt(i).value(), ref.keys[i]);
      ASSERT_TRUE(found.ok()) << found.status();
      EXPECT_TRUE(*found == ref.bitmaps[i]);
    }
    all |= ref.bitmaps[i];
  }
  absl::StatusOr<Roaring> u = ix.Union(ref.keys);
  if (any_damaged) {
    EXPECT_EQ(u.status().code(), absl::StatusCode::kDataLoss);
  } else {
    ASSERT_TRUE(u.ok()) << u.status();
    EXPECT_TRUE(*u == all);
  }
  absl::StatusOr<std::string> dump = ix.DumpJson();
  if (dump.ok()) {
    EXPECT_EQ(*dump, ref.dump);
  } else {
    EXPECT_EQ(dump.status().code(), absl::StatusCode::kDataLoss);
  }
}

class EveryVersion : public ::testing::TestWithParam<uint32_t> {};
INSTANTIATE_TEST_SUITE_P(SelectionIndexCorruptionTest, EveryVersion, ::testing::Values(1u, 2u));

TEST_P(EveryVersion, EveryFlippedByte) {
  const std::string image = SmallImage(GetParam());
  const Reference ref = ReferenceOf(image);
  ASSERT_GT(image.size(), ref.key_blocks_end);
  for (size_t off = 0; off < image.size(); ++off) {
    for (unsigned char mask : {0x01, 0x80, 0xff}) {
      std::string damaged = image;
      damaged[off] = static_cast<char>(damaged[off] ^ mask);
      // Open reads neither the bitmaps nor the key blocks.
      const bool lazy = off >= fmt::kHeaderSize && off < ref.key_blocks_end &&
                        (GetParam() == 1 || off >= fmt::kHeaderSizeV2);
      CheckDamaged(damaged, ref, off, /*must_fail_open=*/!lazy);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(EveryVersion, EveryTruncationAndTrailingBytes) {
  const std::string image = SmallImage(GetParam());
  for (size_t len = 0; len < image.size(); ++len) {
    auto index = SelectionIndex::FromBytes(image.substr(0, len));
    ASSERT_FALSE(index.ok()) << "truncated to " << len;
    EXPECT_EQ(index.status().code(), absl::StatusCode::kDataLoss);
  }
  auto longer = SelectionIndex::FromBytes(image + std::string(8, '\0'));
  EXPECT_EQ(longer.status().code(), absl::StatusCode::kDataLoss);
}

TEST_P(EveryVersion, MessagesSayWhat) {
  const std::string image = SmallImage(GetParam());
  auto message = [](const std::string& bytes) {
    return std::string(SelectionIndex::FromBytes(bytes).status().message());
  };
  std::string bad_magic = image;
  bad_magic[0] = 'X';
  EXPECT_THAT(message(bad_magic), HasSubstr("bad magic"));
  EXPECT_THAT(message(image.substr(0, 50)), HasSubstr("truncated"));
  EXPECT_THAT(message(image.substr(0, image.size() - 1)),
              HasSubstr("truncated"));
  std::string bad_sum = image;
  bad_sum[image.size() - 1] ^= 1;
  EXPECT_THAT(message(bad_sum), HasSubstr("checksum"));
  EXPECT_THAT(message("not an index at all, clearly"), HasSubstr("truncated"));
}

TEST_P(EveryVersion, WrongVersion) {
  std::string image = SmallImage(GetParam());
  fmt::EncodeU32(image.data() + fmt::kOffVersion, 3);
  auto index = SelectionIndex::FromBytes(image);
  EXPECT_EQ(index.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(index.status().message()),
              HasSubstr("unsupported format version 3"));
}

TEST_P(EveryVersion, DamagedFileOnDisk) {
  const std::string image = SmallImage(GetParam());
  const std::string path =
      (std::filesystem::temp_directory_path() /
       absl::StrCat("ste_index_corrupt_", getpid(), ".bin"))
          .string();
  for (const std::string& bytes : {image.substr(0, image.size() / 2),
                                   std::string(), image.substr(0, 10)}) {
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    auto index = SelectionIndex::Open(path);
    EXPECT_EQ(index.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(index.status().message()), HasSubstr(path));
  }
  std::filesystem::remove(path);
  EXPECT_FALSE(
      SelectionIndex::Open(std::filesystem::temp_directory_path().string())
          .ok());
}

// Damage that a checksum cannot catch, because the writer itself was wrong:
// the structural checks must still refuse it. Open() recomputes the
// checksums (version 2: each key block's, then the header's) so that only
// the structure is wrong.
class ForgedImage {
 public:
  explicit ForgedImage(uint32_t version = 1) : version_(version), image_(SmallImage(version)) {}
  char* at(size_t offset) { return image_.data() + offset; }
  // Version 1: key entry i, test entry i.
  char* key(size_t i) {
    return at(Field(image_, fmt::kOffKeyTableOffset) + i * fmt::kKeyEntrySize);
  }
  char* test(size_t i) {
    return at(Field(image_, fmt::kOffTestTableOffset) +
              i * fmt::kTestEntrySize);
  }
  // Version 2: fence j, key block j.
  char* fence(size_t j) {
    return at(Field(image_, fmt::kOff2FencesOffset) + j * fmt::kFenceEntrySize);
  }
  char* block(size_t j) { return at(fmt::DecodeU64(fence(j) + fmt::kFenceBlockOffset)); }
  absl::Status Open() {
    if (version_ == 2) RepairBlockChecksums();
    const size_t checksum_at = version_ == 1 ? fmt::kOffChecksum : fmt::kOff2Checksum;
    const uint64_t tables =
        Field(image_, version_ == 1 ? fmt::kOffTestTableOffset : fmt::kOff2TestTableOffset);
    fmt::EncodeU64(at(checksum_at),
                   fmt::HeaderChecksum(image_.data(), image_.data() + tables,
                                       image_.size() - tables, checksum_at));
    auto index = SelectionIndex::FromBytes(image_);
    if (index.ok()) index_ = *std::move(index);
    return index.status();
  }
  std::string& image() { return image_; }
  SelectionIndex& index() { return *index_; }
  // What reading every key says: "" when all read.
  std::string ReadAll() {
    absl::Status s = index_->VerifyAll();
    return std::string(s.message());
  }

 private:
  void RepairBlockChecksums() {
    const uint64_t fences = Field(image_, fmt::kOff2FencesOffset);
    const uint64_t kpb = fmt::DecodeU32(at(fmt::kOff2KeysPerBlock));
    const uint64_t n_keys = Field(image_, fmt::kOffNKeys);
    const uint64_t n_blocks = kpb == 0 ? 0 : (n_keys + kpb - 1) / kpb;
    for (uint64_t j = 0; j < n_blocks && fences + (j + 1) * fmt::kFenceEntrySize <= image_.size(); ++j) {
      char* f = at(fences + j * fmt::kFenceEntrySize);
      const uint64_t off = fmt::DecodeU64(f + fmt::kFenceBlockOffset);
      const uint64_t size = fmt::DecodeU64(f + fmt::kFenceBlockSize);
      if (off <= image_.size() && size <= image_.size() - off) {
        fmt::EncodeU64(f + fmt::kFenceBlockChecksum, fmt::BitmapChecksum(at(off), size));
      }
    }
  }

  uint32_t version_;
  std::string image_;
  std::unique_ptr<SelectionIndex> index_;
};

TEST(SelectionIndexCorruptionTest, ForgedTablesAreRejected) {
  {
    ForgedImage f;
    ASSERT_TRUE(f.Open().ok());
  }
  {
    ForgedImage f;  // bitmap past the bitmap area
    fmt::EncodeU64(f.key(0) + fmt::kKeyBitmapSize, 1 << 20);
    EXPECT_THAT(std::string(f.Open().message()), HasSubstr("outside"));
  }
  {
    ForgedImage f;  // misaligned bitmap
    fmt::EncodeU64(f.key(1) + fmt::kKeyBitmapOffset,
                   fmt::DecodeU64(f.key(1) + fmt::kKeyBitmapOffset) + 1);
    EXPECT_EQ(f.Open().code(), absl::StatusCode::kDataLoss);
  }
  {
    ForgedImage f;  // keys out of order
    std::string k0(f.key(0), fmt::kKeyEntrySize);
    std::memcpy(f.key(0), f.key(1), fmt::kKeyEntrySize);
    std::memcpy(f.key(1), k0.data(), fmt::kKeyEntrySize);
    EXPECT_THAT(std::string(f.Open().message()), HasSubstr("out of order"));
  }
  {
    ForgedImage f;  // path out of the string area
    fmt::EncodeU32(f.key(2) + fmt::kKeyPathSize, 1 << 30);
    EXPECT_EQ(f.Open().code(), absl::StatusCode::kDataLoss);
  }
  {
    ForgedImage f;  // unknown kind
    f.key(0)[fmt::kKeyKind] = 9;
    EXPECT_EQ(f.Open().code(), absl::StatusCode::kDataLoss);
  }
  {
    ForgedImage f;  // tests out of order
    std::string t0(f.test(0), fmt::kTestEntrySize);
    std::memcpy(f.test(0), f.test(1), fmt::kTestEntrySize);
    std::memcpy(f.test(1), t0.data(), fmt::kTestEntrySize);
    EXPECT_THAT(std::string(f.Open().message()), HasSubstr("out of order"));
  }
  {
    ForgedImage f;  // unknown test flag
    fmt::EncodeU32(f.test(0) + fmt::kTestFlags, 2);
    EXPECT_EQ(f.Open().code(), absl::StatusCode::kDataLoss);
  }
  {
    ForgedImage f;  // test count that does not fit
    fmt::EncodeU64(f.at(fmt::kOffNTests), UINT64_MAX / 8);
    EXPECT_EQ(f.Open().code(), absl::StatusCode::kDataLoss);
  }
  {
    ForgedImage f;  // unknown header flag
    fmt::EncodeU64(f.at(fmt::kOffFlags), 1);
    EXPECT_EQ(f.Open().code(), absl::StatusCode::kDataLoss);
  }
}

TEST(SelectionIndexCorruptionTest, ForgedVersion2IsRejected) {
  {
    ForgedImage f(2);
    ASSERT_TRUE(f.Open().ok());
    EXPECT_EQ(f.index().key_count(), 8u);  // four blocks of two
    EXPECT_EQ(f.ReadAll(), "");
    EXPECT_THAT(f.index().OutsideAndViewPaths(), ::testing::ElementsAre("/usr/lib/x.so", "a/\x01ste-def:f"));
  }
  {
    ForgedImage f(2);  // keys out of order inside a block: found when it is read
    std::string k0(f.block(1), fmt::kKeyEntrySize);
    std::memcpy(f.block(1), f.block(1) + fmt::kKeyEntrySize, fmt::kKeyEntrySize);
    std::memcpy(f.block(1) + fmt::kKeyEntrySize, k0.data(), fmt::kKeyEntrySize);
    ASSERT_TRUE(f.Open().ok());
    EXPECT_TRUE(f.index().BitmapAt(0).ok()) << "block 0 is sound";
    EXPECT_EQ(f.index().BitmapAt(2).status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(f.ReadAll(), HasSubstr("key block 1"));
  }
  {
    ForgedImage f(2);  // a fence that is not its block's first key
    char* path = f.at(Field(f.image(), fmt::kOff2FencesOffset) + 4 * fmt::kFenceEntrySize +
                      fmt::DecodeU64(f.fence(2) + fmt::kFencePathOffset));
    path[fmt::DecodeU32(f.fence(2) + fmt::kFencePathSize) - 1] ^= 1;
    absl::Status open = f.Open();
    if (open.ok()) {
      EXPECT_THAT(f.ReadAll(), HasSubstr("key block"));
    } else {
      EXPECT_THAT(std::string(open.message()), HasSubstr("fence"));
    }
  }
  {
    ForgedImage f(2);  // a key's bitmap outside the bitmap area
    fmt::EncodeU64(f.block(0) + fmt::kKeyBitmapSize, 1 << 20);
    ASSERT_TRUE(f.Open().ok());
    EXPECT_THAT(f.ReadAll(), HasSubstr("outside the bitmap area"));
    EXPECT_EQ(f.index().Union({f.index().KeyAt(2).value(), DepKey{"Gemfile.lock", DepKind::kContent}})
                  .status()
                  .code(),
              absl::StatusCode::kDataLoss);
  }
  {
    ForgedImage f(2);  // a path past its block
    fmt::EncodeU32(f.block(2) + fmt::kKeyPathSize, 1 << 20);
    ASSERT_TRUE(f.Open().ok());
    EXPECT_THAT(f.ReadAll(), HasSubstr("path out of"));
  }
  {
    ForgedImage f(2);  // blocks out of place
    fmt::EncodeU64(f.fence(1) + fmt::kFenceBlockOffset,
                   fmt::DecodeU64(f.fence(1) + fmt::kFenceBlockOffset) + 1);
    EXPECT_THAT(std::string(f.Open().message()), HasSubstr("out of place"));
  }
  {
    ForgedImage f(2);  // fences out of order
    std::string f0(f.fence(0), fmt::kFenceEntrySize);
    std::memcpy(f.fence(0), f.fence(1), fmt::kFenceEntrySize);
    std::memcpy(f.fence(1), f0.data(), fmt::kFenceEntrySize);
    EXPECT_EQ(f.Open().code(), absl::StatusCode::kDataLoss);
  }
  for (uint32_t kpb : {0u, fmt::kMaxKeysPerBlock + 1, 3u}) {
    ForgedImage f(2);  // keys per block out of range, or not the blocks'
    fmt::EncodeU32(f.at(fmt::kOff2KeysPerBlock), kpb);
    EXPECT_EQ(f.Open().code(), absl::StatusCode::kDataLoss) << kpb;
  }
  {
    ForgedImage f(2);  // an outside path that is neither absolute nor a view
    char* p = f.at(f.image().find("/usr/lib/x.so", Field(f.image(), fmt::kOff2OutsidePathsOffset)));
    *p = 'u';
    EXPECT_THAT(std::string(f.Open().message()), HasSubstr("neither absolute nor a view"));
  }
  {
    ForgedImage f(2);  // reserved header fields
    fmt::EncodeU64(f.at(fmt::kOff2Reserved2), 1);
    EXPECT_EQ(f.Open().code(), absl::StatusCode::kDataLoss);
  }
}

// A bitmap rewritten with a matching checksum but a test id past the end.
TEST(SelectionIndexCorruptionTest, ForgedBitmapWithOutOfRangeTest) {
  ForgedImage f;
  ASSERT_TRUE(f.Open().ok());
  size_t single = f.index().key_count();
  for (size_t i = 0; i < f.index().key_count(); ++i) {
    if (f.index().KeyAt(i)->path == "single") single = i;
  }
  ASSERT_LT(single, f.index().key_count());
  Roaring forged;
  forged.add(100000);  // same serialized size as {2}: one array container
  std::string bytes(forged.getSizeInBytes(true), '\0');
  forged.write(bytes.data(), true);
  char* e = f.key(single);
  ASSERT_EQ(fmt::DecodeU64(e + fmt::kKeyBitmapSize), bytes.size());
  std::memcpy(f.at(fmt::DecodeU64(e + fmt::kKeyBitmapOffset)), bytes.data(),
              bytes.size());
  fmt::EncodeU64(e + fmt::kKeyBitmapChecksum,
                 fmt::BitmapChecksum(bytes.data(), bytes.size()));
  ASSERT_TRUE(f.Open().ok());
  auto r = f.index().Lookup("single", DepKind::kContent);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("out of range"));
  // Union and the dump fail too, rather than answering without it.
  EXPECT_FALSE(f.index().Union({DepKey{"single", DepKind::kContent}}).ok());
  EXPECT_FALSE(f.index().DumpJson().ok());
}

// A bitmap that deserializes but whose array container is out of order
// ({5, 2}: maximum() says 2): without the container checks
// (roaring_validate.h) the dump indexed past its per-test table. Found by
// tests/fuzz/selection_index (regress-bitmap-container.idx).
TEST(SelectionIndexCorruptionTest, ForgedBitmapWithContainerOutOfOrder) {
  ForgedImage f;
  ASSERT_TRUE(f.Open().ok());
  size_t single = f.index().key_count();
  for (size_t i = 0; i < f.index().key_count(); ++i) {
    if (f.index().KeyAt(i)->path == "single") single = i;
  }
  ASSERT_LT(single, f.index().key_count());
  Roaring two;
  two.add(2);
  two.add(5);  // ids of the image's 5 tests... and one past them, once swapped
  std::string bytes(two.getSizeInBytes(true), '\0');
  two.write(bytes.data(), true);
  ASSERT_EQ(bytes.size(), 20u);  // cookie, count, key+cardinality, offset, 2 values
  std::swap(bytes[16], bytes[18]);
  char* e = f.key(single);
  // {2} took 18 bytes of its 24; {5, 2} fits in the same place.
  ASSERT_EQ(fmt::AlignUp(fmt::DecodeU64(e + fmt::kKeyBitmapSize)), 24u);
  std::memcpy(f.at(fmt::DecodeU64(e + fmt::kKeyBitmapOffset)), bytes.data(), bytes.size());
  fmt::EncodeU64(e + fmt::kKeyBitmapSize, bytes.size());
  fmt::EncodeU64(e + fmt::kKeyBitmapChecksum, fmt::BitmapChecksum(bytes.data(), bytes.size()));
  ASSERT_TRUE(f.Open().ok());
  auto r = f.index().Lookup("single", DepKind::kContent);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("out of order"));
  EXPECT_FALSE(f.index().DumpJson().ok());
}

// Garbage with a matching checksum: the safe deserialiser refuses it.
TEST(SelectionIndexCorruptionTest, ForgedGarbageBitmap) {
  for (unsigned char fill : {0x00, 0xff, 0x3a}) {
    ForgedImage f;
    char* e = f.key(0);
    const uint64_t off = fmt::DecodeU64(e + fmt::kKeyBitmapOffset);
    const uint64_t size = fmt::DecodeU64(e + fmt::kKeyBitmapSize);
    std::memset(f.at(off), fill, size);
    fmt::EncodeU64(e + fmt::kKeyBitmapChecksum,
                   fmt::BitmapChecksum(f.at(off), size));
    ASSERT_TRUE(f.Open().ok());
    EXPECT_EQ(f.index().BitmapAt(0).status().code(),
              absl::StatusCode::kDataLoss);
  }
}

}  // namespace
}  // namespace ste
