#include "ste/baseline_loader.h"

#include <algorithm>
#include <climits>
#include <fstream>
#include <iterator>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ste/status_macros.h"
#include "ste/timings.h"

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

absl::StatusOr<BaselineInfo> FindCompletedBaseline(BaselineStore& store, const BaselineLookup& which) {
  if (which.id > 0) return FindCompletedBaseline(store, 0, which.id);
  if (!which.commit.empty() || !which.commits.empty()) {
    std::vector<std::string> commits = which.commits;
    if (!which.commit.empty()) commits = {which.commit};
    if (commits.size() > kMaxCommitsPerLookup) commits.resize(kMaxCommitsPerLookup);
    STE_ASSIGN_OR_RETURN(std::optional<BaselineInfo> found, store.LatestCompletedAmong(commits));
    if (found) return *found;
    if (!which.commit.empty() && which.fallback) {
      // The base commit's own is missing: its nearest recorded ancestor the
      // checkout can see, else the newest of all.
      std::vector<std::string> history = which.fallback_commits;
      if (history.size() > kMaxCommitsPerLookup) history.resize(kMaxCommitsPerLookup);
      if (!history.empty()) {
        STE_ASSIGN_OR_RETURN(found, store.LatestCompletedAmong(history));
        if (found) return *found;
      }
      STE_ASSIGN_OR_RETURN(found, store.LatestCompleted(INT64_MAX));
      if (found) return *found;
      return absl::NotFoundError(absl::StrCat("no completed baseline for commit ", which.commit,
                                              " nor any other in the store (run 'ste record')"));
    }
    return absl::NotFoundError(absl::StrCat(
        which.commit.empty()
            ? absl::StrCat("no completed baseline for any of the ", commits.size(),
                           " commits this checkout can see")
            : absl::StrCat("no completed baseline for commit ", which.commit),
        which.hint.empty() ? "" : absl::StrCat(" (", which.hint, ")")));
  }
  absl::StatusOr<BaselineInfo> info = FindCompletedBaseline(store, which.mri, 0);
  if (!info.ok() && absl::IsNotFound(info.status()) && !which.hint.empty()) {
    return absl::NotFoundError(absl::StrCat(info.status().message(), " (", which.hint, ")"));
  }
  return info;
}

std::string BaselineFallbackNote(const BaselineLookup& which, const BaselineInfo& found,
                                int64_t now_unix) {
  if (which.commit.empty() || !which.fallback || found.commit == which.commit) return "";
  std::string note = absl::StrCat("the base commit ", which.commit.substr(0, 12),
                                  " has no baseline yet: compared with baseline ", found.id);
  if (!found.commit.empty()) absl::StrAppend(&note, " of commit ", found.commit.substr(0, 12));
  absl::StrAppend(&note, " (mri ", found.mri, ")");
  const auto& history = which.fallback_commits;
  auto at = std::find(history.begin(), history.end(), found.commit);
  if (at != history.end()) {
    const size_t back = static_cast<size_t>(at - history.begin());
    absl::StrAppend(&note, ", ", back, back == 1 ? " commit" : " commits", " before it");
  } else {
    absl::StrAppend(&note, ", whose place in the base commit's history this checkout cannot see");
  }
  if (found.completed_unix > 0 && now_unix >= found.completed_unix) {
    const int64_t minutes = (now_unix - found.completed_unix) / 60;
    if (minutes < 120) {
      absl::StrAppend(&note, ", recorded ", minutes, " min ago");
    } else if (minutes < 48 * 60) {
      absl::StrAppend(&note, ", recorded ", minutes / 60, " h ago");
    } else {
      absl::StrAppend(&note, ", recorded ", minutes / (24 * 60), " days ago");
    }
  }
  absl::StrAppend(&note, "; changes since it count too: a correct selection, possibly wider");
  return note;
}

absl::StatusOr<std::optional<std::string>> ReadOptionalBlob(BaselineStore& store, int64_t id,
                                                            const char* name) {
  absl::StatusOr<std::string> path = store.BlobPath(id, name);
  if (absl::IsNotFound(path.status())) return std::optional<std::string>();
  if (!path.ok()) return path.status();
  std::ifstream file(*path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return absl::DataLossError(absl::StrCat("cannot read ", *path));
  return std::optional<std::string>(std::move(bytes));
}

std::string EncodeTestNames(std::vector<std::string> tests) {
  std::sort(tests.begin(), tests.end());
  tests.erase(std::unique(tests.begin(), tests.end()), tests.end());
  std::string out;
  for (const std::string& t : tests) out.append(t).push_back('\0');
  return out;
}

std::vector<std::string> DecodeTestNames(std::string_view bytes) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t nul = bytes.find('\0', at);
    if (nul == std::string_view::npos) break;  // an unended last name: not taken
    if (nul > at) out.emplace_back(bytes.substr(at, nul - at));
    at = nul + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string EncodeWrites(const std::map<std::string, std::vector<std::string>>& writes) {
  std::string out;
  for (const auto& [test, paths] : writes) {
    if (paths.empty()) continue;
    out.append(test).push_back('\0');
    for (const std::string& p : paths) out.append(p).push_back('\0');
    out.push_back('\0');
  }
  return out;
}

absl::StatusOr<std::map<std::string, std::vector<std::string>>> DecodeWrites(std::string_view bytes) {
  std::map<std::string, std::vector<std::string>> out;
  size_t at = 0;
  auto next = [&](std::string_view* field) {
    const size_t nul = bytes.find('\0', at);
    if (nul == std::string_view::npos) return false;
    *field = bytes.substr(at, nul - at);
    at = nul + 1;
    return true;
  };
  while (at < bytes.size()) {
    std::string_view test, path;
    if (!next(&test) || test.empty()) return absl::DataLossError("the writes blob: a test without a name");
    std::vector<std::string>& paths = out[std::string(test)];
    for (;;) {
      if (!next(&path)) return absl::DataLossError(absl::StrCat("the writes blob ends inside ", std::string(test), "'s list"));
      if (path.empty()) break;
      paths.emplace_back(path);
    }
  }
  return out;
}

absl::StatusOr<LoadedBaseline> LoadCompletedBaseline(BaselineStore& store, int64_t mri,
                                                     int64_t id) {
  BaselineLookup which;
  which.mri = mri;
  which.id = id;
  return LoadCompletedBaseline(store, which);
}

namespace {

// The blobs and results of `info`, a complete baseline just found.
absl::StatusOr<LoadedBaseline> LoadFound(BaselineStore& store, const BaselineInfo& info) {
  LoadedBaseline loaded;
  loaded.info = info;
  absl::StatusOr<std::string> index_path, inventory_path;
  {
    ScopedPhase phase("baseline: blobs found and checked");
    index_path = store.BlobPath(loaded.info.id, "index");
    if (index_path.ok()) inventory_path = store.BlobPath(loaded.info.id, "inventory");
  }
  if (!index_path.ok()) return index_path.status();
  if (!inventory_path.ok()) return inventory_path.status();
  {
    ScopedPhase phase("baseline: index opened");
    STE_ASSIGN_OR_RETURN(loaded.index, SelectionIndex::Open(*index_path));
  }
  {
    ScopedPhase phase("baseline: inventory read");
    STE_ASSIGN_OR_RETURN(loaded.inventory, Inventory::ReadFile(*inventory_path));
  }
  ScopedPhase phase("baseline: results read");
  absl::StatusOr<std::vector<TestResult>> results = store.Results(loaded.info.id);
  if (!results.ok()) {
    return absl::DataLossError(absl::StrCat("baseline results unreadable: ", results.status().message()));
  }
  for (const TestResult& r : *results) {
    if (r.outcome != TestOutcome::kPassed) loaded.failed_tests.push_back(r.test);
    loaded.seconds[r.test] = r.seconds;
  }
  // What it says is a note for a reader, never a reason to select less: a
  // blob that is absent or unreadable names no test.
  absl::StatusOr<std::optional<std::string>> flaky = ReadOptionalBlob(store, loaded.info.id, kFlakyBlob);
  if (flaky.ok() && flaky->has_value()) loaded.flaky_tests = DecodeTestNames(**flaky);
  return loaded;
}

// True when baseline `id` is no longer in the store: `ste baseline gc`
// removed it after it was found (its files may be gone before a reader
// opened them). Any other answer, an error included, is false: the
// failure then stands.
bool Removed(BaselineStore& store, int64_t id) {
  return absl::IsNotFound(store.Get(id).status());
}

// The error of a load that lost the race with removals every time.
absl::Status RemovedWhileLoading(const absl::Status& last) {
  return absl::UnavailableError(absl::StrCat(
      "the baseline was removed (ste baseline gc) while it was being loaded, ", kLoadAttempts,
      " times; last: ", last.message()));
}

}  // namespace

absl::StatusOr<LoadedBaseline> LoadCompletedBaseline(BaselineStore& store, const BaselineLookup& which) {
  absl::Status last;
  for (int attempt = 0; attempt < kLoadAttempts; ++attempt) {
    absl::StatusOr<BaselineInfo> found;
    {
      ScopedPhase phase("baseline: found in the store");
      found = FindCompletedBaseline(store, which);
    }
    STE_ASSIGN_OR_RETURN(BaselineInfo info, std::move(found));
    absl::StatusOr<LoadedBaseline> loaded = LoadFound(store, info);
    if (loaded.ok() || !Removed(store, info.id)) return loaded;
    last = loaded.status();  // look again: the lookup now finds another, or none
  }
  return RemovedWhileLoading(last);
}

StoreBaselineSource::StoreBaselineSource(absl::StatusOr<std::unique_ptr<BaselineStore>> store)
    : store_(std::move(store)) {}

absl::StatusOr<std::shared_ptr<const LoadedBaseline>> StoreBaselineSource::Load(
    const BaselineLookup& which) {
  if (!store_.ok()) {
    return absl::Status(store_.status().code(),
                        absl::StrCat("store unusable: ", store_.status().message()));
  }
  STE_ASSIGN_OR_RETURN(LoadedBaseline loaded, LoadCompletedBaseline(**store_, which));
  return std::make_shared<const LoadedBaseline>(std::move(loaded));
}

CachingBaselineSource::CachingBaselineSource(StoreOpener open, size_t capacity)
    : open_(std::move(open)), capacity_(capacity < 1 ? 1 : capacity) {}

absl::StatusOr<std::shared_ptr<const LoadedBaseline>> CachingBaselineSource::Load(
    const BaselineLookup& which) {
  absl::StatusOr<std::unique_ptr<BaselineStore>> store = open_();
  if (!store.ok()) {
    return absl::Status(store.status().code(),
                        absl::StrCat("store unusable: ", store.status().message()));
  }
  absl::Status last;
  for (int attempt = 0; attempt < kLoadAttempts; ++attempt) {
    STE_ASSIGN_OR_RETURN(BaselineInfo info, FindCompletedBaseline(**store, which));
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = loaded_.find(info.id);
      if (it != loaded_.end()) {
        last_use_[info.id] = ++clock_;
        return it->second;
      }
    }
    absl::StatusOr<LoadedBaseline> loaded = LoadFound(**store, info);
    if (!loaded.ok()) {
      if (!Removed(**store, info.id)) return loaded.status();
      last = loaded.status();
      continue;
    }
    return Keep(info.id, *std::move(loaded));
  }
  return RemovedWhileLoading(last);
}

std::shared_ptr<const LoadedBaseline> CachingBaselineSource::Keep(int64_t id, LoadedBaseline loaded) {
  auto shared = std::make_shared<const LoadedBaseline>(std::move(loaded));
  std::lock_guard<std::mutex> lock(mu_);
  loaded_[id] = shared;
  last_use_[id] = ++clock_;
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
