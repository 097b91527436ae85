#include "ste/baseline_loader.h"

#include <climits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ste/status_macros.h"

namespace ste {

absl::StatusOr<BaselineInfo> FindCompletedBaseline(BaselineStore& store, int64_t mri,
                                                   int64_t id) {
  if (id <= 0) {
    STE_ASSIGN_OR_RETURN(std::optional<BaselineInfo> latest, store.LatestCompleted(mri));
    if (!latest.has_value()) {
      return absl::NotFoundError(
          mri == INT64_MAX
              ? std::string("no completed baseline in the store (run 'ste record')")
              : absl::StrCat("no completed baseline with mri <= ", mri,
                             " (run 'ste record' on an ancestor)"));
    }
    return *latest;
  }
  STE_ASSIGN_OR_RETURN(BaselineInfo info, store.Get(id));
  if (info.state != BaselineState::kComplete) {
    return absl::FailedPreconditionError(
        absl::StrCat("baseline ", id, " is ", std::string(BaselineStateName(info.state))));
  }
  return info;
}

absl::StatusOr<LoadedBaseline> LoadCompletedBaseline(BaselineStore& store, int64_t mri,
                                                     int64_t id) {
  LoadedBaseline loaded;
  STE_ASSIGN_OR_RETURN(loaded.info, FindCompletedBaseline(store, mri, id));
  STE_ASSIGN_OR_RETURN(std::string index_path, store.BlobPath(loaded.info.id, "index"));
  STE_ASSIGN_OR_RETURN(loaded.index, SelectionIndex::Open(index_path));
  STE_ASSIGN_OR_RETURN(std::string inventory_path, store.BlobPath(loaded.info.id, "inventory"));
  STE_ASSIGN_OR_RETURN(loaded.inventory, Inventory::ReadFile(inventory_path));
  absl::StatusOr<std::vector<TestResult>> results = store.Results(loaded.info.id);
  if (!results.ok()) {
    return absl::DataLossError(absl::StrCat("baseline results unreadable: ", results.status().message()));
  }
  for (const TestResult& r : *results) {
    if (r.outcome != TestOutcome::kPassed) loaded.failed_tests.push_back(r.test);
  }
  return loaded;
}

absl::StatusOr<BaselineQuery> BaselineQuery::FromFlag(const std::string& base) {
  BaselineQuery q;
  if (base.empty() || base == "auto") return q;
  if (!absl::SimpleAtoi(base, &q.id) || q.id <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("--base: '", base, "' is not auto or an id"));
  }
  return q;
}

StoreBaselineSource::StoreBaselineSource(absl::StatusOr<std::unique_ptr<BaselineStore>> store)
    : store_(std::move(store)) {}

absl::StatusOr<std::shared_ptr<const LoadedBaseline>> StoreBaselineSource::Load(int64_t mri,
                                                                               int64_t id) {
  if (!store_.ok()) {
    return absl::Status(store_.status().code(),
                        absl::StrCat("store unusable: ", store_.status().message()));
  }
  STE_ASSIGN_OR_RETURN(LoadedBaseline loaded, LoadCompletedBaseline(**store_, id > 0 ? 0 : mri, id));
  return std::make_shared<const LoadedBaseline>(std::move(loaded));
}

CachingBaselineSource::CachingBaselineSource(StoreOpener open, size_t capacity)
    : open_(std::move(open)), capacity_(capacity < 1 ? 1 : capacity) {}

absl::StatusOr<std::shared_ptr<const LoadedBaseline>> CachingBaselineSource::Load(int64_t mri,
                                                                                 int64_t id) {
  absl::StatusOr<std::unique_ptr<BaselineStore>> store = open_();
  if (!store.ok()) {
    return absl::Status(store.status().code(),
                        absl::StrCat("store unusable: ", store.status().message()));
  }
  STE_ASSIGN_OR_RETURN(BaselineInfo info, FindCompletedBaseline(**store, id > 0 ? 0 : mri, id));
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = loaded_.find(info.id);
    if (it != loaded_.end()) {
      last_use_[info.id] = ++clock_;
      return it->second;
    }
  }
  STE_ASSIGN_OR_RETURN(LoadedBaseline loaded, LoadCompletedBaseline(**store, 0, info.id));
  auto shared = std::make_shared<const LoadedBaseline>(std::move(loaded));
  std::lock_guard<std::mutex> lock(mu_);
  loaded_[info.id] = shared;
  last_use_[info.id] = ++clock_;
  while (loaded_.size() > capacity_) {
    auto oldest = last_use_.begin();
    for (auto it = last_use_.begin(); it != last_use_.end(); ++it) {
      if (it->second < oldest->second) oldest = it;
    }
    loaded_.erase(oldest->first);
    last_use_.erase(oldest);
  }
  return shared;
}

}  // namespace ste
