#include "repo_context.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstdio>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ste/repo_path.h"
#include "ste/checkout.h"
#include "ste/log_reduction.h"

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

absl::StatusOr<LoadedBaseline> LoadBaseline(BaselineStore& store,
                                            const Config& config,
                                            const std::string& base) {
  absl::StatusOr<BaselineQuery> query = BaselineQuery::FromFlag(base);
  if (!query.ok()) return query.status();
  if (query->id > 0) return LoadCompletedBaseline(store, 0, query->id);
  return LoadCompletedBaseline(store, ReadCommitFacts(config.root).mri, 0);
}

std::optional<int64_t> MriFlag(const ParsedFlags& flags, const std::string& command,
                               int* exit_code) {
  std::string text = flags.Get("mri");
  const char* from = "--mri";
  if (!flags.Has("mri")) {
    const char* env = std::getenv("STE_MRI");
    if (env == nullptr || *env == '\0') return std::nullopt;
    text = env;
    from = "$STE_MRI";
  }
  int64_t mri;
  if (!absl::SimpleAtoi(text, &mri) || mri < 0) {
    std::fprintf(stderr, "ste %s: %s needs a number >= 0, not '%s'\n", command.c_str(), from,
                 text.c_str());
    *exit_code = 2;
    return std::nullopt;
  }
  return mri;
}

std::string AbsolutePath(const std::string& path) {
  absl::StatusOr<std::string> abs = AbsoluteNormalPath(path);
  return abs.ok() ? *abs : path;
}

std::string IndexPath(const Config& config, const std::string& arg) {
  std::string abs = arg;
  if (arg[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) != nullptr) abs = std::string(cwd) + "/" + arg;
  }
  return RepoRelative(config.root, MakeNormalAbsolute(abs));
}

std::string Seconds(double s) {
  if (s < 60) return absl::StrFormat("%.1fs", s);
  int m = static_cast<int>(s / 60);
  return absl::StrFormat("%dm%02ds", m, static_cast<int>(s - m * 60));
}

}  // namespace ste::cli
