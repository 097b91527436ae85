// Copyright: the ste authors. SelectionIndex: validation and queries over a
// mapped index image (format: ste/selection_index.h).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "roaring_validate.h"
#include "selection_index_format.h"
#include "ste/json.h"
#include "ste/selection_index.h"
#include "ste/status_macros.h"

namespace ste {

namespace fmt = index_format;

namespace {

int CompareKey(std::string_view path_a, uint8_t kind_a, std::string_view path_b,
               uint8_t kind_b) {
  const int c = path_a.compare(path_b);
  if (c != 0) return c;
  return kind_a < kind_b ? -1 : (kind_a > kind_b ? 1 : 0);
}

// a + b <= limit without overflow.
bool FitsWithin(uint64_t a, uint64_t b, uint64_t limit) {
  return a <= limit && b <= limit - a;
}

// One key entry's checks: its path inside `paths_size`, its kind and
// reserved bytes, its bitmap inside the bitmap area. "" when sound.
std::string KeyEntryDefect(const char* e, uint64_t paths_size, uint64_t bitmaps_offset,
                           uint64_t bitmaps_end) {
  const uint64_t off = fmt::DecodeU64(e + fmt::kKeyPathOffset);
  const uint32_t len = fmt::DecodeU32(e + fmt::kKeyPathSize);
  const uint8_t kind = static_cast<uint8_t>(e[fmt::kKeyKind]);
  const uint64_t bm_off = fmt::DecodeU64(e + fmt::kKeyBitmapOffset);
  const uint64_t bm_size = fmt::DecodeU64(e + fmt::kKeyBitmapSize);
  if (!FitsWithin(off, len, paths_size)) return "path out of the string area";
  if (!IsValidDepKind(kind) || e[fmt::kKeyReserved] != 0 || e[fmt::kKeyReserved + 1] != 0 ||
      e[fmt::kKeyReserved + 2] != 0) {
    return "bad kind or reserved bytes";
  }
  if (bm_size == 0 || bm_off < bitmaps_offset || bm_off % fmt::kBitmapAlign != 0 ||
      !FitsWithin(bm_off, bm_size, bitmaps_end)) {
    return absl::StrCat("bitmap [", bm_off, ", +", bm_size, ") outside the bitmap area");
  }
  return "";
}

}  // namespace

SelectionIndex::~SelectionIndex() {
  if (mapping_ != nullptr) munmap(mapping_, size_);
}

absl::StatusOr<std::unique_ptr<SelectionIndex>> SelectionIndex::Open(
    const std::string& path) {
  const std::string what = absl::StrCat("selection index ", path);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string msg = absl::StrCat(what, ": open: ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(msg) : absl::InternalError(msg);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return absl::InternalError(
        absl::StrCat(what, ": stat: ", std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(what, ": not a file"));
  }
  auto index = std::unique_ptr<SelectionIndex>(new SelectionIndex());
  index->size_ = static_cast<size_t>(st.st_size);
  if (index->size_ < fmt::kHeaderSize) {
    close(fd);
    return absl::DataLossError(absl::StrCat(what, ": truncated: ", index->size_,
                                            " bytes, the header alone needs ",
                                            fmt::kHeaderSize));
  }
  void* m = mmap(nullptr, index->size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  if (m == MAP_FAILED) {
    close(fd);
    return absl::InternalError(
        absl::StrCat(what, ": mmap: ", std::strerror(err)));
  }
  // No read-around on a page fault (up to read_ahead_kb, often MiBs, of
  // bitmaps around the header or a key block): what a query reads, it asks
  // for first (WillNeed).
  madvise(m, index->size_, MADV_RANDOM);
  index->mapping_ = m;
  index->data_ = static_cast<const char*>(m);
  close(fd);
  STE_RETURN_IF_ERROR(index->Validate(what));
  return index;
}

absl::StatusOr<std::unique_ptr<SelectionIndex>> SelectionIndex::FromBytes(
    std::string bytes) {
  auto index = std::unique_ptr<SelectionIndex>(new SelectionIndex());
  index->owned_ = std::move(bytes);
  index->data_ = index->owned_.data();
  index->size_ = index->owned_.size();
  STE_RETURN_IF_ERROR(index->Validate("selection index (in memory)"));
  return index;
}

absl::Status SelectionIndex::Validate(std::string_view what) {
  const absl::string_view prefix(what.data(), what.size());
  auto corrupt = [&](auto&&... parts) {
    return absl::DataLossError(absl::StrCat(prefix, ": ", parts...));
  };
  if (size_ < fmt::kHeaderSize) {
    return corrupt("truncated: ", size_, " bytes, the header alone needs ",
                   fmt::kHeaderSize);
  }
  const char* h = data_;
  if (std::memcmp(h + fmt::kOffMagic, fmt::kMagic, sizeof(fmt::kMagic)) != 0) {
    return corrupt("bad magic (not a selection index)");
  }
  const uint32_t version = fmt::DecodeU32(h + fmt::kOffVersion);
  if (version != fmt::kVersion && version != fmt::kVersion1) {
    return absl::FailedPreconditionError(
        absl::StrCat(prefix, ": unsupported format version ", version,
                     " (this build reads versions 1 and ", fmt::kVersion, ")"));
  }
  version_ = version;
  const uint32_t header_size = version == 1 ? fmt::kHeaderSize : fmt::kHeaderSizeV2;
  if (size_ < header_size) {
    return corrupt("truncated: ", size_, " bytes, the header alone needs ", header_size);
  }
  if (fmt::DecodeU32(h + fmt::kOffHeaderSize) != header_size) {
    return corrupt("bad header size ", fmt::DecodeU32(h + fmt::kOffHeaderSize));
  }
  const uint64_t flags = fmt::DecodeU64(h + fmt::kOffFlags);
  const uint64_t n_tests = fmt::DecodeU64(h + fmt::kOffNTests);
  const uint64_t n_keys = fmt::DecodeU64(h + fmt::kOffNKeys);
  const uint64_t bitmaps_offset = fmt::DecodeU64(h + fmt::kOffBitmapsOffset);
  const uint64_t bitmaps_size = fmt::DecodeU64(h + fmt::kOffBitmapsSize);
  const uint64_t file_size =
      fmt::DecodeU64(h + (version == 1 ? fmt::kOffFileSize : fmt::kOff2FileSize));
  if (file_size != size_) {
    return corrupt(file_size > size_ ? "truncated: " : "trailing bytes: ",
                   size_, " bytes, header says ", file_size);
  }
  if ((flags & ~fmt::kFlagCases) != 0) return corrupt("unknown header flags ", flags);
  if (n_tests > UINT32_MAX) return corrupt("test count ", n_tests, " too big");
  if (bitmaps_offset != header_size) {
    return corrupt("bitmap area offset ", bitmaps_offset, " is not ", header_size);
  }
  // Each section starts where the previous one ends; multiplications can't
  // overflow once counts are bounded by the file size.
  const uint64_t after_bitmaps =
      fmt::DecodeU64(h + (version == 1 ? fmt::kOffTestTableOffset : fmt::kOff2KeyBlocksOffset));
  if (bitmaps_size % fmt::kBitmapAlign != 0 ||
      !FitsWithin(bitmaps_offset, bitmaps_size, size_) ||
      after_bitmaps != bitmaps_offset + bitmaps_size) {
    return corrupt("bitmap area [", bitmaps_offset, ", +", bitmaps_size, ") does not end at the ",
                   version == 1 ? "test table (" : "key blocks (", after_bitmaps, ")");
  }
  bitmaps_offset_ = bitmaps_offset;
  bitmaps_end_ = bitmaps_offset + bitmaps_size;
  const uint64_t test_table =
      version == 1 ? after_bitmaps : fmt::DecodeU64(h + fmt::kOff2TestTableOffset);
  if (test_table < after_bitmaps || test_table > size_) {
    return corrupt("test table at ", test_table, " outside the file");
  }
  if (n_tests > size_ / fmt::kTestEntrySize ||
      !FitsWithin(test_table, n_tests * fmt::kTestEntrySize, size_)) {
    return corrupt("test table of ", n_tests, " entries at ", test_table, " past the end");
  }
  const uint64_t tests_end = test_table + n_tests * fmt::kTestEntrySize;
  uint64_t scopes = 0, scopes_end = 0, fences = 0, outside = 0, n_blocks = 0, kpb = 0;
  if (version == 1) {
    const uint64_t key_table = fmt::DecodeU64(h + fmt::kOffKeyTableOffset);
    const uint64_t strings = fmt::DecodeU64(h + fmt::kOffStringsOffset);
    if (key_table != tests_end) {
      return corrupt("test table of ", n_tests, " entries at ", test_table,
                     " does not end at the key table (", key_table, ")");
    }
    if (n_keys > size_ / fmt::kKeyEntrySize ||
        !FitsWithin(key_table, n_keys * fmt::kKeyEntrySize, size_) ||
        strings != key_table + n_keys * fmt::kKeyEntrySize) {
      return corrupt("key table of ", n_keys, " entries at ", key_table,
                     " does not end at the string area (", strings, ")");
    }
    key_table_offset_ = key_table;
    strings_offset_ = scopes = strings;
    scopes_end = size_;
  } else {
    kpb = fmt::DecodeU32(h + fmt::kOff2KeysPerBlock);
    scopes = fmt::DecodeU64(h + fmt::kOff2ScopesOffset);
    fences = fmt::DecodeU64(h + fmt::kOff2FencesOffset);
    outside = fmt::DecodeU64(h + fmt::kOff2OutsidePathsOffset);
    if (fmt::DecodeU32(h + fmt::kOff2Reserved) != 0 || fmt::DecodeU64(h + fmt::kOff2Reserved2) != 0) {
      return corrupt("reserved header fields are not 0");
    }
    if (kpb == 0 || kpb > fmt::kMaxKeysPerBlock) {
      return corrupt("keys per block ", kpb, " not in 1 .. ", fmt::kMaxKeysPerBlock);
    }
    // Every key takes at least its 40-byte entry in the key blocks.
    if (n_keys > (test_table - after_bitmaps) / fmt::kKeyEntrySize) {
      return corrupt("key count ", n_keys, " does not fit in the key blocks [", after_bitmaps,
                     ", ", test_table, ")");
    }
    n_blocks = n_keys == 0 ? 0 : (n_keys - 1) / kpb + 1;
    if (scopes != tests_end) {
      return corrupt("test table of ", n_tests, " entries at ", test_table,
                     " does not end at the scope strings (", scopes, ")");
    }
    if (fences < scopes || !FitsWithin(fences, n_blocks * fmt::kFenceEntrySize, size_) ||
        outside < fences + n_blocks * fmt::kFenceEntrySize || outside > size_) {
      return corrupt("fence table of ", n_blocks, " entries at ", fences,
                     " out of place (scope strings at ", scopes, ", outside paths at ", outside,
                     ")");
    }
    scopes_end = fences;
  }
  if (mapping_ != nullptr) {
    // The checksum reads every table it covers: from a cold page cache,
    // one large read-ahead beats faulting them in a window at a time.
    // Version 1's tables are all of the keys (36 MiB at 500,000 keys): read
    // them as before version 2, with the kernel's read-around.
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t from = test_table & ~(page - 1);
    if (version == 1) {
      madvise(const_cast<char*>(data_), size_, MADV_NORMAL);
      madvise(const_cast<char*>(data_) + from, size_ - from, MADV_WILLNEED);
    } else {
      WillNeed(test_table, size_);
    }
#ifdef MADV_POPULATE_READ
    // And map them in one call rather than ~1500 page faults (Linux 5.14+;
    // older kernels answer EINVAL and the faults happen as before).
    madvise(const_cast<char*>(data_) + from, size_ - from, MADV_POPULATE_READ);
#endif
  }
  const size_t checksum_at = version == 1 ? fmt::kOffChecksum : fmt::kOff2Checksum;
  const uint64_t checksum = fmt::DecodeU64(h + checksum_at);
  const uint64_t actual =
      fmt::HeaderChecksum(h, data_ + test_table, size_ - test_table, checksum_at);
  if (checksum != actual) {
    return corrupt("checksum mismatch over header and tables");
  }
  n_tests_ = n_tests;
  n_keys_ = n_keys;
  test_table_offset_ = test_table;
  scopes_offset_ = scopes;

  // Every entry's ranges, and the orders binary search relies on. The
  // checksum makes these hold for anything our writer produced; they are
  // checked anyway so that no input can make a query read out of bounds.
  STE_RETURN_IF_ERROR(ValidateTests(n_tests, scopes, scopes_end, corrupt));
  if (version == 1) {
    STE_RETURN_IF_ERROR(ValidateKeysV1(corrupt));
    if (flags & fmt::kFlagCases) STE_RETURN_IF_ERROR(ValidateCases(strings_offset_, corrupt));
    for (size_t i = 0; i < n_keys_; ++i) {  // the paths a select hashes
      const std::string_view p = KeyRefAt(i)->path;
      if (fmt::IsOutsideOrViewPath(p) &&
          (outside_paths_.empty() || outside_paths_.back() != p)) {
        outside_paths_.push_back(p);
      }
    }
    return absl::OkStatus();
  }
  keys_per_block_ = kpb;
  n_blocks_ = n_blocks;
  fences_offset_ = fences;
  fence_strings_ = fences + n_blocks * fmt::kFenceEntrySize;
  uint64_t outside_end = size_;
  if (flags & fmt::kFlagCases) {
    STE_RETURN_IF_ERROR(ValidateCases(outside, corrupt));
    outside_end = fmt::DecodeU64(data_ + size_ - fmt::kCaseFooterSize);
  }
  STE_RETURN_IF_ERROR(ValidateFences(after_bitmaps, outside, corrupt));
  STE_RETURN_IF_ERROR(ValidateOutsidePaths(outside, outside_end, corrupt));
  block_ok_ = std::make_unique<std::atomic<uint8_t>[]>(n_blocks);
  for (size_t j = 0; j < n_blocks; ++j) block_ok_[j].store(0, std::memory_order_relaxed);
  return absl::OkStatus();
}

template <typename Corrupt>
absl::Status SelectionIndex::ValidateTests(uint64_t n_tests, uint64_t scopes,
                                           uint64_t scopes_end, const Corrupt& corrupt) {
  const uint64_t scopes_size = scopes_end - scopes;
  std::string_view previous_scope;
  for (uint64_t t = 0; t < n_tests; ++t) {
    const char* e = test_entry(static_cast<uint32_t>(t));
    const uint64_t off = fmt::DecodeU64(e + fmt::kTestScopeOffset);
    const uint32_t len = fmt::DecodeU32(e + fmt::kTestScopeSize);
    const uint32_t tflags = fmt::DecodeU32(e + fmt::kTestFlags);
    if (!FitsWithin(off, len, scopes_size)) {
      return corrupt("test ", t, ": scope out of the string area");
    }
    if ((tflags & ~fmt::kKnownTestFlags) != 0) {
      return corrupt("test ", t, ": unknown flags ", tflags);
    }
    // Scope syntax is the writer's (ValidateScope in AddTests, and the
    // checksum); what lookups rely on is the order, checked here.
    const std::string_view scope(data_ + scopes + off, len);
    if (t > 0 && CompareScopes(previous_scope, scope) >= 0) {
      return corrupt("test ", t, ": scopes out of order");
    }
    previous_scope = scope;
  }
  return absl::OkStatus();
}

template <typename Corrupt>
absl::Status SelectionIndex::ValidateKeysV1(const Corrupt& corrupt) {
  std::string_view previous_path;
  uint8_t previous_kind = 0;
  for (uint64_t i = 0; i < n_keys_; ++i) {
    const char* e = data_ + key_table_offset_ + i * fmt::kKeyEntrySize;
    const std::string defect =
        KeyEntryDefect(e, size_ - strings_offset_, bitmaps_offset_, bitmaps_end_);
    if (!defect.empty()) return corrupt("key ", i, ": ", defect);
    const uint8_t kind = static_cast<uint8_t>(e[fmt::kKeyKind]);
    const std::string_view path(data_ + strings_offset_ + fmt::DecodeU64(e + fmt::kKeyPathOffset),
                                fmt::DecodeU32(e + fmt::kKeyPathSize));
    if (i > 0 && CompareKey(previous_path, previous_kind, path, kind) >= 0) {
      return corrupt("key ", i, ": keys out of order");
    }
    previous_path = path;
    previous_kind = kind;
  }
  return absl::OkStatus();
}

template <typename Corrupt>
absl::Status SelectionIndex::ValidateFences(uint64_t key_blocks, uint64_t fence_strings_end,
                                            const Corrupt& corrupt) {
  const uint64_t strings_size = fence_strings_end - fence_strings_;
  uint64_t expected = key_blocks;
  std::string_view previous_path;
  uint8_t previous_kind = 0;
  for (size_t j = 0; j < n_blocks_; ++j) {
    const char* f = fence_entry(j);
    const uint64_t at = fmt::DecodeU64(f + fmt::kFenceBlockOffset);
    const uint64_t size = fmt::DecodeU64(f + fmt::kFenceBlockSize);
    const uint64_t keys = std::min<uint64_t>(keys_per_block_, n_keys_ - j * keys_per_block_);
    if (at != expected || size < keys * fmt::kKeyEntrySize ||
        !FitsWithin(at, size, test_table_offset_)) {
      return corrupt("key block ", j, " [", at, ", +", size, ") out of place");
    }
    expected = at + size;
    const uint64_t off = fmt::DecodeU64(f + fmt::kFencePathOffset);
    const uint32_t len = fmt::DecodeU32(f + fmt::kFencePathSize);
    const uint8_t kind = static_cast<uint8_t>(f[fmt::kFenceKind]);
    if (!FitsWithin(off, len, strings_size) || !IsValidDepKind(kind) ||
        f[fmt::kFenceReserved] != 0 || f[fmt::kFenceReserved + 1] != 0 ||
        f[fmt::kFenceReserved + 2] != 0) {
      return corrupt("fence ", j, ": path, kind or reserved bytes out of range");
    }
    const std::string_view path = fence_path(j);
    if (j > 0 && CompareKey(previous_path, previous_kind, path, kind) >= 0) {
      return corrupt("fence ", j, ": fences out of order");
    }
    previous_path = path;
    previous_kind = kind;
  }
  if (expected != test_table_offset_) {
    return corrupt("the key blocks end at ", expected, ", not at the test table (",
                   test_table_offset_, ")");
  }
  return absl::OkStatus();
}

template <typename Corrupt>
absl::Status SelectionIndex::ValidateOutsidePaths(uint64_t at, uint64_t end,
                                                  const Corrupt& corrupt) {
  if (end < at || end - at < 8) return corrupt("outside paths: no room for their count");
  const uint64_t count = fmt::DecodeU64(data_ + at);
  if (count > (end - at - 8) / 4) return corrupt("outside paths: ", count, " do not fit");
  const char* sizes = data_ + at + 8;
  uint64_t next = at + 8 + count * 4;
  outside_paths_.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint32_t len = fmt::DecodeU32(sizes + 4 * i);
    if (!FitsWithin(next, len, end)) return corrupt("outside path ", i, " past the section");
    const std::string_view p(data_ + next, len);
    next += len;
    if (!fmt::IsOutsideOrViewPath(p)) {
      return corrupt("outside path ", i, " is neither absolute nor a view");
    }
    if (!outside_paths_.empty() && outside_paths_.back().compare(p) >= 0) {
      outside_paths_.clear();
      return corrupt("outside path ", i, ": out of order");
    }
    outside_paths_.push_back(p);
  }
  if (next != end) {
    outside_paths_.clear();
    return corrupt("outside paths end at ", next, ", not at ", end);
  }
  return absl::OkStatus();
}

void SelectionIndex::WillNeed(uint64_t begin, uint64_t end) const {
  if (mapping_ == nullptr || begin >= end) return;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // Linux reads ahead at most max(read_ahead_kb, the device's largest I/O)
  // per call, and the rest of the range then faults in a page at a time
  // (the mapping is MADV_RANDOM): ask in steps below that.
  constexpr uint64_t kStep = 1 << 20;
  for (uint64_t from = begin & ~(page - 1); from < end; from += kStep) {
    madvise(const_cast<char*>(data_) + from, std::min(kStep, end - from), MADV_WILLNEED);
  }
}

absl::Status SelectionIndex::EnsureBlock(size_t j) const {
  if (block_ok_[j].load(std::memory_order_acquire) != 0) return absl::OkStatus();
  const char* f = fence_entry(j);
  const uint64_t at = fmt::DecodeU64(f + fmt::kFenceBlockOffset);
  const uint64_t size = fmt::DecodeU64(f + fmt::kFenceBlockSize);
  const uint64_t first = j * keys_per_block_;
  const uint64_t keys = std::min<uint64_t>(keys_per_block_, n_keys_ - first);
  auto corrupt = [&](auto&&... parts) {
    return absl::DataLossError(absl::StrCat("selection index: key block ", j, " (keys ", first,
                                            " to ", first + keys - 1, "): ", parts...));
  };
  const char* b = data_ + at;
  if (fmt::BitmapChecksum(b, size) != fmt::DecodeU64(f + fmt::kFenceBlockChecksum)) {
    return corrupt("checksum mismatch");
  }
  const char* paths = b + keys * fmt::kKeyEntrySize;
  const uint64_t paths_size = size - keys * fmt::kKeyEntrySize;
  std::string_view previous_path;
  uint8_t previous_kind = 0;
  for (uint64_t s = 0; s < keys; ++s) {
    const char* e = b + s * fmt::kKeyEntrySize;
    const std::string defect =
        KeyEntryDefect(e, paths_size, bitmaps_offset_, bitmaps_end_);
    if (!defect.empty()) return corrupt("key ", first + s, ": ", defect);
    const uint8_t kind = static_cast<uint8_t>(e[fmt::kKeyKind]);
    const std::string_view path(paths + fmt::DecodeU64(e + fmt::kKeyPathOffset),
                                fmt::DecodeU32(e + fmt::kKeyPathSize));
    if (s == 0 ? (path != fence_path(j) || kind != static_cast<uint8_t>(f[fmt::kFenceKind]))
               : CompareKey(previous_path, previous_kind, path, kind) >= 0) {
      return corrupt("key ", first + s, s == 0 ? ": not its fence" : ": keys out of order");
    }
    previous_path = path;
    previous_kind = kind;
  }
  if (j + 1 < n_blocks_ &&
      CompareKey(previous_path, previous_kind, fence_path(j + 1),
                 static_cast<uint8_t>(fence_entry(j + 1)[fmt::kFenceKind])) >= 0) {
    return corrupt("its last key is not below the next block's first");
  }
  block_ok_[j].store(1, std::memory_order_release);
  return absl::OkStatus();
}

absl::StatusOr<SelectionIndex::KeyRef> SelectionIndex::KeyRefAt(size_t i) const {
  if (version_ == 1) {
    const char* e = data_ + key_table_offset_ + uint64_t{i} * fmt::kKeyEntrySize;
    return KeyRef{std::string_view(data_ + strings_offset_ + fmt::DecodeU64(e + fmt::kKeyPathOffset),
                                   fmt::DecodeU32(e + fmt::kKeyPathSize)),
                  static_cast<uint8_t>(e[fmt::kKeyKind]), e};
  }
  const size_t j = i / keys_per_block_;
  STE_RETURN_IF_ERROR(EnsureBlock(j));
  const uint64_t first = uint64_t{j} * keys_per_block_;
  const uint64_t keys = std::min<uint64_t>(keys_per_block_, n_keys_ - first);
  const char* b = data_ + fmt::DecodeU64(fence_entry(j) + fmt::kFenceBlockOffset);
  const char* e = b + (i - first) * fmt::kKeyEntrySize;
  return KeyRef{std::string_view(b + keys * fmt::kKeyEntrySize + fmt::DecodeU64(e + fmt::kKeyPathOffset),
                                 fmt::DecodeU32(e + fmt::kKeyPathSize)),
                static_cast<uint8_t>(e[fmt::kKeyKind]), e};
}

const char* SelectionIndex::fence_entry(size_t j) const {
  return data_ + fences_offset_ + uint64_t{j} * fmt::kFenceEntrySize;
}

std::string_view SelectionIndex::fence_path(size_t j) const {
  const char* f = fence_entry(j);
  return std::string_view(data_ + fence_strings_ + fmt::DecodeU64(f + fmt::kFencePathOffset),
                          fmt::DecodeU32(f + fmt::kFencePathSize));
}

template <typename Corrupt>
absl::Status SelectionIndex::ValidateCases(uint64_t strings, const Corrupt& corrupt) {
  if (size_ - strings < fmt::kCaseFooterSize + 16) return corrupt("case section: no room");
  const char* footer = data_ + size_ - fmt::kCaseFooterSize;
  const uint64_t at = fmt::DecodeU64(footer), size = fmt::DecodeU64(footer + 8);
  if (at < strings || size < 16 || at > size_ || size > size_ - at ||
      at + size + fmt::kCaseFooterSize != size_) {
    return corrupt("case section [", at, ", +", size, ") misplaced");
  }
  const char* s = data_ + at;
  const uint64_t n_cases = fmt::DecodeU64(s), n_own = fmt::DecodeU64(s + 8);
  if (n_cases > size / fmt::kCaseEntrySize || n_own > size / fmt::kOwnEntrySize ||
      16 + n_cases * fmt::kCaseEntrySize + n_own * fmt::kOwnEntrySize > size) {
    return corrupt("case section: ", n_cases, " cases and ", n_own, " own entries overflow it");
  }
  const uint64_t names_at = 16 + n_cases * fmt::kCaseEntrySize + n_own * fmt::kOwnEntrySize;
  const uint64_t names_size = size - names_at;
  cases_ = s + 16;
  own_ = cases_ + n_cases * fmt::kCaseEntrySize;
  case_names_ = s + names_at;
  auto fail = [&](auto&&... parts) {
    n_cases_ = n_own_ = 0;
    return corrupt(parts...);
  };
  n_cases_ = n_cases;
  n_own_ = n_own;
  for (uint64_t c = 0; c < n_cases; ++c) {
    const char* e = cases_ + c * fmt::kCaseEntrySize;
    const uint32_t len = fmt::DecodeU32(e + 4);
    if (fmt::DecodeU32(e) >= n_tests_ || len == 0 || !FitsWithin(fmt::DecodeU64(e + 8), len, names_size)) {
      return fail("case ", c, ": test or name out of range");
    }
    const uint32_t id = static_cast<uint32_t>(c);
    if (c > 0 && case_test(id - 1) > case_test(id)) return fail("case ", c, ": tests out of order");
  }
  uint64_t before = 0;
  for (uint64_t i = 0; i < n_own; ++i) {
    const char* e = own_ + i * fmt::kOwnEntrySize;
    const uint64_t packed = uint64_t{fmt::DecodeU32(e)} << 32 | fmt::DecodeU32(e + 4);
    if (fmt::DecodeU32(e) >= n_keys_ || fmt::DecodeU32(e + 4) >= n_cases || (i > 0 && before >= packed)) {
      return fail("own entry ", i, ": out of range or order");
    }
    before = packed;
  }
  return absl::OkStatus();
}

uint32_t SelectionIndex::case_test(uint32_t c) const {
  return fmt::DecodeU32(cases_ + uint64_t{c} * fmt::kCaseEntrySize);
}

std::string_view SelectionIndex::case_name(uint32_t c) const {
  const char* e = cases_ + uint64_t{c} * fmt::kCaseEntrySize;
  return std::string_view(case_names_ + fmt::DecodeU64(e + 8), fmt::DecodeU32(e + 4));
}

absl::StatusOr<std::vector<uint32_t>> SelectionIndex::CasesOf(const DepKey& key) const {
  std::vector<uint32_t> out;
  if (n_own_ == 0) return out;
  STE_ASSIGN_OR_RETURN(const size_t k, FindKey(key.path, static_cast<uint8_t>(key.kind)));
  if (k >= n_keys_) return out;
  size_t lo = 0, hi = n_own_;  // the first own entry of key k
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (fmt::DecodeU32(own_ + mid * fmt::kOwnEntrySize) < k) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (; lo < n_own_ && fmt::DecodeU32(own_ + lo * fmt::kOwnEntrySize) == k; ++lo) {
    out.push_back(fmt::DecodeU32(own_ + lo * fmt::kOwnEntrySize + 4));
  }
  return out;
}

const char* SelectionIndex::test_entry(uint32_t id) const {
  return data_ + test_table_offset_ + uint64_t{id} * fmt::kTestEntrySize;
}

std::string_view SelectionIndex::test_scope(uint32_t id) const {
  const char* e = test_entry(id);
  return std::string_view(
      data_ + scopes_offset_ + fmt::DecodeU64(e + fmt::kTestScopeOffset),
      fmt::DecodeU32(e + fmt::kTestScopeSize));
}

bool SelectionIndex::opaque(uint32_t id) const {
  return (fmt::DecodeU32(test_entry(id) + fmt::kTestFlags) &
          fmt::kTestFlagOpaque) != 0;
}

Roaring SelectionIndex::OpaqueTests() const {
  Roaring r;
  for (uint32_t t = 0; t < n_tests_; ++t) {
    if (opaque(t)) r.add(t);
  }
  return r;
}

std::optional<uint32_t> SelectionIndex::FindTest(std::string_view scope) const {
  uint32_t lo = 0, hi = static_cast<uint32_t>(n_tests_);
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (CompareScopes(test_scope(mid), scope) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < n_tests_ && test_scope(lo) == scope) return lo;
  return std::nullopt;
}

std::pair<uint32_t, uint32_t> SelectionIndex::TestsUnder(
    std::string_view scope) const {
  uint32_t lo = 0, hi = static_cast<uint32_t>(n_tests_);
  while (lo < hi) {  // first test >= scope
    const uint32_t mid = lo + (hi - lo) / 2;
    if (CompareScopes(test_scope(mid), scope) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  const uint32_t first = lo;
  hi = static_cast<uint32_t>(n_tests_);
  while (lo < hi) {  // first test at or after `first` not under scope
    const uint32_t mid = lo + (hi - lo) / 2;
    if (ScopeContains(scope, test_scope(mid))) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return {first, lo};
}

absl::StatusOr<DepKey> SelectionIndex::KeyAt(size_t i) const {
  STE_ASSIGN_OR_RETURN(const KeyRef k, KeyRefAt(i));
  return DepKey{std::string(k.path), static_cast<DepKind>(k.kind)};
}

size_t SelectionIndex::BlockOf(std::string_view path, uint8_t kind) const {
  size_t lo = 0, hi = n_blocks_;  // the first fence > (path, kind)
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (CompareKey(fence_path(mid), static_cast<uint8_t>(fence_entry(mid)[fmt::kFenceKind]), path,
                   kind) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  // Below the first fence, the first key >= (path, kind) is block 0's first.
  return lo == 0 ? 0 : lo - 1;
}

absl::StatusOr<size_t> SelectionIndex::LowerBoundKey(std::string_view path, uint8_t kind) const {
  size_t lo = 0, hi = n_keys_;
  if (version_ == 2 && n_blocks_ > 0) {
    // The fences, read at Open, narrow the search to one block.
    const size_t j = BlockOf(path, kind);
    lo = j * keys_per_block_;
    hi = std::min(n_keys_, lo + keys_per_block_);
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    STE_ASSIGN_OR_RETURN(const KeyRef k, KeyRefAt(mid));
    if (CompareKey(k.path, k.kind, path, kind) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  // In version 2, lo may be the next block's first key: its fence is above
  // (path, kind), so it is the lower bound without reading that block.
  return lo;
}

absl::StatusOr<size_t> SelectionIndex::FindKey(std::string_view path, uint8_t kind) const {
  STE_ASSIGN_OR_RETURN(const size_t i, LowerBoundKey(path, kind));
  if (i >= n_keys_) return n_keys_;
  if (version_ == 2 && i % keys_per_block_ == 0) {
    // A block's first key is its fence: no need to read that block to compare.
    const size_t j = i / keys_per_block_;
    if (fence_path(j) != path || static_cast<uint8_t>(fence_entry(j)[fmt::kFenceKind]) != kind) {
      return n_keys_;
    }
  }
  STE_ASSIGN_OR_RETURN(const KeyRef k, KeyRefAt(i));
  return k.path == path && k.kind == kind ? i : n_keys_;
}

absl::StatusOr<Roaring> SelectionIndex::BitmapAt(size_t i) const {
  STE_ASSIGN_OR_RETURN(const KeyRef k, KeyRefAt(i));
  return BitmapOf(i, k);
}

absl::StatusOr<Roaring> SelectionIndex::BitmapOf(size_t i, const KeyRef& k) const {
  const char* e = k.entry;
  const uint64_t off = fmt::DecodeU64(e + fmt::kKeyBitmapOffset);
  const uint64_t size = fmt::DecodeU64(e + fmt::kKeyBitmapSize);
  const char* bytes = data_ + off;
  auto corrupt = [&](std::string_view why) {
    return absl::DataLossError(
        absl::StrCat("selection index: bitmap of key ", i, " (",
                     std::string(DepKindName(static_cast<DepKind>(k.kind))), " ",
                     std::string(k.path), "): ", std::string(why)));
  };
  if (fmt::BitmapChecksum(bytes, size) !=
      fmt::DecodeU64(e + fmt::kKeyBitmapChecksum)) {
    return corrupt("checksum mismatch");
  }
  if (roaring_bitmap_portable_deserialize_size(bytes, size) != size) {
    return corrupt("not a roaring bitmap of the recorded size");
  }
  roaring_bitmap_t* r = roaring_bitmap_portable_deserialize_safe(bytes, size);
  if (r == nullptr) return corrupt("not a roaring bitmap");
  // The bytes were read safely, but their containers are taken as they
  // come; one out of order would make maximum() below (and every set
  // operation after it) wrong.
  if (std::string defect = RoaringDefect(*r); !defect.empty()) {
    roaring_bitmap_free(r);
    return corrupt(defect);
  }
  Roaring bitmap(r);  // takes ownership
  if (!bitmap.isEmpty() && bitmap.maximum() >= n_tests_) {
    return corrupt("test id out of range");
  }
  return bitmap;
}

absl::Status SelectionIndex::VerifyAll() const {
  for (size_t i = 0; i < n_keys_; ++i) {
    STE_ASSIGN_OR_RETURN(const KeyRef k, KeyRefAt(i));
    STE_RETURN_IF_ERROR(BitmapOf(i, k).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<Roaring> SelectionIndex::Lookup(std::string_view path,
                                               DepKind kind) const {
  STE_ASSIGN_OR_RETURN(const size_t i, FindKey(path, static_cast<uint8_t>(kind)));
  if (i >= n_keys_) return Roaring();
  return BitmapAt(i);
}

absl::StatusOr<Roaring> SelectionIndex::Lookup(const DepKey& key) const {
  return Lookup(key.path, key.kind);
}

absl::StatusOr<Roaring> SelectionIndex::Union(
    absl::Span<const DepKey> keys) const {
  if (version_ == 2 && mapping_ != nullptr && keys.size() > 1) {
    // Ask the kernel for every key block the lookups need at once: from a
    // cold page cache the reads then overlap instead of queueing one page
    // fault at a time.
    std::vector<size_t> blocks;
    for (const DepKey& k : keys) blocks.push_back(BlockOf(k.path, static_cast<uint8_t>(k.kind)));
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
    for (size_t j : blocks) {
      if (j >= n_blocks_ || block_ok_[j].load(std::memory_order_relaxed) != 0) continue;
      const char* f = fence_entry(j);
      const uint64_t at = fmt::DecodeU64(f + fmt::kFenceBlockOffset);
      WillNeed(at, at + fmt::DecodeU64(f + fmt::kFenceBlockSize));
    }
  }
  std::vector<std::pair<size_t, KeyRef>> found;
  found.reserve(keys.size());
  for (const DepKey& k : keys) {
    STE_ASSIGN_OR_RETURN(const size_t i, FindKey(k.path, static_cast<uint8_t>(k.kind)));
    if (i >= n_keys_) continue;
    STE_ASSIGN_OR_RETURN(const KeyRef ref, KeyRefAt(i));
    found.emplace_back(i, ref);
  }
  if (found.size() > 1) {
    // The same for the bitmaps.
    for (const auto& [i, ref] : found) {
      const uint64_t begin = fmt::DecodeU64(ref.entry + fmt::kKeyBitmapOffset);
      WillNeed(begin, begin + fmt::DecodeU64(ref.entry + fmt::kKeyBitmapSize));
    }
  }
  std::vector<Roaring> parts;
  parts.reserve(found.size());
  for (const auto& [i, ref] : found) {
    STE_ASSIGN_OR_RETURN(Roaring r, BitmapOf(i, ref));
    parts.push_back(std::move(r));
  }
  if (parts.empty()) return Roaring();
  if (parts.size() == 1) return std::move(parts[0]);
  std::vector<const roaring_bitmap_t*> ptrs;
  ptrs.reserve(parts.size());
  for (const Roaring& r : parts) ptrs.push_back(&r.roaring);
  roaring_bitmap_t* u = roaring_bitmap_or_many(ptrs.size(), ptrs.data());
  if (u == nullptr) {
    return absl::ResourceExhaustedError("selection index: union: no memory");
  }
  return Roaring(u);
}

absl::StatusOr<std::vector<std::pair<DepKey, Roaring>>>
SelectionIndex::KeysMatchingPath(std::string_view path) const {
  std::vector<std::pair<DepKey, Roaring>> out;
  STE_ASSIGN_OR_RETURN(size_t i, LowerBoundKey(path, 0));
  for (; i < n_keys_; ++i) {
    STE_ASSIGN_OR_RETURN(const KeyRef k, KeyRefAt(i));
    if (k.path != path) break;
    STE_ASSIGN_OR_RETURN(Roaring r, BitmapOf(i, k));
    out.emplace_back(DepKey{std::string(k.path), static_cast<DepKind>(k.kind)}, std::move(r));
  }
  return out;
}

absl::StatusOr<std::vector<std::pair<DepKey, Roaring>>>
SelectionIndex::ViewsOf(std::string_view dir) const {
  std::string prefix = dir == "." ? std::string() : dir == "/" ? "/" : std::string(dir) + "/";
  prefix.push_back('\x01');
  std::vector<std::pair<DepKey, Roaring>> out;
  STE_ASSIGN_OR_RETURN(size_t i, LowerBoundKey(prefix, 0));
  for (; i < n_keys_; ++i) {
    STE_ASSIGN_OR_RETURN(const KeyRef k, KeyRefAt(i));
    std::string_view p = k.path;
    if (p.substr(0, prefix.size()) != prefix) break;
    if (p.find('/', prefix.size()) != std::string_view::npos) continue;
    STE_ASSIGN_OR_RETURN(Roaring r, BitmapOf(i, k));
    out.emplace_back(DepKey{std::string(k.path), static_cast<DepKind>(k.kind)}, std::move(r));
  }
  return out;
}

absl::StatusOr<std::vector<DepKey>> SelectionIndex::DependenciesOf(
    uint32_t test_id) const {
  std::vector<DepKey> out;
  for (size_t i = 0; i < n_keys_; ++i) {
    STE_ASSIGN_OR_RETURN(const KeyRef k, KeyRefAt(i));
    STE_ASSIGN_OR_RETURN(Roaring r, BitmapOf(i, k));
    if (r.contains(test_id)) out.push_back(DepKey{std::string(k.path), static_cast<DepKind>(k.kind)});
  }
  return out;
}

absl::StatusOr<std::string> SelectionIndex::DumpJson() const {
  // Transpose: each test's key indexes, ascending (keys are visited in key
  // order).
  std::vector<std::vector<uint32_t>> deps(n_tests_);
  std::vector<KeyRef> refs;
  refs.reserve(n_keys_);
  for (size_t i = 0; i < n_keys_; ++i) {
    STE_ASSIGN_OR_RETURN(const KeyRef k, KeyRefAt(i));
    refs.push_back(k);
    STE_ASSIGN_OR_RETURN(Roaring r, BitmapOf(i, k));
    struct Sink {
      std::vector<std::vector<uint32_t>>* deps;
      uint32_t key;
    } sink{&deps, static_cast<uint32_t>(i)};
    r.iterate(
        [](uint32_t t, void* ctx) {
          Sink* s = static_cast<Sink*>(ctx);
          (*s->deps)[t].push_back(s->key);
          return true;
        },
        &sink);
  }
  std::string out;
  for (uint32_t t = 0; t < n_tests_; ++t) {
    out += '{';
    AppendJsonPathField("test", test_scope(t), &out);
    out += opaque(t) ? ",\"opaque\":true,\"deps\":["
                     : ",\"opaque\":false,\"deps\":[";
    for (size_t j = 0; j < deps[t].size(); ++j) {
      const KeyRef& k = refs[deps[t][j]];
      if (j > 0) out += ',';
      out += '{';
      AppendJsonPathField("path", k.path, &out);
      out += ",\"kind\":\"";
      out += DepKindName(static_cast<DepKind>(k.kind));
      out += "\"}";
    }
    out += "]}\n";
  }
  return out;
}

}  // namespace ste
