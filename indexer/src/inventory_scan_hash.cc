// Copyright: the ste authors. Inventory::Scan, continued: reading and
// hashing files (with re-reads when a file changes under us), resolving
// symlinks, and emitting the walk's tree in path order. The walk and the
// driver are in inventory_scan.cc.
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "inventory_scanner.h"
#include "ste/inventory.h"
#include "ste/status_macros.h"

namespace ste {
namespace inventory_internal {

absl::StatusOr<XXH128_hash_t> Scanner::HashFile(const FileRef& ref,
                                                FileStat expected,
                                                Hasher* hasher,
                                                FileStat* final_stat) {
  char* const buf = hasher->buffer.get();
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<std::unique_ptr<ReadableFile>> file =
        ref.dir != nullptr ? ref.dir->OpenAt(std::string(ref.name))
                           : fs_->Open(std::string(ref.path), ref.follow);
    if (absl::IsNotFound(file.status())) {
      return absl::AbortedError(
          absl::StrCat(ref.Display(), ": vanished during the scan"));
    }
    if (!file.ok()) return file.status();

    // Read until end of file. A read shorter than asked that brings the
    // total to the expected size is taken as the end (regular files return
    // short only at EOF); the fstat below catches a file that grew.
    bool streaming = false;
    size_t filled = 0;
    uint64_t total = 0;
    while (true) {
      if (filled == kReadBufferSize) {
        if (!streaming) {
          XXH3_128bits_reset(hasher->state);
          streaming = true;
        }
        XXH3_128bits_update(hasher->state, buf, filled);
        filled = 0;
      }
      size_t room = kReadBufferSize - filled;
      size_t ask = room;
      if (total < expected.size && expected.size - total < room) {
        ask = static_cast<size_t>(expected.size - total) + 1;
      }
      STE_ASSIGN_OR_RETURN(size_t got, (*file)->Read(buf + filled, ask));
      if (got == 0) break;
      filled += got;
      total += got;
      if (got < ask && total == expected.size) break;
    }
    XXH128_hash_t hash;
    if (streaming) {
      XXH3_128bits_update(hasher->state, buf, filled);
      hash = XXH3_128bits_digest(hasher->state);
    } else {
      hash = XXH3_128bits(buf, filled);
    }
    STE_ASSIGN_OR_RETURN(FileStat after, (*file)->Stat());
    if (SameStat(after, expected) && total == after.size) {
      bytes_hashed_.fetch_add(total, std::memory_order_relaxed);
      *final_stat = after;
      return hash;
    }

    // Changed under us (or a short read): start over from a fresh stat.
    retries_.fetch_add(1, std::memory_order_relaxed);
    if (attempt == kMaxAttempts) {
      return absl::AbortedError(absl::StrCat(
          ref.Display(), ": kept changing while it was read (read ", total,
          " bytes, size ", after.size, ")"));
    }
    absl::StatusOr<FileStat> fresh =
        ref.dir != nullptr ? ref.dir->LinkStatAt(std::string(ref.name))
        : ref.follow       ? fs_->FollowStat(std::string(ref.path))
                           : fs_->LinkStat(std::string(ref.path));
    if (absl::IsNotFound(fresh.status())) {
      return absl::AbortedError(
          absl::StrCat(ref.Display(), ": vanished during the scan"));
    }
    if (!fresh.ok()) return fresh.status();
    if (fresh->type != FileType::kRegular) {
      return absl::AbortedError(absl::StrCat(
          ref.Display(), ": stopped being a regular file during the scan"));
    }
    expected = *fresh;
  }
}

absl::Status Scanner::ResolveLink(Item* item, Hasher* hasher) {
  absl::StatusOr<std::string> target = fs_->ReadLink(item->abs);
  if (absl::IsNotFound(target.status())) {
    return absl::AbortedError(
        absl::StrCat(item->abs, ": vanished during the scan"));
  }
  if (!target.ok()) return target.status();
  std::string buf = *std::move(target);
  buf.push_back('\0');
  absl::StatusOr<FileStat> resolved = fs_->FollowStat(item->abs);
  if (absl::IsNotFound(resolved.status())) {
    buf.push_back('N');
  } else if (!resolved.ok()) {
    return resolved.status();
  } else if (resolved->type == FileType::kDirectory) {
    buf.push_back('D');
  } else if (resolved->type != FileType::kRegular) {
    buf.push_back('O');
  } else {
    // The target's content hash: from this scan when the target is one of
    // its regular files with the same stat, else read (a target outside the
    // root or ignored).
    XXH128_hash_t content;
    auto it = regular_by_inode_.find({resolved->dev, resolved->inode});
    if (it != regular_by_inode_.end() && SameStat(*it->second, *resolved)) {
      content = it->second->hash;
    } else {
      FileRef ref;
      ref.path = item->abs;
      ref.follow = true;
      FileStat final_stat;
      STE_ASSIGN_OR_RETURN(content,
                           HashFile(ref, *resolved, hasher, &final_stat));
    }
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, content);
    buf.push_back('R');
    buf.append(reinterpret_cast<const char*>(canonical.digest),
               sizeof(canonical.digest));
  }
  item->entry.hash = XXH3_128bits(buf.data(), buf.size());
  return absl::OkStatus();
}

void Scanner::IndexRegularFiles(const DirResult& dir, const InodeSet& wanted) {
  for (const Item& item : dir.files) {
    if (item.entry.type == FileType::kRegular && wanted.contains({item.entry.dev, item.entry.inode})) {
      regular_by_inode_[{item.entry.dev, item.entry.inode}] = &item.entry;
    }
  }
  for (const auto& sub : dir.subdirs) IndexRegularFiles(*sub, wanted);
}

void Scanner::EmitBelow(DirResult* dir, std::vector<InventoryEntry>* out,
                        ScanStats* stats) {
  if (dir->subdirs.empty()) {  // a leaf: the files are in order already
    for (Item& item : dir->files) {
      if (item.entry.type == FileType::kSymlink) ++stats->symlinks;
      out->push_back(std::move(item.entry));
    }
    return;
  }
  // Keys: a file's name; a subdirectory's name (its own entry) and its
  // name + "/" (everything below it).
  struct Key {
    std::string_view name;
    bool slash;
    uint32_t index;  // into files, or subdirs
    bool is_dir;
  };
  std::vector<Key> keys;
  keys.reserve(dir->files.size() + 2 * dir->subdirs.size());
  for (uint32_t i = 0; i < dir->files.size(); ++i) {
    keys.push_back({BaseName(dir->files[i].entry.path), false, i, false});
  }
  for (uint32_t i = 0; i < dir->subdirs.size(); ++i) {
    std::string_view name = BaseName(dir->subdirs[i]->entry.path);
    keys.push_back({name, false, i, true});
    keys.push_back({name, true, i, true});
  }
  // Byte order of name (+ "/" if slash), without building the strings.
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    const size_t la = a.name.size() + a.slash, lb = b.name.size() + b.slash;
    const size_t common = std::min(a.name.size(), b.name.size());
    int c = std::memcmp(a.name.data(), b.name.data(), common);
    if (c != 0) return c < 0;
    for (size_t i = common; i < std::min(la, lb); ++i) {
      unsigned char ca = i < a.name.size() ? a.name[i] : '/';
      unsigned char cb = i < b.name.size() ? b.name[i] : '/';
      if (ca != cb) return ca < cb;
    }
    return la < lb;
  });
  // (A key's name points into a path that moves out below; it is not read
  // after the sort.)
  for (const Key& k : keys) {
    if (!k.is_dir) {
      Item& item = dir->files[k.index];
      if (item.entry.type == FileType::kSymlink) ++stats->symlinks;
      out->push_back(std::move(item.entry));
    } else if (!k.slash) {
      ++stats->directories;
      out->push_back(std::move(dir->subdirs[k.index]->entry));
    } else {
      EmitBelow(dir->subdirs[k.index].get(), out, stats);
    }
  }
}

}  // namespace inventory_internal
}  // namespace ste
