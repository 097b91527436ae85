// Copyright: the ste authors.
#include "blob_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ste/status_macros.h"

namespace ste {
namespace {

constexpr size_t kChunk = size_t{1} << 20;

std::string CanonicalHex(XXH128_hash_t hash) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  return absl::BytesToHexString(absl::string_view(
      reinterpret_cast<const char*>(canonical.digest), sizeof(canonical)));
}

absl::Status ErrnoError(int err, absl::string_view what,
                        const std::string& path) {
  return absl::ErrnoToStatus(err, absl::StrCat(what, " ", path));
}

// A name no other writer (thread or process) picks at the same time.
std::string TempSuffix() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t seed = std::random_device{}();
  return absl::StrCat(getpid(), "-", seed % 1000000, "-", counter++);
}

}  // namespace

std::string Xxh3Hex(absl::string_view bytes) {
  return CanonicalHex(XXH3_128bits(bytes.data(), bytes.size()));
}

Xxh3Hasher::Xxh3Hasher() : state_(XXH3_createState()) {
  if (state_ == nullptr) abort();  // out of memory (a few hundred bytes)
  XXH3_128bits_reset(state_);
}

Xxh3Hasher::~Xxh3Hasher() { XXH3_freeState(state_); }

void Xxh3Hasher::Update(absl::string_view bytes) {
  XXH3_128bits_update(state_, bytes.data(), bytes.size());
}

std::string Xxh3Hasher::Hex() const {
  return CanonicalHex(XXH3_128bits_digest(state_));
}

absl::StatusOr<std::string> Xxh3HexOfFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open", path);
  Xxh3Hasher hasher;
  std::vector<char> buffer(kChunk);
  absl::Status status;
  for (;;) {
    ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      status = ErrnoError(errno, "read", path);
      break;
    }
    if (n == 0) break;
    hasher.Update(absl::string_view(buffer.data(), static_cast<size_t>(n)));
  }
  close(fd);
  if (!status.ok()) return status;
  return hasher.Hex();
}

namespace {

struct FileIdentity {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
};

bool Identify(const std::string& path, FileIdentity* id) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  id->dev = st.st_dev;
  id->ino = st.st_ino;
  id->size = static_cast<uint64_t>(st.st_size);
  id->mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  id->ctime_ns = int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
  return true;
}

}  // namespace

std::string HashStampPath(const std::string& path) {
  std::string dir = path.substr(0, path.rfind('/'));
  std::string parent = dir.substr(0, dir.rfind('/'));
  return absl::StrCat(parent, "/verified/", path.substr(path.rfind('/') + 1));
}

absl::StatusOr<std::string> Xxh3HexOfFileCached(const std::string& path, bool* rehashed) {
  if (rehashed != nullptr) *rehashed = false;
  FileIdentity id;
  if (!Identify(path, &id)) return ErrnoError(errno, "stat", path);
  const std::string stamp = HashStampPath(path);
  {
    std::ifstream in(stamp);
    std::string version, hex;
    FileIdentity s;
    int64_t stamped_ns = 0;
    if (in >> version >> s.dev >> s.ino >> s.size >> s.mtime_ns >> s.ctime_ns >> stamped_ns >>
        hex) {
      const int64_t stamped_second = stamped_ns / 1000000000 * 1000000000;
      if (version == "v1" && s.dev == id.dev && s.ino == id.ino && s.size == id.size &&
          s.mtime_ns == id.mtime_ns && s.ctime_ns == id.ctime_ns &&
          id.ctime_ns < stamped_second && hex.size() == 32) {
        return hex;
      }
    }
  }
  if (rehashed != nullptr) *rehashed = true;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME_COARSE, &now);  // the clock files are stamped with
  const int64_t now_ns = int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
  absl::StatusOr<std::string> hex = Xxh3HexOfFile(path);
  if (!hex.ok()) return hex;
  FileIdentity after;
  if (!Identify(path, &after) || after.ctime_ns != id.ctime_ns || after.size != id.size) {
    return hex;  // changed while read: do not stamp
  }
  std::error_code ec;
  std::filesystem::create_directories(stamp.substr(0, stamp.rfind('/')), ec);
  // A stamp that cannot be written (a full disk, a read-only store) only
  // means hashing again next time.
  (void)WriteFileAtomically(stamp, absl::StrCat("v1 ", id.dev, " ", id.ino, " ", id.size, " ",
                                                id.mtime_ns, " ", id.ctime_ns, " ", now_ns, " ",
                                                *hex, "\n"));
  return hex;
}

absl::Status ValidateBlobName(const std::string& name) {
  if (name.empty() || name.size() > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("blob name \"", name, "\" must be 1 to 64 characters"));
  }
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              (i > 0 && (c == '_' || c == '-' || c == '.'));
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "blob name \"", name, "\" must match [a-z0-9][a-z0-9_.-]*"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> CreateTempFile(const std::string& dir,
                                   const std::string& name, std::string* path) {
  for (int attempt = 0;; ++attempt) {
    *path = absl::StrCat(dir, "/.tmp-", name, "-", TempSuffix());
    int fd = open(path->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno != EEXIST || attempt == 10) {
      return ErrnoError(errno, "create", *path);
    }
  }
}

absl::Status WriteFileDurably(const std::string& dir, const std::string& name,
                              absl::string_view bytes,
                              const std::function<void(const char*)>& hook) {
  // The one atomic write (ste/atomic_file.h): a temporary beside the file
  // (".tmp-<name>-…", which RemoveStaleFiles knows), fsync, rename, fsync
  // of the directory. The crash tests stop it half-way and once renamed.
  STE_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> file,
                       AtomicFileWriter::Create(absl::StrCat(dir, "/", name)));
  const size_t half = bytes.size() / 2;
  STE_RETURN_IF_ERROR(file->Write(bytes.substr(0, half)));
  if (hook && !bytes.empty()) hook("blob-half-written");
  STE_RETURN_IF_ERROR(file->Write(bytes.substr(half)));
  STE_RETURN_IF_ERROR(file->Commit());
  if (hook) hook("blob-renamed");
  return absl::OkStatus();
}

}  // namespace ste
