// The state of one distributed record build, whatever carries it.
//
// A BuildCoordinator hands tests to workers and takes their results back:
//   - tests are leased in priority order: unknown durations first (a new
//     test's cost is a guess, so start it early), then longest first, ties
//     by name;
//   - a worker is alive while it calls in (RegisterWorker, Heartbeat,
//     Lease, Accept) at least every `lease_timeout`; a worker silent for
//     longer is expired on the next call of anyone: its unfinished leases
//     go back to the queue, and it must register again to lease more;
//   - each test's result is accepted exactly once: the first result for
//     any lease of a test wins (a late result from an expired worker
//     included); every later one is a duplicate, acknowledged and ignored.
// The gRPC service (issue 5) is a thin adapter over this class; the
// embedded `ste record` uses the same class in process.
//
// Generations. A build resumed by another run of a scheduler (a restart,
// a take-over: scheduler_service.h) gets a new coordinator with the next
// `generation`. Its lease ids are ((generation - 1) << 40) + n, so they
// never equal an id an earlier generation gave out (generation 1's are
// 1, 2, ... as before), and LeaseGeneration() tells which gave an id. The
// tests accepted before are marked with MarkAccepted() before anything is
// leased. A result for a lease of an earlier generation (a worker that ran
// it while the scheduler was down) is taken by AcceptEarlier(): accepted
// if its test is not done yet, a duplicate otherwise. Worker ids of
// generation 1 are "w<n>", later ones "g<generation>w<n>"; a coordinator
// of generation > 1 answers an id it did not give out with
// FailedPrecondition "... register again" (the worker then re-registers),
// generation 1 with NotFound as before.
//
// Time comes from Options::now, so tests drive it by hand.
// Thread-safety: every method may be called from any thread.
#ifndef STE_BUILD_COORDINATOR_H_
#define STE_BUILD_COORDINATOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ste {

struct BuildTest {
  std::string test;               // repo-relative test path
  double historical_seconds = 0;  // 0: unknown
};

struct TestLease {
  uint64_t lease_id = 0;  // unique within the build, never 0
  std::string test;
};

class BuildCoordinator {
 public:
  struct Options {
    absl::Duration lease_timeout = absl::Seconds(30);
    std::function<absl::Time()> now = [] { return absl::Now(); };
    // Called (under the coordinator's lock: log, do not call back) when a
    // worker is given up on, with the number of its tests re-queued.
    std::function<void(const std::string& worker_id, const std::string& name,
                       size_t requeued)>
        on_expired;
    // 1 for a new build; one more for each resumption (see "Generations").
    uint32_t generation = 1;
    // Tests kept on one worker, each group in its order (HazardGroups,
    // hazards.h: pairs with an order dependence): when Lease takes a test
    // of a group, it takes every queued test of the group with it, in the
    // group's order, even past max_tests; a worker runs the tests of one
    // lease call one after the other, in order. A name not in the build
    // is ignored; a test in two groups stays in the first.
    std::vector<std::vector<std::string>> groups;
  };

  // The generation that gave out `lease_id` (see "Generations").
  static uint32_t LeaseGeneration(uint64_t lease_id) {
    return static_cast<uint32_t>(lease_id >> 40) + 1;
  }

  // Duplicate test names are collapsed.
  BuildCoordinator(std::vector<BuildTest> tests, Options options);

  // A new worker id ("w1", "w2", ...); `name` is for logs.
  std::string RegisterWorker(const std::string& name);

  // Keeps a worker alive. NotFound: never registered. FailedPrecondition:
  // expired (its leases were given back); it must register again.
  absl::Status Heartbeat(const std::string& worker_id);

  // Up to `max_tests` tests for the worker, in priority order (and a
  // group's queued tests with its first: Options::groups); empty when
  // none is queued right now (others are leased). *done is set when every
  // test has been accepted. Errors as Heartbeat.
  absl::StatusOr<std::vector<TestLease>> Lease(const std::string& worker_id,
                                               size_t max_tests, bool* done);

  // The test a lease was issued for; nullopt for a lease never issued.
  std::optional<std::string> LeaseTest(uint64_t lease_id);
  // The name the worker holding a lease registered with; "" for a lease
  // never issued.
  std::string LeaseWorkerName(uint64_t lease_id);

  // Restores a test accepted by an earlier generation (before any lease):
  // it is done and never leased. NotFound for a test not in the build;
  // kDuplicate when it was marked already.
  enum class Acceptance { kAccepted, kDuplicate };
  absl::StatusOr<Acceptance> MarkAccepted(const std::string& test);

  // A result for lease `lease_id` of an earlier generation, for `test`:
  // kAccepted when the test is not done (a lease of it now outstanding
  // will be a duplicate), kDuplicate otherwise. InvalidArgument for a
  // lease id of this generation or a later one, or a test not in the build.
  absl::StatusOr<Acceptance> AcceptEarlier(uint64_t lease_id, const std::string& test);
  // Whether `test` is one of the build's.
  bool HasTest(const std::string& test) const;

  // The result of a lease has arrived. kAccepted the first time a result
  // comes for its test (the caller then feeds it to the index builder);
  // kDuplicate afterwards. InvalidArgument for a lease id never issued.
  // A result also counts as the worker calling in (if it is not expired).
  absl::StatusOr<Acceptance> Accept(uint64_t lease_id);

  struct Progress {
    size_t total = 0;
    size_t done = 0;
    size_t queued = 0;
    size_t leased = 0;
    size_t workers = 0;  // alive
  };
  Progress progress();
  bool complete();

  // The tests in lease priority order (for logs and tests).
  std::vector<std::string> PriorityOrder() const;

 private:
  enum class State { kQueued, kLeased, kDone };
  struct Worker {
    std::string name;
    absl::Time last_seen;
    bool expired = false;
    std::set<uint64_t> outstanding;  // lease ids not yet reported
  };
  struct LeaseInfo {
    size_t test = 0;  // index into tests_
    std::string worker;
  };

  // Expires silent workers and re-queues their unfinished tests. Requires mu_.
  void ExpireLocked(absl::Time now);
  // Requires mu_.
  absl::Status AliveLocked(const std::string& worker_id, absl::Time now);

  const Options options_;
  std::vector<BuildTest> tests_;  // in priority order; never changes
  absl::flat_hash_map<std::string, size_t> index_;  // test -> index into tests_; never changes
  std::vector<std::vector<size_t>> groups_;         // Options::groups as indexes; never changes
  absl::flat_hash_map<size_t, size_t> group_of_;    // test index -> its group; never changes
  // Guards everything below. A std::mutex, not absl::Mutex: Debian's
  // abseil is not built for ThreadSanitizer, which then reports false races
  // inside absl::Mutex sections; std::mutex it understands.
  std::mutex mu_;
  std::vector<State> state_;
  std::set<size_t> queue_;  // indices, priority order
  std::map<std::string, Worker> workers_;
  absl::flat_hash_map<uint64_t, LeaseInfo> leases_;
  uint64_t next_lease_ = 1;
  uint64_t next_worker_ = 1;
  size_t done_ = 0;
};

}  // namespace ste

#endif  // STE_BUILD_COORDINATOR_H_
