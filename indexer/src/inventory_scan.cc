// Copyright: the ste authors. Inventory::Scan: the parallel walk and hashing.
//
// Three phases, the first two parallel over `threads` workers (the
// caller's thread is one of them):
//   1. walk: a shared stack of directories; a worker opens one directory,
//      lists it, fstatat()s its entries (one component lookup each, not a
//      whole path walk), computes its names-hash, applies the stat cache,
//      hashes small files right there (openat), and pushes subdirectories.
//      Each directory's result (its children in name order) hangs off its
//      parent's, so the walk leaves a tree;
//   2. hash: the big files (> kInlineHashMax) left over, biggest first, one
//      at a time through an atomic counter, so that one huge file does not
//      serialize a directory;
//   3. finish: resolve symlinks (their target's content hash comes from this
//      scan when the target is in the inventory), then emit the tree in path
//      order: per directory, a small sort of its children's keys (name for
//      an entry, name + "/" for a subdirectory's contents, which byte order
//      can put after a sibling: "a" < "a-b" < "a/x"), instead of one big
//      sort of full paths.
// Load balance is per directory; a single directory of 100k files is walked
// by one thread (its big files still hash in parallel).
//
// Phases 2 and 3 live in inventory_scan_hash.cc; the Scanner class in
// inventory_scanner.h.
#include <time.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "inventory_scanner.h"
#include "ste/inventory.h"
#include "ste/repo_path.h"
#include "ste/status_macros.h"

namespace ste {
namespace inventory_internal {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// See "Stat cache" at the top of inventory.h.
int64_t TakenAtNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000;
}

// Prefixes a status message with context, keeping its code.
absl::Status Annotate(const absl::Status& status, std::string_view context) {
  return absl::Status(status.code(),
                      absl::StrCat(AV(context), ": ", status.message()));
}

}  // namespace

void Scanner::Fail(absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_.ok()) error_ = std::move(status);
  failed_.store(true);
  cv_.notify_all();
}

const InventoryEntry* Scanner::FindPrevious(const std::string& path,
                                            EntryIter* lo, EntryIter hi) const {
  // Galloping search from *lo: the next child is usually a few entries on
  // (only the previous child's subtree lies in between).
  auto before = [](const InventoryEntry& e, const std::string& p) {
    return e.path < p;
  };
  EntryIter start = *lo;
  size_t step = 1;
  while (start != hi && before(*start, path)) {
    const size_t left = static_cast<size_t>(hi - start);
    if (step >= left) {
      start = std::lower_bound(start + 1, hi, path, before);
      break;
    }
    if (!before(start[step], path)) {
      start = std::lower_bound(start + 1, start + step + 1, path, before);
      break;
    }
    start += step;
    step *= 2;
  }
  *lo = start;
  if (start == hi || start->path != path) return nullptr;
  return &*start;
}

absl::Status Scanner::Classify(std::string path, const FileRef& ref,
                               const FileStat& st, const InventoryEntry* prev,
                               Hasher* hasher, Item* item) {
  item->entry.path = std::move(path);
  SetStat(st, &item->entry);
  item->action = Action::kDone;
  switch (st.type) {
    case FileType::kRegular:
      if (prev != nullptr && SameStat(*prev, st) &&
          st.mtime_ns < previous_->taken_at_ns()) {
        item->entry.hash = prev->hash;
        files_reused_.fetch_add(1, std::memory_order_relaxed);
      } else if (ref.dir != nullptr && st.size <= kInlineHashMax) {
        FileStat final_stat;
        STE_ASSIGN_OR_RETURN(item->entry.hash,
                             HashFile(ref, st, hasher, &final_stat));
        SetStat(final_stat, &item->entry);
        files_hashed_.fetch_add(1, std::memory_order_relaxed);
      } else {
        item->abs = ref.Display();
        item->action = Action::kHash;
      }
      break;
    case FileType::kSymlink:
      item->abs = ref.Display();
      item->action = Action::kResolveLink;
      break;
    default:  // kOther; directories are classified by their own task
      break;
  }
  return absl::OkStatus();
}

absl::Status Scanner::ListOneDirectory(DirTask* task_ptr, WalkScratch* scratch,
                                       std::vector<DirTask>* children) {
  const DirTask& task = *task_ptr;
  DirResult* const result = task.result;
  const std::string& rel = result->entry.path;
  std::unique_ptr<Directory> dir = std::move(task_ptr->dir);
  if (dir == nullptr) {
    absl::StatusOr<std::unique_ptr<Directory>> opened =
        fs_->OpenDirectory(task.abs, /*follow=*/rel == kRootPath);
    if (!opened.ok() && task.external) {  // this whole task is one entry
      MarkUnreachable(opened.status(), &result->entry);
      return absl::OkStatus();
    }
    if (absl::IsNotFound(opened.status())) {
      return absl::AbortedError(
          absl::StrCat(task.abs, ": vanished during the scan"));
    }
    if (!opened.ok()) return opened.status();
    dir = *std::move(opened);
  }

  // previous_'s entries below this directory, to search in: a subrange of
  // the parent's range, so each directory costs two short binary searches.
  EntryIter lo = task.prev_lo, hi = task.prev_hi;
  if (previous_ != nullptr && rel != kRootPath && !task.external) {
    auto before = [](const InventoryEntry& e, const std::string& p) {
      return e.path < p;
    };
    std::string key = absl::StrCat(rel, "/");
    lo = std::lower_bound(lo, hi, key, before);
    key.back() = '0';  // '/' + 1: just past every "rel/..." path
    hi = std::lower_bound(lo, hi, key, before);
  }

  std::vector<std::string>& names = scratch->names;
  std::string& names_buf = scratch->names_buf;
  for (int attempt = 1;; ++attempt) {
    names.clear();
    for (const DirTask& child : *children) {
      if (child.dir != nullptr) preopened_.fetch_sub(1);
    }
    children->clear();
    result->files.clear();
    result->subdirs.clear();
    STE_RETURN_IF_ERROR(dir->List(&names));
    std::sort(names.begin(), names.end());
    names_buf.clear();
    result->files.reserve(names.size());
    bool vanished = false;
    EntryIter cursor = lo;
    for (const std::string& name : names) {
      if (task.external) {
        names_buf.append(name).push_back('\0');
        continue;
      }
      std::string path = rel == kRootPath ? name : absl::StrCat(rel, "/", name);
      // Every directory above was tested before it was listed, and this
      // walk never lists an ignored one.
      if (!options_.ignore.empty() && options_.ignore.MatchesBelowUnmatched(path)) continue;
      names_buf.append(name).push_back('\0');
      // Reserved for views (inventory.h, "Views"): listed, not an entry.
      if (name[0] == kViewMark && IsKnownViewComponent(name)) continue;
      absl::StatusOr<FileStat> st = dir->LinkStatAt(name);
      if (absl::IsNotFound(st.status())) {
        vanished = true;
        break;
      }
      if (!st.ok()) return st.status();
      if (st->type == FileType::kDirectory) {
        auto sub = std::make_unique<DirResult>();
        sub->entry.path = std::move(path);
        SetStat(*st, &sub->entry);
        DirTask child;
        child.abs = JoinPath(task.abs, name);
        child.result = sub.get();
        child.prev_lo = lo;
        child.prev_hi = hi;
        if (preopened_.load(std::memory_order_relaxed) < kMaxPreopened) {
          absl::StatusOr<std::unique_ptr<Directory>> opened =
              dir->OpenSubdirectory(name);
          if (absl::IsNotFound(opened.status())) {
            vanished = true;
            break;
          }
          // Another error: the child task opens it by path and reports it.
          if (opened.ok()) {
            child.dir = *std::move(opened);
            preopened_.fetch_add(1);
          }
        }
        children->push_back(std::move(child));
        result->subdirs.push_back(std::move(sub));
        continue;
      }
      const InventoryEntry* prev =
          previous_ != nullptr && st->type == FileType::kRegular
              ? FindPrevious(path, &cursor, hi)
              : nullptr;
      FileRef ref;
      ref.dir = dir.get();
      ref.path = task.abs;
      ref.name = name;
      result->files.emplace_back();
      STE_RETURN_IF_ERROR(Classify(std::move(path), ref, *st, prev,
                                   &scratch->hasher, &result->files.back()));
    }
    if (!vanished) break;
    retries_.fetch_add(1, std::memory_order_relaxed);
    if (attempt == kMaxAttempts) {
      return absl::AbortedError(absl::StrCat(
          task.abs, ": entries kept vanishing while the directory was listed"));
    }
  }
  result->entry.hash = XXH3_128bits(names_buf.data(), names_buf.size());
  return absl::OkStatus();
}

void Scanner::WalkWorker(Pending* pending) {
  WalkScratch scratch;
  std::vector<DirTask> children;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] {
      return !stack_.empty() || busy_ == 0 || failed_.load();
    });
    if (failed_.load() || stack_.empty()) return;  // done, or failed
    DirTask task = std::move(stack_.back());
    stack_.pop_back();
    ++busy_;
    lock.unlock();
    if (task.dir != nullptr) preopened_.fetch_sub(1);

    absl::Status status = ListOneDirectory(&task, &scratch, &children);
    if (status.ok()) {
      // The directory's files are final now: their addresses are stable.
      for (Item& item : task.result->files) {
        if (item.action == Action::kHash) pending->to_hash.push_back(&item);
        if (item.action == Action::kResolveLink)
          pending->links.push_back(&item);
      }
    }

    lock.lock();
    --busy_;
    if (!status.ok()) {
      if (error_.ok()) error_ = std::move(status);
      failed_.store(true);
      cv_.notify_all();
      return;
    }
    for (DirTask& child : children) stack_.push_back(std::move(child));
    if (children.size() > 1 || (stack_.empty() && busy_ == 0)) {
      cv_.notify_all();
    } else if (children.size() == 1) {
      cv_.notify_one();
    }
  }
}

absl::StatusOr<Scanner::Result> Scanner::Run(const FileStat& root_stat) {
  const int64_t t0 = NowNs();
  // External paths: single entries; their directories go on the stack.
  std::vector<std::string> external = options_.external_paths;
  std::sort(external.begin(), external.end());
  external.erase(std::unique(external.begin(), external.end()), external.end());
  std::vector<Item> external_items;
  external_items.reserve(external.size());
  std::vector<std::unique_ptr<DirResult>> external_dirs;
  for (const std::string& path : external) {
    absl::StatusOr<FileStat> st = fs_->LinkStat(path);
    Item item;
    item.external = true;
    if (absl::IsNotFound(st.status())) {
      item.entry.path = path;
      item.entry.type = FileType::kMissing;
    } else if (!st.ok()) {
      item.entry.path = path;
      MarkUnreachable(st.status(), &item.entry);
    } else if (st->type == FileType::kDirectory) {
      auto dir = std::make_unique<DirResult>();
      dir->entry.path = path;
      SetStat(*st, &dir->entry);
      DirTask task;
      task.abs = path;
      task.result = dir.get();
      task.external = true;
      stack_.push_back(std::move(task));
      external_dirs.push_back(std::move(dir));
      continue;
    } else {
      FileRef ref;
      ref.path = path;
      absl::Status classified = Classify(path, ref, *st, previous_ ? previous_->Find(path) : nullptr,
                                         /*hasher=*/nullptr, &item);
      if (!classified.ok()) {
        item.entry.path = path;
        item.action = Action::kDone;
        MarkUnreachable(classified, &item.entry);
      }
    }
    external_items.push_back(std::move(item));
  }
  DirResult root;
  root.entry.path = std::string(kRootPath);
  SetStat(root_stat, &root.entry);
  DirTask root_task;
  root_task.abs = root_;
  root_task.result = &root;
  if (previous_ != nullptr) {
    root_task.prev_lo = previous_->entries().begin();
    root_task.prev_hi = previous_->entries().end();
  }
  stack_.push_back(std::move(root_task));

  std::vector<Pending> pending(threads_);
  RunParallel([&](int i) { WalkWorker(&pending[i]); });
  if (failed_.load()) return error_;
  const int64_t t1 = NowNs();

  std::vector<Item*> to_hash, links;
  for (Item& item : external_items) {
    if (item.action == Action::kHash) to_hash.push_back(&item);
    if (item.action == Action::kResolveLink) links.push_back(&item);
  }
  for (Pending& p : pending) {
    to_hash.insert(to_hash.end(), p.to_hash.begin(), p.to_hash.end());
    links.insert(links.end(), p.links.begin(), p.links.end());
  }
  // Biggest first, so that a large file does not start last.
  std::sort(to_hash.begin(), to_hash.end(), [](const Item* a, const Item* b) {
    return a->entry.size > b->entry.size;
  });
  std::atomic<size_t> next{0};
  RunParallel([&](int) {
    Hasher hasher;
    while (!failed_.load(std::memory_order_relaxed)) {
      size_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= to_hash.size()) return;
      InventoryEntry& e = to_hash[k]->entry;
      FileStat expected;
      expected.type = e.type;
      expected.size = e.size;
      expected.mtime_ns = e.mtime_ns;
      expected.ctime_ns = e.ctime_ns;
      expected.inode = e.inode;
      expected.dev = e.dev;
      expected.mode = e.mode;
      FileRef ref;
      ref.path = to_hash[k]->abs;
      FileStat final_stat;
      absl::StatusOr<XXH128_hash_t> hash =
          HashFile(ref, expected, &hasher, &final_stat);
      if (!hash.ok()) {
        if (to_hash[k]->external) {
          MarkUnreachable(hash.status(), &e);
          continue;
        }
        Fail(hash.status());
        return;
      }
      e.hash = *hash;
      SetStat(final_stat, &e);
      files_hashed_.fetch_add(1, std::memory_order_relaxed);
    }
  });
  if (failed_.load()) return error_;
  const int64_t t2 = NowNs();

  if (!links.empty()) {
    // Only the regular files the links point at now are indexed by inode
    // (not every file of the tree). A target that changes before
    // ResolveLink looks is not found there and is read instead.
    InodeSet wanted;
    for (const Item* item : links) {
      absl::StatusOr<FileStat> target = fs_->FollowStat(item->abs);
      if (target.ok() && target->type == FileType::kRegular) wanted.insert({target->dev, target->inode});
    }
    IndexRegularFiles(root, wanted);
    for (const Item& item : external_items) {
      if (item.entry.type == FileType::kRegular && wanted.contains({item.entry.dev, item.entry.inode})) {
        regular_by_inode_[{item.entry.dev, item.entry.inode}] = &item.entry;
      }
    }
    Hasher hasher;
    for (Item* item : links) {
      absl::Status resolved = ResolveLink(item, &hasher);
      if (!resolved.ok() && item->external) {
        MarkUnreachable(resolved, &item->entry);
      } else if (!resolved.ok()) {
        return resolved;
      }
    }
  }

  ScanStats stats;
  std::vector<InventoryEntry> entries;
  if (previous_ != nullptr) entries.reserve(previous_->size() + 1024);
  // The root's own entry "." is not a prefix of its children's paths:
  // names starting with a byte below '.' ("#notes", "-x", a view's 0x01)
  // sort before it.
  InventoryEntry root_entry = std::move(root.entry);
  ++stats.directories;
  EmitBelow(&root, &entries, &stats);
  entries.insert(std::lower_bound(entries.begin(), entries.end(), root_entry,
                                  [](const InventoryEntry& a, const InventoryEntry& b) {
                                    return a.path < b.path;
                                  }),
                 std::move(root_entry));
  if (!external_items.empty() || !external_dirs.empty()) {
    std::vector<InventoryEntry> ext;
    for (Item& item : external_items) {
      if (item.entry.type == FileType::kSymlink) ++stats.symlinks;
      ext.push_back(std::move(item.entry));
    }
    for (auto& dir : external_dirs) {
      ++stats.directories;
      ext.push_back(std::move(dir->entry));
    }
    auto by_path = [](const InventoryEntry& a, const InventoryEntry& b) {
      return a.path < b.path;
    };
    std::sort(ext.begin(), ext.end(), by_path);
    std::vector<InventoryEntry> merged;
    merged.reserve(entries.size() + ext.size());
    std::merge(std::make_move_iterator(entries.begin()),
               std::make_move_iterator(entries.end()),
               std::make_move_iterator(ext.begin()),
               std::make_move_iterator(ext.end()), std::back_inserter(merged),
               by_path);
    entries = std::move(merged);
  }
  const int64_t t3 = NowNs();

  stats.entries = entries.size();
  stats.files_hashed = files_hashed_.load();
  stats.files_reused = files_reused_.load();
  stats.bytes_hashed = bytes_hashed_.load();
  stats.retries = retries_.load();
  stats.walk_ns = t1 - t0;
  stats.hash_ns = t2 - t1;
  stats.finish_ns = t3 - t2;
  return Result{std::move(entries), stats};
}

}  // namespace inventory_internal

using inventory_internal::Annotate;
using inventory_internal::Scanner;
using inventory_internal::TakenAtNs;

absl::StatusOr<Inventory> Inventory::Scan(const ScanOptions& options,
                                          const Inventory* previous) {
  const int64_t taken_at_ns = TakenAtNs();
  std::string root = options.root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (!IsNormalizedAbsolute(root)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inventory root \"", root, "\" is not an absolute, normalized path"));
  }
  // View paths are computed, not stat'ed, wherever they were given.
  ScanOptions walk = options;
  walk.external_paths.clear();
  std::vector<std::string> views = options.view_paths;
  for (const std::string& path : options.external_paths) {
    if (IsViewPath(path)) {
      views.push_back(path);
    } else if (!IsNormalizedAbsolute(path)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "external path \"", path, "\" is not an absolute, normalized path"));
    } else {
      walk.external_paths.push_back(path);
    }
  }
  ScanFileSystem* fs =
      options.fs != nullptr ? options.fs : RealScanFileSystem();
  // The root itself may be a symlink to a directory: it is followed.
  absl::StatusOr<FileStat> root_stat = fs->FollowStat(root);
  if (!root_stat.ok()) return Annotate(root_stat.status(), "inventory root");
  if (root_stat->type != FileType::kDirectory) {
    return absl::InvalidArgumentError(
        absl::StrCat("inventory root ", root, " is not a directory"));
  }
  int threads = options.threads;
  if (threads <= 0) {
    threads = static_cast<int>(std::thread::hardware_concurrency());
    if (threads <= 0) threads = 1;
  }
  // Checked before the walk: an unknown view is a caller's error.
  for (const std::string& path : views) {
    if (!ParseView(path)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "view path \"", absl::CHexEscape(path), "\" names no known view"));
    }
  }
  Scanner scanner(walk, fs, previous, root, threads);
  STE_ASSIGN_OR_RETURN(Scanner::Result result, scanner.Run(*root_stat));
  if (!views.empty()) {
    STE_ASSIGN_OR_RETURN(std::vector<InventoryEntry> computed,
                         ComputeViews(root, views, options.ignore, fs, options.environment));
    std::vector<InventoryEntry> merged;
    merged.reserve(result.entries.size() + computed.size());
    std::merge(std::make_move_iterator(result.entries.begin()),
               std::make_move_iterator(result.entries.end()),
               std::make_move_iterator(computed.begin()),
               std::make_move_iterator(computed.end()), std::back_inserter(merged),
               [](const InventoryEntry& a, const InventoryEntry& b) { return a.path < b.path; });
    result.entries = std::move(merged);
    result.stats.entries = result.entries.size();
  }
  Inventory inventory;
  inventory.entries_ = std::move(result.entries);
  inventory.stats_ = result.stats;
  inventory.taken_at_ns_ = taken_at_ns;
  return inventory;
}

}  // namespace ste
