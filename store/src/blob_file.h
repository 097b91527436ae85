// Copyright: the ste authors. Blob files: durable writes, content hashes.
//
// Internal to scheduler/. The SQLite store keeps each blob (index,
// inventory) as a file beside the database; these helpers write such a file
// so that after a crash or power loss it is either absent or complete, and
// re-hash it to check it later. The PostgreSQL store hashes with them too.
#ifndef STE_SCHEDULER_BLOB_FILE_H_
#define STE_SCHEDULER_BLOB_FILE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ste/atomic_file.h"  // SyncDirectory

struct XXH3_state_s;

namespace ste {

// XXH3-128 (default seed) of `bytes` as 32 lowercase hex digits of the
// canonical big-endian form (what `xxh128sum` prints).
std::string Xxh3Hex(absl::string_view bytes);

// The same hash, of bytes given in pieces.
class Xxh3Hasher {
 public:
  Xxh3Hasher();
  ~Xxh3Hasher();
  Xxh3Hasher(const Xxh3Hasher&) = delete;
  Xxh3Hasher& operator=(const Xxh3Hasher&) = delete;
  void Update(absl::string_view bytes);
  std::string Hex() const;  // of everything so far

 private:
  XXH3_state_s* state_;
};

// The same hash of the file at `path`, read once in large chunks.
// NotFound if the file does not exist; other errors name the path.
absl::StatusOr<std::string> Xxh3HexOfFile(const std::string& path);

// Xxh3HexOfFile, remembered. The first call hashes the file and stamps the
// result in <dir of path>/../verified/<file name> with the file's identity
// (dev, inode, size, mtime_ns, ctime_ns) and the time of the stamp. A later
// call returns the stamped hash without reading the file when the identity
// is unchanged and the file's ctime is strictly older than the whole second
// the stamp was taken in (git's racy-timestamp rule: a change in the same
// tick could go unseen). Blob files are written once and renamed into
// place, and any write changes ctime, which no user can set: a damaged
// file is always re-hashed. This keeps `ste select` from reading a large
// index twice (its hash, then its tables). A stamp that cannot be written
// is not an error. `rehashed` (optional) says whether the file was read.
absl::StatusOr<std::string> Xxh3HexOfFileCached(const std::string& path,
                                                bool* rehashed = nullptr);

// Where Xxh3HexOfFileCached stamps the hash of `path`:
// <dir of path>/../verified/<file name>. Its temp files are that path
// followed by ".tmp<pid>".
std::string HashStampPath(const std::string& path);

// OK if `name` can name a blob: 1 to 64 characters of [a-z0-9_.-],
// starting with [a-z0-9] (it becomes part of a file name); else
// InvalidArgument.
absl::Status ValidateBlobName(const std::string& name);

// Writes `bytes` to `dir`/`name` atomically and durably: a new temp file
// ".tmp-<name>-<random>" in `dir` (mode 0644 minus umask), written, fsynced,
// closed, renamed over `name`, then `dir` fsynced. On return OK the file is
// on stable storage under its final name; on error the temp file is
// removed and `name` is untouched. `hook` (may be empty) is called with
// "blob-half-written" once half the bytes are in the temp file and with
// "blob-renamed" after the directory sync (see SqliteStoreOptions).
// Requires: `name` contains no '/'.
absl::Status WriteFileDurably(
    const std::string& dir, const std::string& name, absl::string_view bytes,
    const std::function<void(const char*)>& hook = nullptr);

// Creates a new empty file "`dir`/.tmp-`name`-<pid>-<random>-<n>" (a name
// no other thread or process picks; mode 0644 minus umask), open for
// writing; returns its descriptor and sets *path.
absl::StatusOr<int> CreateTempFile(const std::string& dir,
                                   const std::string& name, std::string* path);

// SyncDirectory: ste/atomic_file.h.

}  // namespace ste

#endif  // STE_SCHEDULER_BLOB_FILE_H_
