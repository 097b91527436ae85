// Copyright: the ste authors. Environment variables as dependencies
// (ste/environment.h).
#include "ste/environment.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ste/inventory.h"

extern char** environ;

namespace ste {
namespace {

constexpr std::string_view kEnvViewPrefix = "ste-env:";

absl::string_view AV(std::string_view s) { return {s.data(), s.size()}; }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool ValidName(std::string_view name) {
  return !name.empty() && name.find('=') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

}  // namespace

const std::vector<std::string> kDefaultEnvIgnore = {
    // The shell's bookkeeping: the working directory ste was started in,
    // the nesting depth, the last command.
    "PWD", "OLDPWD", "SHLVL", "_",
    // systemd's per-unit ids (a CI runner's service).
    "INVOCATION_ID", "JOURNAL_STREAM",
    // GitHub Actions.
    "GITHUB_RUN_*", "GITHUB_SHA", "GITHUB_REF", "GITHUB_REF_NAME", "GITHUB_HEAD_REF",
    "GITHUB_BASE_REF", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_JOB", "GITHUB_ACTION",
    "GITHUB_ACTION_REF", "GITHUB_ACTOR", "GITHUB_ACTOR_ID", "GITHUB_TRIGGERING_ACTOR",
    "GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE", "GITHUB_STEP_SUMMARY",
    "GITHUB_WORKFLOW_SHA", "GITHUB_WORKFLOW_REF", "RUNNER_TRACKING_ID", "ACTIONS_*",
    // GitLab CI.
    "CI_JOB_*", "CI_PIPELINE_*", "CI_COMMIT_*", "CI_BUILD_*", "CI_MERGE_REQUEST_*",
    "CI_CONCURRENT_*", "CI_RUNNER_ID", "CI_RUNNER_SHORT_TOKEN",
    // Jenkins.
    "BUILD_ID", "BUILD_NUMBER", "BUILD_TAG", "BUILD_URL", "BUILD_DISPLAY_NAME", "EXECUTOR_NUMBER",
    "GIT_COMMIT", "GIT_PREVIOUS_COMMIT", "GIT_PREVIOUS_SUCCESSFUL_COMMIT", "RUN_*_URL",
    "RUN_DISPLAY_URL",
    // CircleCI, Buildkite, Travis CI, Azure Pipelines.
    "CIRCLE_BUILD_*", "CIRCLE_SHA1", "CIRCLE_WORKFLOW_*", "CIRCLE_PIPELINE_*",
    "BUILDKITE_BUILD_*", "BUILDKITE_JOB_ID", "BUILDKITE_STEP_ID", "BUILDKITE_COMMIT",
    "BUILDKITE_AGENT_ACCESS_TOKEN", "TRAVIS_BUILD_*", "TRAVIS_JOB_*", "TRAVIS_COMMIT*",
    "BUILD_BUILDID", "BUILD_BUILDNUMBER", "BUILD_SOURCEVERSION", "SYSTEM_JOBID",
    "SYSTEM_TIMELINEID", "SYSTEM_ACCESSTOKEN",
};

std::string EnvViewName(std::string_view name) {
  std::string out(kEnvViewPrefix);
  for (char c : name) {
    if (c == '%') {
      out += "%25";
    } else if (c == '/') {
      out += "%2F";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string EnvViewPath(std::string_view name) {
  return std::string("/") + kViewMark + EnvViewName(name);
}

std::optional<std::string> UnescapeEnvName(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '%') {
      out.push_back(escaped[i]);
      continue;
    }
    if (i + 2 >= escaped.size()) return std::nullopt;
    const int hi = HexDigit(escaped[i + 1]);
    const int lo = HexDigit(escaped[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    const char c = static_cast<char>(hi * 16 + lo);
    // Only the two escapes EnvViewName makes: one spelling per name.
    if (c != '%' && c != '/') return std::nullopt;
    if (escaped[i + 2] == 'f') return std::nullopt;  // "%2F", not "%2f"
    out.push_back(c);
    i += 2;
  }
  if (!ValidName(out)) return std::nullopt;
  return out;
}

bool IsEnvViewPath(std::string_view path) {
  const std::string_view prefix = "/\x01ste-env:";
  return path.size() > prefix.size() && path.substr(0, prefix.size()) == prefix &&
         path.find('/', 1) == std::string_view::npos;
}

Environment Environment::OfProcess() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.values_.try_emplace(std::string(entry.substr(0, eq)), entry.substr(eq + 1));
  }
  return env;
}

absl::StatusOr<Environment> Environment::Parse(std::string_view bytes, std::string_view name) {
  Environment env;
  const bool nul = bytes.find('\0') != std::string_view::npos;
  const char end = nul ? '\0' : '\n';
  const char* what = nul ? "entry" : "line";
  size_t at = 0;
  for (int number = 1; at < bytes.size(); ++number) {
    size_t stop = bytes.find(end, at);
    if (stop == std::string_view::npos) stop = bytes.size();
    std::string_view entry = bytes.substr(at, stop - at);
    at = stop + 1;
    if (!nul && (entry.empty() || entry[0] == '#')) continue;
    const size_t eq = entry.find('=');
    auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(AV(name), ": ", what, " ", number, ": ", AV(why), ": \"",
                       absl::CHexEscape(AV(entry.substr(0, 80))), entry.size() > 80 ? "..." : "", "\""));
    };
    if (eq == std::string_view::npos) return bad("no '=' (NAME=VALUE)");
    if (eq == 0) return bad("an empty name");
    std::string key(entry.substr(0, eq));
    if (!env.values_.try_emplace(key, entry.substr(eq + 1)).second) {
      return bad(absl::StrCat("the variable ", key, " a second time"));
    }
  }
  return env;
}

absl::StatusOr<Environment> Environment::ReadFile(const std::string& path) {
  auto unreadable = [&path](int err) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the environment file ", path, ": ", std::strerror(err)));
  };
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return unreadable(errno);
  std::string bytes;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return unreadable(err);
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return Parse(bytes, path);
}

std::optional<std::string_view> Environment::Get(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::vector<std::string> EnvRunAllViews(const GlobSet& env_run_all, const Environment& env) {
  std::vector<std::string> out;
  if (env_run_all.empty()) return out;
  for (const std::string& name : env.Names()) {
    if (env_run_all.Matches(name)) out.push_back(EnvViewPath(name));
  }
  return out;
}

std::vector<std::string> Environment::Names() const {
  std::vector<std::string> out;
  out.reserve(values_.size());
  for (const auto& [k, v] : values_) out.push_back(k);
  return out;
}

}  // namespace ste
