// Copyright: the ste authors. OwnedBuilds (build_ownership.h): whose a
// build is, on real stores. Each test runs on SQLite and on PostgreSQL
// (names end in /Sqlite, /Postgres); the race of two instances for one
// build runs on SQLite, from several threads, ownership threads running
// (the scheduler's TSan run sees it).
//
// Time without sleeping: a build begun with a 0 ms lease is expired at
// once; a lease is aged behind the store's back (its row's expiry moved
// back, as if the store's clock had run on); the ownership thread runs on
// a clock the test steps, one pass at a time.
#include "ste/build_ownership.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store_backends_test_util.h"
#include "store_test_util.h"

namespace ste {
namespace build_ownership_test {
namespace {

using ::testing::HasSubstr;
using testing_util::Backend;
using testing_util::PostgresBackend;
using testing_util::RawDb;
using testing_util::RawPg;
using testing_util::SqliteBackend;

constexpr absl::Duration kLongLease = absl::Seconds(600);  // no test outlives it
const std::vector<std::string> kTests = {"t/test_a.py", "t/test_b.py", "t/test_c.py"};

// The ownership thread's clock, moved by the test: each Step() ends one
// wait. Waits() counts the waits begun: n of them mean n passes are over.
class SteppedClock final : public OwnershipClock {
 public:
  bool WaitFor(absl::Duration) override {
    std::unique_lock<std::mutex> lock(mu_);
    waits_++;
    changed_.notify_all();
    changed_.wait(lock, [this] { return stopped_ || steps_ > 0; });
    if (stopped_) return false;
    steps_--;
    return true;
  }
  void Stop() override {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    changed_.notify_all();
  }
  void Step() {
    std::lock_guard<std::mutex> lock(mu_);
    steps_++;
    changed_.notify_all();
  }
  // Returns once `passes` passes are over.
  void AwaitPasses(int passes) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return stopped_ || waits_ >= passes; });
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int waits_ = 0;
  int steps_ = 0;
  bool stopped_ = false;
};

BuildSpec Spec(int64_t mri = 1) {
  BuildSpec spec;
  spec.commit = absl::StrCat("c", mri);
  spec.mri = mri;
  for (const std::string& t : kTests) spec.tests.push_back({t, 0});
  spec.inventory = *Inventory::FromEntries({}, 0);
  return spec;
}

LeaseResult Passed(uint64_t lease_id, const std::string& test) {
  LeaseResult r;
  r.lease_id = lease_id;
  r.test = test;
  ResultScope own;
  own.scope = "//r/" + test;
  r.scopes.push_back(own);
  return r;
}

// Lines logged, from any thread.
class LogLines {
 public:
  std::function<void(const std::string&)> Sink() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    };
  }
  std::string All() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string all;
    for (const std::string& l : lines_) absl::StrAppend(&all, l, "\n");
    return all;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

class BuildOwnershipTest : public testing_util::BackendStoreTest {
 protected:
  OwnedBuilds::Options OptionsOf(const std::string& instance) {
    OwnedBuilds::Options o;
    o.instance_id = instance;
    o.build_lease = kLongLease;
    o.open_store = [this] { return backend_->Open(); };
    o.log = log_.Sink();
    o.session.log = log_.Sink();
    return o;
  }
  std::unique_ptr<OwnedBuilds> Instance(const std::string& instance) {
    return std::make_unique<OwnedBuilds>(OptionsOf(instance));
  }

  // A build begun by scheduler `owner` with a lease of `lease_ms`, the
  // results of `accepted` journaled, then its scheduler gone ("SIGKILL":
  // nothing failed it, nothing renews it). Its baseline id.
  int64_t KilledBuild(const std::string& owner, int64_t lease_ms,
                      const std::vector<std::string>& accepted = {}, int64_t mri = 1) {
    BuildSession::Options o;
    o.owner = owner;
    o.lease_ms = lease_ms;
    absl::StatusOr<std::unique_ptr<BuildSession>> b = BuildSession::Create(Spec(mri), OpenStore(), o);
    EXPECT_TRUE(b.ok()) << b.status();
    if (!b.ok()) return 0;
    Submit(**b, LeaseAll(**b), accepted);
    EXPECT_TRUE((*b)->Flush().ok());
    return (*b)->baseline_id();
  }

  // Every test a new worker of `b` is given.
  static std::vector<TestLease> LeaseAll(BuildSession& b) {
    const std::string w = b.coordinator().RegisterWorker("w");
    bool done = false;
    absl::StatusOr<std::vector<TestLease>> leases = b.coordinator().Lease(w, 100, &done);
    EXPECT_TRUE(leases.ok()) << leases.status();
    return leases.value_or(std::vector<TestLease>{});
  }
  static std::vector<std::string> TestsOf(const std::vector<TestLease>& leases) {
    std::vector<std::string> tests;
    for (const TestLease& l : leases) tests.push_back(l.test);
    return tests;
  }
  // The results of `tests`, each for its lease in `leases`: accepted.
  static void Submit(BuildSession& b, const std::vector<TestLease>& leases,
                     const std::vector<std::string>& tests) {
    for (const std::string& t : tests) {
      uint64_t id = 0;
      for (const TestLease& l : leases) id = l.test == t ? l.lease_id : id;
      ASSERT_NE(id, 0u) << t << " was not leased";
      absl::StatusOr<BuildCoordinator::Acceptance> taken = b.Submit(Passed(id, t));
      ASSERT_TRUE(taken.ok()) << taken.status();
      EXPECT_EQ(*taken, BuildCoordinator::Acceptance::kAccepted) << t;
    }
  }

  // The build row of `baseline`: owner and generation, or "none".
  std::string Row(int64_t baseline) {
    absl::StatusOr<std::vector<BuildOwnership>> rows = store_->ListBuilds();
    EXPECT_TRUE(rows.ok()) << rows.status();
    for (const BuildOwnership& row : rows.value_or(std::vector<BuildOwnership>{})) {
      if (row.baseline == baseline) return absl::StrCat(row.owner, " g", row.generation);
    }
    return "none";
  }
  int64_t LeaseLeftMs(int64_t baseline) {
    absl::StatusOr<std::vector<BuildOwnership>> rows = store_->ListBuilds();
    EXPECT_TRUE(rows.ok()) << rows.status();
    for (const BuildOwnership& row : rows.value_or(std::vector<BuildOwnership>{})) {
      if (row.baseline == baseline) return row.lease_left_ms;
    }
    ADD_FAILURE() << "no build row for " << baseline;
    return 0;
  }
  BaselineInfo Info(int64_t baseline) {
    absl::StatusOr<BaselineInfo> info = store_->Get(baseline);
    EXPECT_TRUE(info.ok()) << info.status();
    return info.value_or(BaselineInfo{});
  }

  // Moves the lease of every build `ms` into the past, as if the store's
  // clock had run on that long (behind the store's back).
  void AgeLeases(int64_t ms) {
    const std::string sql = absl::StrCat("UPDATE ", GetParam() == Backend::kSqlite ? "" : "ste.",
                                         "builds SET lease_expires_ms = lease_expires_ms - ", ms);
    if (GetParam() == Backend::kSqlite) {
      RawDb(static_cast<SqliteBackend&>(*backend_).db_path()).Exec(sql);
    } else {
      RawPg(static_cast<PostgresBackend&>(*backend_).url()).Exec(sql);
    }
  }

  LogLines log_;
};

::testing::AssertionResult HasError(const absl::Status& s, absl::StatusCode code,
                                    const std::string& part) {
  if (s.code() == code && s.message().find(part) != absl::string_view::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "got " << s << ", want code " << static_cast<int>(code)
                                       << " with '" << part << "'";
}

TEST_P(BuildOwnershipTest, RenewingKeepsABuildAndALapsedLeaseIsTakenOverAndDropped) {
  std::unique_ptr<OwnedBuilds> a = Instance("a"), b = Instance("b");
  absl::StatusOr<std::shared_ptr<BuildSession>> build = a->Create(Spec());
  ASSERT_TRUE(build.ok()) << build.status();
  const int64_t id = (*build)->baseline_id();
  EXPECT_EQ(Row(id), "a g1");

  // Its lease has run out on the store's clock, and a renews it in time:
  // b's pass and b's claim leave it alone.
  AgeLeases(absl::ToInt64Milliseconds(kLongLease + absl::Minutes(1)));
  ASSERT_LE(LeaseLeftMs(id), 0);
  a->RenewAndSweep();
  EXPECT_GT(LeaseLeftMs(id), absl::ToInt64Milliseconds(kLongLease) / 2);
  b->RenewAndSweep();
  EXPECT_TRUE(HasError(b->Find((*build)->id()).status(), absl::StatusCode::kUnavailable,
                       "is not run by this scheduler: it is run by scheduler a (its lease runs "));
  EXPECT_EQ(Row(id), "a g1");
  EXPECT_TRUE((*build)->running());
  absl::StatusOr<std::shared_ptr<BuildSession>> found = a->Find((*build)->id());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, *build);

  // Not renewed in time: b takes it over; a's session is lost, and a's
  // next pass drops it (a call naming it then finds it is b's).
  AgeLeases(absl::ToInt64Milliseconds(kLongLease + absl::Minutes(1)));
  b->RenewAndSweep();
  EXPECT_EQ(Row(id), "b g2");
  a->RenewAndSweep();
  EXPECT_TRUE((*build)->lost());
  EXPECT_FALSE((*build)->running());
  EXPECT_TRUE(HasError(a->Find((*build)->id()).status(), absl::StatusCode::kUnavailable,
                       "it is run by scheduler b"));
  EXPECT_EQ(a->LatestRunning(""), nullptr);
  EXPECT_NE(b->LatestRunning("c1"), nullptr);
  EXPECT_EQ(b->LatestRunning("c2"), nullptr);
  EXPECT_EQ(Info(id).state, BaselineState::kBuilding);
  EXPECT_THAT(log_.All(), HasSubstr(absl::StrCat("build b", id, " handed over")));
}

// A restart: a new object with the same instance id on the same store
// resumes the builds the store says are this instance's, on the first
// pass of its ownership thread, without waiting for their lease.
TEST_P(BuildOwnershipTest, ARestartedInstanceResumesItsOwnBuildOnItsFirstPass) {
  int64_t id = 0;
  {
    std::unique_ptr<OwnedBuilds> before = Instance("a");
    absl::StatusOr<std::shared_ptr<BuildSession>> build = before->Create(Spec());
    ASSERT_TRUE(build.ok()) << build.status();
    id = (*build)->baseline_id();
    Submit(**build, LeaseAll(**build), {"t/test_b.py"});
    ASSERT_TRUE((*build)->Flush().ok());
  }  // killed: nothing failed the build, its lease runs on
  EXPECT_EQ(Row(id), "a g1");
  EXPECT_GT(LeaseLeftMs(id), 0);

  auto clock = std::make_shared<SteppedClock>();
  OwnedBuilds::Options o = OptionsOf("a");
  o.clock = clock;
  OwnedBuilds after(o);
  after.Start();
  clock->AwaitPasses(1);
  EXPECT_EQ(Row(id), "a g2");
  absl::StatusOr<std::shared_ptr<BuildSession>> resumed = after.Find(absl::StrCat("b", id));
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ((*resumed)->generation(), 2u);
  EXPECT_EQ((*resumed)->resumed(), 1u);
  EXPECT_THAT(TestsOf(LeaseAll(**resumed)), ::testing::ElementsAre("t/test_a.py", "t/test_c.py"));
  // Later passes renew it, and never claim it again.
  clock->Step();
  clock->AwaitPasses(2);
  EXPECT_EQ(Row(id), "a g2");
  EXPECT_TRUE((*resumed)->running());
  EXPECT_THAT(log_.All(), HasSubstr(absl::StrCat("build b", id, " resumed (generation 2, from a)")));
}

// (From scheduler_service_test's ABuildAnotherInstanceRunsIsUnavailableAndUntouched.)
TEST_P(BuildOwnershipTest, AnotherInstancesLiveLeaseIsNotTouched) {
  std::unique_ptr<OwnedBuilds> elsewhere = Instance("live-elsewhere");
  absl::StatusOr<std::shared_ptr<BuildSession>> build = elsewhere->Create(Spec());
  ASSERT_TRUE(build.ok()) << build.status();
  std::unique_ptr<OwnedBuilds> here = Instance("here");
  here->RenewAndSweep();
  EXPECT_TRUE(HasError(here->Find((*build)->id()).status(), absl::StatusCode::kUnavailable,
                       absl::StrCat("build ", (*build)->id(),
                                    " is not run by this scheduler: it is run by scheduler "
                                    "live-elsewhere (its lease runs ")));
  here->RenewAndSweep();
  EXPECT_EQ(Row((*build)->baseline_id()), "live-elsewhere g1");
  EXPECT_TRUE((*build)->Renew());
  EXPECT_TRUE((*build)->running());
  EXPECT_EQ(here->LatestRunning(""), nullptr);
}

TEST_P(BuildOwnershipTest, AnExpiredBuildIsTakenOverWithoutRunningItsJournaledResultsAgain) {
  const int64_t id = KilledBuild("killed", /*lease_ms=*/0, {"t/test_a.py"});
  EXPECT_EQ(Row(id), "killed g1");
  std::unique_ptr<OwnedBuilds> b = Instance("b");
  b->RenewAndSweep();
  EXPECT_EQ(Row(id), "b g2");
  absl::StatusOr<std::shared_ptr<BuildSession>> build = b->Find(absl::StrCat("b", id));
  ASSERT_TRUE(build.ok()) << build.status();
  EXPECT_EQ((*build)->generation(), 2u);
  EXPECT_EQ((*build)->resumed(), 1u);
  EXPECT_GT(LeaseLeftMs(id), 0);  // b's lease now
  // Only the tests without a result are leased; they complete the build.
  const std::vector<TestLease> rest = LeaseAll(**build);
  EXPECT_THAT(TestsOf(rest), ::testing::ElementsAre("t/test_b.py", "t/test_c.py"));
  Submit(**build, rest, {"t/test_b.py", "t/test_c.py"});
  EXPECT_EQ(Info(id).state, BaselineState::kComplete);
  absl::StatusOr<std::vector<TestResult>> results = store_->Results(id);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(results->size(), 3u);
  EXPECT_EQ(Row(id), "none");
  EXPECT_THAT(log_.All(), HasSubstr(absl::StrCat("build b", id, " resumed (generation 2, from killed)")));
}

// Expired longer than abandon_after ago: failed with the reason, by the
// sweep or by the first call naming it; expired for less: resumed.
TEST_P(BuildOwnershipTest, ABuildAbandonedPastAbandonAfterIsFailedWithTheReason) {
  const int64_t swept = KilledBuild("killed", 0, {}, 1);
  const int64_t named = KilledBuild("killed", 0, {}, 2);
  AgeLeases(absl::ToInt64Milliseconds(absl::Hours(1)));
  const int64_t recent = KilledBuild("killed", 0, {}, 3);
  OwnedBuilds::Options o = OptionsOf("b");
  o.abandon_after = absl::Minutes(30);
  OwnedBuilds b(o);
  const std::string why =
      "no scheduler ran it for 30m past its lease (last run by killed); the previous baseline "
      "stays in use";
  EXPECT_TRUE(HasError(b.Find(absl::StrCat("b", named)).status(), absl::StatusCode::kUnavailable,
                       absl::StrCat("build b", named, " is not run by this scheduler: ", why)));
  b.RenewAndSweep();
  for (int64_t id : {swept, named}) {
    BaselineInfo info = Info(id);
    EXPECT_EQ(info.state, BaselineState::kFailed) << id;
    EXPECT_EQ(info.failure, why) << id;
    EXPECT_EQ(Row(id), "none");
    EXPECT_THAT(log_.All(), HasSubstr(absl::StrCat("build b", id, " failed: ", why)));
  }
  EXPECT_TRUE(HasError(b.Find(absl::StrCat("b", swept)).status(), absl::StatusCode::kNotFound,
                       absl::StrCat("is not running in this scheduler (it failed: ", why, ")")));
  EXPECT_EQ(Info(recent).state, BaselineState::kBuilding);
  EXPECT_EQ(Row(recent), "b g2");
  // The previous baseline stays the one served.
  EXPECT_EQ(testing_util::LatestCompletedId(*store_, testing_util::kAnyMri), -1);
}

// A building baseline without a build row (an embedded `ste record`, a
// ste before resumable builds) is nobody's to resume or fail; and the
// other answers of Find for builds not in memory.
TEST_P(BuildOwnershipTest, ABuildWithoutABuildRowIsNeverTouched) {
  absl::StatusOr<int64_t> embedded = store_->Begin("c9", 9);
  ASSERT_TRUE(embedded.ok()) << embedded.status();
  const int64_t complete = testing_util::MakeCompleteBaseline(*store_, "c8", 8);
  std::unique_ptr<OwnedBuilds> a = Instance("a");
  a->RenewAndSweep();
  const std::string build = absl::StrCat("b", *embedded);
  EXPECT_TRUE(HasError(a->Find(build).status(), absl::StatusCode::kNotFound,
                       absl::StrCat("build ", build, " is not run by a scheduler (")));
  OwnedBuilds::Options o = OptionsOf("");
  OwnedBuilds embedded_scheduler(o);
  embedded_scheduler.RenewAndSweep();
  EXPECT_TRUE(HasError(embedded_scheduler.Find(build).status(), absl::StatusCode::kNotFound,
                       absl::StrCat("build ", build, " is not running in this scheduler")));
  EXPECT_EQ(Info(*embedded).state, BaselineState::kBuilding);
  EXPECT_TRUE(HasError(a->Find(absl::StrCat("b", complete)).status(), absl::StatusCode::kNotFound,
                       "is not running in this scheduler (it is complete)"));
  EXPECT_TRUE(HasError(a->Find("b999").status(), absl::StatusCode::kNotFound, "no build 'b999'"));
  EXPECT_TRUE(HasError(a->Find("nonsense").status(), absl::StatusCode::kNotFound,
                       "no build 'nonsense'"));
}

// A claimed build whose stored spec cannot be read is failed, never left
// for the next sweep to claim again.
TEST_P(BuildOwnershipTest, AClaimedBuildThatCannotBeResumedIsFailed) {
  absl::StatusOr<int64_t> id = store_->BeginBuild("c1", 1, "killed", "not a spec", 0);
  ASSERT_TRUE(id.ok()) << id.status();
  std::unique_ptr<OwnedBuilds> b = Instance("b");
  EXPECT_TRUE(HasError(b->Find(absl::StrCat("b", *id)).status(), absl::StatusCode::kUnavailable,
                       "is not run by this scheduler: it cannot be resumed: "));
  EXPECT_EQ(Info(*id).state, BaselineState::kFailed);
  EXPECT_THAT(Info(*id).failure, HasSubstr("cannot resume the build"));
  b->RenewAndSweep();
  EXPECT_EQ(Row(*id), "none");
}

TEST_P(BuildOwnershipTest, ShutdownFailsTheRunningBuildsAndRefusesNewOnes) {
  auto clock = std::make_shared<SteppedClock>();
  OwnedBuilds::Options o = OptionsOf("a");
  o.clock = clock;
  OwnedBuilds a(o);
  a.Start();
  clock->AwaitPasses(1);  // the thread waits for a Step() from now on
  absl::StatusOr<std::shared_ptr<BuildSession>> build = a.Create(Spec());
  ASSERT_TRUE(build.ok()) << build.status();
  const int64_t expired = KilledBuild("killed", 0);
  a.Shutdown("the scheduler stopped");
  EXPECT_TRUE(a.stopping());
  BaselineInfo info = Info((*build)->baseline_id());
  EXPECT_EQ(info.state, BaselineState::kFailed);
  EXPECT_EQ(info.failure, "the scheduler stopped");
  EXPECT_TRUE(HasError(a.Create(Spec(2)).status(), absl::StatusCode::kUnavailable,
                       "the scheduler is stopping"));
  EXPECT_TRUE(HasError(a.Find(absl::StrCat("b", expired)).status(), absl::StatusCode::kUnavailable,
                       "the scheduler is stopping"));
  a.RenewAndSweep();  // no pass after a shutdown
  EXPECT_EQ(Row(expired), "killed g1");
}

INSTANTIATE_TEST_SUITE_P(Backends, BuildOwnershipTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing_util::BackendName);

// Two schedulers on one SQLite store race for expired builds: their
// ownership threads sweep all along, and two threads ask each for every
// build at once. Each build ends up claimed once, by one of them; the
// other's call is told whose it is.
TEST(BuildOwnershipRaceTest, TwoInstancesClaimingOneExpiredBuildFromTwoThreadsOneGetsIt) {
  testing_util::ScopedTempDir dir;
  ASSERT_FALSE(dir.path().empty());
  SqliteBackend backend(dir.path());
  constexpr int kBuilds = 8;
  std::vector<std::string> ids;
  for (int i = 0; i < kBuilds; i++) {
    BuildSession::Options o;
    o.owner = "killed";
    o.lease_ms = 0;
    absl::StatusOr<std::unique_ptr<Store>> store = backend.Open(true);
    ASSERT_TRUE(store.ok()) << store.status();
    absl::StatusOr<std::unique_ptr<BuildSession>> b =
        BuildSession::Create(Spec(i + 1), *std::move(store), o);
    ASSERT_TRUE(b.ok()) << b.status();
    ids.push_back((*b)->id());
  }
  LogLines log;
  auto make = [&](const std::string& instance) {
    OwnedBuilds::Options o;
    o.instance_id = instance;
    o.build_lease = kLongLease;
    o.open_store = [&backend] { return backend.Open(true); };
    o.log = log.Sink();
    o.session.log = log.Sink();
    // A pass every few milliseconds, whatever the build lease: the
    // ownership threads run all along the race.
    o.clock = RealOwnershipClock(absl::Milliseconds(5));
    return std::make_unique<OwnedBuilds>(o);
  };
  std::unique_ptr<OwnedBuilds> instances[2] = {make("x"), make("y")};
  std::vector<absl::Status> found[2];
  std::vector<std::shared_ptr<BuildSession>> sessions[2];
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 2; k++) {
    threads.emplace_back([&, k] {
      ready++;
      while (ready.load() < 2) std::this_thread::yield();  // start together
      for (int i = 0; i < kBuilds; i++) {
        // One asks in order, the other backwards: both orders meet.
        absl::StatusOr<std::shared_ptr<BuildSession>> s =
            instances[k]->Find(ids[k == 0 ? i : kBuilds - 1 - i]);
        found[k].push_back(s.status());
        sessions[k].push_back(s.ok() ? *s : nullptr);
      }
    });
  }
  instances[0]->Start();
  instances[1]->Start();
  for (std::thread& t : threads) t.join();

  absl::StatusOr<std::unique_ptr<Store>> store = backend.Open(true);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::vector<BuildOwnership>> rows = (*store)->ListBuilds();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), static_cast<size_t>(kBuilds));
  for (int i = 0; i < kBuilds; i++) {
    const absl::Status& by_x = found[0][i];
    const absl::Status& by_y = found[1][kBuilds - 1 - i];
    ASSERT_NE(by_x.ok(), by_y.ok()) << ids[i] << ": x " << by_x << ", y " << by_y;
    const std::string winner = by_x.ok() ? "x" : "y";
    const absl::Status& loser = by_x.ok() ? by_y : by_x;
    EXPECT_TRUE(HasError(loser, absl::StatusCode::kUnavailable,
                         absl::StrCat("it is run by scheduler ", winner)))
        << ids[i];
    const BuildOwnership& row = (*rows)[i];
    EXPECT_EQ(absl::StrCat("b", row.baseline), ids[i]);
    EXPECT_EQ(row.owner, winner) << ids[i];
    EXPECT_EQ(row.generation, 2) << ids[i] << ": claimed more than once";
    std::shared_ptr<BuildSession> s = by_x.ok() ? sessions[0][i] : sessions[1][kBuilds - 1 - i];
    EXPECT_TRUE(s->running()) << ids[i];
    EXPECT_FALSE(s->lost()) << ids[i];
  }
  instances[0].reset();
  instances[1].reset();
  EXPECT_THAT(log.All(), ::testing::Not(HasSubstr("handed over"))) << log.All();
}

}  // namespace
}  // namespace build_ownership_test
}  // namespace ste
