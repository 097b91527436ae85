// Copyright: the ste authors. Internals of Inventory::Scan, shared by
// inventory_scan.cc (the walk, the driver) and inventory_scan_hash.cc
// (reading and hashing, symlinks, the path-ordered output). Not a public
// header: nothing outside those two files includes it.
#ifndef STE_INDEXER_SRC_INVENTORY_SCANNER_H_
#define STE_INDEXER_SRC_INVENTORY_SCANNER_H_

#include <xxhash.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ste/inventory.h"

namespace ste {
namespace inventory_internal {

inline constexpr int kMaxAttempts = 3;
inline constexpr size_t kReadBufferSize = 1 << 20;
// Files up to this size are hashed by the walk, through their directory.
inline constexpr uint64_t kInlineHashMax = 256 << 10;
// A directory's subdirectories are opened through it (one path component
// each, not a whole path walk) while fewer than this many such tasks wait.
inline constexpr int kMaxPreopened = 256;

// Debian's abseil has its own string_view type (not std's).
inline absl::string_view AV(std::string_view s) { return {s.data(), s.size()}; }

inline void SetStat(const FileStat& st, InventoryEntry* e) {
  e->type = st.type;
  e->size = st.size;
  e->mtime_ns = st.mtime_ns;
  e->ctime_ns = st.ctime_ns;
  e->inode = st.inode;
  e->dev = st.dev;
  e->mode = st.mode;
}

// An external path this process cannot look at (inventory.h, kOther): the
// error's code, not its message (which names the path), is the hash.
inline void MarkUnreachable(const absl::Status& why, InventoryEntry* e) {
  *e = InventoryEntry{std::move(e->path), FileType::kOther};
  std::string tag = absl::StrCat("ste: cannot be looked at: ", absl::StatusCodeToString(why.code()));
  e->hash = XXH3_128bits(tag.data(), tag.size());
}

inline bool SameStat(const FileStat& a, const FileStat& b) {
  return a.type == b.type && a.size == b.size && a.mtime_ns == b.mtime_ns &&
         a.ctime_ns == b.ctime_ns && a.inode == b.inode && a.dev == b.dev;
}

inline bool SameStat(const InventoryEntry& e, const FileStat& st) {
  return e.type == st.type && e.size == st.size && e.mtime_ns == st.mtime_ns &&
         e.ctime_ns == st.ctime_ns && e.inode == st.inode && e.dev == st.dev;
}

inline std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir == "/") return absl::StrCat("/", AV(name));
  return absl::StrCat(AV(dir), "/", AV(name));
}

enum class Action : uint8_t { kDone, kHash, kResolveLink };

// (dev, inode) pairs.
using InodeSet = absl::flat_hash_set<std::pair<uint64_t, uint64_t>>;

struct Item {
  InventoryEntry entry;
  std::string abs;  // only for kHash / kResolveLink
  Action action = Action::kDone;
  bool external = false;  // one of ScanOptions::external_paths
};

// One directory's part of the walk's tree. Written by the one task that
// lists the directory; read after the walk.
struct DirResult {
  InventoryEntry entry;     // path and stat set by the parent, hash by the task
  std::vector<Item> files;  // every non-directory child, in name order
  std::vector<std::unique_ptr<DirResult>> subdirs;  // in name order
};

struct DirTask {
  std::string abs;
  DirResult* result = nullptr;
  bool external = false;  // an external directory: names-hash only
  // Where previous's entries below this directory are (a subrange of the
  // parent's); begin == end == {} when there is no previous.
  std::vector<InventoryEntry>::const_iterator prev_lo{}, prev_hi{};
  // Opened by the parent, or null: open `abs`.
  std::unique_ptr<Directory> dir;
};

inline std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// What to (re)open and (re)stat: an entry of an open directory, or a path.
struct FileRef {
  Directory* dir = nullptr;  // if set: `name` in it; `path` is its path
  std::string_view path;
  std::string_view name;
  bool follow = false;  // only without `dir`

  std::string Display() const {
    return dir ? JoinPath(path, name) : std::string(path);
  }
};

// Per-thread scratch: the read buffer and an XXH3 state.
struct Hasher {
  Hasher() : buffer(new char[kReadBufferSize]), state(XXH3_createState()) {}
  ~Hasher() { XXH3_freeState(state); }
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  std::unique_ptr<char[]> buffer;
  XXH3_state_t* state;
};

// A walk worker's scratch, reused from one directory to the next.
struct WalkScratch {
  Hasher hasher;
  std::vector<std::string> names;
  std::string names_buf;  // the names-hash input
};

class Scanner {
 public:
  Scanner(const ScanOptions& options, ScanFileSystem* fs,
          const Inventory* previous, std::string root, int threads)
      : options_(options),
        fs_(fs),
        previous_(previous),
        root_(std::move(root)),
        threads_(threads) {}

  struct Result {
    std::vector<InventoryEntry> entries;
    ScanStats stats;
  };
  absl::StatusOr<Result> Run(const FileStat& root_stat);

 private:
  using EntryIter = std::vector<InventoryEntry>::const_iterator;

  // What a walk worker leaves for the later phases.
  struct Pending {
    std::vector<Item*> to_hash;
    std::vector<Item*> links;
  };

  // Runs `body(thread_index)` on threads_ threads, the caller being one.
  template <typename Body>
  void RunParallel(Body body);

  void WalkWorker(Pending* pending);
  absl::Status ListOneDirectory(DirTask* task, WalkScratch* scratch,
                                std::vector<DirTask>* children);
  // Fills `item` from `st`; reuses previous's hash if the stat cache
  // applies, else hashes now (small files with `ref.dir`) or defers.
  absl::Status Classify(std::string path, const FileRef& ref,
                        const FileStat& st, const InventoryEntry* prev,
                        Hasher* hasher, Item* item);
  void Fail(absl::Status status);

  // Reads and hashes `ref` whose stat was `expected` (lstat, or stat when
  // ref.follow); re-reads on a change. Sets `*final_stat`.
  absl::StatusOr<XXH128_hash_t> HashFile(const FileRef& ref, FileStat expected,
                                         Hasher* hasher, FileStat* final_stat);
  absl::Status ResolveLink(Item* item, Hasher* hasher);

  // The entry for `path` in previous_, searching [*lo, hi) and moving *lo
  // forward (callers look up increasing paths).
  const InventoryEntry* FindPrevious(const std::string& path, EntryIter* lo,
                                     EntryIter hi) const;

  // Puts in regular_by_inode_ the regular files below `dir` whose
  // (dev, inode) is one of `wanted` (the links' targets).
  void IndexRegularFiles(const DirResult& dir, const InodeSet& wanted);
  // Appends everything below `dir`, in path order (a directory's own entry
  // comes before its contents, except the root's: see Run).
  void EmitBelow(DirResult* dir, std::vector<InventoryEntry>* out,
                 ScanStats* stats);

  const ScanOptions& options_;
  ScanFileSystem* const fs_;
  const Inventory* const previous_;
  const std::string root_;
  const int threads_;

  // The walk's shared stack.
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<DirTask> stack_;  // guarded by mu_
  int busy_ = 0;                // guarded by mu_
  absl::Status error_;          // guarded by mu_; first error wins
  std::atomic<bool> failed_{false};
  std::atomic<int> preopened_{0};  // waiting tasks holding an open dir

  std::atomic<uint64_t> files_hashed_{0};
  std::atomic<uint64_t> files_reused_{0};
  std::atomic<uint64_t> bytes_hashed_{0};
  std::atomic<uint64_t> retries_{0};

  // Regular entries of this scan by (dev, inode), for symlink targets.
  // Only those a link pointed at when the walk ended (Run).
  absl::flat_hash_map<std::pair<uint64_t, uint64_t>, const InventoryEntry*>
      regular_by_inode_;
};

template <typename Body>
void Scanner::RunParallel(Body body) {
  std::vector<std::thread> threads;
  for (int i = 1; i < threads_; ++i) threads.emplace_back(body, i);
  body(0);
  for (std::thread& t : threads) t.join();
}

}  // namespace inventory_internal
}  // namespace ste

#endif  // STE_INDEXER_SRC_INVENTORY_SCANNER_H_
