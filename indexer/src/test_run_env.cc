// The real TestRunEnv (test_run_env.h): thin wrappers over POSIX calls,
// RunTraced and ReadLogDir.
#include "ste/test_run_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ste {
namespace {

class RealEnv : public TestRunEnv {
 public:
  absl::StatusOr<std::string> MakeTempDir(const std::string& prefix) override {
    std::string path = prefix + "XXXXXX";
    if (mkdtemp(path.data()) == nullptr) {
      const int err = errno;
      return absl::Status(absl::ErrnoToStatusCode(err), std::strerror(err));
    }
    return path;
  }
  void RemoveTree(const std::string& path) override { ste::RemoveTree(path); }
  void RemoveDeadOwnersTmps(const std::string& base) override {
    std::lock_guard<std::mutex> lock(swept_mu_);
    if (swept_.insert(base).second) ste::RemoveDeadOwnersTmps(base);
  }
  absl::StatusOr<TracedExit> RunTraced(const TracedRunOptions& options) override {
    return ste::RunTraced(options);
  }
  absl::Status ReadLogDir(const std::string& dir, std::vector<ProcessLog>* out) override {
    return ste::ReadLogDir(dir, out);
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::ErrnoToStatus(errno, "open " + path);
    std::string text;
    char buf[65536];
    while (true) {
      ssize_t got = read(fd, buf, sizeof buf);
      if (got > 0) {
        text.append(buf, static_cast<size_t>(got));
      } else if (got == 0) {
        break;
      } else if (errno != EINTR) {
        const int err = errno;
        close(fd);
        return absl::ErrnoToStatus(err, "read " + path);
      }
    }
    close(fd);
    return text;
  }

 private:
  std::mutex swept_mu_;
  std::set<std::string> swept_;  // the bases swept (once per process)
};

constexpr char kPrivateTmp[] = "ste-tmp";

// This process's pid namespace: "4026531836" of "pid:[4026531836]", "0"
// when /proc does not say.
const std::string& PidNamespace() {
  static const std::string* ns = [] {
    char link[64];
    const ssize_t n = readlink("/proc/self/ns/pid", link, sizeof link - 1);
    std::string digits;
    if (n > 0) {
      for (char c : std::string(link, static_cast<size_t>(n))) {
        if (absl::ascii_isdigit(static_cast<unsigned char>(c))) digits.push_back(c);
      }
    }
    return new std::string(digits.empty() ? "0" : digits);
  }();
  return *ns;
}

}  // namespace

std::string OwnedDirPrefix(const std::string& base, const std::string& kind) {
  return absl::StrCat(base, "/", kind, "-", PidNamespace(), "-", getpid(), "-");
}

std::string PrivateTmpPrefix(const std::string& base) { return OwnedDirPrefix(base, kPrivateTmp); }

int RemoveDeadOwnersTmps(const std::string& base) { return RemoveDeadOwnersDirs(base, kPrivateTmp); }

int RemoveDeadOwnersDirs(const std::string& base, const std::string& kind) {
  if (PidNamespace() == "0") return 0;
  const std::string mine = absl::StrCat(kind, "-", PidNamespace(), "-");
  std::vector<std::string> gone;
  if (DIR* d = opendir(base.c_str())) {
    while (struct dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (!absl::StartsWith(name, mine)) continue;
      const std::string rest = name.substr(mine.size());
      const size_t dash = rest.find('-');
      int64_t pid = 0;
      // "<pid>-" and mkdtemp's six characters
      if (dash == std::string::npos || rest.size() != dash + 7 ||
          !absl::SimpleAtoi(rest.substr(0, dash), &pid) || pid <= 1 || pid == getpid()) {
        continue;
      }
      if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
      gone.push_back(name);
    }
    closedir(d);
  }
  int removed = 0;
  for (const std::string& name : gone) {
    const std::string path = absl::StrCat(base, "/", name);
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    RemoveTree(path);
    removed++;
  }
  return removed;
}

TestRunEnv* RealTestRunEnv() {
  static RealEnv* env = new RealEnv;
  return env;
}

void RemoveTree(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    unlink(path.c_str());
    return;
  }
  std::vector<std::string> names;  // read whole before anything is removed
  if (DIR* d = opendir(path.c_str())) {
    while (struct dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    closedir(d);
  }
  for (const std::string& name : names) RemoveTree(path + "/" + name);
  rmdir(path.c_str());
}

}  // namespace ste
