// Copyright: the ste authors. Inventory: lookup, diff, JSON rendering.
// Scan lives in inventory_scan.cc, the binary format in
// inventory_format.cc, the real file system in inventory_fs.cc.
#include "ste/inventory.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ste/json.h"

namespace ste {
namespace {

absl::string_view AV(std::string_view s) { return {s.data(), s.size()}; }

constexpr char kHexDigits[] = "0123456789abcdef";

bool IsChanged(const InventoryEntry& base, const InventoryEntry& head) {
  if (base.type != head.type) return true;
  if (base.hash.low64 != head.hash.low64 ||
      base.hash.high64 != head.hash.high64) {
    return true;
  }
  return base.type == FileType::kRegular &&
         (base.mode & 0111) != (head.mode & 0111);
}

}  // namespace

std::string_view FileTypeName(FileType type) {
  switch (type) {
    case FileType::kRegular:
      return "regular";
    case FileType::kSymlink:
      return "symlink";
    case FileType::kDirectory:
      return "directory";
    case FileType::kOther:
      return "other";
    case FileType::kMissing:
      return "missing";
  }
  return "unknown";
}

std::string_view ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kModified:
      return "modified";
    case ChangeKind::kAdded:
      return "added";
    case ChangeKind::kDeleted:
      return "deleted";
  }
  return "unknown";
}

bool operator==(const InventoryEntry& a, const InventoryEntry& b) {
  return a.path == b.path && a.type == b.type && a.size == b.size &&
         a.mtime_ns == b.mtime_ns && a.ctime_ns == b.ctime_ns &&
         a.inode == b.inode && a.dev == b.dev && a.mode == b.mode &&
         a.hash.low64 == b.hash.low64 && a.hash.high64 == b.hash.high64;
}

std::string HashToHex(XXH128_hash_t hash) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  std::string out(32, '0');
  for (size_t i = 0; i < 16; ++i) {
    out[2 * i] = kHexDigits[canonical.digest[i] >> 4];
    out[2 * i + 1] = kHexDigits[canonical.digest[i] & 15];
  }
  return out;
}

absl::StatusOr<Inventory> Inventory::FromEntries(
    std::vector<InventoryEntry> entries, int64_t taken_at_ns) {
  std::sort(entries.begin(), entries.end(),
            [](const InventoryEntry& a, const InventoryEntry& b) {
              return a.path < b.path;
            });
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string& path = entries[i].path;
    if (path.empty()) {
      return absl::InvalidArgumentError("inventory entry with an empty path");
    }
    if (path.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("inventory path with a NUL byte: ", path));
    }
    if (i > 0 && entries[i - 1].path == path) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate inventory path: ", path));
    }
  }
  Inventory inventory;
  inventory.entries_ = std::move(entries);
  inventory.taken_at_ns_ = taken_at_ns;
  return inventory;
}

absl::Status Inventory::AddEntries(std::vector<InventoryEntry> extra) {
  if (extra.empty()) return absl::OkStatus();
  std::vector<InventoryEntry> all = entries_;
  for (InventoryEntry& e : extra) all.push_back(std::move(e));
  absl::StatusOr<Inventory> merged = FromEntries(std::move(all), taken_at_ns_);
  if (!merged.ok()) return merged.status();
  entries_ = std::move(merged->entries_);
  return absl::OkStatus();
}

const InventoryEntry* Inventory::Find(std::string_view path) const {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), path,
      [](const InventoryEntry& e, std::string_view p) { return e.path < p; });
  if (it == entries_.end() || it->path != path) return nullptr;
  return &*it;
}

InventoryDiff Inventory::Diff(const Inventory& base, const Inventory& head) {
  InventoryDiff diff;
  auto b = base.entries_.begin(), be = base.entries_.end();
  auto h = head.entries_.begin(), he = head.entries_.end();
  auto added = [&](const InventoryEntry& e) {
    if (e.type == FileType::kMissing) return;
    diff.changes.push_back(
        {e.path, ChangeKind::kAdded, e.type, FileType::kMissing});
  };
  auto deleted = [&](const InventoryEntry& e) {
    if (e.type == FileType::kMissing) return;
    diff.changes.push_back({e.path, ChangeKind::kDeleted, e.type, e.type});
  };
  while (b != be || h != he) {
    if (h == he || (b != be && b->path < h->path)) {
      deleted(*b++);
    } else if (b == be || h->path < b->path) {
      added(*h++);
    } else {
      if (b->type == FileType::kMissing) {
        added(*h);
      } else if (h->type == FileType::kMissing) {
        deleted(*b);
      } else if (IsChanged(*b, *h)) {
        diff.changes.push_back(
            {h->path, ChangeKind::kModified, h->type, b->type});
      }
      ++b;
      ++h;
    }
  }
  return diff;
}

std::string Inventory::ToJsonLines() const {
  std::string out;
  out.reserve(entries_.size() * 128);
  for (const InventoryEntry& e : entries_) {
    out.push_back('{');
    AppendJsonPathField("path", e.path, &out);
    absl::StrAppend(&out, ",\"type\":\"", AV(FileTypeName(e.type)),
                    "\",\"size\":", e.size, ",\"mtime_ns\":", e.mtime_ns,
                    ",\"hash\":");
    if (e.type == FileType::kOther || e.type == FileType::kMissing) {
      out.append("null");
    } else {
      absl::StrAppend(&out, "\"", HashToHex(e.hash), "\"");
    }
    out.append("}\n");
  }
  return out;
}

std::string InventoryDiff::ToJsonLines() const {
  std::string out;
  for (const InventoryChange& c : changes) {
    out.push_back('{');
    AppendJsonPathField("path", c.path, &out);
    absl::StrAppend(&out, ",\"change\":\"", AV(ChangeKindName(c.change)),
                    "\",\"type\":\"", AV(FileTypeName(c.type)),
                    "\",\"old_type\":\"", AV(FileTypeName(c.old_type)),
                    "\"}\n");
  }
  return out;
}

}  // namespace ste
