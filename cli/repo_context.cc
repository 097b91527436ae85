#include "repo_context.h"

#include <unistd.h>

#include <climits>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ste/git.h"

namespace ste::cli {

std::optional<Config> LoadRepoConfig(const std::string& command,
                                     const std::string& config_flag,
                                     int* exit_code) {
  std::string path = config_flag;
  if (path.empty()) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == nullptr) {
      std::fprintf(stderr, "ste %s: cannot read the current directory\n", command.c_str());
      *exit_code = 2;
      return std::nullopt;
    }
    absl::StatusOr<std::string> found = FindConfig(cwd);
    if (!found.ok()) {
      std::fprintf(stderr, "ste %s: %s", command.c_str(),
                   std::string(found.status().message()).c_str());
      *exit_code = 2;
      return std::nullopt;
    }
    path = *found;
  }
  absl::StatusOr<Config> config = LoadConfig(path);
  if (!config.ok()) {
    std::fprintf(stderr, "ste %s: %s\n", command.c_str(),
                 std::string(config.status().message()).c_str());
    *exit_code = 2;
    return std::nullopt;
  }
  return *std::move(config);
}

int64_t CurrentMri(const Config& config) {
  if (IsGitRepo(config.root)) {
    absl::StatusOr<int64_t> mri = GitMri(config.root, "HEAD");
    if (mri.ok()) return *mri;
  }
  return INT64_MAX;
}

absl::StatusOr<LoadedBaseline> LoadBaseline(BaselineStore& store,
                                            const Config& config,
                                            const std::string& base) {
  LoadedBaseline loaded;
  if (base.empty() || base == "auto") {
    int64_t mri = CurrentMri(config);
    absl::StatusOr<std::optional<BaselineInfo>> latest = store.LatestCompleted(mri);
    if (!latest.ok()) return latest.status();
    if (!latest->has_value()) {
      return absl::NotFoundError(
          mri == INT64_MAX
              ? std::string("no completed baseline in the store (run 'ste record')")
              : absl::StrCat("no completed baseline with mri <= ", mri,
                             " (run 'ste record' on an ancestor)"));
    }
    loaded.info = **latest;
  } else {
    int64_t id;
    if (!absl::SimpleAtoi(base, &id)) {
      return absl::InvalidArgumentError(absl::StrCat("--base: '", base, "' is not auto or an id"));
    }
    absl::StatusOr<BaselineInfo> info = store.Get(id);
    if (!info.ok()) return info.status();
    if (info->state != BaselineState::kComplete) {
      return absl::FailedPreconditionError(
          absl::StrCat("baseline ", id, " is ", std::string(BaselineStateName(info->state))));
    }
    loaded.info = *info;
  }
  absl::StatusOr<std::string> index_path = store.BlobPath(loaded.info.id, "index");
  if (!index_path.ok()) return index_path.status();
  absl::StatusOr<std::unique_ptr<SelectionIndex>> index = SelectionIndex::Open(*index_path);
  if (!index.ok()) return index.status();
  loaded.index = *std::move(index);
  absl::StatusOr<std::string> inventory_path = store.BlobPath(loaded.info.id, "inventory");
  if (!inventory_path.ok()) return inventory_path.status();
  absl::StatusOr<Inventory> inventory = Inventory::ReadFile(*inventory_path);
  if (!inventory.ok()) return inventory.status();
  loaded.inventory = *std::move(inventory);
  return loaded;
}

std::string Seconds(double s) {
  if (s < 60) return absl::StrFormat("%.1fs", s);
  int m = static_cast<int>(s / 60);
  return absl::StrFormat("%dm%02ds", m, static_cast<int>(s - m * 60));
}

}  // namespace ste::cli
