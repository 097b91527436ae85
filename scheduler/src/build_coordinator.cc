#include "ste/build_coordinator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ste {

BuildCoordinator::BuildCoordinator(std::vector<BuildTest> tests, Options options)
    : options_(std::move(options)), tests_(std::move(tests)) {
  std::sort(tests_.begin(), tests_.end(), [](const BuildTest& a, const BuildTest& b) {
    bool a_new = a.historical_seconds <= 0, b_new = b.historical_seconds <= 0;
    if (a_new != b_new) return a_new;  // unknown durations first
    if (a.historical_seconds != b.historical_seconds) {
      return a.historical_seconds > b.historical_seconds;
    }
    return a.test < b.test;
  });
  // A name given twice keeps its first place in priority order.
  std::set<std::string> seen;
  std::vector<BuildTest> unique;
  for (BuildTest& t : tests_) {
    if (seen.insert(t.test).second) unique.push_back(std::move(t));
  }
  tests_ = std::move(unique);
  for (size_t i = 0; i < tests_.size(); i++) index_[tests_[i].test] = i;
  for (const std::vector<std::string>& names : options_.groups) {
    std::vector<size_t> group;
    for (const std::string& name : names) {
      auto it = index_.find(name);
      if (it == index_.end() || group_of_.contains(it->second)) continue;
      group_of_[it->second] = groups_.size();
      group.push_back(it->second);
    }
    if (group.size() < 2) {
      for (size_t t : group) group_of_.erase(t);
      continue;
    }
    groups_.push_back(std::move(group));
  }
  next_lease_ = (uint64_t{options_.generation > 0 ? options_.generation - 1 : 0} << 40) + 1;
  std::lock_guard<std::mutex> lock(mu_);
  state_.assign(tests_.size(), State::kQueued);
  for (size_t i = 0; i < tests_.size(); i++) queue_.insert(queue_.end(), i);
}

std::vector<std::string> BuildCoordinator::PriorityOrder() const {
  std::vector<std::string> names;
  for (const BuildTest& t : tests_) names.push_back(t.test);
  return names;
}

void BuildCoordinator::ExpireLocked(absl::Time now) {
  for (auto& [id, worker] : workers_) {
    if (worker.expired || now - worker.last_seen <= options_.lease_timeout) continue;
    worker.expired = true;
    size_t requeued = 0;
    for (uint64_t lease : worker.outstanding) {
      size_t test = leases_[lease].test;
      if (state_[test] == State::kLeased) {
        state_[test] = State::kQueued;
        queue_.insert(test);
        requeued++;
      }
    }
    worker.outstanding.clear();
    if (options_.on_expired) options_.on_expired(id, worker.name, requeued);
  }
}

absl::Status BuildCoordinator::AliveLocked(const std::string& worker_id, absl::Time now) {
  ExpireLocked(now);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) {
    if (options_.generation > 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          "worker ", worker_id, " joined the build before the scheduler resumed it (generation ",
          options_.generation, "): register again"));
    }
    return absl::NotFoundError(absl::StrCat("unknown worker ", worker_id));
  }
  if (it->second.expired) {
    return absl::FailedPreconditionError(absl::StrCat(
        "worker ", worker_id, " (", it->second.name,
        ") was silent longer than the lease timeout; its tests were given to "
        "others: register again"));
  }
  it->second.last_seen = now;
  return absl::OkStatus();
}

std::string BuildCoordinator::RegisterWorker(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string id = options_.generation > 1
                       ? absl::StrCat("g", options_.generation, "w", next_worker_++)
                       : absl::StrCat("w", next_worker_++);
  Worker& w = workers_[id];
  w.name = name;
  w.last_seen = options_.now();
  return id;
}

absl::Status BuildCoordinator::Heartbeat(const std::string& worker_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return AliveLocked(worker_id, options_.now());
}

absl::StatusOr<std::vector<TestLease>> BuildCoordinator::Lease(const std::string& worker_id,
                                                               size_t max_tests, bool* done) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status alive = AliveLocked(worker_id, options_.now());
  if (!alive.ok()) return alive;
  std::vector<TestLease> out;
  Worker& worker = workers_[worker_id];
  while (out.size() < max_tests && !queue_.empty()) {
    const size_t first = *queue_.begin();
    std::vector<size_t> take = {first};
    if (auto g = group_of_.find(first); g != group_of_.end()) {
      take.clear();  // the group's queued tests, in its order
      for (size_t member : groups_[g->second]) {
        if (state_[member] == State::kQueued) take.push_back(member);
      }
    }
    for (size_t test : take) {
      queue_.erase(test);
      state_[test] = State::kLeased;
      uint64_t id = next_lease_++;
      leases_[id] = LeaseInfo{test, worker_id};
      worker.outstanding.insert(id);
      out.push_back(TestLease{id, tests_[test].test});
    }
  }
  *done = done_ == tests_.size();
  return out;
}

std::optional<std::string> BuildCoordinator::LeaseTest(uint64_t lease_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return std::nullopt;
  return tests_[it->second.test].test;
}

std::string BuildCoordinator::LeaseWorkerName(uint64_t lease_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return "";
  auto worker = workers_.find(it->second.worker);
  return worker == workers_.end() ? "" : worker->second.name;
}

absl::StatusOr<BuildCoordinator::Acceptance> BuildCoordinator::Accept(uint64_t lease_id) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = options_.now();
  ExpireLocked(now);
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("no lease ", lease_id, " in this build"));
  }
  const LeaseInfo& lease = it->second;
  Worker& worker = workers_[lease.worker];
  worker.outstanding.erase(lease_id);
  if (!worker.expired) worker.last_seen = now;
  if (state_[lease.test] == State::kDone) return Acceptance::kDuplicate;
  // First result for this test, from this lease or an earlier one whose
  // worker was given up on: taken. A re-queued copy leaves the queue; a
  // re-leased copy's result will be a duplicate.
  queue_.erase(lease.test);
  state_[lease.test] = State::kDone;
  done_++;
  return Acceptance::kAccepted;
}

bool BuildCoordinator::HasTest(const std::string& test) const { return index_.count(test) > 0; }

absl::StatusOr<BuildCoordinator::Acceptance> BuildCoordinator::MarkAccepted(const std::string& test) {
  auto it = index_.find(test);
  if (it == index_.end()) return absl::NotFoundError(absl::StrCat("no test ", test, " in this build"));
  std::lock_guard<std::mutex> lock(mu_);
  if (state_[it->second] == State::kDone) return Acceptance::kDuplicate;
  queue_.erase(it->second);
  state_[it->second] = State::kDone;
  done_++;
  return Acceptance::kAccepted;
}

absl::StatusOr<BuildCoordinator::Acceptance> BuildCoordinator::AcceptEarlier(uint64_t lease_id,
                                                                            const std::string& test) {
  if (LeaseGeneration(lease_id) >= options_.generation) {
    return absl::InvalidArgumentError(absl::StrCat("no lease ", lease_id, " in this build"));
  }
  auto it = index_.find(test);
  if (it == index_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("no test ", test, " in this build"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  ExpireLocked(options_.now());
  if (state_[it->second] == State::kDone) return Acceptance::kDuplicate;
  // Leased again in this generation: that lease's result will be a
  // duplicate (Accept), and its worker's outstanding set lets go of it then.
  queue_.erase(it->second);
  state_[it->second] = State::kDone;
  done_++;
  return Acceptance::kAccepted;
}

BuildCoordinator::Progress BuildCoordinator::progress() {
  std::lock_guard<std::mutex> lock(mu_);
  ExpireLocked(options_.now());
  Progress p;
  p.total = tests_.size();
  p.done = done_;
  p.queued = queue_.size();
  for (State s : state_) p.leased += s == State::kLeased;
  for (const auto& [id, w] : workers_) p.workers += !w.expired;
  return p;
}

bool BuildCoordinator::complete() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_ == tests_.size();
}

}  // namespace ste
