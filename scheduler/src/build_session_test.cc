// BuildSession: validation, exactly-once acceptance, the baseline stored on
// the last result, failure. A real SQLite store in a temp dir; no gRPC (the
// service's tests are scheduler/src/rpc/*_test.cc). Runs under ASan and
// TSan too (make test-sanitize): the threaded test feeds from 4 threads.
#include "ste/build_session.h"

#include <cmath>

#include "build_journal.h"

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
  std::unique_ptr<ste::Store> Store() {
    auto s = ste::Store::Open("sqlite:" + dir_.path() + "/s.db", dir_.path());
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

TEST_F(BuildSessionTest, TheNextBuildKeepsAWriteAndItsReaderOnOneWorkerInTheRecordedOrder) {
  // Build 1: t0 writes out/state and leaves it; t2 reads it (so ran after
  // t0), t1 looked for it (so ran before); t3 is unrelated.
  {
    auto b = Create(Spec(4));
    std::string w = b->coordinator().RegisterWorker("w");
    std::vector<TestLease> leases = LeaseAll(*b, w, 4);
    ASSERT_EQ(leases.size(), 4u);
    for (const TestLease& l : leases) {
      LeaseResult r = Result(*b, l, {"src/a.py"});
      if (l.test == "tests/t0.py") r.writes = {"out/state"};
      if (l.test == "tests/t2.py") r.scopes[0].ids[1].push_back(*b->InternPath("out/state"));
      if (l.test == "tests/t1.py") r.scopes[0].ids[2].push_back(*b->InternPath("out/state"));
      ASSERT_TRUE(b->Submit(r).ok());
    }
    ASSERT_FALSE(b->running());
  }
  // Build 2: however it is leased, the three go to one worker, in order.
  std::vector<std::string> logged;
  BuildSession::Options o;
  o.log = [&](const std::string& line) { logged.push_back(line); };
  BuildSpec spec = Spec(4);
  spec.tests[2].historical_seconds = 9;  // t2 first in priority
  auto b = BuildSession::Create(spec, Store(), o);
  ASSERT_TRUE(b.ok()) << b.status();
  std::string w = (*b)->coordinator().RegisterWorker("w");
  std::vector<TestLease> first = LeaseAll(**b, w, 1);
  std::vector<std::string> names;
  for (const TestLease& l : first) names.push_back(l.test);
  EXPECT_EQ(names, (std::vector<std::string>{"tests/t1.py", "tests/t0.py", "tests/t2.py"}));
  bool said = false;
  for (const std::string& line : logged) {
    said = said || line.find("3 tests with an order dependence (ste hazards) kept on one worker each, in the "
                             "order they were recorded, in 1 group") != std::string::npos;
  }
  EXPECT_TRUE(said);
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

// Options::cases: each case in its run order (case_order), with its own
// definition views (none for a case that owns nothing), never one of the
// file's shared part; a result without an order, or with a case scope it
// does not name, gives its file no case; a bad name is refused.
TEST_F(BuildSessionTest, CasesAreKeptInTheirRunOrderOrNotAtAll) {
  BuildSession::Options o;
  o.cases = true;
  auto made = BuildSession::Create(Spec(3), Store(), o);
  ASSERT_TRUE(made.ok()) << made.status();
  BuildSession& b = **made;
  std::vector<TestLease> leases = LeaseAll(b, b.coordinator().RegisterWorker("w"), 3);
  const std::string f = "src/a.py/\x01ste-def:f", g = "src/a.py/\x01ste-def:g";
  const std::string module = "src/a.py/\x01ste-def";
  std::vector<InventoryEntry> views;
  for (const std::string& v : {f, g, module}) {
    InventoryEntry e;
    e.path = v;
    e.type = FileType::kRegular;
    views.push_back(e);
  }
  ASSERT_TRUE(b.AddExternal(*Inventory::FromEntries(views, 0)).ok());
  // The file's scope holds the module view and g (shared); case "z" ran f
  // and g, "a" ran nothing of its own, "m" recorded nothing.
  auto result = [&](const TestLease& lease, std::vector<std::string> order) {
    LeaseResult r = Result(b, lease, {module, g});
    ResultScope z;
    z.scope = "//r/" + lease.test + "/z";
    z.ids[1] = {*b.InternPath(f), *b.InternPath(g)};
    ResultScope a;
    a.scope = "//r/" + lease.test + "/a";
    a.ids[1] = {*b.InternPath("src/a.py")};
    r.scopes.push_back(z);
    r.scopes.push_back(a);
    r.case_order = std::move(order);
    return r;
  };
  LeaseResult bad = result(leases[0], {"z", "a/b"});
  EXPECT_EQ(b.Submit(bad).status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(b.Submit(result(leases[0], {"z", "a", "m"})).ok());
  ASSERT_TRUE(b.Submit(result(leases[1], {})).ok());        // no order
  ASSERT_TRUE(b.Submit(result(leases[2], {"z", "m"})).ok());  // "a" not in it
  auto loaded = LoadCompletedBaseline(*Store(), 100, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const SelectionIndex& index = *loaded->index;
  ASSERT_EQ(index.case_count(), 3u);
  const uint32_t t0 = *index.FindTest("//r/" + leases[0].test);
  std::vector<std::string> names;
  for (uint32_t c = 0; c < 3; c++) {
    EXPECT_EQ(index.case_test(c), t0);
    names.emplace_back(index.case_name(c));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"z", "a", "m"}));
  EXPECT_EQ(index.CasesOf(DepKey{f, DepKind::kContent}).value(), std::vector<uint32_t>{0});
  EXPECT_TRUE(index.CasesOf(DepKey{g, DepKind::kContent}).value().empty()) << "shared";
  EXPECT_TRUE(index.CasesOf(DepKey{"src/a.py", DepKind::kContent}).value().empty()) << "not a definition view";
}

// BuildSpec::case_reads (ctest): what a case's scope still holds after
// SplitCaseScopes, a file it read, is its own too; never a key of the
// file's shared part.
TEST_F(BuildSessionTest, WithCaseReadsACaseOwnsTheFilesItRead) {
  BuildSpec spec = Spec(1);
  spec.cases = true;
  spec.case_reads = true;
  std::vector<InventoryEntry> files(2);
  files[0].path = "data/two.txt";
  files[1].path = "src/a.py";
  for (InventoryEntry& e : files) e.type = FileType::kRegular;
  spec.inventory = *Inventory::FromEntries(files, 1);
  auto made = BuildSession::Create(std::move(spec), Store(), {});
  ASSERT_TRUE(made.ok()) << made.status();
  BuildSession& b = **made;
  std::vector<TestLease> leases = LeaseAll(b, b.coordinator().RegisterWorker("w"), 1);
  LeaseResult r = Result(b, leases[0], {"src/a.py"});
  ResultScope one, two;
  one.scope = "//r/" + leases[0].test + "/Files.ReadsOne";
  one.ids[1] = {*b.InternPath("src/a.py")};  // the file's scope read it too
  two.scope = "//r/" + leases[0].test + "/Files.ReadsTwo";
  two.ids[1] = {*b.InternPath("data/two.txt")};
  r.scopes.push_back(one);
  r.scopes.push_back(two);
  r.case_order = {"Files.ReadsOne", "Files.ReadsTwo"};
  ASSERT_TRUE(b.Submit(r).ok());
  auto loaded = LoadCompletedBaseline(*Store(), 100, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const SelectionIndex& index = *loaded->index;
  ASSERT_EQ(index.case_count(), 2u);
  EXPECT_EQ(index.CasesOf(DepKey{"data/two.txt", DepKind::kContent}).value(), std::vector<uint32_t>{1});
  EXPECT_TRUE(index.CasesOf(DepKey{"src/a.py", DepKind::kContent}).value().empty()) << "shared";
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

namespace ste {
namespace {

// Resumable builds: a build killed after some results were journaled and
// resumed by another store object (another scheduler) stores the same
// index and inventory, byte for byte, as a fault-free build of the same
// results, and leases only the tests without a result.
class ResumeTest : public ::testing::Test {
 protected:
  std::unique_ptr<ste::Store> Store(const std::string& name) {
    auto s = ste::Store::Open("sqlite:" + dir_.path() + "/" + name + ".db", dir_.path());
    EXPECT_TRUE(s.ok()) << s.status();
    return *std::move(s);
  }
  static BuildSpec Spec() {
    BuildSpec spec;
    spec.commit = "c0ffee";
    spec.mri = 5;
    for (int i = 0; i < 6; i++) spec.tests.push_back({absl::StrCat("tests/t", i, ".py"), 0.1 * i});
    InventoryEntry e;
    e.path = "src/a.py";
    e.type = FileType::kRegular;
    spec.inventory = *Inventory::FromEntries({e}, 1);
    return spec;
  }
  static Inventory External() {
    InventoryEntry e;
    e.path = "/usr/share/ste-test/data";
    e.type = FileType::kRegular;
    e.size = 4;
    e.hash = {7, 9};
    InventoryEntry view;  // a definition view, a case's own part
    view.path = "src/a.py/\x01ste-def:f";
    view.type = FileType::kRegular;
    return *Inventory::FromEntries({e, view}, 0);
  }
  // The result of test `test` for `lease`: its own deps, one outside the
  // repo, and one in the root scope.
  static LeaseResult ResultOf(BuildSession& b, uint64_t lease, const std::string& test) {
    LeaseResult r;
    r.lease_id = lease;
    r.test = test;
    r.seconds = 0.5;
    r.outcome = test == "tests/t3.py" ? TestOutcome::kFailed : TestOutcome::kPassed;
    r.opaque = test == "tests/t4.py";
    // Kept through the journal (version 2): t1 flaky, t0 left a file.
    r.flaky = test == "tests/t1.py";
    if (test == "tests/t0.py") r.writes = {"out/state"};
    ResultScope own;
    own.scope = "//r/" + test;
    own.ids[1] = {*b.InternPath("src/a.py"), *b.InternPath("/usr/share/ste-test/data"),
                  *b.InternPath(absl::StrCat("src/only_", test))};
    own.ids[2] = {*b.InternPath(absl::StrCat("config/", test, ".env"))};
    own.ids[3] = {*b.InternPath("fixtures")};
    ResultScope root;
    root.scope = "//r";
    root.ids[1] = {*b.InternPath("conftest.py")};
    r.scopes = {own, root};
    // t0 and t1 ran two cases: c1 ran f, c2 nothing of its own (their run
    // order goes through the journal too).
    if (test == "tests/t0.py" || test == "tests/t1.py") {
      ResultScope c1;
      c1.scope = "//r/" + test + "/c1";
      c1.ids[1] = {*b.InternPath("src/a.py/\x01ste-def:f")};
      ResultScope c2;
      c2.scope = "//r/" + test + "/c2";
      r.scopes.push_back(c1);
      r.scopes.push_back(c2);
      r.case_order = {"c1", "c2"};
    }
    return r;
  }
  // Feeds the results of `tests` (leased by one worker) in that order.
  static void Feed(BuildSession& b, const std::vector<std::string>& tests) {
    const std::string w = b.coordinator().RegisterWorker("w");
    bool done = false;
    auto leases = b.coordinator().Lease(w, 100, &done);
    ASSERT_TRUE(leases.ok());
    ASSERT_TRUE(b.AddExternal(External()).ok());
    for (const std::string& t : tests) {
      uint64_t id = 0;
      for (const TestLease& l : *leases) id = l.test == t ? l.lease_id : id;
      ASSERT_NE(id, 0u) << t << " was not leased";
      auto taken = b.Submit(ResultOf(b, id, t));
      ASSERT_TRUE(taken.ok()) << taken.status();
      EXPECT_EQ(*taken, BuildCoordinator::Acceptance::kAccepted);
    }
  }
  static std::string Blob(ste::Store& store, int64_t baseline, const std::string& name) {
    auto path = store.BlobPath(baseline, name);
    EXPECT_TRUE(path.ok()) << path.status();
    return testing_util::ReadWholeFile(*path);
  }
  ScopedTempDir dir_;
};

TEST_F(ResumeTest, AKilledBuildResumedElsewhereStoresTheFaultFreeIndex) {
  // Fault-free, in one order.
  BuildSession::Options with_cases;
  with_cases.cases = true;
  auto reference = BuildSession::Create(Spec(), Store("reference"), with_cases);
  ASSERT_TRUE(reference.ok()) << reference.status();
  Feed(**reference, {"tests/t0.py", "tests/t1.py", "tests/t2.py", "tests/t3.py", "tests/t4.py",
                     "tests/t5.py"});
  ASSERT_EQ((*reference)->Snapshot(0, absl::ZeroDuration()).state, BaselineState::kComplete);

  // Killed after four results (journaled in batches of 3, the fourth by Flush).
  BuildSession::Options o;
  o.cases = true;
  o.owner = "first";
  o.lease_ms = 0;
  o.journal_batch = 3;
  int64_t baseline = 0;
  {
    auto killed = BuildSession::Create(Spec(), Store("faulty"), o);
    ASSERT_TRUE(killed.ok()) << killed.status();
    baseline = (*killed)->baseline_id();
    Feed(**killed, {"tests/t5.py", "tests/t3.py", "tests/t1.py", "tests/t0.py"});
    ASSERT_TRUE((*killed)->Flush().ok());
  }
  std::unique_ptr<ste::Store> store = Store("faulty");
  auto claimed = store->ClaimBuild(baseline, "second", 60000);
  ASSERT_TRUE(claimed.ok() && claimed->has_value()) << claimed.status();
  o.owner = "second";
  o.lease_ms = 60000;
  auto resumed = BuildSession::Resume(baseline, **std::move(claimed), std::move(store), o);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ((*resumed)->resumed(), 4u);
  EXPECT_EQ((*resumed)->generation(), 2u);
  // Only the two without a result are leased, in priority order (t4 is
  // longer than t2).
  const std::string w = (*resumed)->coordinator().RegisterWorker("w2");
  bool done = false;
  auto rest = (*resumed)->coordinator().Lease(w, 100, &done);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 2u);
  EXPECT_EQ((*rest)[0].test, "tests/t4.py");
  EXPECT_EQ((*rest)[1].test, "tests/t2.py");
  // A late result of a lease from before the kill: taken (it was never
  // accepted), and the new lease's result is then a duplicate.
  ASSERT_TRUE((*resumed)->AddExternal(External()).ok());
  // (Which test a lease of generation 1 was for died with the first
  // scheduler: the result names its test, one of the build's.)
  auto late = (*resumed)->Submit(ResultOf(**resumed, 3, "tests/t2.py"));
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(*late, BuildCoordinator::Acceptance::kAccepted);
  auto dup = (*resumed)->Submit(ResultOf(**resumed, (*rest)[1].lease_id, "tests/t2.py"));
  ASSERT_TRUE(dup.ok());
  EXPECT_EQ(*dup, BuildCoordinator::Acceptance::kDuplicate);
  auto last = (*resumed)->Submit(ResultOf(**resumed, (*rest)[0].lease_id, "tests/t4.py"));
  ASSERT_TRUE(last.ok()) << last.status();
  BuildSnapshot snap = (*resumed)->Snapshot(0, absl::ZeroDuration());
  ASSERT_EQ(snap.state, BaselineState::kComplete) << snap.failure;
  EXPECT_EQ(snap.finished.size(), 6u);

  std::unique_ptr<ste::Store> a = Store("reference"), b = Store("faulty");
  EXPECT_EQ(Blob(*b, baseline, "index"), Blob(*a, 1, "index"));
  EXPECT_EQ(Blob(*b, baseline, "inventory"), Blob(*a, 1, "inventory"));
  // t1 (flaky) and t0 (its write) were accepted before the kill.
  EXPECT_EQ(Blob(*b, baseline, kFlakyBlob), Blob(*a, 1, kFlakyBlob));
  EXPECT_EQ(Blob(*b, baseline, kFlakyBlob), std::string("tests/t1.py\0", 12));
  EXPECT_EQ(Blob(*b, baseline, kWritesBlob), Blob(*a, 1, kWritesBlob));
  EXPECT_EQ(Blob(*b, baseline, kOpaqueBlob), Blob(*a, 1, kOpaqueBlob));
  // The cases of t0 and t1, accepted before the kill, kept in their order.
  auto cases = LoadCompletedBaseline(*b, 5, baseline);
  ASSERT_TRUE(cases.ok()) << cases.status();
  EXPECT_EQ(cases->index->case_count(), 4u);
  auto ra = a->Results(1), rb = b->Results(baseline);
  ASSERT_TRUE(ra.ok() && rb.ok());
  ASSERT_EQ(ra->size(), rb->size());
  for (size_t i = 0; i < ra->size(); i++) {
    EXPECT_EQ((*ra)[i].test, (*rb)[i].test);
    EXPECT_EQ((*ra)[i].outcome, (*rb)[i].outcome);
    EXPECT_EQ((*ra)[i].opaque, (*rb)[i].opaque);
  }
  // The journal went with the completion.
  EXPECT_TRUE(absl::IsNotFound(b->Journal(baseline).status()));
}

TEST_F(ResumeTest, AJournalThatCannotBeReadFailsTheBuildInsteadOfResumingIt) {
  std::unique_ptr<ste::Store> first = Store("s");
  absl::StatusOr<int64_t> baseline = first->BeginBuild("c", 1, "first", EncodeBuildSpec(Spec()), 0);
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  AcceptedEntry damaged;
  damaged.result.test = "tests/t0.py";
  damaged.record = "STEJRNL but not a record";
  ASSERT_TRUE(first->PutAccepted(*baseline, {damaged}).ok());
  first.reset();
  std::unique_ptr<ste::Store> store = Store("s");
  auto claimed = store->ClaimBuild(*baseline, "second", 60000);
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  BuildSession::Options o;
  o.owner = "second";
  auto resumed = BuildSession::Resume(*baseline, **std::move(claimed), std::move(store), o);
  EXPECT_TRUE(absl::IsDataLoss(resumed.status())) << resumed.status();
  auto info = Store("s")->Get(*baseline);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, BaselineState::kFailed);
  EXPECT_NE(info->failure.find("cannot resume the build: build journal"), std::string::npos) << info->failure;
}

TEST_F(ResumeTest, TheOldOwnerOfATakenBuildIsLostAndNeverFailsIt) {
  BuildSession::Options o;
  o.owner = "first";
  o.lease_ms = 0;
  auto first = BuildSession::Create(Spec(), Store("s"), o);
  ASSERT_TRUE(first.ok());
  const int64_t baseline = (*first)->baseline_id();
  std::unique_ptr<ste::Store> store = Store("s");
  auto claimed = store->ClaimBuild(baseline, "second", 60000);
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  Feed(**first, {"tests/t0.py"});  // accepted in memory, journaled later
  EXPECT_TRUE(absl::IsFailedPrecondition((*first)->Flush()));
  EXPECT_TRUE((*first)->lost());
  EXPECT_FALSE((*first)->running());
  EXPECT_FALSE((*first)->Renew());
  (*first)->Fail("must not reach the store");
  EXPECT_TRUE((*first)->Snapshot(0, absl::ZeroDuration()).handed_over);
  auto info = store->Get(baseline);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, BaselineState::kBuilding);
  auto journal = store->Journal(baseline);
  ASSERT_TRUE(journal.ok());
  EXPECT_TRUE(journal->empty());
}

}  // namespace
}  // namespace ste
