// Copyright: the ste authors. Inventory::Diff and the JSON renderings.
#include <xxhash.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inventory_test_util.h"
#include "ste/inventory.h"

namespace ste {
namespace {

using test::TempTree;
using ::testing::HasSubstr;

XXH128_hash_t Xxh(const std::string& s) {
  return XXH3_128bits(s.data(), s.size());
}

InventoryEntry Entry(const std::string& path, FileType type,
                     const std::string& content, uint32_t mode = 0644) {
  InventoryEntry e;
  e.path = path;
  e.type = type;
  e.size = content.size();
  e.mode = mode;
  e.hash = type == FileType::kMissing ? XXH128_hash_t{0, 0} : Xxh(content);
  return e;
}

TEST(InventoryDiffTest, ModifiedAddedDeletedAndTypeChanges) {
  using F = FileType;
  absl::StatusOr<Inventory> base = Inventory::FromEntries(
      {
          Entry(".", F::kDirectory, "a b"),
          Entry("same", F::kRegular, "s"),
          Entry("edited", F::kRegular, "v1"),
          Entry("gone", F::kRegular, "g"),
          Entry("became_link", F::kRegular, "x"),
          Entry("dir", F::kDirectory, "names: x"),
          Entry("dir_same", F::kDirectory, "names: y"),
          Entry("script", F::kRegular, "#!", 0644),
          Entry("other_bits", F::kRegular, "o", 0644),
          Entry("/ext/appears", F::kMissing, ""),
          Entry("/ext/disappears", F::kRegular, "e"),
          Entry("/ext/still_missing", F::kMissing, ""),
          Entry("/ext/missing_then_absent", F::kMissing, ""),
          Entry("stat_only", F::kRegular, "same"),
      },
      100);
  InventoryEntry stat_only = Entry("stat_only", F::kRegular, "same");
  stat_only.mtime_ns = 5;
  stat_only.inode = 77;
  absl::StatusOr<Inventory> head = Inventory::FromEntries(
      {
          Entry(".", F::kDirectory, "a b"),
          Entry("same", F::kRegular, "s"),
          Entry("edited", F::kRegular, "v2"),
          Entry("new", F::kRegular, "n"),
          Entry("became_link", F::kSymlink, "x"),
          Entry("dir", F::kDirectory, "names: x z"),
          Entry("dir_same", F::kDirectory, "names: y"),
          Entry("script", F::kRegular, "#!", 0755),
          Entry("other_bits", F::kRegular, "o", 0600),
          Entry("/ext/appears", F::kRegular, "now"),
          Entry("/ext/disappears", F::kMissing, ""),
          Entry("/ext/still_missing", F::kMissing, ""),
          stat_only,
      },
      200);
  ASSERT_TRUE(base.ok() && head.ok());
  InventoryDiff diff = Inventory::Diff(*base, *head);
  struct Want {
    const char* path;
    ChangeKind change;
    FileType type;
    FileType old_type;
  };
  const std::vector<Want> want = {
      {"/ext/appears", ChangeKind::kAdded, F::kRegular, F::kMissing},
      {"/ext/disappears", ChangeKind::kDeleted, F::kRegular, F::kRegular},
      {"became_link", ChangeKind::kModified, F::kSymlink, F::kRegular},
      {"dir", ChangeKind::kModified, F::kDirectory, F::kDirectory},
      {"edited", ChangeKind::kModified, F::kRegular, F::kRegular},
      {"gone", ChangeKind::kDeleted, F::kRegular, F::kRegular},
      {"new", ChangeKind::kAdded, F::kRegular, F::kMissing},
      {"script", ChangeKind::kModified, F::kRegular, F::kRegular},
  };
  ASSERT_EQ(diff.changes.size(), want.size()) << diff.ToJsonLines();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(diff.changes[i].path, want[i].path) << i;
    EXPECT_EQ(diff.changes[i].change, want[i].change) << want[i].path;
    EXPECT_EQ(diff.changes[i].type, want[i].type) << want[i].path;
    EXPECT_EQ(diff.changes[i].old_type, want[i].old_type) << want[i].path;
  }
  EXPECT_TRUE(Inventory::Diff(*head, *head).changes.empty());
  EXPECT_EQ(Inventory::Diff(Inventory(), *head).changes.size(),
            head->size() - 2);  // minus the two kMissing entries
}

TEST(InventoryDiffTest, DiffOfRealScans) {
  TempTree tree;
  tree.Write("keep", "k");
  tree.Write("edit", "e1");
  tree.Write("del", "d");
  tree.Write("sub/x", "x");
  absl::StatusOr<Inventory> base = tree.Scan();
  ASSERT_TRUE(base.ok());
  tree.Write("edit", "e2");
  tree.Remove("del");
  tree.Write("sub/y", "y");
  tree.Remove("keep");
  tree.MkDir("keep");  // regular -> directory
  absl::StatusOr<Inventory> head = tree.Scan(GlobSet(), &*base);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(Inventory::Diff(*base, *head).ToJsonLines(),
            "{\"path\":\".\",\"change\":\"modified\",\"type\":\"directory\","
            "\"old_type\":\"directory\"}\n"
            "{\"path\":\"del\",\"change\":\"deleted\",\"type\":\"regular\","
            "\"old_type\":\"regular\"}\n"
            "{\"path\":\"edit\",\"change\":\"modified\",\"type\":\"regular\","
            "\"old_type\":\"regular\"}\n"
            "{\"path\":\"keep\",\"change\":\"modified\",\"type\":"
            "\"directory\",\"old_type\":\"regular\"}\n"
            "{\"path\":\"sub\",\"change\":\"modified\",\"type\":"
            "\"directory\",\"old_type\":\"directory\"}\n"
            "{\"path\":\"sub/y\",\"change\":\"added\",\"type\":\"regular\","
            "\"old_type\":\"missing\"}\n");
}

TEST(InventoryJsonTest, OneObjectPerEntryWithEscapedPaths) {
  InventoryEntry file =
      Entry("dir/a \"quoted\"\\ \n\x01.txt", FileType::kRegular, "x");
  file.size = 1;
  file.mtime_ns = 1700000000123456789;
  InventoryEntry utf8 = Entry("caf\xc3\xa9", FileType::kRegular, "y");
  InventoryEntry latin1 = Entry("caf\xe9/x", FileType::kDirectory, "");
  InventoryEntry missing = Entry("/ext/none", FileType::kMissing, "");
  absl::StatusOr<Inventory> inv =
      Inventory::FromEntries({file, utf8, latin1, missing}, 0);
  ASSERT_TRUE(inv.ok());
  const std::string x = HashToHex(Xxh("x"));
  const std::string y = HashToHex(Xxh("y"));
  const std::string empty = HashToHex(Xxh(""));
  EXPECT_EQ(
      inv->ToJsonLines(),
      "{\"path\":\"/ext/none\",\"type\":\"missing\",\"size\":0,"
      "\"mtime_ns\":0,\"hash\":null}\n"
      "{\"path\":\"caf\xc3\xa9\",\"type\":\"regular\",\"size\":1,"
      "\"mtime_ns\":0,\"hash\":\"" +
          y +
          "\"}\n"
          "{\"path\":\"caf\xef\xbf\xbd/x\",\"path_hex\":\"636166e92f78\","
          "\"type\":\"directory\",\"size\":0,\"mtime_ns\":0,\"hash\":\"" +
          empty +
          "\"}\n"
          "{\"path\":\"dir/a \\\"quoted\\\"\\\\ \\n\\u0001.txt\","
          "\"type\":\"regular\",\"size\":1,\"mtime_ns\":1700000000123456789,"
          "\"hash\":\"" +
          x + "\"}\n");
}

TEST(InventoryJsonTest, HashHexIsCanonicalBigEndian) {
  // xxh128sum prints the canonical form: high64 first, big-endian.
  XXH128_hash_t h{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  EXPECT_EQ(HashToHex(h), "fedcba98765432100123456789abcdef");
}

TEST(InventoryJsonTest, InvalidUtf8SequencesAreReplacedBytewise) {
  // Overlong '/', a surrogate, a truncated sequence at the end.
  InventoryEntry e =
      Entry("\xc0\xaf-\xed\xa0\x80-\xe2\x82", FileType::kOther, "");
  absl::StatusOr<Inventory> inv = Inventory::FromEntries({e}, 0);
  ASSERT_TRUE(inv.ok());
  EXPECT_THAT(inv->ToJsonLines(),
              HasSubstr("\"path\":\"\xef\xbf\xbd\xef\xbf\xbd-\xef\xbf\xbd"
                        "\xef\xbf\xbd\xef\xbf\xbd-\xef\xbf\xbd\xef\xbf\xbd\","
                        "\"path_hex\":\"c0af2deda0802de282\""));
}

}  // namespace
}  // namespace ste
