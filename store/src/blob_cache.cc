// Copyright: the ste authors.
#include "blob_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ste {

std::string BlobCache::PathFor(int64_t baseline, absl::string_view name,
                               absl::string_view xxh3_hex) const {
  return absl::StrCat(dir_, "/", baseline, "-", name, "-", xxh3_hex, ".blob");
}

absl::StatusOr<bool> BlobCache::Holds(const std::string& path, int64_t size,
                                      absl::string_view xxh3_hex,
                                      bool verify_hash) const {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    return absl::ErrnoToStatus(errno, absl::StrCat("stat cached blob ", path));
  }
  if (!S_ISREG(st.st_mode) || static_cast<int64_t>(st.st_size) != size) {
    return false;
  }
  if (!verify_hash) return true;
  absl::StatusOr<std::string> hash = Xxh3HexOfFileCached(path);
  if (absl::IsNotFound(hash.status())) return false;  // removed meanwhile
  if (!hash.ok()) return hash.status();
  return *hash == xxh3_hex;
}

absl::StatusOr<BlobCache::Writer> BlobCache::Create(
    const std::string& path) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    return absl::ErrnoToStatus(ec.value(),
                               absl::StrCat("create blob cache ", dir_));
  }
  const std::string name = std::filesystem::path(path).filename().string();
  std::string tmp;
  absl::StatusOr<int> fd = CreateTempFile(dir_, name, &tmp);
  if (!fd.ok()) return fd.status();
  return Writer(*fd, std::move(tmp), path);
}

BlobCache::Writer::Writer(Writer&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      tmp_(std::move(other.tmp_)),
      path_(std::move(other.path_)),
      hasher_(std::move(other.hasher_)),
      size_(other.size_) {}

BlobCache::Writer::~Writer() {
  if (fd_ >= 0) {
    close(fd_);
    unlink(tmp_.c_str());
  }
}

absl::Status BlobCache::Writer::Append(absl::string_view bytes) {
  hasher_->Update(bytes);
  size_ += static_cast<int64_t>(bytes.size());
  while (!bytes.empty()) {
    ssize_t n = write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat("write ", tmp_));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status BlobCache::Writer::Commit() {
  // Not fsynced: a copy is re-checked on every use, and one a power loss
  // tore is fetched again (it is a cache; the store has the bytes).
  int fd = std::exchange(fd_, -1);
  if (close(fd) != 0) {
    int err = errno;
    unlink(tmp_.c_str());
    return absl::ErrnoToStatus(err, absl::StrCat("close ", tmp_));
  }
  if (rename(tmp_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    unlink(tmp_.c_str());
    return absl::ErrnoToStatus(err,
                               absl::StrCat("rename ", tmp_, " to ", path_));
  }
  return absl::OkStatus();
}

}  // namespace ste
