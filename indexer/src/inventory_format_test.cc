// Copyright: the ste authors. The inventory file format: round trips and
// every corruption the reader must reject.
#include <dirent.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inventory_test_util.h"
#include "ste/inventory.h"

namespace ste {
namespace {

using test::TempTree;
using ::testing::HasSubstr;

constexpr size_t kHeaderSize = 48;
constexpr size_t kRecordSize = 80;

InventoryEntry MakeEntry(const std::string& path, FileType type,
                         uint64_t seed) {
  InventoryEntry e;
  e.path = path;
  e.type = type;
  e.size = seed * 11;
  e.mtime_ns = -static_cast<int64_t>(seed) * 1000;  // negative survives
  e.ctime_ns = static_cast<int64_t>(seed) << 40;
  e.inode = seed * 0x1000000001ULL;
  e.dev = ~seed;
  e.mode = 0100644 + static_cast<uint32_t>(seed);
  e.hash = {seed * 0x9E3779B97F4A7C15ULL, ~seed};
  return e;
}

Inventory Small() {
  absl::StatusOr<Inventory> inv =
      Inventory::FromEntries({MakeEntry(".", FileType::kDirectory, 1),
                              MakeEntry("a.txt", FileType::kRegular, 2),
                              MakeEntry("l", FileType::kSymlink, 3),
                              MakeEntry("/ext/gone", FileType::kMissing, 4)},
                             1700000000000000000);
  EXPECT_TRUE(inv.ok());
  return *std::move(inv);
}

void PutU64(std::string* bytes, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    (*bytes)[at + i] = static_cast<char>(v >> (8 * i));
}

// Recomputes the trailing checksum, so that a test reaches the checks
// behind it.
void Reseal(std::string* bytes) {
  const size_t at = bytes->size() - 8;
  PutU64(bytes, at, XXH3_64bits(bytes->data(), at));
}

std::string ParseError(const std::string& bytes) {
  absl::StatusOr<Inventory> inv = Inventory::Parse(bytes);
  EXPECT_FALSE(inv.ok());
  if (inv.ok()) return "";
  EXPECT_EQ(inv.status().code(), absl::StatusCode::kDataLoss);
  return std::string(inv.status().message());
}

TEST(InventoryFormatTest, RoundTripKeepsEveryField) {
  Inventory inv = Small();
  std::string bytes = inv.Serialize();
  EXPECT_EQ(bytes.substr(0, 8), std::string("STEINV\0\0", 8));
  EXPECT_EQ(bytes.size(), kHeaderSize + 4 * kRecordSize + (1 + 5 + 1 + 9) + 8);
  absl::StatusOr<Inventory> back = Inventory::Parse(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->entries(), inv.entries());
  EXPECT_EQ(back->taken_at_ns(), inv.taken_at_ns());
  EXPECT_EQ(back->Serialize(), bytes);
}

TEST(InventoryFormatTest, EmptyInventoryRoundTrips) {
  Inventory empty;
  std::string bytes = empty.Serialize();
  EXPECT_EQ(bytes.size(), kHeaderSize + 8);
  absl::StatusOr<Inventory> back = Inventory::Parse(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->empty());
}

TEST(InventoryFormatTest, ScannedTreeRoundTripsThroughAFile) {
  TempTree tree;
  tree.Write("a/b.txt", "hello");
  tree.Write("c", "world");
  tree.Symlink("c", "link");
  absl::StatusOr<Inventory> inv = tree.Scan();
  ASSERT_TRUE(inv.ok()) << inv.status();

  TempTree out;
  const std::string path = out.root() + "/inventory.bin";
  ASSERT_TRUE(inv->WriteFile(path).ok());
  ASSERT_TRUE(inv->WriteFile(path).ok());  // over an existing file
  absl::StatusOr<Inventory> back = Inventory::ReadFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->entries(), inv->entries());
  EXPECT_EQ(back->taken_at_ns(), inv->taken_at_ns());

  // No temporary file is left behind; the file is world-readable.
  std::vector<std::string> names;
  DIR* dir = opendir(out.root().c_str());
  ASSERT_NE(dir, nullptr);
  while (struct dirent* ent = readdir(dir)) {
    if (ent->d_name[0] != '.') names.push_back(ent->d_name);
  }
  closedir(dir);
  EXPECT_EQ(names, std::vector<std::string>{"inventory.bin"});
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(InventoryFormatTest, ReadFileErrorsNameThePath) {
  TempTree dir;
  absl::StatusOr<Inventory> missing = Inventory::ReadFile(dir.Abs("nope"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("nope"));

  dir.Write("garbage", "this is not an inventory at all, not even close...");
  absl::StatusOr<Inventory> garbage = Inventory::ReadFile(dir.Abs("garbage"));
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(garbage.status().message()),
              HasSubstr(dir.Abs("garbage") + ": inventory: wrong magic"));

  EXPECT_FALSE(Small().WriteFile(dir.Abs("no/such/dir/inv")).ok());
}

TEST(InventoryFormatTest, EveryFlippedByteIsRejected) {
  const std::string good = Small().Serialize();
  for (size_t i = 0; i < good.size(); ++i) {
    for (unsigned char mask : {0x01, 0x80}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      EXPECT_FALSE(Inventory::Parse(bad).ok())
          << "byte " << i << " mask " << int{mask};
    }
  }
}

TEST(InventoryFormatTest, EveryTruncationIsRejected) {
  const std::string good = Small().Serialize();
  for (size_t n = 0; n < good.size(); ++n) {
    absl::StatusOr<Inventory> inv = Inventory::Parse(good.substr(0, n));
    EXPECT_FALSE(inv.ok()) << "truncated to " << n;
    if (n >= 8 && !inv.ok()) {
      EXPECT_THAT(std::string(inv.status().message()), HasSubstr("truncated"))
          << "truncated to " << n;
    }
  }
}

// Found by tests/fuzz/inventory (regress-empty.inv): a view with no bytes
// at all, data() null, reached memcmp.
TEST(InventoryFormatTest, NoBytesAtAllIsTruncated) {
  absl::StatusOr<Inventory> inv = Inventory::Parse(std::string_view());
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(inv.status().message()), HasSubstr("truncated header: 0 bytes"));
}

TEST(InventoryFormatTest, ClearMessagePerCorruption) {
  const std::string good = Small().Serialize();

  std::string magic = good;
  magic[3] = 'X';
  EXPECT_THAT(ParseError(magic), HasSubstr("wrong magic"));

  std::string version = good;
  version[8] = 2;
  EXPECT_THAT(ParseError(version),
              HasSubstr("unsupported format version 2 (this build reads "
                        "version 1)"));

  std::string checksum = good;
  checksum[kHeaderSize + 20] ^= 1;  // a record's mtime
  EXPECT_THAT(ParseError(checksum), HasSubstr("checksum mismatch"));

  EXPECT_THAT(ParseError(good + "x"), HasSubstr("trailing bytes"));

  std::string flags = good;
  flags[12] = 1;
  Reseal(&flags);
  EXPECT_THAT(ParseError(flags), HasSubstr("nonzero reserved header field"));

  const size_t record1 = kHeaderSize + kRecordSize;
  std::string offset = good;
  PutU64(&offset, record1, 1000);  // entry 1's path offset
  Reseal(&offset);
  EXPECT_THAT(ParseError(offset), HasSubstr("entry 1: path (offset 1000"));
  EXPECT_THAT(ParseError(offset), HasSubstr("out of the path table"));

  std::string huge_offset = good;
  PutU64(&huge_offset, record1, ~0ULL);  // no overflow into range
  Reseal(&huge_offset);
  EXPECT_THAT(ParseError(huge_offset), HasSubstr("out of the path table"));

  std::string empty_path = good;
  empty_path[record1 + 8] = 0;  // length 0
  Reseal(&empty_path);
  EXPECT_THAT(ParseError(empty_path), HasSubstr("out of the path table"));

  std::string type = good;
  type[record1 + 12] = 9;
  Reseal(&type);
  EXPECT_THAT(ParseError(type), HasSubstr("entry 1: unknown type 9"));

  std::string reserved = good;
  reserved[record1 + 61] = 1;
  Reseal(&reserved);
  EXPECT_THAT(ParseError(reserved), HasSubstr("nonzero reserved field"));

  // Entry 2 pointing at entry 0's path: not strictly increasing.
  std::string order = good;
  PutU64(&order, kHeaderSize + 2 * kRecordSize, 0);
  Reseal(&order);
  EXPECT_THAT(ParseError(order), HasSubstr("not strictly increasing"));

  // An entry count that cannot fit is "truncated", without overflow.
  std::string count = good;
  PutU64(&count, 16, ~0ULL / 2);
  EXPECT_THAT(ParseError(count), HasSubstr("truncated"));
}

// From 16,384 entries on, two threads decode a half each: the round trip
// is the same, an order broken exactly where the halves meet is still
// seen, and of two damaged entries the first is the one reported.
TEST(InventoryFormatTest, ABigInventoryParsedInHalvesIsTheSameAndItsFirstErrorWins) {
  std::vector<InventoryEntry> entries;
  const size_t n = 40001;
  for (size_t i = 0; i < n; ++i) {
    entries.push_back(MakeEntry(absl::StrCat("src/d", i / 25 + 100000, "/f", i % 25 + 10, ".txt"),
                                FileType::kRegular, i + 1));
  }
  absl::StatusOr<Inventory> inv = Inventory::FromEntries(entries, 1700000000000000000);
  ASSERT_TRUE(inv.ok()) << inv.status();
  const std::string good = inv->Serialize();
  absl::StatusOr<Inventory> back = Inventory::Parse(good);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), n);
  EXPECT_EQ(back->entries(), inv->entries());
  EXPECT_EQ(back->Serialize(), good);

  const size_t half = n / 2;
  auto record = [](size_t i) { return kHeaderSize + i * kRecordSize; };
  // The upper half's first entry pointing at the lower half's last path.
  std::string order = good;
  for (int b = 0; b < 12; ++b) order[record(half) + b] = good[record(half - 1) + b];
  Reseal(&order);
  EXPECT_THAT(ParseError(order), HasSubstr(absl::StrCat("entry ", half, ": paths not strictly increasing")));

  std::string both = good;
  both[record(n - 7) + 12] = 9;   // upper half: an unknown type
  both[record(half - 3) + 12] = 8;  // lower half: another
  Reseal(&both);
  EXPECT_THAT(ParseError(both), HasSubstr(absl::StrCat("entry ", half - 3, ": unknown type 8")));

  std::string upper = good;
  upper[record(n - 7) + 12] = 9;
  Reseal(&upper);
  EXPECT_THAT(ParseError(upper), HasSubstr(absl::StrCat("entry ", n - 7, ": unknown type 9")));
}

TEST(InventoryFormatTest, NulInPathIsRejected) {
  InventoryEntry e = MakeEntry("ab", FileType::kRegular, 1);
  absl::StatusOr<Inventory> inv = Inventory::FromEntries({e}, 0);
  ASSERT_TRUE(inv.ok());
  std::string bytes = inv->Serialize();
  bytes[kHeaderSize + kRecordSize + 1] = '\0';  // "a\0"
  Reseal(&bytes);
  EXPECT_THAT(ParseError(bytes), HasSubstr("NUL"));
}

}  // namespace
}  // namespace ste
