// A baseline as one file: `ste baseline export` writes it, `ste baseline
// import` reads it into another store. For CIs that carry state in a cache
// or an artifact instead of a database: the file holds everything a select
// needs (the baseline's commit and MRI, its selection index, its
// inventory, every test's result and duration), checked end to end.
//
// clang-format off
// File format, version 2 (version 1, without the blobs section, is read too)
// =====================
//
// All integers little-endian; offsets from the start of the file.
//
//   [header]          64 bytes
//   [section table]   32 bytes per section; 5 sections (version 1: 4)
//   [section 1]       meta        each section followed by zero bytes up
//   [section 2]       index       to a multiple of 8
//   [section 3]       inventory
//   [section 4]       results
//   [section 5]       blobs       (version 2)
//   [file checksum]   16 bytes
//
// Header (64 bytes):
//    0  magic           8 bytes "STEBASE\0"
//    8  version         u32     2 (or 1)
//   12  header_size     u32     64
//   16  flags           u64     0 (no flag defined; a reader rejects any)
//   24  section_count   u32     5 (version 1: 4)
//   28  reserved        u32     0
//   32  file_size       u64     the whole file, trailing checksum included
//   40  reserved        16 bytes 0
//   56  table_checksum  u64     XXH3_64bits(file[0, 56) followed by the
//                               section table)
//
// Section table entry (32 bytes), one per section, in the order above:
//    0  kind            u32     1 meta, 2 index, 3 inventory, 4 results, 5 blobs
//    4  reserved        u32     0
//    8  offset          u64     the first: 64 + 32 * section_count; each
//                               next: the previous end rounded up to 8
//   16  size            u64
//   24  checksum        u64     XXH3_64bits(file[offset, offset + size))
// and file_size = (the last section's end rounded up to 8) + 16.
//
// File checksum (last 16 bytes): XXH3_128bits of every byte before it,
// canonical (big-endian) form, as xxh128sum prints it.
//
// meta (44 + commit_size bytes):
//    0  origin_id       i64     the baseline's id in the store it came from
//    8  mri             i64     >= 0
//   16  created_unix    i64     when its record build began (seconds)
//   24  completed_unix  i64     when it completed
//   32  exported_unix   i64     when this file was written
//   40  commit_size     u32     <= 1024
//   44  commit          the git commit id ("" outside git), no NUL byte
//
// index:     the selection index image, as stored (selection_index.h:
//            its own magic, version and checksums).
// inventory: the inventory image, as stored (inventory.h: likewise).
//
// results (8 + the entries' sizes):
//    0  count           u64
//    8  entries, each 20 + test_size bytes:
//        +0  test_size  u32     1 ..  4096
//        +4  outcome    u8      TestOutcome: 0 passed, 1 failed, 2 error
//        +5  opaque     u8      0 or 1
//        +6  reserved   u16     0
//        +8  exit_code  i32
//       +12  seconds    f64     IEEE-754 bits; finite, >= 0 (wall time)
//       +20  test       the repo-relative test path
//    entries strictly increasing by test (bytes compared unsigned).
//
// blobs (8 + the entries' sizes; version 2): the baseline's optional blobs
// (baseline_loader.h: "flaky", "opaque", "writes"), as the store has them
//    0  count           u64
//    8  entries, each 16 + name_size + size bytes:
//        +0  name_size  u32     1 .. 64
//        +4  reserved   u32     0
//        +8  size       u64
//       +16  name, then its bytes
//    names strictly increasing, each one of those three; "flaky" empty or
//    ending in a NUL byte, "opaque" and "writes" as DecodeWrites reads.
// clang-format on
//
// A reader rejects, with a message naming the file and what is wrong
// (every check runs before anything is stored): an empty file, a
// directory, a file that is not one of these (magic), another version
// (FailedPrecondition: "format version N; this ste reads versions 1 to
// 2"), a header or
// section table that does not hold (size, count, flags, reserved fields,
// offsets, kinds out of order: "damaged"), a file shorter or longer than
// its header says ("truncated" / "trailing bytes"), a table checksum
// mismatch ("header damaged"), a section checksum mismatch (naming the
// section), nonzero padding, a file checksum mismatch, a meta section of
// the wrong size or with a bad commit, an index that SelectionIndex does
// not open or with any bitmap that does not verify, an inventory that
// Inventory::Parse refuses, results that are malformed (sizes, unknown
// outcome, opaque not 0/1, nonzero reserved, a negative or non-finite
// duration, an invalid test path, out of order or duplicated), and
// results whose tests are not exactly the index's tests, a blobs section
// that is malformed or names a blob ste does not know. Every error but
// the version is DataLoss.
//
// Writing is atomic: a temp file in FILE's directory, written, fsynced,
// renamed over FILE, and the directory fsynced; a killed export leaves FILE
// as it was (and maybe a ".tmp-FILE-..." file beside it), never half a
// file under FILE's name.
#ifndef STE_BASELINE_ARCHIVE_H_
#define STE_BASELINE_ARCHIVE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ste/baseline_store.h"

namespace ste {

inline constexpr char kBaselineArchiveMagic[8] = {'S', 'T', 'E', 'B', 'A', 'S', 'E', '\0'};
inline constexpr uint32_t kBaselineArchiveVersion = 2;  // written
inline constexpr uint32_t kBaselineArchiveOldestVersion = 1;  // read

// A complete baseline, out of any store.
struct BaselineArchive {
  int64_t origin_id = 0;  // its id where it was recorded
  std::string commit;
  int64_t mri = 0;
  int64_t created_unix = 0;
  int64_t completed_unix = 0;
  int64_t exported_unix = 0;
  std::string index;      // the selection index image
  std::string inventory;  // the inventory image
  std::vector<TestResult> results;  // sorted by test
  // The optional blobs (flaky, opaque, writes), by name, sorted; none in a
  // version-1 file.
  std::vector<std::pair<std::string, std::string>> blobs;
};

// OK iff `archive` is what a reader accepts (everything the format says
// above, the index and inventory read with their own readers). DataLoss
// naming what is wrong otherwise.
absl::Status VerifyBaselineArchive(const BaselineArchive& archive);

// The file's bytes. Verifies first (an export never writes what an import
// would refuse).
absl::StatusOr<std::string> EncodeBaselineArchive(const BaselineArchive& archive);

// Reads `bytes` (named `what` in messages), checking everything listed
// above.
absl::StatusOr<BaselineArchive> DecodeBaselineArchive(absl::string_view bytes,
                                                      absl::string_view what);

// Reads and decodes the file at `path`.
absl::StatusOr<BaselineArchive> ReadBaselineArchiveFile(const std::string& path);

// Writes `archive` to `path` atomically and durably (see above).
absl::Status WriteBaselineArchiveFile(const BaselineArchive& archive, const std::string& path);

// The complete baseline `id` of `store` (id <= 0: the latest complete one,
// by mri then id) as an archive, its blobs checked against their recorded
// hashes. NotFound when there is none; FailedPrecondition for a baseline
// that is not complete.
absl::StatusOr<BaselineArchive> ArchiveFromStore(Store& store, int64_t id);

struct ImportOutcome {
  int64_t baseline = 0;    // the baseline in the store now holding it
  bool already = false;    // true: it was there, nothing was written
};

// Stores `archive` (verified first) in `store` as a complete baseline with
// its commit, mri and times: Begin, the blobs, the results, then
// CompleteImported. A complete baseline with the same commit, mri, blobs
// and results already in the store makes this a no-op (already = true);
// that is checked before anything is written, and again atomically at the
// end (a concurrent import of the same file wins, and this one's rows and
// files are removed). On any error the partly written baseline is removed.
absl::StatusOr<ImportOutcome> ImportBaseline(Store& store, const BaselineArchive& archive);

}  // namespace ste

#endif  // STE_BASELINE_ARCHIVE_H_
