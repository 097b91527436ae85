#include "ste/build_coordinator.h"

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ste {
namespace {

using ::testing::ElementsAre;

// A clock the test moves by hand.
struct FakeClock {
  absl::Time t = absl::FromUnixSeconds(1000);
  BuildCoordinator::Options Options(absl::Duration timeout = absl::Seconds(30)) {
    BuildCoordinator::Options o;
    o.lease_timeout = timeout;
    o.now = [this] { return t; };
    return o;
  }
};

std::vector<std::string> Names(const std::vector<TestLease>& leases) {
  std::vector<std::string> names;
  for (const TestLease& l : leases) names.push_back(l.test);
  return names;
}

TEST(BuildCoordinator, UnknownDurationsFirstThenLongestFirst) {
  FakeClock clock;
  BuildCoordinator c({{"t/short", 1}, {"t/new", 0}, {"t/long", 90}, {"t/mid", 10},
                      {"t/long2", 90}, {"t/new", 0}},
                     clock.Options());
  EXPECT_THAT(c.PriorityOrder(),
              ElementsAre("t/new", "t/long", "t/long2", "t/mid", "t/short"));
  std::string w = c.RegisterWorker("host:1");
  bool done = true;
  auto leases = c.Lease(w, 2, &done);
  ASSERT_TRUE(leases.ok()) << leases.status();
  EXPECT_THAT(Names(*leases), ElementsAre("t/new", "t/long"));
  EXPECT_FALSE(done);
  EXPECT_EQ(c.progress().leased, 2u);
  EXPECT_EQ(c.progress().queued, 3u);
}

TEST(BuildCoordinator, AGroupIsLeasedTogetherInItsOrderAndAgainAfterItsWorkerExpires) {
  FakeClock clock;
  BuildCoordinator::Options o = clock.Options(absl::Seconds(30));
  // t/reader ran after t/writer when recorded; t/looker before it.
  o.groups = {{"t/looker", "t/writer", "t/reader"}, {"t/missing", "t/alone"}};
  BuildCoordinator c({{"t/reader", 50}, {"t/other", 40}, {"t/writer", 1}, {"t/looker", 2}, {"t/alone", 30}},
                     o);
  std::string w1 = c.RegisterWorker("w1");
  std::string w2 = c.RegisterWorker("w2");
  bool done = false;
  // The longest, t/reader, comes first, and its group with it, in order.
  auto first = c.Lease(w1, 1, &done);
  ASSERT_TRUE(first.ok());
  EXPECT_THAT(Names(*first), ElementsAre("t/looker", "t/writer", "t/reader"));
  // A group of one test is none: t/alone goes alone.
  auto second = c.Lease(w2, 2, &done);
  ASSERT_TRUE(second.ok());
  EXPECT_THAT(Names(*second), ElementsAre("t/other", "t/alone"));
  ASSERT_EQ(*c.Accept((*first)[0].lease_id), BuildCoordinator::Acceptance::kAccepted);
  // w1 goes silent: what it had not finished comes back as one group.
  clock.t += absl::Seconds(31);
  std::string w3 = c.RegisterWorker("w3");
  auto again = c.Lease(w3, 1, &done);
  ASSERT_TRUE(again.ok());
  EXPECT_THAT(Names(*again), ElementsAre("t/writer", "t/reader"));
}

TEST(BuildCoordinator, EveryTestAcceptedOnceThenDone) {
  FakeClock clock;
  BuildCoordinator c({{"a", 1}, {"b", 2}}, clock.Options());
  std::string w = c.RegisterWorker("w");
  bool done = false;
  auto leases = c.Lease(w, 10, &done);
  ASSERT_TRUE(leases.ok());
  ASSERT_EQ(leases->size(), 2u);
  EXPECT_EQ(*c.Accept((*leases)[0].lease_id), BuildCoordinator::Acceptance::kAccepted);
  EXPECT_EQ(*c.Accept((*leases)[0].lease_id), BuildCoordinator::Acceptance::kDuplicate);
  EXPECT_FALSE(c.complete());
  EXPECT_EQ(*c.Accept((*leases)[1].lease_id), BuildCoordinator::Acceptance::kAccepted);
  EXPECT_TRUE(c.complete());
  auto more = c.Lease(w, 10, &done);
  ASSERT_TRUE(more.ok());
  EXPECT_TRUE(more->empty());
  EXPECT_TRUE(done);
  EXPECT_EQ(c.progress().done, 2u);
}

TEST(BuildCoordinator, ASilentWorkersLeasesGoBackAndItsLateResultIsTheOnlyOneTaken) {
  FakeClock clock;
  BuildCoordinator c({{"a", 5}, {"b", 1}}, clock.Options(absl::Seconds(30)));
  std::string dead = c.RegisterWorker("dies");
  std::string live = c.RegisterWorker("lives");
  bool done = false;
  auto first = c.Lease(dead, 1, &done);
  ASSERT_TRUE(first.ok());
  ASSERT_THAT(Names(*first), ElementsAre("a"));

  // 20 s: still within the timeout; `live` gets the other test only.
  clock.t += absl::Seconds(20);
  auto second = c.Lease(live, 5, &done);
  ASSERT_TRUE(second.ok());
  EXPECT_THAT(Names(*second), ElementsAre("b"));

  // 40 s after its last call, `dead` has expired: "a" is queued again.
  clock.t += absl::Seconds(20);
  auto again = c.Lease(live, 5, &done);
  ASSERT_TRUE(again.ok());
  EXPECT_THAT(Names(*again), ElementsAre("a"));
  EXPECT_EQ(c.progress().workers, 1u);
  EXPECT_EQ(c.Heartbeat(dead).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(c.Lease(dead, 1, &done).status().code(), absl::StatusCode::kFailedPrecondition);

  // The revived worker's late result comes first and is taken; the
  // re-leased copy's result is then a duplicate. Exactly once either way.
  EXPECT_EQ(*c.Accept((*first)[0].lease_id), BuildCoordinator::Acceptance::kAccepted);
  EXPECT_EQ(*c.Accept((*again)[0].lease_id), BuildCoordinator::Acceptance::kDuplicate);
  EXPECT_EQ(*c.Accept((*second)[0].lease_id), BuildCoordinator::Acceptance::kAccepted);
  EXPECT_TRUE(c.complete());
}

TEST(BuildCoordinator, HeartbeatsKeepAWorkerAlive) {
  FakeClock clock;
  BuildCoordinator c({{"a", 1}, {"b", 1}}, clock.Options(absl::Seconds(30)));
  std::string w = c.RegisterWorker("w");
  std::string other = c.RegisterWorker("other");
  bool done = false;
  ASSERT_TRUE(c.Lease(w, 1, &done).ok());
  for (int i = 0; i < 10; i++) {
    clock.t += absl::Seconds(25);
    ASSERT_TRUE(c.Heartbeat(w).ok()) << i;
    ASSERT_TRUE(c.Heartbeat(other).ok()) << i;
  }
  auto rest = c.Lease(other, 5, &done);
  ASSERT_TRUE(rest.ok());
  EXPECT_THAT(Names(*rest), ElementsAre("b")) << "a stays leased to the live worker";
}

TEST(BuildCoordinator, UnknownWorkersAndLeasesAreErrors) {
  FakeClock clock;
  BuildCoordinator c({{"a", 1}}, clock.Options());
  bool done = false;
  EXPECT_EQ(c.Heartbeat("w9").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(c.Lease("w9", 1, &done).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(c.Accept(12345).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.Accept(0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BuildCoordinator, WorkersDyingAtRandomStillGiveEveryTestExactlyOnce) {
  // 4 threads, one worker each, over 400 tests. Two workers stop calling
  // in part-way (killed) while the clock runs; the others take over their
  // leases (and re-register if the clock outran them too). Every test must
  // be accepted exactly once.
  std::atomic<int64_t> now_s{1000};
  BuildCoordinator::Options options;
  options.lease_timeout = absl::Seconds(5);
  options.now = [&] { return absl::FromUnixSeconds(now_s.load()); };
  std::vector<BuildTest> tests;
  for (int i = 0; i < 400; i++) tests.push_back({"t/" + std::to_string(i), double(i % 7)});
  BuildCoordinator c(tests, options);

  std::atomic<int> accepted{0}, duplicates{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; k++) {
    threads.emplace_back([&, k] {
      std::string w = c.RegisterWorker("w" + std::to_string(k));
      int handled = 0;
      for (;;) {
        bool done = false;
        auto leases = c.Lease(w, 3, &done);
        if (!leases.ok()) {
          // Expired while another thread moved the clock: a real worker
          // registers again and carries on.
          ASSERT_EQ(leases.status().code(), absl::StatusCode::kFailedPrecondition);
          w = c.RegisterWorker("w" + std::to_string(k) + "-again");
          continue;
        }
        if (done) return;
        if (leases->empty()) {
          now_s += 1;  // time passes while others hold the remaining tests
          std::this_thread::yield();
          continue;
        }
        for (const TestLease& l : *leases) {
          // Workers 0 and 1 die after 40 results, holding their leases.
          if (k < 2 && ++handled > 40) return;
          auto a = c.Accept(l.lease_id);
          ASSERT_TRUE(a.ok());
          (*a == BuildCoordinator::Acceptance::kAccepted ? accepted : duplicates)++;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(c.complete());
  EXPECT_EQ(accepted.load(), 400);
  EXPECT_EQ(c.progress().done, 400u);
}

}  // namespace
}  // namespace ste
