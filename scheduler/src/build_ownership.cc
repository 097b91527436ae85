// Copyright: the ste authors. The builds a scheduler runs, and whose each
// one is (build_ownership.h).
#include "ste/build_ownership.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ste/build_id.h"
#include "ste/status_macros.h"

namespace ste {
namespace {

class RealClock final : public OwnershipClock {
 public:
  explicit RealClock(std::optional<absl::Duration> every) : every_(every) {}
  bool WaitFor(absl::Duration period) override {
    std::unique_lock<std::mutex> lock(mu_);
    return !stopped_cv_.wait_for(lock, absl::ToChronoMilliseconds(every_.value_or(period)),
                                 [this] { return stopped_; });
  }
  void Stop() override {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    stopped_cv_.notify_all();
  }

 private:
  const std::optional<absl::Duration> every_;
  std::mutex mu_;
  std::condition_variable stopped_cv_;
  bool stopped_ = false;
};

// Builds kept in memory; older ones that are over are let go.
constexpr size_t kBuildsKept = 64;

}  // namespace

std::shared_ptr<OwnershipClock> RealOwnershipClock(std::optional<absl::Duration> every) {
  return std::make_shared<RealClock>(every);
}

OwnedBuilds::OwnedBuilds(Options options)
    : options_(std::move(options)),
      clock_(options_.clock ? options_.clock : RealOwnershipClock()) {}

OwnedBuilds::~OwnedBuilds() { StopThread(); }

void OwnedBuilds::Log(const std::string& line) {
  if (options_.log) options_.log(line);
}

BuildSession::Options OwnedBuilds::SessionOptions() const {
  BuildSession::Options o = options_.session;
  o.owner = options_.instance_id;
  o.lease_ms = absl::ToInt64Milliseconds(options_.build_lease);
  return o;
}

bool OwnedBuilds::stopping() {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void OwnedBuilds::Start() {
  if (options_.instance_id.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || thread_.joinable()) return;
  thread_ = std::thread([this] {
    const absl::Duration every =
        std::clamp(options_.build_lease / 4, absl::Milliseconds(50), absl::Seconds(2));
    do {
      RenewAndSweep();
    } while (clock_->WaitFor(every));
  });
}

void OwnedBuilds::StopThread() {
  std::thread thread;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    thread = std::move(thread_);
  }
  clock_->Stop();
  if (thread.joinable()) thread.join();
}

void OwnedBuilds::Shutdown(const std::string& why) {
  StopThread();
  std::map<std::string, std::shared_ptr<BuildSession>> builds;
  {
    // After a claim under way: what it resumes is in the map, and failed.
    std::lock_guard<std::mutex> resuming(resume_mu_);
    std::lock_guard<std::mutex> lock(mu_);
    builds = builds_;
  }
  for (auto& [id, b] : builds) b->Fail(why);
}

absl::StatusOr<std::shared_ptr<BuildSession>> OwnedBuilds::Create(BuildSpec spec) {
  if (stopping()) return absl::UnavailableError("the scheduler is stopping");
  STE_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, options_.open_store());
  STE_ASSIGN_OR_RETURN(std::unique_ptr<BuildSession> build,
                       BuildSession::Create(std::move(spec), std::move(store), SessionOptions()));
  std::shared_ptr<BuildSession> b = std::move(build);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      builds_[b->id()] = b;
      while (builds_.size() > kBuildsKept) {
        auto oldest = builds_.end();
        for (auto it = builds_.begin(); it != builds_.end(); ++it) {
          if (!it->second->running() &&
              (oldest == builds_.end() || it->second->baseline_id() < oldest->second->baseline_id())) {
            oldest = it;
          }
        }
        if (oldest == builds_.end()) break;
        builds_.erase(oldest);
      }
      return b;
    }
  }
  // Shutdown() came in meanwhile and did not see this build.
  b->Fail("the scheduler is stopping");
  return absl::UnavailableError("the scheduler is stopping");
}

std::shared_ptr<BuildSession> OwnedBuilds::LatestRunning(const std::string& commit) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<BuildSession> latest;
  for (auto& [id, b] : builds_) {
    if (b->running() && (commit.empty() || b->commit().empty() || b->commit() == commit) &&
        (!latest || b->baseline_id() > latest->baseline_id())) {
      latest = b;
    }
  }
  return latest;
}

void OwnedBuilds::RenewAndSweep() {
  std::lock_guard<std::mutex> pass(sweep_mu_);
  std::map<std::string, std::shared_ptr<BuildSession>> builds;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    builds = builds_;
  }
  for (auto& [id, b] : builds) {
    if (!b->Renew()) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = builds_.find(id);
      if (it != builds_.end() && it->second == b) builds_.erase(it);  // lost: another runs it now
    }
  }
  if (options_.instance_id.empty()) return;  // nothing of the store's is ours to take
  // One store object for the sweeps, opened again after an error.
  if (!sweep_store_) {
    absl::StatusOr<std::unique_ptr<Store>> store = options_.open_store();
    if (!store.ok()) {
      Log(absl::StrCat("cannot look for builds to resume: ", store.status().message()));
      return;
    }
    sweep_store_ = *std::move(store);
  }
  absl::StatusOr<std::vector<BuildOwnership>> rows = sweep_store_->ListBuilds();
  if (!rows.ok()) {
    sweep_store_.reset();
    Log(absl::StrCat("cannot look for builds to resume: ", rows.status().message()));
    return;
  }
  const int64_t abandon_ms = absl::ToInt64Milliseconds(options_.abandon_after);
  for (const BuildOwnership& row : *rows) {
    const std::string id = BuildIdOf(row.baseline);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      auto it = builds_.find(id);
      if (it != builds_.end() && it->second->running()) continue;  // ours, renewed above
    }
    if (row.owner != options_.instance_id && row.lease_left_ms > 0) continue;  // another's
    std::shared_ptr<BuildSession> session;
    std::string why;
    absl::Status s = ClaimAndResume(row.baseline, row.lease_left_ms <= -abandon_ms, &session, &why);
    if (!s.ok()) Log(absl::StrCat("build ", id, ": ", s.message()));
  }
}

absl::Status OwnedBuilds::ClaimAndResume(int64_t baseline, bool abandoned,
                                         std::shared_ptr<BuildSession>* out, std::string* why) {
  out->reset();
  const std::string id = BuildIdOf(baseline);
  std::lock_guard<std::mutex> resuming(resume_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      *why = "the scheduler is stopping";
      return absl::OkStatus();
    }
    auto it = builds_.find(id);
    if (it != builds_.end() && !it->second->lost()) {  // resumed by another call meanwhile
      *out = it->second;
      return absl::OkStatus();
    }
  }
  STE_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, options_.open_store());
  STE_ASSIGN_OR_RETURN(std::optional<ClaimedBuild> claimed,
                       store->ClaimBuild(baseline, options_.instance_id,
                                         absl::ToInt64Milliseconds(options_.build_lease)));
  if (!claimed) {
    absl::StatusOr<std::vector<BuildOwnership>> rows = store->ListBuilds();
    *why = "it is not building";
    if (rows.ok()) {
      for (const BuildOwnership& row : *rows) {
        if (row.baseline != baseline) continue;
        *why = absl::StrCat("it is run by scheduler ", row.owner, " (its lease runs ",
                            row.lease_left_ms, " ms more)");
      }
    }
    return absl::OkStatus();
  }
  if (abandoned) {
    const std::string failure = absl::StrCat(
        "no scheduler ran it for ", absl::FormatDuration(options_.abandon_after),
        " past its lease (last run by ", claimed->previous_owner,
        "); the previous baseline stays in use");
    STE_RETURN_IF_ERROR(store->MarkFailed(baseline, failure));
    Log(absl::StrCat("build ", id, " failed: ", failure));
    *why = failure;
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<BuildSession>> resumed =
      BuildSession::Resume(baseline, *std::move(claimed), std::move(store), SessionOptions());
  if (!resumed.ok()) {
    const bool failed = absl::IsDataLoss(resumed.status()) || absl::IsInvalidArgument(resumed.status());
    *why = absl::StrCat("it cannot be resumed", failed ? "" : " yet", ": ", resumed.status().message());
    Log(absl::StrCat("build ", id, failed ? " failed: " : ": ", *why));
    return absl::OkStatus();
  }
  std::shared_ptr<BuildSession> b = *std::move(resumed);
  std::lock_guard<std::mutex> lock(mu_);
  builds_[id] = b;
  *out = b;
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<BuildSession>> OwnedBuilds::Find(const std::string& build_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = builds_.find(build_id);
    if (it != builds_.end()) {
      if (!it->second->lost()) return it->second;
      builds_.erase(it);  // handed over: look in the store again
    }
  }
  const std::optional<int64_t> parsed = BaselineOfBuildId(build_id);
  if (!parsed) return absl::NotFoundError(absl::StrCat("no build '", build_id, "'"));
  const int64_t baseline = *parsed;
  // Not in memory: a build of an earlier run of this scheduler, or of
  // another one on the store. Resumed here if it is ours to take.
  bool abandoned = false;
  {
    STE_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, options_.open_store());
    absl::StatusOr<BaselineInfo> info = store->Get(baseline);
    if (absl::IsNotFound(info.status())) {
      return absl::NotFoundError(absl::StrCat("no build '", build_id, "'"));
    }
    if (!info.ok()) return info.status();
    if (info->state == BaselineState::kComplete) {
      return absl::NotFoundError(
          absl::StrCat("build ", build_id, " is not running in this scheduler (it is complete)"));
    }
    if (info->state == BaselineState::kFailed) {
      return absl::NotFoundError(absl::StrCat(
          "build ", build_id, " is not running in this scheduler (it failed: ", info->failure, ")"));
    }
    if (options_.instance_id.empty()) {
      return absl::NotFoundError(
          absl::StrCat("build ", build_id, " is not running in this scheduler"));
    }
    // Abandoned (its lease expired longer than abandon_after ago): failed,
    // as the sweep would.
    STE_ASSIGN_OR_RETURN(std::vector<BuildOwnership> rows, store->ListBuilds());
    for (const BuildOwnership& row : rows) {
      if (row.baseline == baseline) {
        abandoned = row.lease_left_ms <= -absl::ToInt64Milliseconds(options_.abandon_after);
      }
    }
  }  // the lookup's store closed before the claim opens its own
  std::shared_ptr<BuildSession> resumed;
  std::string why;
  absl::Status claimed = ClaimAndResume(baseline, abandoned, &resumed, &why);
  if (absl::IsNotFound(claimed)) {
    // Building, with no build row: not a build any scheduler runs (an
    // embedded record, a ste before resumable builds). Never touched.
    return absl::NotFoundError(absl::StrCat("build ", build_id, " is not run by a scheduler (",
                                            claimed.message(), ")"));
  }
  if (!claimed.ok()) return claimed;
  if (!resumed) {
    return absl::UnavailableError(
        absl::StrCat("build ", build_id, " is not run by this scheduler: ", why));
  }
  return resumed;
}

}  // namespace ste
