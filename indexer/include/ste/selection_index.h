// Copyright: the ste authors. The selection index: dependency key -> tests.
//
// The index answers "which tests depend on (path, kind)?" with a roaring
// bitmap of test ids. Test ids are dense, 0..N-1, assigned in *scope order*
// (see CompareScopes below) so that every scope's tests — the scope itself
// and everything beneath it — are one contiguous id range. A dependency
// recorded in scope S is a dependency of that whole range, which roaring
// stores as one run. SelectionIndexBuilder inverts per-test dependency sets
// into that map and writes the file; SelectionIndex reads it through mmap and
// touches only the bitmaps a query needs.
//
// clang-format off
// File format, version 1
// ======================
//
// All integers are unsigned little-endian. "offset" is an absolute byte
// offset from the start of the file unless it says "string offset", which is
// relative to the start of the string area.
//
//   <beginning of file>
//   [header]                      96 bytes
//   [bitmap 0][zero pad to 8]     the bitmap area: one bitmap per key, in
//   ...                           key-table order, each in roaring's portable
//   [bitmap K-1][zero pad to 8]   format (RoaringBitmap/RoaringFormatSpec)
//   [test table]                  N entries of 16 bytes
//   [key table]                   K entries of 40 bytes
//   [string area]                 raw bytes, no separators, no padding
//   <end of file>
//
// The tables sit after the bitmaps so that a writer can stream bitmaps
// without holding the whole image; a reader finds everything via the header.
//
// Header (96 bytes):
//    0  magic              8 bytes "STEIDX\0\1"
//    8  version            u32     1
//   12  header_size        u32     96
//   16  flags              u64     bit 0: the case section (below) is
//                                  there; a reader rejects any other bit
//   24  n_tests            u64     N (<= 2^32 - 1)
//   32  n_keys             u64     K
//   40  bitmaps_offset     u64     96
//   48  bitmaps_size       u64     multiple of 8
//   56  test_table_offset  u64     bitmaps_offset + bitmaps_size
//   64  key_table_offset   u64     test_table_offset + 16 * N
//   72  strings_offset     u64     key_table_offset + 40 * K
//   80  file_size          u64     strings_offset + size of the string area
//   88  checksum           u64     XXH3_64bits_withSeed(
//                                      file[test_table_offset, file_size),
//                                      seed = XXH3_64bits(file[0, 88)))
// The layout is canonical: a reader checks every equation above, so a file
// cut short anywhere, or grown, is rejected. The checksum covers the header
// and every table and string; each bitmap has its own checksum (key table),
// checked when that bitmap is read, so opening never reads the bitmap area.
//
// Test table entry (16 bytes), entries in strictly increasing scope order:
//    0  scope_offset       u64     string offset of the test's scope
//    8  scope_size         u32
//   12  flags              u32     bit 0: opaque; other bits must be 0
//
// Key table entry (40 bytes), entries strictly increasing by (path bytes
// compared as unsigned, kind); only keys with at least one test:
//    0  path_offset        u64     string offset of the path
//    8  path_size          u32
//   12  kind               u8      DepKind: 1 content, 2 absent, 3 listing
//   13  reserved           3 bytes 0
//   16  bitmap_offset      u64     inside the bitmap area, multiple of 8
//   24  bitmap_size        u64     > 0; the serialized bitmap's exact size
//   32  bitmap_checksum    u64     XXH3_64bits(
//                                      file[bitmap_offset, +bitmap_size))
// A bitmap holds test ids < N, and is run-optimized. Its bytes are verified
// (checksum, exact size, safe deserialisation, ids in range) each time it
// is read.
//
// Case section (only with flag bit 0; tests.unit = "case", case_split.h):
// the string area ends with it and a 16-byte footer,
//   footer: cases_offset u64 (absolute), cases_size u64, with
//           cases_offset >= strings_offset and
//           cases_offset + cases_size + 16 == file_size;
//   section:
//    0  n_cases            u64     C
//    8  n_own              u64     E
//   16  case entries       C x 16: test id u32 (< N), name_size u32 (> 0),
//                                  name_offset u64 (from the names' start);
//                                  test ids non-decreasing, and a test's
//                                  cases in the order they ran (one
//                                  process ran them): case id = position
//       own entries        E x 8:  key index u32 (< K), case id u32 (< C);
//                                  strictly increasing: "key k is an own
//                                  dependency of case c" (a key the test
//                                  file's shared part holds never is)
//       names              the case scope names (integrations/README.md),
//                          raw bytes
// The header checksum covers it (it lies in the tables' range). A case
// holds only its own part: everything else its test file depends on is
// the file's shared part, which selects the whole file. A test has all
// the cases it ran here or none (its run order was not known): a case
// sees the state the cases before it left, so a change to case c's own
// part selects c and every later case of its test. A file without the
// flag has no cases: every test file is selected whole.
//
// File format, version 2
// ======================
//
// What a writer produces today; a reader takes both versions. Version 1's
// header checksum covers every table, so opening reads them all: 36 MiB at
// 100,000 tests x 500,000 keys, 27-31 ms from a cold page cache before any
// query. Version 2 splits the key table into blocks, each with its own
// checksum, checked when a query first needs that block; opening reads the
// header, the test table, one fence per block and the outside and view
// paths. A query for 100 keys then reads ~100 blocks of a few KiB.
//
//   <beginning of file>
//   [header]                      128 bytes
//   [bitmap area]                 as in version 1
//   [key block 0]                 B = ceil(K / keys_per_block) blocks, back
//   ...                           to back, no padding; block j holds keys
//   [key block B-1]               [j * keys_per_block, +keys_per_block)
//   [test table]                  N entries of 16 bytes, as in version 1;
//                                 scope offsets count from the scope strings
//   [scope strings]               raw bytes
//   [fence table]                 B entries of 40 bytes
//   [fence strings]               raw bytes: each block's first path
//   [outside and view paths]      (below)
//   [case section and footer]     only with flag bit 0, as in version 1
//   <end of file>
//
// Header (128 bytes); 0..56 as in version 1, with version 2 and
// header_size 128:
//   56  key_blocks_offset  u64     bitmaps_offset + bitmaps_size
//   64  keys_per_block     u32     1 .. 65536 (the writer uses 64)
//   68  reserved           u32     0
//   72  test_table_offset  u64     the end of the last key block
//                                  (key_blocks_offset when K = 0)
//   80  scopes_offset      u64     test_table_offset + 16 * N
//   88  fences_offset      u64     >= scopes_offset
//   96  outside_offset     u64     >= fences_offset + 40 * B
//  104  reserved           u64     0
//  112  file_size          u64
//  120  checksum           u64     XXH3_64bits_withSeed(
//                                      file[test_table_offset, file_size),
//                                      seed = XXH3_64bits(file[0, 120)))
// The checksum covers everything but the bitmaps and the key blocks, which
// carry their own. The section ends are canonical, as in version 1: the
// scope strings end at fences_offset, the fence strings at outside_offset,
// the outside and view paths at the case section (or the file's end).
//
// Fence entry (40 bytes), one per key block, strictly increasing by key:
//    0  block_offset       u64     absolute; block 0 at key_blocks_offset,
//                                  block j+1 where block j ends
//    8  block_size         u64     >= 40 * (keys in the block)
//   16  block_checksum     u64     XXH3_64bits(file[block_offset, +size))
//   24  path_offset        u64     in the fence strings
//   32  path_size          u32
//   36  kind               u8      the block's first key is (path, kind)
//   37  reserved           3 bytes 0
//
// Key block: its keys' entries (40 bytes each, the version 1 key entry)
// and then their path bytes; an entry's path_offset counts from the start
// of those path bytes. Checked when first used (checksum, every range,
// kinds, the order inside the block, its first key equal to its fence and
// its last key below the next fence), so the blocks together hold the keys
// in strictly increasing order, as version 1's key table does.
//
// Outside and view paths: the distinct paths, in key order, of the keys
// whose path is absolute (outside the repository) or a view (inventory.h,
// "Views"): what `ste select` hashes besides the tree, without reading the
// key blocks.
//    0  count              u64     P
//    8  sizes              P x u32
//       bytes              the P paths, raw, back to back
//
// The case section is version 1's: own entries name keys by their index
// in key order (block j, slot s is key j * keys_per_block + s).
// clang-format on
//
// Scopes
// ======
// A scope is "//" followed by one or more names joined by '/': `//r`,
// `//r/tests/test_a.py`. A name is non-empty and holds any byte except '/'
// and NUL. Scope S contains scope T iff T == S or T starts with S + "/".
//
// Failure
// =======
// Every error is a value. A reader returns DataLoss for anything malformed
// (bad magic, checksum mismatch, truncation, offsets out of range, a corrupt
// bitmap or key block) and FailedPrecondition for a version it does not
// know; the message says which. A damaged key block (version 2) fails every
// query that needs it, never answers it smaller. The selection layer turns
// any such error into "run all tests".
#ifndef STE_SELECTION_INDEX_H_
#define STE_SELECTION_INDEX_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <roaring/roaring.hh>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ste/dependency.h"

namespace ste {

// ---------------------------------------------------------------------------
// Scopes.

// OK iff `scope` is a well-formed scope (see "Scopes" above); otherwise
// InvalidArgument naming the problem.
absl::Status ValidateScope(std::string_view scope);

// Total order on scopes in which every scope's descendants follow it
// contiguously: byte-wise (unsigned) comparison except that '/' sorts before
// every other byte. Plain byte order would put `//r/a.x` ('.' is 0x2E)
// between `//r/a` and `//r/a/b` ('/' is 0x2F). Returns <0, 0 or >0.
int CompareScopes(std::string_view a, std::string_view b);

// True iff `scope` is `ancestor` or lies beneath it.
bool ScopeContains(std::string_view ancestor, std::string_view scope);

// ---------------------------------------------------------------------------
// Building.

// Inverts per-test dependency sets into a selection index.
//
// Use: AddTests once; then, in any order and any number of times,
// InternPath / AddTestDependencies / AddScopeDependency / SetOpaque; then
// Finish or WriteFile once. Tests may be fed in any order; adding the same
// (test, key) twice is harmless.
//
// Thread safety: after AddTests returns, AddTestDependencies and SetOpaque
// may run concurrently from several threads as long as no two concurrent
// calls name the same test id (one test's result is handled by one thread).
// InternPath, AddScopeDependency and the const accessors may run concurrently
// with anything except AddTests/Finish/WriteFile, which must run alone.
//
// Memory: each test's dependency set is kept as a run-length list of path
// ids (about 8 bytes per run of consecutive ids) until Finish, which
// transposes them — in test-id order, so that a key's tests accumulate as
// runs — on `threads` threads, frees them, and builds one roaring bitmap per
// key. Measured at 1e5 tests x 5e5 paths x 3e9 pairs: bench/index/README.md.
class SelectionIndexBuilder {
 public:
  struct Options {
    // Threads used by Finish/WriteFile; 0 = std::thread::hardware_concurrency.
    int threads = 0;
    // The file format written: 2, or 1 (which readers still take; for tests
    // and benchmarks that compare the two).
    uint32_t format_version = 2;
    // Version 2's keys per key block, 1 .. 65536.
    uint32_t keys_per_block = 64;
  };

  SelectionIndexBuilder();
  explicit SelectionIndexBuilder(Options options);
  ~SelectionIndexBuilder();
  SelectionIndexBuilder(const SelectionIndexBuilder&) = delete;
  SelectionIndexBuilder& operator=(const SelectionIndexBuilder&) = delete;

  // Declares every test. Ids are assigned in CompareScopes order: after this
  // returns, test_scope(i) is the i-th scope in that order. Zero tests is
  // valid. Rejects (InvalidArgument) an invalid scope or a duplicate;
  // FailedPrecondition when called twice.
  absl::Status AddTests(std::vector<std::string> scopes);

  size_t test_count() const;
  // Requires: id < test_count().
  std::string_view test_scope(uint32_t id) const;
  // The id of the test whose scope is exactly `scope`.
  std::optional<uint32_t> FindTest(std::string_view scope) const;

  // The dense id of `path` (0, 1, 2… in first-seen order); the same path
  // always gets the same id. Any bytes are accepted. Thread-safe.
  uint32_t InternPath(std::string_view path);
  size_t path_count() const;

  // The hot path: adds (path_ids[i], kind) as dependencies of one test.
  // `path_ids` come from InternPath, in any order, duplicates allowed.
  // Rejects (InvalidArgument) an unknown test id, an unknown path id or an
  // invalid kind, and then adds nothing. Cost: a few ns per id when ids
  // come in long ascending stretches (sort them if you can); ids out of
  // order are sorted here, which costs more.
  absl::Status AddTestDependencies(uint32_t test_id,
                                   absl::Span<const uint32_t> path_ids,
                                   DepKind kind);
  // Convenience for one (path, kind) of one test.
  absl::Status AddTestDependency(uint32_t test_id, std::string_view path,
                                 DepKind kind);

  // Adds (path, kind) as a dependency of every test contained in `scope`
  // (the root scope: every test). A valid scope with no test under it is a
  // no-op. Rejects an invalid scope or kind.
  absl::Status AddScopeDependency(std::string_view scope, std::string_view path,
                                  DepKind kind);

  // Marks a test opaque: something it ran could not be traced, so the
  // selection layer always selects it.
  absl::Status SetOpaque(uint32_t test_id);

  // Test cases (case_split.h): case `name` (its case scope name) of test
  // `test_id` ran as the test's `run`-th case (0 first), and (path_ids[i],
  // kind) are its own dependencies (none is fine: a case that owns nothing
  // still runs after the others). They must be dependencies of the test
  // too (AddTestDependencies): an own key that no test has is left out.
  // Calls for one case add up; a run given two names is InvalidArgument.
  // Feed a test's every case or none of it: a reader takes the cases after
  // a case as all that ran after it. Thread-safe as AddScopeDependency.
  absl::Status AddCase(uint32_t test_id, std::string_view name, uint32_t run,
                       absl::Span<const uint32_t> path_ids, DepKind kind);

  // Builds the index image in memory (format above). Every bitmap is
  // runOptimize'd and shrunk first. Single use: afterwards the builder is
  // spent and every call returns FailedPrecondition.
  absl::StatusOr<std::string> Finish();

  // Like Finish, but streams the image into `path` atomically: a temporary
  // file in the same directory, fsync, rename over `path`, fsync of the
  // directory. On failure `path` is untouched and the temporary removed.
  absl::Status WriteFile(const std::string& path);

  // What the last Finish/WriteFile did, for benchmarks and logs.
  struct Stats {
    double transpose_seconds = 0;  // rows -> columns
    double compact_seconds = 0;    // sort keys, size bitmaps (compacted
                                   // during the transpose already)
    double write_seconds = 0;      // serialize, checksum, write
    uint64_t pairs = 0;            // (test, key) pairs from per-test deps
    uint64_t runs = 0;             // runs of consecutive tests they formed
    uint64_t keys = 0;
    uint64_t bytes = 0;  // size of the image
  };
  const Stats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------
// Reading.

// A read-only view of one index file or buffer. Opening validates the header
// and the tables that the header checksum covers (magic, version, layout
// equations, checksum, every entry's ranges, the orders) but reads no
// bitmap, and in version 2 no key block. Queries binary-search the keys and
// read only the bitmaps (and key blocks) they need; a bitmap or key block
// whose bytes do not match its checksum makes that query fail (DataLoss).
//
// Thread safety: every method is const and may run concurrently.
// The file must not be modified in place while open (writers replace it by
// rename, which is safe).
class SelectionIndex {
 public:
  // Maps the file at `path`. Errors name the path.
  static absl::StatusOr<std::unique_ptr<SelectionIndex>> Open(
      const std::string& path);
  // Takes ownership of an in-memory image (e.g. a blob from the store).
  static absl::StatusOr<std::unique_ptr<SelectionIndex>> FromBytes(
      std::string bytes);

  ~SelectionIndex();
  SelectionIndex(const SelectionIndex&) = delete;
  SelectionIndex& operator=(const SelectionIndex&) = delete;

  size_t test_count() const { return n_tests_; }
  // Requires: id < test_count().
  std::string_view test_scope(uint32_t id) const;
  // Requires: id < test_count().
  bool opaque(uint32_t id) const;
  // The id of the test whose scope is exactly `scope`. O(log N).
  std::optional<uint32_t> FindTest(std::string_view scope) const;
  // The tests contained in `scope`, as the id range [first, second).
  // Empty (first == second) when none. O(log N).
  std::pair<uint32_t, uint32_t> TestsUnder(std::string_view scope) const;
  // Every opaque test.
  Roaring OpaqueTests() const;

  // The file format version (1 or 2).
  uint32_t format_version() const { return version_; }

  size_t key_count() const { return n_keys_; }
  // The i-th key, in DepKey order; DataLoss when its key block is damaged.
  // Requires: i < key_count().
  absl::StatusOr<DepKey> KeyAt(size_t i) const;
  // The tests of the i-th key, verified. Requires: i < key_count().
  absl::StatusOr<Roaring> BitmapAt(size_t i) const;
  // Reads and checks every key block and bitmap: OK iff every query can be
  // answered. O(index size).
  absl::Status VerifyAll() const;
  // The distinct paths, in key order, of the keys whose path is absolute or
  // a view (inventory.h, "Views"): what a select hashes besides the tree.
  // Read at Open; no key block is touched.
  const std::vector<std::string_view>& OutsideAndViewPaths() const {
    return outside_paths_;
  }

  // The tests that depend on `key`; empty when the index has no such key.
  // O(log K) plus the size of that one bitmap.
  absl::StatusOr<Roaring> Lookup(const DepKey& key) const;
  absl::StatusOr<Roaring> Lookup(std::string_view path, DepKind kind) const;
  // The union over `keys` (absent keys contribute nothing); reads only their
  // bitmaps and unites them in one roaring_bitmap_or_many.
  absl::StatusOr<Roaring> Union(absl::Span<const DepKey> keys) const;
  // Every key on `path` (each kind present) with its tests, in kind order.
  // For `ste why PATH`.
  absl::StatusOr<std::vector<std::pair<DepKey, Roaring>>> KeysMatchingPath(
      std::string_view path) const;
  // Every key on a view path of directory `dir` ("<dir>/\x01<view>", for
  // "." "\x01<view>"; inventory.h, "Views") with its tests, in key order.
  // For `ste why DIR`.
  absl::StatusOr<std::vector<std::pair<DepKey, Roaring>>> ViewsOf(
      std::string_view dir) const;
  // Every key whose bitmap holds `test_id`, in DepKey order. Reads every
  // bitmap: O(index size). For `ste deps TEST`. Requires: id < test_count().
  absl::StatusOr<std::vector<DepKey>> DependenciesOf(uint32_t test_id) const;

  // One JSON object per line per test, in id order:
  //   {"test":"//r/t.py","opaque":false,"deps":[{"path":"a","kind":"content"}]}
  // deps in DepKey order. Strings are JSON-escaped; a string that is not
  // valid UTF-8 has each bad byte replaced by U+FFFD and is followed by a
  // "test_hex"/"path_hex" field with the raw bytes in lowercase hex. Two
  // indexes with the same dump select identically. Reads every bitmap.
  absl::StatusOr<std::string> DumpJson() const;

  // Test cases (the case section; none in an index without it). A test's
  // cases have consecutive ids, in the order they ran.
  size_t case_count() const { return n_cases_; }
  // Requires: c < case_count().
  uint32_t case_test(uint32_t c) const;
  std::string_view case_name(uint32_t c) const;  // its case scope name
  // The cases of which `key` is an own dependency, in id order; empty when
  // none or the index has no such key. O(log K + log E).
  absl::StatusOr<std::vector<uint32_t>> CasesOf(const DepKey& key) const;

  // Size of the image in bytes.
  size_t size_bytes() const { return size_; }

 private:
  // A key as its entry says, once its block is verified.
  struct KeyRef {
    std::string_view path;
    uint8_t kind = 0;
    const char* entry = nullptr;  // the 40-byte key entry
  };

  SelectionIndex() = default;
  absl::Status Validate(std::string_view what);
  template <typename Corrupt>
  absl::Status ValidateTests(uint64_t n_tests, uint64_t scopes, uint64_t scopes_end,
                             const Corrupt& corrupt);
  template <typename Corrupt>
  absl::Status ValidateKeysV1(const Corrupt& corrupt);
  template <typename Corrupt>
  absl::Status ValidateFences(uint64_t fence_strings, uint64_t fence_strings_end,
                              const Corrupt& corrupt);
  template <typename Corrupt>
  absl::Status ValidateOutsidePaths(uint64_t at, uint64_t end, const Corrupt& corrupt);
  template <typename Corrupt>
  absl::Status ValidateCases(uint64_t strings, const Corrupt& corrupt);
  // Version 2: reads and checks key block j once (thread-safe).
  absl::Status EnsureBlock(size_t j) const;
  // The i-th key; its block verified.
  absl::StatusOr<KeyRef> KeyRefAt(size_t i) const;
  // Index of the first key >= (path, kind) in key order.
  absl::StatusOr<size_t> LowerBoundKey(std::string_view path, uint8_t kind) const;
  // Version 2: the block that holds the first key >= (path, kind), when it
  // is not the first key of the next block (then B).
  size_t BlockOf(std::string_view path, uint8_t kind) const;
  // The index of the key equal to `key`, or n_keys_ when none.
  absl::StatusOr<size_t> FindKey(std::string_view path, uint8_t kind) const;
  absl::StatusOr<Roaring> BitmapOf(size_t i, const KeyRef& k) const;
  // Asks the kernel to read [begin, end) of the mapping ahead.
  void WillNeed(uint64_t begin, uint64_t end) const;
  const char* test_entry(uint32_t id) const;
  const char* fence_entry(size_t j) const;
  std::string_view fence_path(size_t j) const;

  const char* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // munmap'ed on destruction when set
  std::string owned_;        // the image when built from bytes
  uint32_t version_ = 0;
  size_t n_tests_ = 0;
  size_t n_keys_ = 0;
  uint64_t bitmaps_offset_ = 0;
  uint64_t bitmaps_end_ = 0;
  uint64_t test_table_offset_ = 0;
  uint64_t scopes_offset_ = 0;      // the start of the test scopes' strings
  uint64_t key_table_offset_ = 0;   // version 1
  uint64_t strings_offset_ = 0;     // version 1: the string area
  size_t keys_per_block_ = 0;       // version 2
  size_t n_blocks_ = 0;             // version 2
  uint64_t fences_offset_ = 0;      // version 2
  uint64_t fence_strings_ = 0;      // version 2
  // Version 2: 1 once block j is verified (a damaged one stays 0).
  std::unique_ptr<std::atomic<uint8_t>[]> block_ok_;
  std::vector<std::string_view> outside_paths_;
  size_t n_cases_ = 0;
  size_t n_own_ = 0;
  const char* cases_ = nullptr;  // the case entries
  const char* own_ = nullptr;    // the own entries
  const char* case_names_ = nullptr;
};

}  // namespace ste

#endif  // STE_SELECTION_INDEX_H_
