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
  if (base.empty() || base == "auto") return LoadCompletedBaseline(store, CurrentMri(config), 0);
  int64_t id;
  if (!absl::SimpleAtoi(base, &id) || id <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("--base: '", base, "' is not auto or an id"));
  }
  return LoadCompletedBaseline(store, 0, id);
}

std::string Seconds(double s) {
  if (s < 60) return absl::StrFormat("%.1fs", s);
  int m = static_cast<int>(s / 60);
  return absl::StrFormat("%dm%02ds", m, static_cast<int>(s - m * 60));
}

}  // namespace ste::cli
