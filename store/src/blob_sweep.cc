// Copyright: the ste authors.
#include "blob_sweep.h"

#include <dirent.h>
#include <errno.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "blob_file.h"

namespace ste {
namespace {

constexpr absl::string_view kBlobSuffix = ".blob";
constexpr absl::string_view kTempPrefix = ".tmp-";

bool IsHex32(absl::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

// "<baseline>-<name>-<hash>.blob"
std::optional<BlobFileName> ParseFinal(absl::string_view final) {
  if (!absl::EndsWith(final, kBlobSuffix)) return std::nullopt;
  absl::string_view stem = final.substr(0, final.size() - kBlobSuffix.size());
  const size_t first = stem.find('-');
  const size_t last = stem.rfind('-');
  if (first == absl::string_view::npos || first == last) return std::nullopt;
  absl::string_view id = stem.substr(0, first);
  BlobFileName out;
  if (id.empty() || id[0] == '0' || !absl::SimpleAtoi(id, &out.baseline) ||
      out.baseline <= 0) {
    return std::nullopt;
  }
  for (char c : id) {
    if (!absl::ascii_isdigit(c)) return std::nullopt;
  }
  out.blob = std::string(stem.substr(first + 1, last - first - 1));
  out.hash = std::string(stem.substr(last + 1));
  if (!ValidateBlobName(out.blob).ok() || !IsHex32(out.hash)) return std::nullopt;
  out.final = std::string(final);
  return out;
}

absl::StatusOr<std::vector<std::string>> EntryNames(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return names;
    return absl::ErrnoToStatus(errno, absl::StrCat("open directory ", dir));
  }
  while (struct dirent* e = readdir(d)) {
    const absl::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  closedir(d);
  return names;
}

}  // namespace

std::optional<BlobFileName> ParseBlobFileName(absl::string_view file,
                                              bool stamp_dir) {
  std::optional<BlobFileName> parsed;
  bool temp = false;
  if (absl::StartsWith(file, kTempPrefix)) {
    // ".tmp-<final name>-XXXXXX": the one atomic write's temporary
    // (ste/atomic_file.h), of a blob or of its hash stamp.
    absl::string_view rest = file.substr(kTempPrefix.size());
    const size_t end = rest.find(".blob-");
    if (end == absl::string_view::npos) return std::nullopt;
    parsed = ParseFinal(rest.substr(0, end + kBlobSuffix.size()));
    temp = true;
  } else if (const size_t at = file.rfind(".tmp");
             stamp_dir && at != absl::string_view::npos &&
             absl::EndsWith(file.substr(0, at), kBlobSuffix)) {
    // "<final name>.tmp<pid>": a stamp's temporary as ste 0.1 wrote it.
    uint64_t pid = 0;
    if (!absl::SimpleAtoi(file.substr(at + 4), &pid)) return std::nullopt;
    parsed = ParseFinal(file.substr(0, at));
    temp = true;
  } else {
    parsed = ParseFinal(file);
  }
  if (!parsed) return std::nullopt;
  parsed->file = std::string(file);
  parsed->temp = temp;
  return parsed;
}

std::string StampDirectoryOf(const std::string& dir) {
  std::string stamp = HashStampPath(absl::StrCat(dir, "/x"));
  stamp.resize(stamp.size() - 2);  // "/x"
  return stamp;
}

absl::StatusOr<BlobDirListing> ListBlobDirectory(const std::string& dir) {
  BlobDirListing listing;
  absl::StatusOr<std::vector<std::string>> files = EntryNames(dir);
  if (!files.ok()) return files.status();
  for (const std::string& name : *files) {
    if (std::optional<BlobFileName> f = ParseBlobFileName(name)) listing.files.push_back(*f);
  }
  absl::StatusOr<std::vector<std::string>> stamps = EntryNames(StampDirectoryOf(dir));
  if (!stamps.ok()) return stamps.status();
  for (const std::string& name : *stamps) {
    if (std::optional<BlobFileName> f = ParseBlobFileName(name, /*stamp_dir=*/true)) {
      listing.stamps.push_back(*f);
    }
  }
  return listing;
}

bool RemoveFileIn(const std::string& dir, const std::string& name,
                  std::vector<std::string>* removed) {
  const std::string path = absl::StrCat(dir, "/", name);
  if (unlink(path.c_str()) == 0) {
    if (removed != nullptr) removed->push_back(path);
    return true;
  }
  return errno == ENOENT;
}

void RemoveBaselineFiles(const std::string& dir, int64_t baseline,
                         std::vector<std::string>* removed) {
  absl::StatusOr<BlobDirListing> listing = ListBlobDirectory(dir);
  if (!listing.ok()) return;  // left for a later sweep
  for (const BlobFileName& f : listing->files) {
    if (f.baseline == baseline) RemoveFileIn(dir, f.file, removed);
  }
  const std::string stamps = StampDirectoryOf(dir);
  for (const BlobFileName& f : listing->stamps) {
    if (f.baseline == baseline) RemoveFileIn(stamps, f.file, removed);
  }
}

}  // namespace ste
