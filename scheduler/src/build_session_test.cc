// BuildSession: validation, exactly-once acceptance, the baseline stored on
// the last result, failure. A real SQLite store in a temp dir; no gRPC (the
// service's tests are scheduler/src/rpc/*_test.cc). Runs under ASan and
// TSan too (make test-sanitize): the threaded test feeds from 4 threads.
#include "ste/build_session.h"

#include <cmath>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ste/baseline_loader.h"
#include "store_test_util.h"

namespace ste {
namespace {

using testing_util::ScopedTempDir;

TEST(ValidateDependencyPath, AcceptsWhatReduceLogsGivesAndRefusesEscapes) {
  for (const char* ok : {".", "a", "a/b.py", "tests/test a.py", "/", "/usr/lib/x.so", "a/.hidden",
                         "a/..b", "a/b..", "\xff\xfe/x"}) {
    EXPECT_TRUE(ValidateDependencyPath(ok).ok()) << ok;
  }
  for (const char* bad : {"", "..", "../etc/passwd", "a/../../b", "a/..", "./a", "a/./b", "a//b",
                          "a/", "/a/../b", "//a", "/a/", "/a/./b"}) {
    absl::Status s = ValidateDependencyPath(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ValidateDependencyPath(std::string("a\0b", 3)).ok());
  EXPECT_FALSE(ValidateDependencyPath(std::string(5000, 'a')).ok());
  EXPECT_TRUE(ValidateTestPath("tests/t.py").ok());
  EXPECT_FALSE(ValidateTestPath("/abs/t.py").ok());
  EXPECT_FALSE(ValidateTestPath(".").ok());
}

class BuildSessionTest : public ::testing::Test {
 protected:
  std::unique_ptr<BaselineStore> Store() {
    auto s = BaselineStore::Open("sqlite:" + dir_.path() + "/s.db", dir_.path());
    EXPECT_TRUE(s.ok()) << s.status();
    return *std::move(s);
  }
  BuildSpec Spec(size_t tests) {
    BuildSpec spec;
    spec.commit = "c0ffee";
    spec.mri = 5;
    for (size_t i = 0; i < tests; i++) spec.tests.push_back({absl::StrCat("tests/t", i, ".py"), 0});
    InventoryEntry e;
    e.path = "src/a.py";
    e.type = FileType::kRegular;
    spec.inventory = *Inventory::FromEntries({e}, 1);
    return spec;
  }
  std::unique_ptr<BuildSession> Create(BuildSpec spec) {
    auto b = BuildSession::Create(std::move(spec), Store(), {});
    EXPECT_TRUE(b.ok()) << b.status();
    return *std::move(b);
  }
  // A result for `lease` depending on `paths` (content) in the test's scope.
  LeaseResult Result(BuildSession& b, const TestLease& lease, const std::vector<std::string>& paths) {
    LeaseResult r;
    r.lease_id = lease.lease_id;
    r.test = lease.test;
    r.seconds = 1.5;
    ResultScope s;
    s.scope = "//r/" + lease.test;
    for (const std::string& p : paths) s.ids[1].push_back(*b.InternPath(p));
    r.scopes.push_back(s);
    return r;
  }
  std::vector<TestLease> LeaseAll(BuildSession& b, const std::string& worker, size_t n) {
    bool done = false;
    auto leases = b.coordinator().Lease(worker, n, &done);
    EXPECT_TRUE(leases.ok());
    return *leases;
  }
  ScopedTempDir dir_;
};

TEST_F(BuildSessionTest, CreateRefusesBadTestLists) {
  BuildSpec none = Spec(0);
  EXPECT_EQ(BuildSession::Create(none, Store(), {}).status().code(), absl::StatusCode::kInvalidArgument);
  BuildSpec twice = Spec(1);
  twice.tests.push_back(twice.tests[0]);
  EXPECT_EQ(BuildSession::Create(twice, Store(), {}).status().code(), absl::StatusCode::kInvalidArgument);
  BuildSpec escape = Spec(1);
  escape.tests.push_back({"../outside.py", 0});
  EXPECT_EQ(BuildSession::Create(escape, Store(), {}).status().code(), absl::StatusCode::kInvalidArgument);
  // Nothing was begun in the store.
  auto list = Store()->List();
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->empty());
}

TEST_F(BuildSessionTest, TheLastResultStoresTheBaselineAndLateOnesAreDuplicates) {
  auto b = Create(Spec(3));
  EXPECT_EQ(b->id(), absl::StrCat("b", b->baseline_id()));
  std::string w = b->coordinator().RegisterWorker("w");
  std::vector<TestLease> leases = LeaseAll(*b, w, 3);
  ASSERT_EQ(leases.size(), 3u);
  EXPECT_FALSE(Store()->LatestCompleted(100)->has_value()) << "building: not served";
  for (size_t i = 0; i < 3; i++) {
    auto taken = b->Submit(Result(*b, leases[i], {"src/a.py", absl::StrCat("src/only", i, ".py")}));
    ASSERT_TRUE(taken.ok()) << taken.status();
    EXPECT_EQ(*taken, BuildCoordinator::Acceptance::kAccepted);
    EXPECT_EQ(b->running(), i < 2);
  }
  // Late copies (a replayed stream, a revived worker) change nothing.
  auto again = b->Submit(Result(*b, leases[0], {"src/poison.py"}));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, BuildCoordinator::Acceptance::kDuplicate);

  auto store = Store();
  auto latest = store->LatestCompleted(5);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->id, b->baseline_id());
  EXPECT_EQ((*latest)->commit, "c0ffee");
  auto results = store->Results(b->baseline_id());
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 3u);
  EXPECT_EQ((*results)[0].test, "tests/t0.py");
  EXPECT_DOUBLE_EQ((*results)[0].seconds, 1.5);
  auto loaded = LoadCompletedBaseline(*store, 5, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->index->test_count(), 3u);
  EXPECT_EQ(loaded->index->key_count(), 4u);  // a.py, only0..2
  EXPECT_EQ(loaded->index->Lookup("src/a.py", DepKind::kContent)->cardinality(), 3u);
  EXPECT_FALSE(loaded->index->Lookup("src/poison.py", DepKind::kContent)->contains(0));
  BuildSnapshot snap = b->Snapshot(0, absl::ZeroDuration());
  EXPECT_EQ(snap.state, BaselineState::kComplete);
  EXPECT_EQ(snap.finished.size(), 3u);
  EXPECT_GT(snap.index_bytes, 0u);
}

TEST_F(BuildSessionTest, RefusedResultsLeaveNothingBehind) {
  auto b = Create(Spec(2));
  std::string w = b->coordinator().RegisterWorker("w");
  std::vector<TestLease> leases = LeaseAll(*b, w, 2);
  ASSERT_EQ(leases.size(), 2u);
  auto code = [&](const LeaseResult& r) { return b->Submit(r).status().code(); };

  LeaseResult unknown = Result(*b, leases[0], {"src/a.py"});
  unknown.lease_id = 999;
  EXPECT_EQ(code(unknown), absl::StatusCode::kInvalidArgument);
  LeaseResult other_test = Result(*b, leases[0], {"src/a.py"});
  other_test.test = leases[1].test;
  EXPECT_EQ(code(other_test), absl::StatusCode::kInvalidArgument);
  LeaseResult other_scope = Result(*b, leases[0], {"src/a.py"});
  other_scope.scopes[0].scope = "//r/" + leases[1].test;
  EXPECT_EQ(code(other_scope), absl::StatusCode::kInvalidArgument);
  LeaseResult bad_id = Result(*b, leases[0], {"src/a.py"});
  bad_id.scopes[0].ids[1].push_back(12345);
  EXPECT_EQ(code(bad_id), absl::StatusCode::kInvalidArgument);
  LeaseResult outside = Result(*b, leases[0], {"/usr/lib/libx.so"});
  EXPECT_EQ(code(outside), absl::StatusCode::kInvalidArgument) << "no ExternalFiles entry";
  for (double bad : {std::nan(""), -1.0, HUGE_VAL}) {
    LeaseResult bad_seconds = Result(*b, leases[0], {"src/a.py"});
    bad_seconds.seconds = bad;
    EXPECT_EQ(code(bad_seconds), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(b->InternPath("../x").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(b->coordinator().progress().done, 0u) << "nothing was taken";

  // Described first, the outside file is fine; the root scope is an ancestor.
  InventoryEntry e;
  e.path = "/usr/lib/libx.so";
  e.type = FileType::kRegular;
  ASSERT_TRUE(b->AddExternal(*Inventory::FromEntries({e}, 0)).ok());
  LeaseResult good = Result(*b, leases[0], {"/usr/lib/libx.so"});
  ResultScope root;
  root.scope = "//r";
  root.ids[1].push_back(*b->InternPath("conftest.py"));
  good.scopes.push_back(root);
  EXPECT_TRUE(b->Submit(good).ok());
  EXPECT_TRUE(b->Submit(Result(*b, leases[1], {"src/a.py"})).ok());
  auto loaded = LoadCompletedBaseline(*Store(), 100, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_NE(loaded->inventory.Find("/usr/lib/libx.so"), nullptr) << "merged into the inventory";
  EXPECT_EQ(loaded->index->Lookup("conftest.py", DepKind::kContent)->cardinality(), 2u)
      << "an ancestor scope's dependency is every test's";
}

TEST_F(BuildSessionTest, AViewNeedsItsEntryRepoOrNotAndAnUnknownOneIsRefused) {
  const std::string repo_view = "src/\x01ste-dists";
  const std::string outside_view = "/usr/lib/python3/dist-packages/\x01ste-entry-points:pytest11";
  for (bool external : {true, false}) {
    BuildSpec spec = Spec(2);
    spec.external = external;
    auto b = Create(std::move(spec));
    std::vector<TestLease> leases = LeaseAll(*b, b->coordinator().RegisterWorker("w"), 2);
    auto code = [&](const LeaseResult& r) { return b->Submit(r).status().code(); };
    // A repo view has a value only its entry gives: needed whatever
    // inventory.external says.
    EXPECT_EQ(code(Result(*b, leases[0], {repo_view})), absl::StatusCode::kInvalidArgument)
        << external;
    // An outside view is an outside path.
    EXPECT_EQ(code(Result(*b, leases[0], {outside_view})),
              external ? absl::StatusCode::kInvalidArgument : absl::StatusCode::kOk)
        << external;
    InventoryEntry unknown;
    unknown.path = "src/\x01ste-nonsense";
    unknown.type = FileType::kRegular;
    EXPECT_EQ(b->AddExternal(*Inventory::FromEntries({unknown}, 0)).code(),
              absl::StatusCode::kInvalidArgument);
    InventoryEntry plain = unknown;
    plain.path = "src/b.py";
    EXPECT_EQ(b->AddExternal(*Inventory::FromEntries({plain}, 0)).code(),
              absl::StatusCode::kInvalidArgument)
        << "a repo file is the checkout's inventory's, not an external one";
    InventoryEntry view = unknown;
    view.path = repo_view;
    InventoryEntry outside = unknown;
    outside.path = outside_view;
    ASSERT_TRUE(b->AddExternal(*Inventory::FromEntries({view, outside}, 0)).ok());
    size_t first = external ? 0 : 1;
    EXPECT_TRUE(b->Submit(Result(*b, leases[first], {repo_view, outside_view})).ok());
    if (external) {
      EXPECT_TRUE(b->Submit(Result(*b, leases[1], {"src/a.py"})).ok());
    }
    auto loaded = LoadCompletedBaseline(*Store(), 100, 0);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_NE(loaded->inventory.Find(repo_view), nullptr) << "merged into the inventory";
    EXPECT_EQ(loaded->inventory.Find(repo_view)->type, FileType::kRegular);
    EXPECT_EQ(loaded->index->Lookup(repo_view, DepKind::kContent)->cardinality(), 1u);
  }
}

TEST_F(BuildSessionTest, FailMarksTheBaselineFailedAndRefusesMore) {
  std::vector<std::string> logged;
  BuildSession::Options o;
  o.log = [&](const std::string& line) { logged.push_back(line); };
  auto created = BuildSession::Create(Spec(2), Store(), o);
  ASSERT_TRUE(created.ok());
  auto& b = *created;
  std::string w = b->coordinator().RegisterWorker("w");
  std::vector<TestLease> leases = LeaseAll(*b, w, 2);
  b->Fail("stopped by a test");
  EXPECT_EQ(b->Submit(Result(*b, leases[0], {"src/a.py"})).status().code(),
            absl::StatusCode::kFailedPrecondition);
  auto info = Store()->Get(b->baseline_id());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, BaselineState::kFailed);
  EXPECT_EQ(info->failure, "stopped by a test");
  ASSERT_FALSE(logged.empty());
  EXPECT_NE(logged.back().find("failed: stopped by a test"), std::string::npos);
}

TEST_F(BuildSessionTest, DurationsComeFromThePreviousBaseline) {
  {
    auto b = Create(Spec(3));
    std::string w = b->coordinator().RegisterWorker("w");
    std::vector<TestLease> leases = LeaseAll(*b, w, 3);
    for (const TestLease& l : leases) {
      LeaseResult r = Result(*b, l, {"src/a.py"});
      r.seconds = l.test == "tests/t1.py" ? 9 : 1;
      ASSERT_TRUE(b->Submit(r).ok());
    }
  }
  BuildSpec next = Spec(4);  // t3 is new: unknown, first
  next.mri = 6;
  auto b = Create(next);
  std::vector<std::string> order = b->coordinator().PriorityOrder();
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order[0], "tests/t3.py");
  EXPECT_EQ(order[1], "tests/t1.py");
}

TEST_F(BuildSessionTest, ResultsFromFourThreadsAreEachTakenOnce) {
  constexpr size_t kN = 200;
  auto b = Create(Spec(kN));
  std::atomic<size_t> accepted{0}, duplicates{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      std::string w = b->coordinator().RegisterWorker(absl::StrCat("w", t));
      for (;;) {
        bool done = false;
        auto leases = b->coordinator().Lease(w, 3, &done);
        if (!leases.ok() || leases->empty()) {
          if (done || !leases.ok()) return;
          std::this_thread::yield();
          continue;
        }
        for (const TestLease& l : *leases) {
          LeaseResult r = Result(*b, l, {"src/a.py", absl::StrCat("src/m", l.lease_id % 17, ".py")});
          for (int copy = 0; copy < 2; copy++) {  // every result sent twice
            auto taken = b->Submit(r);
            ASSERT_TRUE(taken.ok()) << taken.status();
            (*taken == BuildCoordinator::Acceptance::kAccepted ? accepted : duplicates)++;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(accepted.load(), kN);
  EXPECT_EQ(duplicates.load(), kN);
  EXPECT_FALSE(b->running());
  auto loaded = LoadCompletedBaseline(*Store(), 100, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->index->Lookup("src/a.py", DepKind::kContent)->cardinality(), kN);
}

}  // namespace
}  // namespace ste
