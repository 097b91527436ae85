// Views (inventory.h, "Views") in selection: a changed view selects the
// tests that used it; for the path rules a repo view is an echo of the
// real entries that explain it; ChangesFromPaths infers them; the
// explanation reads them. On an index built in memory.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ste/glob.h"
#include "ste/selection.h"

namespace ste {
namespace {

const std::string kMark(1, kViewMark);
const std::string kRootDists = kMark + "ste-dists";
const std::string kSrcPth = "src/" + kMark + "ste-pth";
const std::string kNewDists = "new/" + kMark + "ste-dists";
const std::string kPlugins = "/usr/lib/python3/dist-packages/" + kMark + "ste-entry-points:pytest11";

// tests/test_l.py  listing .            (Python without ste's hook)
// tests/test_v.py  content \x01ste-dists (the root's *.dist-info names)
// tests/test_s.py  content src/\x01ste-pth
// tests/test_n.py  content new/\x01ste-dists (new/ did not exist)
// tests/test_p.py  content <dist-packages>/\x01ste-entry-points:pytest11
// tests/test_x.py  content lib/x.py
std::unique_ptr<SelectionIndex> ViewsIndex() {
  SelectionIndexBuilder b;
  EXPECT_TRUE(b.AddTests({"//r/tests/test_l.py", "//r/tests/test_n.py", "//r/tests/test_p.py",
                          "//r/tests/test_s.py", "//r/tests/test_v.py", "//r/tests/test_x.py"})
                  .ok());
  auto add = [&](const char* test, const std::string& path, DepKind kind) {
    EXPECT_TRUE(b.AddTestDependency(*b.FindTest(std::string("//r/") + test), path, kind).ok());
  };
  add("tests/test_l.py", ".", DepKind::kListing);
  add("tests/test_v.py", kRootDists, DepKind::kContent);
  add("tests/test_s.py", kSrcPth, DepKind::kContent);
  add("tests/test_n.py", kNewDists, DepKind::kContent);
  add("tests/test_p.py", kPlugins, DepKind::kContent);
  add("tests/test_x.py", "lib/x.py", DepKind::kContent);
  absl::StatusOr<std::string> image = b.Finish();
  EXPECT_TRUE(image.ok()) << image.status();
  absl::StatusOr<std::unique_ptr<SelectionIndex>> index = SelectionIndex::FromBytes(*image);
  EXPECT_TRUE(index.ok()) << index.status();
  return *std::move(index);
}

const std::vector<std::string> kTests = {"tests/test_l.py", "tests/test_n.py", "tests/test_p.py",
                                         "tests/test_s.py", "tests/test_v.py", "tests/test_x.py"};

InventoryChange Modified(const std::string& p, FileType t = FileType::kRegular) {
  return InventoryChange{p, ChangeKind::kModified, t, t};
}
InventoryChange Added(const std::string& p, FileType t = FileType::kRegular) {
  return InventoryChange{p, ChangeKind::kAdded, t, FileType::kMissing};
}
InventoryChange Deleted(const std::string& p, FileType t = FileType::kRegular) {
  return InventoryChange{p, ChangeKind::kDeleted, t, t};
}
InventoryChange Listing(const std::string& dir) { return Modified(dir, FileType::kDirectory); }

struct Result {
  SelectionMode mode;
  std::vector<std::string> tests;
  Selection selection;
};

Result SelectFor(std::vector<InventoryChange> changes, std::vector<std::string> skip_all = {"docs/**", "*.md"},
           std::vector<std::string> run_all = {".ci/**"}) {
  static std::unique_ptr<SelectionIndex> index = ViewsIndex();
  std::sort(changes.begin(), changes.end(),
            [](const InventoryChange& a, const InventoryChange& b) { return a.path < b.path; });
  SelectionRules rules;
  rules.skip_all = *GlobSet::Compile(skip_all);
  rules.run_all = *GlobSet::Compile(run_all);
  rules.config_file = "ste.toml";
  SelectionInputs in{*index, {}, changes, kTests, ""};
  Result r;
  r.selection = Select(rules, in);
  r.mode = r.selection.mode;
  for (const SelectedTest& t : r.selection.tests) r.tests.push_back(t.test);
  return r;
}

using Tests = std::vector<std::string>;

TEST(SelectViews, ANewFileAtTheRootSelectsOnlyTheListingTest) {
  Result r = SelectFor({Listing("."), Added("NOTES.txt")});
  EXPECT_EQ(r.tests, Tests{"tests/test_l.py"}) << r.selection.reason;
}

TEST(SelectViews, ANewDistributionSelectsTheViewTestToo) {
  Result r = SelectFor({Listing("."), Added("foo-1.0.dist-info", FileType::kDirectory),
                  Added("foo-1.0.dist-info/METADATA"), Modified(kRootDists)});
  EXPECT_EQ(r.tests, (Tests{"tests/test_l.py", "tests/test_v.py"})) << r.selection.reason;
  const SelectedTest& v = r.selection.tests[1];
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_EQ(v.reasons[0],
            SelectionReason::Dependency(kRootDists, DepKind::kContent, ChangeKind::kModified));
}

TEST(SelectViews, AViewWhoseDirectoryCameOrWentSelectsItsTests) {
  // new/ did not exist when test_n looked: its view was missing.
  Result r = SelectFor({Added("new", FileType::kDirectory), Added("new/x.dist-info", FileType::kDirectory),
                  Listing("."), Added(kNewDists)});
  EXPECT_EQ(r.tests, (Tests{"tests/test_l.py", "tests/test_n.py"})) << r.selection.reason;
  EXPECT_EQ(ReasonChangeWord(r.selection.tests[1].reasons[0]), "added");
  r = SelectFor({Deleted("src", FileType::kDirectory), Deleted("src/a.pth"), Listing("."), Deleted(kSrcPth)});
  EXPECT_EQ(r.tests, (Tests{"tests/test_l.py", "tests/test_s.py"})) << r.selection.reason;
  EXPECT_EQ(ReasonChangeWord(r.selection.tests[1].reasons[0]), "deleted");
}

TEST(SelectViews, AnExternalViewChangeSelectsItsTestsAndIsNeverSkippable) {
  Result r = SelectFor({Modified(kPlugins)});
  EXPECT_EQ(r.mode, SelectionMode::kSubset);
  EXPECT_EQ(r.tests, Tests{"tests/test_p.py"});
  r = SelectFor({Modified("docs/guide.md"), Modified(kPlugins)});
  EXPECT_EQ(r.mode, SelectionMode::kSubset) << r.selection.reason;
  EXPECT_EQ(r.tests, Tests{"tests/test_p.py"});
}

TEST(SelectViews, ARepoViewExplainedByItsEntriesIsAnEchoForSkipAll) {
  // The user says *.dist-info changes do not matter: the view agrees.
  Result r = SelectFor({Listing("."), Added("x.dist-info", FileType::kDirectory), Modified(kRootDists)},
                 {"docs/**", "*.md", "*.dist-info"});
  EXPECT_EQ(r.mode, SelectionMode::kNone) << r.selection.reason;
  // Without such a skip_all, the entries are not skippable either.
  r = SelectFor({Listing("."), Added("x.dist-info", FileType::kDirectory), Modified(kRootDists),
           Modified("docs/guide.md")});
  EXPECT_EQ(r.tests, (Tests{"tests/test_l.py", "tests/test_v.py"})) << r.selection.reason;
}

TEST(SelectViews, ARepoViewNoRealChangeExplainsCountsAndIsNotSkippable) {
  // A view through a symlink: its entries are not in the diff. Only a
  // docs change beside it must not make the selection none.
  Result r = SelectFor({Modified("docs/guide.md"), Modified(kRootDists)});
  EXPECT_EQ(r.mode, SelectionMode::kSubset) << r.selection.reason;
  EXPECT_EQ(r.tests, Tests{"tests/test_v.py"});
  // A change of an entry the view does not look at explains nothing.
  r = SelectFor({Listing("."), Added("NOTES.md"), Modified(kRootDists)}, {"*.md"});
  EXPECT_EQ(r.mode, SelectionMode::kSubset) << r.selection.reason;
  // One it looks at, deep inside, does.
  r = SelectFor({Modified("src/x.pth"), Modified(kSrcPth)}, {"src/**"});
  EXPECT_EQ(r.mode, SelectionMode::kNone) << r.selection.reason;
}

TEST(SelectViews, RunAllNeverLooksAtAView) {
  Result r = SelectFor({Modified(kSrcPth)}, {"docs/**"}, {"src/**"});
  EXPECT_EQ(r.mode, SelectionMode::kSubset) << r.selection.reason;
  EXPECT_EQ(r.tests, Tests{"tests/test_s.py"});
  r = SelectFor({Listing("src"), Added("src/b.pth"), Modified(kSrcPth)}, {"docs/**"}, {"src/**"});
  EXPECT_EQ(r.mode, SelectionMode::kAll) << r.selection.reason;
  EXPECT_NE(r.selection.reason.find("changed and matches selection.run_all"), std::string::npos)
      << r.selection.reason;
}

TEST(SelectViews, TheExplanationReadsAView) {
  EXPECT_EQ(DescribeViewChange(kRootDists, "modified"), ".: the *.dist-info and *.egg-info names changed");
  EXPECT_EQ(DescribeViewChange(kNewDists, "added"),
            "new: the *.dist-info and *.egg-info names changed (the directory appeared)");
  EXPECT_EQ(DescribeViewChange(kSrcPth, "deleted"), "src: the *.pth names changed (the directory went)");
  EXPECT_EQ(DescribeViewChange("lib/x.py", "modified"), "");
  WideCause wide;
  wide.cause = SelectionReason::Dependency(kPlugins, DepKind::kContent, ChangeKind::kModified);
  wide.tests = 12;
  EXPECT_EQ(DescribeWideCause(wide),
            "/usr/lib/python3/dist-packages: entry points [pytest11] of its distributions changed -> 12 "
            "tests");
  Result r = SelectFor({Listing("."), Added("foo-1.0.dist-info", FileType::kDirectory), Modified(kRootDists),
                  Modified("lib/x.py")});
  ASSERT_FALSE(r.selection.wide.empty());
  bool found = false;
  for (const WideCause& c : r.selection.wide) {
    if (c.cause.path == kRootDists) {
      found = true;
      EXPECT_EQ(DescribeWideCause(c), ".: the *.dist-info and *.egg-info names changed -> 1 test");
    }
  }
  EXPECT_TRUE(found);
}

TEST(SelectViews, RequestedPathsAreTheOutsideOnesAndEveryView) {
  std::unique_ptr<SelectionIndex> index = ViewsIndex();
  EXPECT_EQ(RequestedPaths(*index), (std::vector<std::string>{kRootDists, kPlugins, kNewDists, kSrcPth}));
}

// ---- ChangesFromPaths --------------------------------------------------------

Inventory ViewsBase() {
  std::vector<InventoryEntry> entries;
  auto add = [&](const std::string& path, FileType type) {
    InventoryEntry e;
    e.path = path;
    e.type = type;
    entries.push_back(e);
  };
  add(".", FileType::kDirectory);
  add("README.md", FileType::kRegular);
  add("src", FileType::kDirectory);
  add("src/a.pth", FileType::kRegular);
  add(kRootDists, FileType::kRegular);
  add(kSrcPth, FileType::kRegular);
  add(kNewDists, FileType::kMissing);
  add(kPlugins, FileType::kRegular);
  return *Inventory::FromEntries(entries, 0);
}

std::string Show(const std::vector<InventoryChange>& changes) {
  std::string out;
  for (const InventoryChange& c : changes) {
    if (IsViewPath(c.path)) out += c.path + " " + std::string(ChangeWord(c)) + "\n";
  }
  return out;
}

TEST(ChangesFromPathsViews, AViewChangesWhenAPathItLooksAtIsNamed) {
  auto changes = ChangesFromPaths(ViewsBase(), {{"NOTES.txt", "added"}, {"src/b.py", "added"}});
  ASSERT_TRUE(changes.ok()) << changes.status();
  EXPECT_EQ(Show(*changes), "");
  changes = ChangesFromPaths(ViewsBase(), {{"foo-1.0.dist-info/METADATA", "added"},
                                           {"src/b.pth", "added"},
                                           {"/usr/lib/python3/dist-packages/x-1.dist-info/entry_points.txt",
                                            "modified"}});
  ASSERT_TRUE(changes.ok()) << changes.status();
  EXPECT_EQ(Show(*changes),
            kRootDists + " modified\n" + kPlugins + " modified\n" + kSrcPth + " modified\n");
}

TEST(ChangesFromPathsViews, AViewsDirectoryComingOrGoing) {
  auto changes = ChangesFromPaths(ViewsBase(), {{"new/y.txt", "added"}});
  ASSERT_TRUE(changes.ok()) << changes.status();
  EXPECT_EQ(Show(*changes), kNewDists + " added\n");
  changes = ChangesFromPaths(ViewsBase(), {{"src/a.pth", "deleted"}});  // src emptied: gone
  ASSERT_TRUE(changes.ok()) << changes.status();
  EXPECT_EQ(Show(*changes), kSrcPth + " deleted\n");
}

}  // namespace
}  // namespace ste
