// The real TestRunEnv (test_run_env.h): thin wrappers over POSIX calls,
// RunTraced and ReadLogDir.
#include "ste/test_run_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
};

}  // namespace

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
