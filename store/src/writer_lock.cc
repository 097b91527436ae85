// Copyright: the ste authors.
#include "writer_lock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ste {

FlockWriterLocks::~FlockWriterLocks() {
  for (const auto& [baseline, fd] : held_) close(fd);
}

std::string FlockWriterLocks::PathOf(int64_t baseline) const {
  return absl::StrCat(dir_, "/", baseline, ".lock");
}

absl::Status FlockWriterLocks::Acquire(int64_t baseline) {
  if (Holds(baseline)) return absl::OkStatus();
  if (mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::ErrnoToStatus(errno, absl::StrCat("create directory ", dir_));
  }
  const std::string path = PathOf(baseline);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("create ", path));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    return absl::ErrnoToStatus(err, absl::StrCat("lock ", path));
  }
  held_[baseline] = fd;
  return absl::OkStatus();
}

void FlockWriterLocks::Release(int64_t baseline) {
  auto it = held_.find(baseline);
  if (it == held_.end()) return;
  // Unlinked while still locked: a probe that opened it before sees it
  // held, one that opens it after finds no file; both are "not free to
  // remove" or "no writer" only once the state says so (the caller
  // releases after its commit).
  unlink(PathOf(baseline).c_str());
  close(it->second);
  held_.erase(it);
}

void FlockWriterLocks::Forget(int64_t baseline) {
  auto it = held_.find(baseline);
  if (it == held_.end()) return;
  close(it->second);
  held_.erase(it);
}

absl::StatusOr<bool> FlockWriterLocks::Held(int64_t baseline) const {
  const std::string path = PathOf(baseline);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  }
  bool held = false;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
    flock(fd, LOCK_UN);
  } else if (errno == EWOULDBLOCK) {
    held = true;
  } else {
    int err = errno;
    close(fd);
    return absl::ErrnoToStatus(err, absl::StrCat("probe the lock of ", path));
  }
  close(fd);
  return held;
}

absl::StatusOr<std::vector<WriterLockFile>> ListWriterLockFiles(const std::string& dir) {
  std::vector<WriterLockFile> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return files;
    return absl::ErrnoToStatus(errno, absl::StrCat("open directory ", dir));
  }
  while (struct dirent* e = readdir(d)) {
    absl::string_view name = e->d_name;
    absl::string_view id = name;
    if (!absl::ConsumeSuffix(&id, ".lock") || id.empty() || id[0] == '0') continue;
    bool digits = true;
    for (char c : id) digits = digits && absl::ascii_isdigit(c);
    WriterLockFile f;
    if (!digits || !absl::SimpleAtoi(id, &f.baseline)) continue;
    f.file = std::string(name);
    files.push_back(std::move(f));
  }
  closedir(d);
  return files;
}

}  // namespace ste
