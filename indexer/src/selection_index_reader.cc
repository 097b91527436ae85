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
  close(fd);
  if (m == MAP_FAILED) {
    return absl::InternalError(
        absl::StrCat(what, ": mmap: ", std::strerror(err)));
  }
  index->mapping_ = m;
  index->data_ = static_cast<const char*>(m);
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
  if (version != fmt::kVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(prefix, ": unsupported format version ", version,
                     " (this build reads version ", fmt::kVersion, ")"));
  }
  if (fmt::DecodeU32(h + fmt::kOffHeaderSize) != fmt::kHeaderSize) {
    return corrupt("bad header size ", fmt::DecodeU32(h + fmt::kOffHeaderSize));
  }
  const uint64_t flags = fmt::DecodeU64(h + fmt::kOffFlags);
  const uint64_t n_tests = fmt::DecodeU64(h + fmt::kOffNTests);
  const uint64_t n_keys = fmt::DecodeU64(h + fmt::kOffNKeys);
  const uint64_t bitmaps_offset = fmt::DecodeU64(h + fmt::kOffBitmapsOffset);
  const uint64_t bitmaps_size = fmt::DecodeU64(h + fmt::kOffBitmapsSize);
  const uint64_t test_table = fmt::DecodeU64(h + fmt::kOffTestTableOffset);
  const uint64_t key_table = fmt::DecodeU64(h + fmt::kOffKeyTableOffset);
  const uint64_t strings = fmt::DecodeU64(h + fmt::kOffStringsOffset);
  const uint64_t file_size = fmt::DecodeU64(h + fmt::kOffFileSize);
  if (file_size != size_) {
    return corrupt(file_size > size_ ? "truncated: " : "trailing bytes: ",
                   size_, " bytes, header says ", file_size);
  }
  if ((flags & ~fmt::kFlagCases) != 0) return corrupt("unknown header flags ", flags);
  if (n_tests > UINT32_MAX) return corrupt("test count ", n_tests, " too big");
  if (bitmaps_offset != fmt::kHeaderSize) {
    return corrupt("bitmap area offset ", bitmaps_offset, " is not ",
                   fmt::kHeaderSize);
  }
  // Each section starts where the previous one ends; multiplications can't
  // overflow once counts are bounded by the file size.
  if (bitmaps_size % fmt::kBitmapAlign != 0 ||
      !FitsWithin(bitmaps_offset, bitmaps_size, size_) ||
      test_table != bitmaps_offset + bitmaps_size) {
    return corrupt("bitmap area [", bitmaps_offset, ", +", bitmaps_size,
                   ") does not end at the test table (", test_table, ")");
  }
  if (n_tests > size_ / fmt::kTestEntrySize ||
      !FitsWithin(test_table, n_tests * fmt::kTestEntrySize, size_) ||
      key_table != test_table + n_tests * fmt::kTestEntrySize) {
    return corrupt("test table of ", n_tests, " entries at ", test_table,
                   " does not end at the key table (", key_table, ")");
  }
  if (n_keys > size_ / fmt::kKeyEntrySize ||
      !FitsWithin(key_table, n_keys * fmt::kKeyEntrySize, size_) ||
      strings != key_table + n_keys * fmt::kKeyEntrySize) {
    return corrupt("key table of ", n_keys, " entries at ", key_table,
                   " does not end at the string area (", strings, ")");
  }
  if (mapping_ != nullptr) {
    // The checksum reads every table: from a cold page cache, one large
    // read-ahead beats faulting them in a window at a time.
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t from = test_table & ~(page - 1);
    char* tables = const_cast<char*>(data_) + from;
    madvise(tables, size_ - from, MADV_WILLNEED);
#ifdef MADV_POPULATE_READ
    // And map them in one call rather than ~1500 page faults (Linux 5.14+;
    // older kernels answer EINVAL and the faults happen as before).
    madvise(tables, size_ - from, MADV_POPULATE_READ);
#endif
  }
  const uint64_t checksum = fmt::DecodeU64(h + fmt::kOffChecksum);
  const uint64_t actual =
      fmt::HeaderChecksum(h, data_ + test_table, size_ - test_table);
  if (checksum != actual) {
    return corrupt("checksum mismatch over header and tables");
  }
  n_tests_ = n_tests;
  n_keys_ = n_keys;
  test_table_offset_ = test_table;
  key_table_offset_ = key_table;
  strings_offset_ = strings;
  const uint64_t strings_size = size_ - strings;

  // Every entry's ranges, and the orders binary search relies on. The
  // checksum makes these hold for anything our writer produced; they are
  // checked anyway so that no input can make a query read out of bounds.
  std::string_view previous_scope;
  for (uint64_t t = 0; t < n_tests; ++t) {
    const char* e = test_entry(static_cast<uint32_t>(t));
    const uint64_t off = fmt::DecodeU64(e + fmt::kTestScopeOffset);
    const uint32_t len = fmt::DecodeU32(e + fmt::kTestScopeSize);
    const uint32_t tflags = fmt::DecodeU32(e + fmt::kTestFlags);
    if (!FitsWithin(off, len, strings_size)) {
      return corrupt("test ", t, ": scope out of the string area");
    }
    if ((tflags & ~fmt::kKnownTestFlags) != 0) {
      return corrupt("test ", t, ": unknown flags ", tflags);
    }
    // Scope syntax is the writer's (ValidateScope in AddTests, and the
    // checksum); what lookups rely on is the order, checked here.
    const std::string_view scope(data_ + strings + off, len);
    if (t > 0 && CompareScopes(previous_scope, scope) >= 0) {
      return corrupt("test ", t, ": scopes out of order");
    }
    previous_scope = scope;
  }
  const uint64_t bitmaps_end = bitmaps_offset + bitmaps_size;
  std::string_view previous_path;
  uint8_t previous_kind = 0;
  for (uint64_t i = 0; i < n_keys; ++i) {
    const char* e = key_entry(i);
    const uint64_t off = fmt::DecodeU64(e + fmt::kKeyPathOffset);
    const uint32_t len = fmt::DecodeU32(e + fmt::kKeyPathSize);
    const uint8_t kind = static_cast<uint8_t>(e[fmt::kKeyKind]);
    const uint64_t bm_off = fmt::DecodeU64(e + fmt::kKeyBitmapOffset);
    const uint64_t bm_size = fmt::DecodeU64(e + fmt::kKeyBitmapSize);
    if (!FitsWithin(off, len, strings_size)) {
      return corrupt("key ", i, ": path out of the string area");
    }
    if (!IsValidDepKind(kind) || e[fmt::kKeyReserved] != 0 ||
        e[fmt::kKeyReserved + 1] != 0 || e[fmt::kKeyReserved + 2] != 0) {
      return corrupt("key ", i, ": bad kind or reserved bytes");
    }
    if (bm_size == 0 || bm_off < bitmaps_offset ||
        bm_off % fmt::kBitmapAlign != 0 ||
        !FitsWithin(bm_off, bm_size, bitmaps_end)) {
      return corrupt("key ", i, ": bitmap [", bm_off, ", +", bm_size,
                     ") outside the bitmap area");
    }
    const std::string_view path(data_ + strings + off, len);
    if (i > 0 && CompareKey(previous_path, previous_kind, path, kind) >= 0) {
      return corrupt("key ", i, ": keys out of order");
    }
    previous_path = path;
    previous_kind = kind;
  }
  if (flags & fmt::kFlagCases) return ValidateCases(strings, corrupt);
  return absl::OkStatus();
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

std::vector<uint32_t> SelectionIndex::CasesOf(const DepKey& key) const {
  std::vector<uint32_t> out;
  if (n_own_ == 0) return out;
  const size_t k = LowerBoundKey(key.path, static_cast<uint8_t>(key.kind));
  if (k >= n_keys_ || key_path(k) != key.path || key_kind(k) != key.kind) return out;
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

const char* SelectionIndex::key_entry(size_t i) const {
  return data_ + key_table_offset_ + uint64_t{i} * fmt::kKeyEntrySize;
}

std::string_view SelectionIndex::test_scope(uint32_t id) const {
  const char* e = test_entry(id);
  return std::string_view(
      data_ + strings_offset_ + fmt::DecodeU64(e + fmt::kTestScopeOffset),
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

std::string_view SelectionIndex::key_path(size_t i) const {
  const char* e = key_entry(i);
  return std::string_view(
      data_ + strings_offset_ + fmt::DecodeU64(e + fmt::kKeyPathOffset),
      fmt::DecodeU32(e + fmt::kKeyPathSize));
}

DepKind SelectionIndex::key_kind(size_t i) const {
  return static_cast<DepKind>(key_entry(i)[fmt::kKeyKind]);
}

DepKey SelectionIndex::key(size_t i) const {
  return DepKey{std::string(key_path(i)), key_kind(i)};
}

size_t SelectionIndex::LowerBoundKey(std::string_view path,
                                     uint8_t kind) const {
  size_t lo = 0, hi = n_keys_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (CompareKey(key_path(mid), static_cast<uint8_t>(key_kind(mid)), path,
                   kind) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

absl::StatusOr<Roaring> SelectionIndex::BitmapAt(size_t i) const {
  const char* e = key_entry(i);
  const uint64_t off = fmt::DecodeU64(e + fmt::kKeyBitmapOffset);
  const uint64_t size = fmt::DecodeU64(e + fmt::kKeyBitmapSize);
  const char* bytes = data_ + off;
  auto corrupt = [&](std::string_view why) {
    return absl::DataLossError(
        absl::StrCat("selection index: bitmap of key ", i, " (",
                     std::string(DepKindName(key_kind(i))), " ",
                     std::string(key_path(i)), "): ", std::string(why)));
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

absl::StatusOr<Roaring> SelectionIndex::Lookup(std::string_view path,
                                               DepKind kind) const {
  const size_t i = LowerBoundKey(path, static_cast<uint8_t>(kind));
  if (i == n_keys_ || key_kind(i) != kind || key_path(i) != path) {
    return Roaring();
  }
  return BitmapAt(i);
}

absl::StatusOr<Roaring> SelectionIndex::Lookup(const DepKey& key) const {
  return Lookup(key.path, key.kind);
}

absl::StatusOr<Roaring> SelectionIndex::Union(
    absl::Span<const DepKey> keys) const {
  std::vector<size_t> found;
  found.reserve(keys.size());
  for (const DepKey& k : keys) {
    const size_t i = LowerBoundKey(k.path, static_cast<uint8_t>(k.kind));
    if (i < n_keys_ && key_kind(i) == k.kind && key_path(i) == k.path) {
      found.push_back(i);
    }
  }
  if (mapping_ != nullptr && found.size() > 1) {
    // Ask the kernel for all the bitmaps at once: from a cold page cache
    // the reads then overlap instead of queueing one page fault at a time.
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    for (size_t i : found) {
      const char* e = key_entry(i);
      const uintptr_t begin = reinterpret_cast<uintptr_t>(
          data_ + fmt::DecodeU64(e + fmt::kKeyBitmapOffset));
      const uintptr_t end = begin + fmt::DecodeU64(e + fmt::kKeyBitmapSize);
      const uintptr_t aligned = begin & ~(page - 1);
      madvise(reinterpret_cast<void*>(aligned), end - aligned, MADV_WILLNEED);
    }
  }
  std::vector<Roaring> parts;
  parts.reserve(found.size());
  for (size_t i : found) {
    STE_ASSIGN_OR_RETURN(Roaring r, BitmapAt(i));
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
  for (size_t i = LowerBoundKey(path, 0); i < n_keys_ && key_path(i) == path;
       ++i) {
    STE_ASSIGN_OR_RETURN(Roaring r, BitmapAt(i));
    out.emplace_back(key(i), std::move(r));
  }
  return out;
}

absl::StatusOr<std::vector<std::pair<DepKey, Roaring>>>
SelectionIndex::ViewsOf(std::string_view dir) const {
  std::string prefix = dir == "." ? std::string() : dir == "/" ? "/" : std::string(dir) + "/";
  prefix.push_back('\x01');
  std::vector<std::pair<DepKey, Roaring>> out;
  for (size_t i = LowerBoundKey(prefix, 0); i < n_keys_; ++i) {
    std::string_view p = key_path(i);
    if (p.substr(0, prefix.size()) != prefix) break;
    if (p.find('/', prefix.size()) != std::string_view::npos) continue;
    STE_ASSIGN_OR_RETURN(Roaring r, BitmapAt(i));
    out.emplace_back(key(i), std::move(r));
  }
  return out;
}

absl::StatusOr<std::vector<DepKey>> SelectionIndex::DependenciesOf(
    uint32_t test_id) const {
  std::vector<DepKey> out;
  for (size_t i = 0; i < n_keys_; ++i) {
    STE_ASSIGN_OR_RETURN(Roaring r, BitmapAt(i));
    if (r.contains(test_id)) out.push_back(key(i));
  }
  return out;
}

absl::StatusOr<std::string> SelectionIndex::DumpJson() const {
  // Transpose: each test's key indexes, ascending (keys are visited in key
  // order).
  std::vector<std::vector<uint32_t>> deps(n_tests_);
  for (size_t i = 0; i < n_keys_; ++i) {
    STE_ASSIGN_OR_RETURN(Roaring r, BitmapAt(i));
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
      const uint32_t k = deps[t][j];
      if (j > 0) out += ',';
      out += '{';
      AppendJsonPathField("path", key_path(k), &out);
      out += ",\"kind\":\"";
      out += DepKindName(key_kind(k));
      out += "\"}";
    }
    out += "]}\n";
  }
  return out;
}

}  // namespace ste
