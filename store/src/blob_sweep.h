// Copyright: the ste authors. Removing files from a directory of blob
// files: SQLite's blobs/ and PostgreSQL's local cache (blob_cache.h) hold
// the same names,
//
//   <baseline>-<name>-<xxh3-128 hex>.blob      a blob (or a copy of one)
//   .tmp-<that name>-<pid>-<random>-<n>         one being written
//
// and Xxh3HexOfFileCached stamps their hashes in <dir>/../verified/ under
// the same name (its temp files: that name + ".tmp<pid>").
//
// Internal to scheduler/. The stores decide *which* files may go (they
// know the rows); this only names, lists and unlinks. The order that
// keeps a concurrent writer safe is the caller's: list the directory
// first, read the rows after (a file in the listing then has its
// baseline's row visible, since a blob is written after its Begin()),
// remove last.
#ifndef STE_SCHEDULER_BLOB_SWEEP_H_
#define STE_SCHEDULER_BLOB_SWEEP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ste {

// One entry of a blob directory or of its stamp directory, by name.
struct BlobFileName {
  std::string file;   // the entry's own name
  int64_t baseline = 0;
  std::string blob;   // the blob's name ("index")
  std::string hash;   // 32 hex digits
  std::string final;  // "<baseline>-<blob>-<hash>.blob"
  bool temp = false;  // a temp file (".tmp-<final>-...", or a stamp's
                      // "<final>.tmp<pid>")
};

// The parts of a blob file name or a temp file's; nullopt for any other
// name (never touched). `stamp_dir` names follow the stamp directory's
// rules (temp files end in ".tmp<pid>").
std::optional<BlobFileName> ParseBlobFileName(absl::string_view file,
                                              bool stamp_dir = false);

// The blob files (and temp files) in `dir`, and the stamps in its stamp
// directory, as parsed; names that are not blob files are left out. A
// missing directory has none.
struct BlobDirListing {
  std::vector<BlobFileName> files;
  std::vector<BlobFileName> stamps;
};
absl::StatusOr<BlobDirListing> ListBlobDirectory(const std::string& dir);

// <dir>/../verified
std::string StampDirectoryOf(const std::string& dir);

// Unlinks `dir`/`name`; appends its path to *removed when it was there.
// ENOENT is not an error (someone else removed it); other errors are
// ignored too (the file stays for a later sweep) and returned false.
bool RemoveFileIn(const std::string& dir, const std::string& name,
                  std::vector<std::string>* removed);

// Every file of `baseline` in `dir` (blob files, temp files) and every
// stamp of one: for a baseline whose rows are gone.
void RemoveBaselineFiles(const std::string& dir, int64_t baseline,
                         std::vector<std::string>* removed);

}  // namespace ste

#endif  // STE_SCHEDULER_BLOB_SWEEP_H_
