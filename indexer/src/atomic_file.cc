#include "ste/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace ste {
namespace {

absl::Status Errno(int err, absl::string_view what, absl::string_view path) {
  return absl::ErrnoToStatus(err, absl::StrCat("cannot ", what, " ", path));
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "open directory", dir);
  absl::Status status;
  if (fsync(fd) != 0) status = Errno(errno, "fsync directory", dir);
  close(fd);
  return status;
}

AtomicFileWriter::AtomicFileWriter(std::string path, std::string temp, int fd, mode_t mode)
    : path_(std::move(path)), temp_(std::move(temp)), fd_(fd), mode_(mode) {}

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(const std::string& path,
                                                                           mode_t mode) {
  std::string temp = absl::StrCat(DirectoryOf(path), "/.tmp-", BaseName(path), "-XXXXXX");
  const int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return Errno(errno, "create", temp);
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, std::move(temp), fd, mode));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) close(fd_);
  if (!committed_) unlink(temp_.c_str());
}

absl::Status AtomicFileWriter::Write(absl::string_view bytes) {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(temp_, " is closed"));
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(errno, "write", temp_);
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Commit() {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(temp_, " is closed"));
  absl::Status status;
  if (fchmod(fd_, mode_) != 0) status = Errno(errno, "chmod", temp_);
  if (status.ok() && fsync(fd_) != 0) status = Errno(errno, "fsync", temp_);
  const int closed = close(fd_);
  fd_ = -1;
  if (status.ok() && closed != 0) status = Errno(errno, "close", temp_);
  if (status.ok() && rename(temp_.c_str(), path_.c_str()) != 0) {
    status = Errno(errno, absl::StrCat("rename ", temp_, " to"), path_);
  }
  if (!status.ok()) return status;  // the destructor removes the temporary
  committed_ = true;
  return SyncDirectory(DirectoryOf(path_));
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes, mode_t mode) {
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> file = AtomicFileWriter::Create(path, mode);
  if (!file.ok()) return file.status();
  absl::Status written = (*file)->Write(bytes);
  if (!written.ok()) return written;
  return (*file)->Commit();
}

}  // namespace ste
