// SelectForCheckout: the order of the walk and what each failure widens
// to, with a checkout and a baseline source made in memory.
#include "ste/selection_pipeline.h"

#include <stdlib.h>

#include <climits>
#include <filesystem>

#include "gtest/gtest.h"

namespace ste {
namespace {

InventoryEntry Entry(const std::string& path, FileType type, uint64_t hash) {
  InventoryEntry e;
  e.path = path;
  e.type = type;
  e.hash = {hash, hash};
  return e;
}

Inventory Tree(std::vector<InventoryEntry> entries) {
  return *Inventory::FromEntries(std::move(entries), 1);
}

// tests/a.py depends on lib/a.py, tests/b.py on lib/b.py and /ext/lib.so.
std::shared_ptr<const LoadedBaseline> Baseline() {
  auto b = std::make_shared<LoadedBaseline>();
  b->info.id = 3;
  b->info.mri = 10;
  b->info.commit = "c0ffee";
  b->info.state = BaselineState::kComplete;
  SelectionIndexBuilder builder;
  EXPECT_TRUE(builder.AddTests({"//r/tests/a.py", "//r/tests/b.py"}).ok());
  EXPECT_TRUE(builder.AddTestDependency(0, "lib/a.py", DepKind::kContent).ok());
  EXPECT_TRUE(builder.AddTestDependency(1, "lib/b.py", DepKind::kContent).ok());
  EXPECT_TRUE(builder.AddTestDependency(1, "/ext/lib.so", DepKind::kContent).ok());
  b->index = *SelectionIndex::FromBytes(*builder.Finish());
  b->inventory = Tree({Entry("lib/a.py", FileType::kRegular, 1), Entry("lib/b.py", FileType::kRegular, 2),
                       Entry("/ext/lib.so", FileType::kRegular, 3)});
  return b;
}

class FakeSource : public BaselineSource {
 public:
  absl::StatusOr<std::shared_ptr<const LoadedBaseline>> Load(const BaselineLookup& which) override {
    asked_mri = which.mri;
    asked_id = which.id;
    if (!baseline) return absl::NotFoundError("no completed baseline in the store");
    return baseline;
  }
  std::shared_ptr<const LoadedBaseline> baseline;
  int64_t asked_mri = -1, asked_id = -1;
};

class FakeCheckout : public Checkout {
 public:
  const SelectionRules& rules() const override { return rules_; }
  BaselineLookup Lookup(const BaselineQuery& q) override {
    BaselineLookup which;
    which.id = q.id;
    if (q.id == 0) {
      mri_calls++;
      which.mri = 12;
    }
    return which;
  }
  absl::StatusOr<TreeNow> ReadTree(const Inventory* cache, const std::vector<std::string>& external) override {
    got_cache = cache != nullptr;
    got_external = external;
    if (!tree_error.ok()) return tree_error;
    return tree;
  }
  std::string ForceReason(const std::string& base_commit) override {
    force_asked_for = base_commit;
    return force;
  }
  SelectionRules rules_;
  TreeNow tree;
  absl::Status tree_error;
  std::string force;
  int mri_calls = 0;
  bool got_cache = false;
  std::vector<std::string> got_external;
  std::string force_asked_for = "(not asked)";
};

TreeNow Now(std::vector<InventoryEntry> entries) {
  TreeNow t;
  t.inventory = Tree(std::move(entries));
  t.tests = {"tests/a.py", "tests/b.py"};
  return t;
}

// The baseline's tree with lib/a.py edited.
TreeNow LibAEdited() {
  return Now({Entry("lib/a.py", FileType::kRegular, 9), Entry("lib/b.py", FileType::kRegular, 2),
              Entry("/ext/lib.so", FileType::kRegular, 3)});
}

TEST(SelectForCheckout, ComparesWithTheBaselineItLoadedAndPassesItsExternalPaths) {
  FakeSource source;
  source.baseline = Baseline();
  FakeCheckout checkout;
  checkout.tree = LibAEdited();
  SelectionOutcome out = SelectForCheckout(checkout, source, BaselineQuery{});
  EXPECT_EQ(source.asked_mri, 12);
  EXPECT_EQ(source.asked_id, 0);
  EXPECT_TRUE(checkout.got_cache);
  EXPECT_EQ(checkout.got_external, std::vector<std::string>{"/ext/lib.so"});
  EXPECT_EQ(checkout.force_asked_for, "c0ffee");
  ASSERT_TRUE(out.tree.ok());
  ASSERT_TRUE(out.baseline.has_value());
  EXPECT_EQ(out.baseline->id, 3);
  EXPECT_EQ(out.selection.mode, SelectionMode::kSubset);
  ASSERT_EQ(out.selection.tests.size(), 1u);
  EXPECT_EQ(out.selection.tests[0].test, "tests/a.py");
}

TEST(SelectForCheckout, AnIdIsLookedUpWithoutTheMri) {
  FakeSource source;
  source.baseline = Baseline();
  FakeCheckout checkout;
  checkout.tree = Now({});
  BaselineQuery q;
  q.id = 3;
  SelectForCheckout(checkout, source, q);
  EXPECT_EQ(source.asked_id, 3);
  EXPECT_EQ(checkout.mri_calls, 0) << "no history read for an id";
}

TEST(SelectForCheckout, NoBaselineIsAllOverTheTestsOfTheTree) {
  FakeSource source;
  FakeCheckout checkout;
  checkout.tree = Now({});
  checkout.force = "--all given";  // rule 1 comes first
  SelectionOutcome out = SelectForCheckout(checkout, source, BaselineQuery{});
  EXPECT_FALSE(checkout.got_cache);
  EXPECT_TRUE(checkout.got_external.empty());
  EXPECT_EQ(out.selection.mode, SelectionMode::kAll);
  EXPECT_EQ(out.selection.reason, "no usable baseline: no completed baseline in the store");
  EXPECT_EQ(out.selection.tests.size(), 2u);
  EXPECT_FALSE(out.baseline.has_value());
}

TEST(SelectForCheckout, AnUnreadableTreeLeavesNoTestList) {
  FakeSource source;
  source.baseline = Baseline();
  FakeCheckout checkout;
  checkout.tree_error = absl::PermissionDeniedError("lib: permission denied");
  SelectionOutcome out = SelectForCheckout(checkout, source, BaselineQuery{});
  EXPECT_FALSE(out.tree.ok());
  EXPECT_EQ(out.selection.mode, SelectionMode::kAll);
  EXPECT_EQ(out.selection.reason, "cannot inventory the tree: lib: permission denied");
  EXPECT_TRUE(out.selection.tests.empty());
  ASSERT_TRUE(out.baseline.has_value());
}

TEST(SelectForCheckout, AForceReasonIsAllWithTheChanges) {
  FakeSource source;
  source.baseline = Baseline();
  FakeCheckout checkout;
  checkout.tree = LibAEdited();
  checkout.force = "cannot read the commit messages since the baseline's commit c0ffee";
  SelectionOutcome out = SelectForCheckout(checkout, source, BaselineQuery{});
  EXPECT_EQ(out.selection.mode, SelectionMode::kAll);
  EXPECT_EQ(out.selection.reason, checkout.force);
  EXPECT_EQ(out.selection.changed.size(), 1u);
}

TEST(SelectForCheckout, ChangedPathsInsteadOfAnInventory) {
  FakeSource source;
  source.baseline = Baseline();
  FakeCheckout checkout;
  checkout.tree.tests = {"tests/a.py", "tests/b.py"};
  checkout.tree.changed_paths = {{"lib/b.py", "modified"}};
  SelectionOutcome out = SelectForCheckout(checkout, source, BaselineQuery{});
  EXPECT_EQ(out.selection.mode, SelectionMode::kSubset);
  ASSERT_EQ(out.selection.tests.size(), 1u);
  EXPECT_EQ(out.selection.tests[0].test, "tests/b.py");
  checkout.tree.changed_paths = {{"lib/b.py", "renamed"}};
  out = SelectForCheckout(checkout, source, BaselineQuery{});
  EXPECT_EQ(out.selection.mode, SelectionMode::kAll);
  EXPECT_NE(out.selection.reason.find("the changed paths are unusable"), std::string::npos)
      << out.selection.reason;
}

TEST(BaselineQuery, FromFlag) {
  EXPECT_EQ(BaselineQuery::FromFlag("auto")->id, 0);
  EXPECT_EQ(BaselineQuery::FromFlag("")->id, 0);
  EXPECT_EQ(BaselineQuery::FromFlag("17")->id, 17);
  EXPECT_FALSE(BaselineQuery::FromFlag("0").ok());
  EXPECT_FALSE(BaselineQuery::FromFlag("-3").ok());
  EXPECT_FALSE(BaselineQuery::FromFlag("latest").ok());
}

}  // namespace
}  // namespace ste

namespace ste {
namespace {

// A real SQLite store in a temporary directory with `n` complete
// baselines (mri 1..n) of the index and inventory of Baseline().
std::string StoreWithBaselines(int n) {
  std::string dir = "/tmp/ste-caching-XXXXXX";
  EXPECT_NE(mkdtemp(dir.data()), nullptr);
  auto store = Store::Open("sqlite:" + dir + "/ste.db", dir);
  EXPECT_TRUE(store.ok()) << store.status();
  SelectionIndexBuilder builder;
  EXPECT_TRUE(builder.AddTests({"//r/tests/a.py"}).ok());
  const std::string index = *builder.Finish();
  const std::string inventory = Baseline()->inventory.Serialize();
  for (int i = 1; i <= n; i++) {
    absl::StatusOr<int64_t> id = (*store)->Begin("c" + std::to_string(i), i);
    EXPECT_TRUE(id.ok());
    EXPECT_TRUE((*store)->PutBlob(*id, "index", index).ok());
    EXPECT_TRUE((*store)->PutBlob(*id, "inventory", inventory).ok());
    EXPECT_TRUE((*store)->Complete(*id).ok());
  }
  return dir;
}

BaselineLookup Which(int64_t mri, int64_t id) {
  BaselineLookup w;
  w.mri = mri;
  w.id = id;
  return w;
}

TEST(CachingBaselineSource, LoadsABaselineOnceAndKeepsTheLastFew) {
  const std::string dir = StoreWithBaselines(3);
  int opened = 0;
  CachingBaselineSource source(
      [&] {
        opened++;
        return Store::Open("sqlite:" + dir + "/ste.db", dir);
      },
      2);
  auto first = source.Load(Which(INT64_MAX, 0));  // the latest: 3
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)->info.id, 3);
  auto again = source.Load(Which(0, 3));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(first->get(), again->get()) << "the second load is the first one";
  auto by_mri = source.Load(Which(2, 0));
  ASSERT_TRUE(by_mri.ok());
  EXPECT_EQ((*by_mri)->info.id, 2);
  auto one = source.Load(Which(1, 0));  // a third: 3 is the oldest used, it goes
  ASSERT_TRUE(one.ok());
  auto three = source.Load(Which(0, 3));
  ASSERT_TRUE(three.ok());
  EXPECT_NE(three->get(), first->get()) << "evicted, loaded again";
  EXPECT_EQ((*three)->info.commit, "c3");
  EXPECT_EQ(opened, 5);
  EXPECT_FALSE(source.Load(Which(0, 9)).ok());
  BaselineLookup by_commits;
  by_commits.commits = {"nope", "c2"};
  auto two = source.Load(by_commits);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ((*two)->info.id, 2);
  by_commits.commits = {"nope"};
  by_commits.hint = "a shallow clone: pass --base-commit";
  auto none = source.Load(by_commits);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(),
            "no completed baseline for any of the 1 commits this checkout can see (a shallow "
            "clone: pass --base-commit)");
  std::filesystem::remove_all(dir);
}

TEST(CachingBaselineSource, AStoreThatCannotOpenIsNoBaselineWithTheReason) {
  CachingBaselineSource source([] { return absl::StatusOr<std::unique_ptr<Store>>(
                                        absl::UnavailableError("connection refused")); },
                               4);
  auto b = source.Load(Which(INT64_MAX, 0));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), "store unusable: connection refused");
  StoreBaselineSource plain(absl::UnavailableError("connection refused"));
  EXPECT_EQ(plain.Load(Which(INT64_MAX, 0)).status().message(), "store unusable: connection refused");
}

}  // namespace
}  // namespace ste
