// Select() and its guardrails, table-driven, on an index built in memory:
// no repository, no processes. Every rule of selection.h is a row, and the
// order of the rules is a row of its own (a case where two rules apply,
// the earlier must decide).
#include "ste/selection.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ste/glob.h"

namespace ste {
namespace {

// The index of a small suite:
//   tests/test_a.py  content lib/a.py, absent lib/a_override.py,
//                    content data (a stat of a directory: `[ -d data ]`)
//   tests/test_b.py  content lib/b.py, listing fixtures,
//                    listing /opt/plugins (outside the repo)
//   tests/test_c.py  content lib/a.py, content /usr/lib/ext.so,
//                    content /home/u (the checkout's parent, stat'ed)
//   tests/test_d.py  opaque
// and lib/common.py and . (a stat of the root) in the root scope (every
// test).
std::unique_ptr<SelectionIndex> SuiteIndex() {
  SelectionIndexBuilder b;
  EXPECT_TRUE(b.AddTests({"//r/tests/test_a.py", "//r/tests/test_b.py", "//r/tests/test_c.py",
                          "//r/tests/test_d.py"})
                  .ok());
  auto id = [&](const char* t) { return *b.FindTest(std::string("//r/") + t); };
  EXPECT_TRUE(b.AddTestDependency(id("tests/test_a.py"), "lib/a.py", DepKind::kContent).ok());
  EXPECT_TRUE(b.AddTestDependency(id("tests/test_a.py"), "lib/a_override.py", DepKind::kAbsent).ok());
  EXPECT_TRUE(b.AddTestDependency(id("tests/test_b.py"), "lib/b.py", DepKind::kContent).ok());
  EXPECT_TRUE(b.AddTestDependency(id("tests/test_b.py"), "fixtures", DepKind::kListing).ok());
  EXPECT_TRUE(b.AddTestDependency(id("tests/test_c.py"), "lib/a.py", DepKind::kContent).ok());
  EXPECT_TRUE(b.AddTestDependency(id("tests/test_c.py"), "/usr/lib/ext.so", DepKind::kContent).ok());
  EXPECT_TRUE(b.AddTestDependency(id("tests/test_a.py"), "data", DepKind::kContent).ok());
  EXPECT_TRUE(b.AddTestDependency(id("tests/test_b.py"), "/opt/plugins", DepKind::kListing).ok());
  EXPECT_TRUE(b.AddTestDependency(id("tests/test_c.py"), "/home/u", DepKind::kContent).ok());
  EXPECT_TRUE(b.AddScopeDependency("//r", "lib/common.py", DepKind::kContent).ok());
  EXPECT_TRUE(b.AddScopeDependency("//r", ".", DepKind::kContent).ok());
  EXPECT_TRUE(b.SetOpaque(id("tests/test_d.py")).ok());
  absl::StatusOr<std::string> image = b.Finish();
  EXPECT_TRUE(image.ok()) << image.status();
  absl::StatusOr<std::unique_ptr<SelectionIndex>> index = SelectionIndex::FromBytes(*image);
  EXPECT_TRUE(index.ok()) << index.status();
  return *std::move(index);
}

SelectionRules Rules() {
  SelectionRules r;
  // "deploy" (no '/'): the directory entry itself, not what is inside it.
  r.run_all = *GlobSet::Compile({".ci/**", "deploy"});
  r.skip_all = *GlobSet::Compile({"docs/**", "*.md"});
  r.mandatory = *GlobSet::Compile({"tests/test_smoke.py"});
  r.config_file = "ste.toml";
  return r;
}

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
// A directory replaced by something of type `t`.
InventoryChange Replaced(const std::string& dir, FileType t) {
  return InventoryChange{dir, ChangeKind::kModified, t, FileType::kDirectory};
}

const std::vector<std::string> kTests = {"tests/test_a.py", "tests/test_b.py", "tests/test_c.py",
                                         "tests/test_d.py"};

struct Row {
  const char* name;
  std::vector<InventoryChange> changes;
  std::vector<std::string> head_tests;  // empty: kTests
  std::vector<std::string> failed;
  std::string force;
  SelectionMode mode;
  std::vector<std::string> tests;  // expected, sorted
  std::string reason_has;
  int changed = -1;  // Selection::changed's size; -1: changes' size
};

void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

class SelectRules : public ::testing::TestWithParam<Row> {};

TEST_P(SelectRules, DecideAsWritten) {
  static std::unique_ptr<SelectionIndex> index = SuiteIndex();
  const Row& row = GetParam();
  SelectionInputs in{*index, row.failed, row.changes,
                     row.head_tests.empty() ? kTests : row.head_tests, row.force};
  Selection s = Select(Rules(), in);
  EXPECT_EQ(s.mode, row.mode) << s.reason;
  std::vector<std::string> got;
  for (const SelectedTest& t : s.tests) got.push_back(t.test);
  EXPECT_EQ(got, row.tests) << s.reason;
  EXPECT_NE(s.reason.find(row.reason_has), std::string::npos) << s.reason;
  EXPECT_EQ(s.changed.size(), row.changed < 0 ? row.changes.size() : size_t(row.changed));
}

const std::vector<std::string> kAll = kTests;

INSTANTIATE_TEST_SUITE_P(
    Guardrails, SelectRules,
    ::testing::Values(
        // 2. a force reason: all, whatever changed (even nothing).
        Row{"ForceWithNothingChanged", {}, {}, {}, "--all given", SelectionMode::kAll, kAll,
            "--all given"},
        // 2 before 4: a docs-only change under a force tag is still all.
        Row{"ForceBeatsSkipAll", {Modified("docs/a.md")}, {}, {}, "force tag [test all]",
            SelectionMode::kAll, kAll, "force tag"},
        // 3. the configuration changed.
        Row{"ConfigChanged", {Modified("ste.toml")}, {}, {}, "", SelectionMode::kAll, kAll,
            "ste.toml (the configuration) changed"},
        // 3 before 4: ste.toml matches no skip_all glob here, but with docs.
        Row{"ConfigBeatsSkipAll", {Modified("docs/a.md"), Modified("ste.toml")}, {}, {}, "",
            SelectionMode::kAll, kAll, "the configuration"},
        // 4. only skippable paths: none (the directory listing echo is ignored).
        Row{"SkipAllOnly", {Listing("docs"), Added("docs/new.md"), Modified("README.md")}, {}, {},
            "", SelectionMode::kNone, {}, "skip_all"},
        // 4 does not apply to an external path.
        Row{"ExternalIsNeverSkippable", {Modified("/usr/lib/ext.so")}, {}, {}, "",
            SelectionMode::kSubset, {"tests/test_c.py", "tests/test_d.py"}, "2 of 4"},
        // 4 with a directory created next to the checkout (issue 11): the
        // parent's names changed, test_c only stat'ed it, no test lists
        // it: no change at all, skip_all still decides.
        Row{"SkipAllBesideAnUnlistedExternalDirectory",
            {Modified("docs/a.md"), Listing("/home/u")}, {}, {}, "", SelectionMode::kNone, {},
            "skip_all", 1},
        // A listed external directory's names change counts, and is not
        // skippable.
        Row{"SkipAllBesideAListedExternalDirectory",
            {Modified("docs/a.md"), Listing("/opt/plugins")}, {}, {}, "",
            SelectionMode::kSubset, {"tests/test_b.py", "tests/test_d.py"}, "2 of 4"},
        // An unlisted external directory alone: nothing changed (only the
        // opaque test, as always).
        Row{"AnUnlistedExternalDirectoryIsNoChange", {Listing("/home/u")}, {}, {}, "",
            SelectionMode::kSubset, {"tests/test_d.py"}, "1 of 4", 0},
        // ... unless it was deleted or replaced: test_c's stat sees that.
        Row{"AnExternalDirectoryStatedAndDeleted", {Deleted("/home/u", FileType::kDirectory)},
            {}, {}, "", SelectionMode::kSubset, {"tests/test_c.py", "tests/test_d.py"}, "2 of 4"},
        Row{"AnExternalDirectoryStatedAndReplacedByALink",
            {Replaced("/home/u", FileType::kSymlink)}, {}, {}, "", SelectionMode::kSubset,
            {"tests/test_c.py", "tests/test_d.py"}, "2 of 4"},
        // 4 before 5: skip_all needs every path, run_all one.
        Row{"RunAll", {Modified("docs/a.md"), Modified(".ci/run.sh")}, {}, {}, "",
            SelectionMode::kAll, kAll, ".ci/run.sh changed and matches selection.run_all '.ci/**'"},
        // 5 also matches a directory whose names changed: run_all "deploy"
        // fires when an entry comes or goes in it (wider, never narrower),
        // and when the directory itself is created, deleted or replaced.
        Row{"RunAllMatchesAListingEcho", {Added("deploy/new.yml"), Listing("deploy")}, {}, {},
            "", SelectionMode::kAll, kAll, "deploy changed and matches selection.run_all 'deploy'"},
        Row{"RunAllMatchesTheDirectoryItself",
            {Deleted("deploy", FileType::kDirectory), Deleted("deploy/a.yml")}, {}, {}, "",
            SelectionMode::kAll, kAll, "deploy changed and matches selection.run_all 'deploy'"},
        // 6. content, absent, listing, deleted.
        Row{"ContentModified", {Modified("lib/b.py")}, {}, {}, "", SelectionMode::kSubset,
            {"tests/test_b.py", "tests/test_d.py"}, "2 of 4"},
        Row{"ContentSharedByTwo", {Modified("lib/a.py")}, {}, {}, "", SelectionMode::kSubset,
            {"tests/test_a.py", "tests/test_c.py", "tests/test_d.py"}, "3 of 4"},
        Row{"AbsentAppears", {Added("lib/a_override.py"), Listing("lib")}, {}, {}, "",
            SelectionMode::kSubset, {"tests/test_a.py", "tests/test_d.py"}, "2 of 4"},
        Row{"ListingChanged", {Added("fixtures/three.txt"), Listing("fixtures")}, {}, {}, "",
            SelectionMode::kSubset, {"tests/test_b.py", "tests/test_d.py"}, "2 of 4"},
        Row{"Deleted", {Deleted("lib/b.py"), Listing("lib")}, {}, {}, "", SelectionMode::kSubset,
            {"tests/test_b.py", "tests/test_d.py"}, "2 of 4"},
        Row{"RootScopeSelectsAll", {Modified("lib/common.py")}, {}, {}, "", SelectionMode::kAll,
            kAll, "every test is affected"},
        // 6. a directory only stat'ed (test_a's data): an existence-and-type
        // dependency. Entries coming or going do not affect it; the
        // directory deleted, or replaced by a file or a link, does.
        Row{"AStatedDirectoryGainsAnEntry", {Added("data/new.txt"), Listing("data")}, {}, {}, "",
            SelectionMode::kSubset, {"tests/test_d.py"}, "1 of 4"},
        Row{"AStatedDirectoryLosesAnEntry", {Deleted("data/old.txt"), Listing("data")}, {}, {},
            "", SelectionMode::kSubset, {"tests/test_d.py"}, "1 of 4"},
        Row{"AStatedDirectoryDeleted",
            {Deleted("data", FileType::kDirectory), Deleted("data/old.txt"), Listing(".")}, {}, {},
            "", SelectionMode::kSubset, {"tests/test_a.py", "tests/test_d.py"}, "2 of 4"},
        Row{"AStatedDirectoryReplacedByAFile", {Replaced("data", FileType::kRegular)}, {}, {}, "",
            SelectionMode::kSubset, {"tests/test_a.py", "tests/test_d.py"}, "2 of 4"},
        Row{"AStatedDirectoryReplacedByALink", {Replaced("data", FileType::kSymlink)}, {}, {}, "",
            SelectionMode::kSubset, {"tests/test_a.py", "tests/test_d.py"}, "2 of 4"},
        // The root's names changed (a file added at the top): its listers
        // only, never a stat of the root.
        Row{"TheRootsListingIsNotItsContent", {Added("NEW"), Listing(".")}, {}, {}, "",
            SelectionMode::kSubset, {"tests/test_d.py"}, "1 of 4"},
        // 6. nothing that any test depends on: only the opaque test.
        Row{"UnrelatedChangeKeepsOpaque", {Modified("lib/unused.py")}, {}, {}, "",
            SelectionMode::kSubset, {"tests/test_d.py"}, "1 of 4"},
        // 6. new tests, failed tests, mandatory tests; deleted tests are gone.
        Row{"NewFailedMandatory", {},
            {"tests/test_a.py", "tests/test_b.py", "tests/test_d.py", "tests/test_new.py",
             "tests/test_smoke.py"},
            {"tests/test_b.py", "tests/test_c.py"}, "", SelectionMode::kSubset,
            {"tests/test_b.py", "tests/test_d.py", "tests/test_new.py", "tests/test_smoke.py"},
            "4 of 5"}),
    [](const ::testing::TestParamInfo<Row>& info) { return std::string(info.param.name); });

TEST(Select, NothingChangedAndNothingOpaqueIsNone) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({"//r/t1", "//r/t2"}).ok());
  ASSERT_TRUE(b.AddTestDependency(0, "a", DepKind::kContent).ok());
  auto index = SelectionIndex::FromBytes(*b.Finish());
  ASSERT_TRUE(index.ok());
  SelectionInputs in{**index, {}, {}, {"t1", "t2"}, ""};
  Selection s = Select(Rules(), in);
  EXPECT_EQ(s.mode, SelectionMode::kNone);
  EXPECT_EQ(s.reason, "nothing changed since the baseline");
  in.changes = {Modified("b")};
  s = Select(Rules(), in);
  EXPECT_EQ(s.mode, SelectionMode::kNone);
  EXPECT_EQ(s.reason, "no test depends on what changed");
}

TEST(Select, ReasonsNameTheChangeAndAreCapped) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({"//r/t1", "//r/t2"}).ok());
  std::vector<InventoryChange> changes;
  for (int i = 0; i < 20; i++) {
    std::string p = "lib/f" + std::to_string(10 + i) + ".py";
    ASSERT_TRUE(b.AddTestDependency(0, p, DepKind::kContent).ok());
    changes.push_back(Modified(p));
  }
  auto index = SelectionIndex::FromBytes(*b.Finish());
  ASSERT_TRUE(index.ok());
  SelectionInputs in{**index, {}, changes, {"t1", "t2"}, ""};
  Selection s = Select(Rules(), in);
  ASSERT_EQ(s.tests.size(), 1u);
  EXPECT_EQ(s.tests[0].reasons.size(), kMaxReasons);
  EXPECT_EQ(s.tests[0].more_reasons, 20 - kMaxReasons);
  EXPECT_EQ(s.tests[0].reasons[0],
            SelectionReason::Dependency("lib/f10.py", DepKind::kContent, ChangeKind::kModified));
}

TEST(Select, AnUnreadableBitmapWidensToAll) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({"//r/t1", "//r/t2"}).ok());
  ASSERT_TRUE(b.AddTestDependency(0, "lib/a.py", DepKind::kContent).ok());
  const std::string good = *b.Finish();
  // Damage the one bitmap (the bitmap area starts at byte 128, after the
  // header), or the one key block right after it (selection_index.h,
  // version 2): the index opens, the lookup fails.
  for (size_t at : {128 + 2, 128 + 24 + 2}) {
    std::string image = good;
    image[at] ^= 0x5A;
    absl::StatusOr<std::unique_ptr<SelectionIndex>> index = SelectionIndex::FromBytes(image);
    ASSERT_TRUE(index.ok()) << index.status();
    SelectionInputs in{**index, {}, {Modified("lib/a.py")}, {"t1", "t2"}, ""};
    Selection s = Select(Rules(), in);
    EXPECT_EQ(s.mode, SelectionMode::kAll);
    EXPECT_NE(s.reason.find("index unreadable"), std::string::npos) << s.reason;
    EXPECT_EQ(s.tests.size(), 2u);
  }
}

TEST(Select, AWideSelectionNamesWhatPulledItIn) {
  // Every test lists the root (as Python's import system does); a note
  // file dropped there selects them all, and says so.
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({"//r/t1", "//r/t2", "//r/t3", "//r/t4"}).ok());
  ASSERT_TRUE(b.AddScopeDependency("//r", ".", DepKind::kListing).ok());
  ASSERT_TRUE(b.AddTestDependency(0, "lib/a.py", DepKind::kContent).ok());
  ASSERT_TRUE(b.AddTestDependency(1, "lib/a.py", DepKind::kContent).ok());
  auto index = SelectionIndex::FromBytes(*b.Finish());
  ASSERT_TRUE(index.ok());
  const std::vector<std::string> tests = {"t1", "t2", "t3", "t4"};
  SelectionInputs in{**index, {}, {Added("NOTES.txt"), Listing("."), Modified("lib/a.py")}, tests, ""};
  Selection s = Select(Rules(), in);
  EXPECT_EQ(s.mode, SelectionMode::kAll);
  ASSERT_EQ(s.wide.size(), 2u);
  EXPECT_EQ(s.wide[0].cause.path, ".");
  EXPECT_EQ(s.wide[0].cause.kind, DepKind::kListing);
  EXPECT_EQ(s.wide[0].tests, 4u);
  ASSERT_EQ(s.wide[0].entries.size(), 1u);
  EXPECT_EQ(s.wide[0].entries[0], (std::pair<std::string, ChangeKind>{"NOTES.txt", ChangeKind::kAdded}));
  EXPECT_EQ(DescribeWideCause(s.wide[0]), "NOTES.txt added: listing of . -> 4 tests");
  EXPECT_EQ(DescribeWideCause(s.wide[1]), "lib/a.py modified: content -> 2 tests");

  // Two of four is more than a quarter: wide. One of four is not.
  in.changes = {Modified("lib/a.py")};
  s = Select(Rules(), in);
  EXPECT_EQ(s.mode, SelectionMode::kSubset);
  EXPECT_EQ(s.wide.size(), 1u);
  SelectionIndexBuilder narrow;
  ASSERT_TRUE(narrow.AddTests({"//r/t1", "//r/t2", "//r/t3", "//r/t4"}).ok());
  ASSERT_TRUE(narrow.AddTestDependency(0, "lib/a.py", DepKind::kContent).ok());
  auto narrow_index = SelectionIndex::FromBytes(*narrow.Finish());
  ASSERT_TRUE(narrow_index.ok());
  SelectionInputs one{**narrow_index, {}, {Modified("lib/a.py")}, tests, ""};
  s = Select(Rules(), one);
  EXPECT_EQ(s.tests.size(), 1u);
  EXPECT_TRUE(s.wide.empty());
  // A guardrail's all says its reason instead.
  one.force_all = "--all given";
  EXPECT_TRUE(Select(Rules(), one).wide.empty());
}

TEST(Select, WithoutBaselineIsAllWithTheReason) {
  Selection s = SelectWithoutBaseline("no completed baseline in the store", {"t1", "t2"});
  EXPECT_EQ(s.mode, SelectionMode::kAll);
  EXPECT_EQ(s.reason, "no usable baseline: no completed baseline in the store");
  EXPECT_EQ(s.tests.size(), 2u);
}

}  // namespace
}  // namespace ste

namespace ste {
namespace {

// The words of every reason (what json, text and the wire say) read back
// to the same reason; words no reason has are refused, not guessed.
TEST(SelectionReasonWords, EveryReasonRoundTripsThroughItsWords) {
  std::vector<SelectionReason> all;
  for (SelectionRule rule : kSelectionRules) {
    all.push_back(SelectionReason::Rule(rule));
  }
  for (DepKind kind : {DepKind::kContent, DepKind::kAbsent, DepKind::kListing}) {
    for (ChangeKind change : {ChangeKind::kModified, ChangeKind::kAdded, ChangeKind::kDeleted}) {
      all.push_back(SelectionReason::Dependency("lib/a b.py", kind, change));
    }
  }
  for (const SelectionReason& r : all) {
    absl::StatusOr<SelectionReason> back =
        ReasonFromWords(r.path, ReasonKindWord(r), ReasonChangeWord(r));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, r) << ReasonKindWord(r) << " " << ReasonChangeWord(r);
  }
  EXPECT_EQ(ReasonChangeWord(SelectionReason::Dependency(".", DepKind::kListing, ChangeKind::kModified)),
            "changed");
  EXPECT_EQ(ReasonKindWord(SelectionReason::Rule(SelectionRule::kMandatory)), "");
  EXPECT_FALSE(ReasonFromWords("", "", "because").ok());
  EXPECT_FALSE(ReasonFromWords("a", "", "new test").ok());  // a rule names no path
  EXPECT_FALSE(ReasonFromWords("a", "content", "changed").ok());
  EXPECT_FALSE(ReasonFromWords("a", "stat", "modified").ok());
}

}  // namespace
}  // namespace ste
