// ChangesFromPaths: a changed-paths list (as `git diff --name-status`
// gives it) made comparable to an inventory diff, for the scheduler's
// Select with `changed` instead of an inventory.
#include "gtest/gtest.h"
#include "ste/selection.h"

namespace ste {
namespace {

Inventory Base(const std::vector<std::pair<const char*, FileType>>& tree = {
                   {".", FileType::kDirectory},
                   {"src", FileType::kDirectory},
                   {"src/a.py", FileType::kRegular},
                   {"src/link", FileType::kSymlink},
                   {"/usr/lib/gone.so", FileType::kMissing}}) {
  std::vector<InventoryEntry> entries;
  for (auto [path, type] : tree) {
    InventoryEntry e;
    e.path = path;
    e.type = type;
    entries.push_back(e);
  }
  return *Inventory::FromEntries(entries, 0);
}

// A tree with a directory a test may only stat (`[ -d data ]`).
Inventory DataTree() {
  return Base({{".", FileType::kDirectory},
               {"data", FileType::kDirectory},
               {"data/deep", FileType::kDirectory},
               {"data/deep/x.txt", FileType::kRegular},
               {"data/y.txt", FileType::kRegular},
               {"data-z.txt", FileType::kRegular}});
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

// What git never names, inferred as Inventory::Diff would see it (issue
// 11): a directory gone or replaced is a change of the directory itself,
// which a test that stat'ed it depends on.
struct InferredCase {
  const char* what;
  std::vector<std::pair<std::string, std::string>> paths;
  const char* changes;  // as Show prints them
};

TEST(ChangesFromPaths, InfersADirectoryGoneOrReplaced) {
  const InferredCase cases[] = {
      {"replaced by a file or a link: git lists its files deleted, the path added",
       {{"data", "added"}, {"data/deep/x.txt", "deleted"}, {"data/y.txt", "deleted"}},
       "data modified regular\n"
       "data/deep deleted directory\n"
       "data/deep/x.txt deleted regular\n"
       "data/y.txt deleted regular\n"},
      {"every entry deleted: the directory is gone, and the root's names changed",
       {{"data/deep/x.txt", "deleted"}, {"data/y.txt", "deleted"}},
       ". modified directory\n"
       "data deleted directory\n"
       "data/deep deleted directory\n"
       "data/deep/x.txt deleted regular\n"
       "data/y.txt deleted regular\n"},
      {"data keeps y.txt: only data/deep goes, data's names changed",
       {{"data/deep/x.txt", "deleted"}},
       "data modified directory\n"
       "data/deep deleted directory\n"
       "data/deep/x.txt deleted regular\n"},
      {"every entry deleted, a new one added: data stays a directory",
       {{"data/deep/x.txt", "deleted"}, {"data/y.txt", "deleted"}, {"data/new.txt", "added"}},
       "data modified directory\n"
       "data/deep deleted directory\n"
       "data/deep/x.txt deleted regular\n"
       "data/new.txt added regular\n"
       "data/y.txt deleted regular\n"},
  };
  for (const InferredCase& c : cases) {
    auto changes = ChangesFromPaths(DataTree(), c.paths);
    ASSERT_TRUE(changes.ok()) << c.what << ": " << changes.status();
    EXPECT_EQ(Show(*changes), c.changes) << c.what;
  }
  auto replaced = ChangesFromPaths(DataTree(), cases[0].paths);
  EXPECT_EQ(replaced->front().old_type, FileType::kDirectory);
}

}  // namespace
}  // namespace ste
