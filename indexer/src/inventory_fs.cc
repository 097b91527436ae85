// Copyright: the ste authors. The real ScanFileSystem: thin POSIX wrappers.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ste/inventory.h"

namespace ste {
namespace {

FileStat FromStat(const struct stat& st) {
  FileStat out;
  if (S_ISREG(st.st_mode)) {
    out.type = FileType::kRegular;
  } else if (S_ISLNK(st.st_mode)) {
    out.type = FileType::kSymlink;
  } else if (S_ISDIR(st.st_mode)) {
    out.type = FileType::kDirectory;
  } else {
    out.type = FileType::kOther;
  }
  out.size = static_cast<uint64_t>(st.st_size);
  out.mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  out.ctime_ns =
      static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  out.inode = static_cast<uint64_t>(st.st_ino);
  out.dev = static_cast<uint64_t>(st.st_dev);
  out.mode = static_cast<uint32_t>(st.st_mode);
  return out;
}

absl::Status ErrnoError(int err, const char* op, const std::string& path) {
  return absl::ErrnoToStatus(err, absl::StrCat(op, " ", path));
}

// NotFound for the "does not exist" family, the errno's status otherwise.
absl::Status StatError(int err, const char* op, const std::string& path) {
  if (err == ENOENT || err == ENOTDIR) {
    return absl::NotFoundError(absl::StrCat(op, " ", path, ": no such file"));
  }
  return ErrnoError(err, op, path);
}

class PosixReadableFile : public ReadableFile {
 public:
  PosixReadableFile(int fd, std::string path)
      : fd_(fd), path_(std::move(path)) {}
  ~PosixReadableFile() override { close(fd_); }

  absl::StatusOr<size_t> Read(char* buf, size_t n) override {
    while (true) {
      ssize_t got = read(fd_, buf, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno != EINTR) return ErrnoError(errno, "read", path_);
    }
  }

  absl::StatusOr<FileStat> Stat() override {
    struct stat st;
    if (fstat(fd_, &st) != 0) return ErrnoError(errno, "fstat", path_);
    return FromStat(st);
  }

 private:
  int fd_;
  std::string path_;
};

// Opens for reading without blocking: a path that turned into a fifo since
// it was stat'ed must not hang the scan (no effect on regular files).
// O_NOATIME, where allowed (the file's owner, or CAP_FOWNER), keeps a scan
// from dirtying every inode with an access time; EPERM means not allowed.
absl::StatusOr<std::unique_ptr<ReadableFile>> OpenFile(
    int dir_fd, const char* name, bool follow, const std::string& path) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW);
  int fd;
  do {
    fd = openat(dir_fd, name, flags | O_NOATIME);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0 && errno == EPERM) {
    do {
      fd = openat(dir_fd, name, flags);
    } while (fd < 0 && errno == EINTR);
  }
  if (fd < 0) return StatError(errno, "open", path);
  return std::unique_ptr<ReadableFile>(new PosixReadableFile(fd, path));
}

absl::StatusOr<std::unique_ptr<Directory>> OpenDirectoryAt(int dir_fd,
                                                           const char* name,
                                                           bool follow,
                                                           std::string path);

// A directory read with getdents64(2) on its own fd: no DIR stream (which
// costs an fstat and two fcntl per directory in glibc), and fstatat/openat
// relative to the fd.
class PosixDirectory : public Directory {
 public:
  PosixDirectory(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixDirectory() override { close(fd_); }

  absl::Status List(std::vector<std::string>* names) override {
    if (listed_ && lseek(fd_, 0, SEEK_SET) != 0) {
      return ErrnoError(errno, "rewind", path_);
    }
    listed_ = true;
    alignas(struct dirent64) char buf[32 << 10];
    while (true) {
      ssize_t n = getdents64(fd_, buf, sizeof(buf));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoError(errno, "getdents64", path_);
      }
      if (n == 0) return absl::OkStatus();
      for (ssize_t off = 0; off < n;) {
        const auto* ent = reinterpret_cast<const struct dirent64*>(buf + off);
        off += ent->d_reclen;
        const char* name = ent->d_name;
        if (name[0] == '.' &&
            (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) {
          continue;
        }
        names->emplace_back(name);
      }
    }
  }

  absl::StatusOr<FileStat> LinkStatAt(const std::string& name) override {
    struct stat st;
    if (fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return StatError(errno, "lstat", absl::StrCat(path_, "/", name));
    }
    return FromStat(st);
  }

  absl::StatusOr<std::unique_ptr<ReadableFile>> OpenAt(
      const std::string& name) override {
    return OpenFile(fd_, name.c_str(), /*follow=*/false,
                    absl::StrCat(path_, "/", name));
  }

  absl::StatusOr<std::unique_ptr<Directory>> OpenSubdirectory(
      const std::string& name) override {
    return OpenDirectoryAt(fd_, name.c_str(), /*follow=*/false,
                           path_ == "/" ? absl::StrCat("/", name)
                                        : absl::StrCat(path_, "/", name));
  }

 private:
  const int fd_;
  const std::string path_;
  bool listed_ = false;
};

absl::StatusOr<std::unique_ptr<Directory>> OpenDirectoryAt(int dir_fd,
                                                           const char* name,
                                                           bool follow,
                                                           std::string path) {
  int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  int fd;
  do {
    fd = openat(dir_fd, name, flags);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return StatError(errno, "opendir", path);
  return std::unique_ptr<Directory>(new PosixDirectory(fd, std::move(path)));
}

class PosixScanFileSystem : public ScanFileSystem {
 public:
  absl::StatusOr<FileStat> LinkStat(const std::string& path) override {
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) return StatError(errno, "lstat", path);
    return FromStat(st);
  }

  absl::StatusOr<FileStat> FollowStat(const std::string& path) override {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      if (errno == ELOOP) {
        return absl::NotFoundError(
            absl::StrCat("stat ", path, ": too many levels of symlinks"));
      }
      return StatError(errno, "stat", path);
    }
    return FromStat(st);
  }

  absl::StatusOr<std::unique_ptr<Directory>> OpenDirectory(
      const std::string& path, bool follow) override {
    return OpenDirectoryAt(AT_FDCWD, path.c_str(), follow, path);
  }

  absl::StatusOr<std::string> ReadLink(const std::string& path) override {
    std::string buf(256, '\0');
    while (true) {
      ssize_t n = readlink(path.c_str(), buf.data(), buf.size());
      if (n < 0) return StatError(errno, "readlink", path);
      if (static_cast<size_t>(n) < buf.size()) {
        buf.resize(static_cast<size_t>(n));
        return buf;
      }
      buf.resize(buf.size() * 2);
    }
  }

  absl::StatusOr<std::unique_ptr<ReadableFile>> Open(const std::string& path,
                                                     bool follow) override {
    return OpenFile(AT_FDCWD, path.c_str(), follow, path);
  }
};

}  // namespace

ScanFileSystem* RealScanFileSystem() {
  static ScanFileSystem* const fs = new PosixScanFileSystem();
  return fs;
}

}  // namespace ste
