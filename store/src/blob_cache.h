// Copyright: the ste authors. A local directory of verified blob copies.
//
// Internal to scheduler/. BaselineStore::BlobPath() returns a local file
// (the selection mmaps the index). A store whose blobs live on a server
// (PostgreSQL) copies each blob it is asked for into such a directory:
//
//   <dir>/<baseline>-<name>-<xxh3-128 hex>.blob   a complete copy
//   <dir>/.tmp-<that name>-<pid>-<random>-<n>     a copy being written (a
//                                                 leftover one is garbage
//                                                 of a killed process)
//
// A copy is written to a temp file and renamed into place, so a reader
// never sees a partial file under a final name. It is not fsynced: after a
// power loss a copy may be torn, and the check below catches that (with
// hash verification; a size-only check trusts any bytes of the right size)
// and the copy is fetched again. Names carry the
// content hash, and a copy is only used after its size (and, by default,
// its hash) is checked against what the store recorded, so processes and
// stores (even of different databases) can share one directory safely:
// a file under the right name with the right bytes is the right blob.
//
// Garbage: Remove() deletes this machine's copies of a removed baseline,
// and RemoveStaleFiles() (both run by `ste baseline gc`) copies whose
// baseline or blob row is gone, wherever they were made. Deleting the
// directory by hand is safe too: it is refilled on demand (a select
// that had found a copy but not opened it yet selects all, saying why).
#ifndef STE_SCHEDULER_BLOB_CACHE_H_
#define STE_SCHEDULER_BLOB_CACHE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "blob_file.h"

namespace ste {

class BlobCache {
 public:
  // `dir` is created (with its parents) when the first copy is written.
  explicit BlobCache(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }

  // Where the copy of blob `name` of `baseline` with hash `xxh3_hex` goes.
  // Requires: `name` and `xxh3_hex` are plain (no '/', not starting '.').
  std::string PathFor(int64_t baseline, absl::string_view name,
                      absl::string_view xxh3_hex) const;

  // True if `path` is a regular file of `size` bytes whose XXH3-128 is
  // `xxh3_hex` (not re-hashed unless `verify_hash`). A missing, short or
  // changed file is false (the caller fetches it again); errors other
  // than ENOENT are returned.
  absl::StatusOr<bool> Holds(const std::string& path, int64_t size,
                             absl::string_view xxh3_hex,
                             bool verify_hash) const;

  // Writes one copy: Append() the bytes in order, check size() and hash(),
  // then Commit(). Destroying an uncommitted writer removes its temp file.
  class Writer {
   public:
    ~Writer();
    Writer(Writer&& other) noexcept;
    Writer& operator=(Writer&&) = delete;
    Writer(const Writer&) = delete;

    absl::Status Append(absl::string_view bytes);
    int64_t size() const { return size_; }
    // XXH3-128 hex of everything appended.
    std::string hash() const { return hasher_->Hex(); }
    // Closes the file and renames it to its final path.
    absl::Status Commit();

   private:
    friend class BlobCache;
    Writer(int fd, std::string tmp, std::string path)
        : fd_(fd),
          tmp_(std::move(tmp)),
          path_(std::move(path)),
          hasher_(std::make_unique<Xxh3Hasher>()) {}
    int fd_;  // -1 once committed or moved from
    std::string tmp_;
    std::string path_;
    std::unique_ptr<Xxh3Hasher> hasher_;
    int64_t size_ = 0;
  };

  // Starts a copy that Commit() will put at `path` (a PathFor() result).
  absl::StatusOr<Writer> Create(const std::string& path) const;

 private:
  std::string dir_;
};

}  // namespace ste

#endif  // STE_SCHEDULER_BLOB_CACHE_H_
