// ChangesFromPaths: a changed-paths list (as `git diff --name-status`
// gives it) made comparable to an inventory diff, for the scheduler's
// Select with `changed` instead of an inventory.
#include "gtest/gtest.h"
#include "ste/selection.h"

namespace ste {
namespace {

Inventory Base() {
  std::vector<InventoryEntry> entries;
  for (auto [path, type] : std::vector<std::pair<const char*, FileType>>{
           {".", FileType::kDirectory},
           {"src", FileType::kDirectory},
           {"src/a.py", FileType::kRegular},
           {"src/link", FileType::kSymlink},
           {"/usr/lib/gone.so", FileType::kMissing}}) {
    InventoryEntry e;
    e.path = path;
    e.type = type;
    entries.push_back(e);
  }
  return *Inventory::FromEntries(entries, 0);
}

std::string Show(const std::vector<InventoryChange>& changes) {
  std::string out;
  for (const InventoryChange& c : changes) {
    out += c.path + " " + std::string(ChangeWord(c)) + " " + std::string(FileTypeName(c.type)) + "\n";
  }
  return out;
}

TEST(ChangesFromPaths, GivesKindsTypesAndTheListingsTheyChange) {
  auto changes = ChangesFromPaths(Base(), {{"src/a.py", "modified"},
                                           {"src/link", "deleted"},
                                           {"new/deep/b.py", "added"},
                                           {"/usr/lib/gone.so", "added"}});
  ASSERT_TRUE(changes.ok()) << changes.status();
  EXPECT_EQ(Show(*changes),
            ". modified directory\n"
            "/usr/lib/gone.so added regular\n"
            "new added directory\n"
            "new/deep added directory\n"
            "new/deep/b.py added regular\n"
            "src modified directory\n"
            "src/a.py modified regular\n"
            "src/link deleted symlink\n");
}

TEST(ChangesFromPaths, UnknownPathsAndWordsAreHandledSafely) {
  // "modified" of a path the baseline never had is an addition (its
  // absence may have been depended on); deleting one is nothing.
  auto changes = ChangesFromPaths(Base(), {{"src/b.py", "modified"}, {"src/c.py", "deleted"}});
  ASSERT_TRUE(changes.ok());
  EXPECT_EQ(Show(*changes), "src modified directory\nsrc/b.py added regular\n");
  EXPECT_EQ(ChangesFromPaths(Base(), {{"src/a.py", "renamed"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ste
