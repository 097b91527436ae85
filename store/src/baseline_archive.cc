// Copyright: the ste authors. The baseline file (format in
// baseline_archive.h): encoding, the reader's checks, export and import.
#include "ste/baseline_archive.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ste/little_endian.h"
#include "blob_file.h"
#include "ste/repo_path.h"
#include "ste/baseline_loader.h"
#include "ste/inventory.h"
#include "ste/selection_index.h"
#include "ste/status_macros.h"
#include "ste/test_recorder.h"

namespace ste {
namespace {

constexpr size_t kHeaderSize = 64;
constexpr size_t kSectionCount = 5;  // version 2; version 1 has the first 4
constexpr size_t kSectionCountV1 = 4;
constexpr size_t kEntrySize = 32;
constexpr size_t kTrailerSize = 16;
constexpr size_t kResultFixed = 20;
constexpr size_t kBlobFixed = 16;
constexpr size_t kMaxCommit = 1024;
constexpr size_t kMaxTestPath = 4096;
constexpr size_t kMaxBlobName = 64;
constexpr const char* kSectionNames[kSectionCount] = {"meta", "index", "inventory", "results", "blobs"};

size_t TableEnd(size_t sections) { return kHeaderSize + sections * kEntrySize; }

size_t Align8(size_t n) { return (n + 7) & ~size_t{7}; }

// Little-endian fields, appended.
class Bytes {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v) { AppendU16(&out_, v); }
  void U32(uint32_t v) { AppendU32(&out_, v); }
  void U64(uint64_t v) { AppendU64(&out_, v); }
  void I64(int64_t v) { AppendU64(&out_, static_cast<uint64_t>(v)); }
  void F64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    AppendU64(&out_, bits);
  }
  void Raw(absl::string_view bytes) { out_.append(bytes.data(), bytes.size()); }
  void PadTo8() { out_.resize(Align8(out_.size()), '\0'); }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

// An unsigned little-endian field of n = 1, 2, 4 or 8 bytes at `at`.
uint64_t Le(absl::string_view bytes, size_t at, int n) {
  const char* p = bytes.data() + at;
  switch (n) {
    case 1:
      return static_cast<unsigned char>(*p);
    case 2:
      return DecodeU16(p);
    case 4:
      return DecodeU32(p);
    default:
      return DecodeU64(p);
  }
}

// Reads fields of one section in order; the first short read is remembered.
class Fields {
 public:
  explicit Fields(absl::string_view bytes) : bytes_(bytes) {}
  bool Has(size_t n) const { return ok_ && bytes_.size() - at_ >= n; }
  uint64_t Take(int n) {
    if (!Has(static_cast<size_t>(n))) {
      ok_ = false;
      return 0;
    }
    uint64_t v = Le(bytes_, at_, n);
    at_ += static_cast<size_t>(n);
    return v;
  }
  absl::string_view TakeBytes(size_t n) {
    if (!Has(n)) {
      ok_ = false;
      return {};
    }
    absl::string_view v = bytes_.substr(at_, n);
    at_ += n;
    return v;
  }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && at_ == bytes_.size(); }
  size_t at() const { return at_; }

 private:
  absl::string_view bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

std::string Canonical128(absl::string_view bytes) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(bytes.data(), bytes.size()));
  return std::string(reinterpret_cast<const char*>(c.digest), sizeof c.digest);
}

absl::Status Damaged(absl::string_view what, absl::string_view why) {
  return absl::DataLossError(absl::StrCat(what, ": ", why));
}

bool SameResult(const TestResult& a, const TestResult& b) {
  return a.test == b.test && a.outcome == b.outcome && a.exit_code == b.exit_code &&
         std::memcmp(&a.seconds, &b.seconds, sizeof a.seconds) == 0 && a.opaque == b.opaque;
}

// The checks on the content, whatever carries it (`what` names it).
absl::Status VerifyContent(const BaselineArchive& a, absl::string_view what) {
  if (a.commit.size() > kMaxCommit || a.commit.find('\0') != std::string::npos) {
    return Damaged(what, "its commit id is not a commit id (too long, or a NUL byte)");
  }
  if (a.mri < 0) return Damaged(what, absl::StrCat("its mri is negative (", a.mri, ")"));
  absl::StatusOr<std::unique_ptr<SelectionIndex>> index = SelectionIndex::FromBytes(a.index);
  if (!index.ok()) {
    return Damaged(what, absl::StrCat("the index does not read as a selection index: ",
                                      index.status().message()));
  }
  if (absl::Status all = (*index)->VerifyAll(); !all.ok()) {
    return Damaged(what, absl::StrCat("the index has a bad key block or bitmap: ", all.message()));
  }
  absl::StatusOr<Inventory> inventory = Inventory::Parse(a.inventory);
  if (!inventory.ok()) {
    return Damaged(what, absl::StrCat("the inventory does not read as an inventory: ",
                                      inventory.status().message()));
  }
  for (size_t i = 0; i < a.results.size(); ++i) {
    const TestResult& r = a.results[i];
    const std::string which = absl::StrCat("result ", i + 1, " (\"", absl::CEscape(r.test), "\")");
    if (i > 0 && !(a.results[i - 1].test < r.test)) {
      return Damaged(what, absl::StrCat(which, " is out of order or a duplicate"));
    }
    if (r.test.size() > kMaxTestPath || !ValidateTestPath(r.test).ok()) {
      return Damaged(what, absl::StrCat(which, " does not name a test path"));
    }
    if (static_cast<uint8_t>(r.outcome) > static_cast<uint8_t>(TestOutcome::kError)) {
      return Damaged(what, absl::StrCat(which, " has an unknown outcome ",
                                        static_cast<int>(r.outcome)));
    }
    if (!std::isfinite(r.seconds) || r.seconds < 0) {
      return Damaged(what, absl::StrCat(which, " has a bad duration (", r.seconds, ")"));
    }
    if (!(*index)->FindTest(ScopeOfTest(r.test)).has_value()) {
      return Damaged(what, absl::StrCat(which, " is not a test of the index"));
    }
  }
  if ((*index)->test_count() != a.results.size()) {
    return Damaged(what, absl::StrCat("the index has ", (*index)->test_count(), " tests, the results ",
                                      a.results.size()));
  }
  for (size_t i = 0; i < a.blobs.size(); ++i) {
    const auto& [name, bytes] = a.blobs[i];
    const bool known = name == kFlakyBlob || name == kOpaqueBlob || name == kWritesBlob;
    if (!known) return Damaged(what, absl::StrCat("it holds a blob ste does not know: \"", absl::CEscape(name), "\""));
    if (i > 0 && !(a.blobs[i - 1].first < name)) {
      return Damaged(what, absl::StrCat("the blob ", name, " is out of order or a duplicate"));
    }
    if (name == kFlakyBlob) {
      if (!bytes.empty() && bytes.back() != '\0') return Damaged(what, "the flaky blob's last name is not ended");
    } else if (absl::Status decoded = DecodeWrites(bytes).status(); !decoded.ok()) {
      return Damaged(what, absl::StrCat("the ", name, " blob: ", decoded.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> DecodeBlobs(absl::string_view bytes,
                                                                             absl::string_view what) {
  auto bad = [&](absl::string_view why) {
    return Damaged(what, absl::StrCat("the blobs section is malformed: ", why));
  };
  Fields f(bytes);
  const uint64_t count = f.Take(8);
  if (!f.ok()) return bad("no count");
  if (count > bytes.size() / kBlobFixed) return bad(absl::StrCat("a count of ", count, " cannot fit"));
  std::vector<std::pair<std::string, std::string>> blobs;
  for (uint64_t i = 0; i < count; ++i) {
    const uint32_t name_size = static_cast<uint32_t>(f.Take(4));
    const uint32_t reserved = static_cast<uint32_t>(f.Take(4));
    const uint64_t size = f.Take(8);
    if (!f.ok() || name_size == 0 || name_size > kMaxBlobName || reserved != 0) {
      return bad(absl::StrCat("entry ", i + 1, " is cut short or has a bad name size or reserved field"));
    }
    std::string name(f.TakeBytes(name_size));
    if (!f.Has(size)) return bad(absl::StrCat("entry ", i + 1, " is cut short"));
    blobs.emplace_back(std::move(name), std::string(f.TakeBytes(static_cast<size_t>(size))));
  }
  if (!f.done()) return bad(absl::StrCat(bytes.size() - f.at(), " bytes after the last entry"));
  return blobs;
}

absl::StatusOr<std::vector<TestResult>> DecodeResults(absl::string_view bytes, absl::string_view what) {
  auto bad = [&](absl::string_view why) {
    return Damaged(what, absl::StrCat("the results section is malformed: ", why));
  };
  Fields f(bytes);
  const uint64_t count = f.Take(8);
  if (!f.ok()) return bad("no count");
  if (count > bytes.size() / kResultFixed) return bad(absl::StrCat("a count of ", count, " cannot fit"));
  std::vector<TestResult> results;
  results.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    TestResult r;
    const uint32_t size = static_cast<uint32_t>(f.Take(4));
    const uint8_t outcome = static_cast<uint8_t>(f.Take(1));
    const uint8_t opaque = static_cast<uint8_t>(f.Take(1));
    const uint16_t reserved = static_cast<uint16_t>(f.Take(2));
    r.exit_code = static_cast<int32_t>(static_cast<uint32_t>(f.Take(4)));
    const uint64_t bits = f.Take(8);
    std::memcpy(&r.seconds, &bits, sizeof bits);
    if (!f.ok() || size == 0 || size > kMaxTestPath) {
      return bad(absl::StrCat("entry ", i + 1, " is cut short or has a bad size"));
    }
    r.test = std::string(f.TakeBytes(size));
    if (!f.ok()) return bad(absl::StrCat("entry ", i + 1, " is cut short"));
    if (opaque > 1 || reserved != 0) {
      return bad(absl::StrCat("entry ", i + 1, " has a bad opaque flag or reserved field"));
    }
    if (outcome > static_cast<uint8_t>(TestOutcome::kError)) {
      return bad(absl::StrCat("entry ", i + 1, " has an unknown outcome ", outcome));
    }
    r.outcome = static_cast<TestOutcome>(outcome);
    r.opaque = opaque == 1;
    results.push_back(std::move(r));
  }
  if (!f.done()) return bad(absl::StrCat(bytes.size() - f.at(), " bytes after the last entry"));
  return results;
}

}  // namespace

absl::Status VerifyBaselineArchive(const BaselineArchive& archive) {
  return VerifyContent(archive, absl::StrCat("baseline ", archive.origin_id));
}

absl::StatusOr<std::string> EncodeBaselineArchive(const BaselineArchive& a) {
  STE_RETURN_IF_ERROR(VerifyBaselineArchive(a));
  Bytes meta;
  meta.I64(a.origin_id);
  meta.I64(a.mri);
  meta.I64(a.created_unix);
  meta.I64(a.completed_unix);
  meta.I64(a.exported_unix);
  meta.U32(static_cast<uint32_t>(a.commit.size()));
  meta.Raw(a.commit);
  Bytes results;
  results.U64(a.results.size());
  for (const TestResult& r : a.results) {
    results.U32(static_cast<uint32_t>(r.test.size()));
    results.U8(static_cast<uint8_t>(r.outcome));
    results.U8(r.opaque ? 1 : 0);
    results.U16(0);
    results.U32(static_cast<uint32_t>(r.exit_code));
    results.F64(r.seconds);
    results.Raw(r.test);
  }
  Bytes blobs;
  blobs.U64(a.blobs.size());
  for (const auto& [name, bytes] : a.blobs) {
    blobs.U32(static_cast<uint32_t>(name.size()));
    blobs.U32(0);
    blobs.U64(bytes.size());
    blobs.Raw(name);
    blobs.Raw(bytes);
  }
  const absl::string_view sections[kSectionCount] = {meta.str(), a.index, a.inventory,
                                                     results.str(), blobs.str()};
  Bytes table;
  size_t offset = TableEnd(kSectionCount);
  for (size_t i = 0; i < kSectionCount; ++i) {
    table.U32(static_cast<uint32_t>(i + 1));
    table.U32(0);
    table.U64(offset);
    table.U64(sections[i].size());
    table.U64(XXH3_64bits(sections[i].data(), sections[i].size()));
    offset = Align8(offset + sections[i].size());
  }
  const size_t file_size = offset + kTrailerSize;
  Bytes out;
  out.str().reserve(file_size);
  out.Raw(absl::string_view(kBaselineArchiveMagic, 8));
  out.U32(kBaselineArchiveVersion);
  out.U32(kHeaderSize);
  out.U64(0);  // flags
  out.U32(kSectionCount);
  out.U32(0);
  out.U64(file_size);
  out.U64(0);
  out.U64(0);
  std::string checked = out.str() + table.str();  // header[0, 56) + table
  out.U64(XXH3_64bits(checked.data(), checked.size()));
  out.Raw(table.str());
  for (absl::string_view section : sections) {
    out.Raw(section);
    out.PadTo8();
  }
  out.Raw(Canonical128(out.str()));
  return std::move(out.str());
}

absl::StatusOr<BaselineArchive> DecodeBaselineArchive(absl::string_view bytes,
                                                      absl::string_view what) {
  if (bytes.empty()) {
    return absl::DataLossError(absl::StrCat(what, " is empty, not an ste baseline file"));
  }
  if (bytes.size() < 8 || bytes.substr(0, 8) != absl::string_view(kBaselineArchiveMagic, 8)) {
    return absl::DataLossError(absl::StrCat(
        what, " is not an ste baseline file (it does not start with \"STEBASE\": it starts with \"",
        absl::CHexEscape(bytes.substr(0, 8)), "\")"));
  }
  if (bytes.size() < 12) {
    return Damaged(what, absl::StrCat("truncated: ", bytes.size(), " bytes, cut inside the header"));
  }
  const uint32_t version = static_cast<uint32_t>(Le(bytes, 8, 4));
  if (version < kBaselineArchiveOldestVersion || version > kBaselineArchiveVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, " is an ste baseline file of format version ", version, "; this ste reads versions ",
        kBaselineArchiveOldestVersion, " to ", kBaselineArchiveVersion,
        " (export with an ste no newer than the one that imports)"));
  }
  const size_t sections = version == 1 ? kSectionCountV1 : kSectionCount;
  const size_t table_end = TableEnd(sections);
  if (bytes.size() < table_end + kTrailerSize) {
    return Damaged(what, absl::StrCat("truncated: ", bytes.size(),
                                      " bytes, shorter than its header and section table"));
  }
  {
    std::string checked(bytes.substr(0, 56));
    checked.append(bytes.data() + kHeaderSize, table_end - kHeaderSize);
    if (XXH3_64bits(checked.data(), checked.size()) != Le(bytes, 56, 8)) {
      return Damaged(what, "the header or section table is damaged (checksum mismatch)");
    }
  }
  if (Le(bytes, 12, 4) != kHeaderSize || Le(bytes, 16, 8) != 0 || Le(bytes, 24, 4) != sections ||
      Le(bytes, 28, 4) != 0 || Le(bytes, 40, 8) != 0 || Le(bytes, 48, 8) != 0) {
    return Damaged(what, "the header is damaged (size, flags, section count or reserved fields)");
  }
  const uint64_t file_size = Le(bytes, 32, 8);
  if (bytes.size() < file_size) {
    return Damaged(what, absl::StrCat("truncated: ", bytes.size(), " bytes, its header says ",
                                      file_size));
  }
  if (bytes.size() > file_size) {
    return Damaged(what, absl::StrCat(bytes.size() - file_size, " trailing bytes after its end (",
                                      file_size, " bytes)"));
  }
  absl::string_view section[kSectionCount];
  uint64_t expected_offset = table_end;
  for (size_t i = 0; i < sections; ++i) {
    const size_t e = kHeaderSize + i * kEntrySize;
    const uint64_t offset = Le(bytes, e + 8, 8), size = Le(bytes, e + 16, 8);
    if (Le(bytes, e, 4) != i + 1 || Le(bytes, e + 4, 4) != 0 || offset != expected_offset ||
        size > file_size - kTrailerSize - offset) {
      return Damaged(what, absl::StrCat("the section table is damaged (entry ", i + 1, ")"));
    }
    section[i] = bytes.substr(offset, size);
    const uint64_t end = offset + size;
    expected_offset = Align8(end);
    if (expected_offset > file_size - kTrailerSize) {
      return Damaged(what, absl::StrCat("the section table is damaged (entry ", i + 1, ")"));
    }
    for (uint64_t p = end; p < expected_offset; ++p) {
      if (bytes[p] != '\0') {
        return Damaged(what, absl::StrCat("nonzero padding after the ", kSectionNames[i],
                                          " section"));
      }
    }
  }
  if (expected_offset + kTrailerSize != file_size) {
    return Damaged(what, "the section table does not account for the whole file");
  }
  for (size_t i = 0; i < sections; ++i) {
    const size_t e = kHeaderSize + i * kEntrySize;
    if (XXH3_64bits(section[i].data(), section[i].size()) != Le(bytes, e + 24, 8)) {
      return Damaged(what, absl::StrCat("the ", kSectionNames[i],
                                        " section is damaged (checksum mismatch)"));
    }
  }
  if (Canonical128(bytes.substr(0, file_size - kTrailerSize)) !=
      bytes.substr(file_size - kTrailerSize)) {
    return Damaged(what, "the file checksum does not match (the file is damaged)");
  }

  BaselineArchive a;
  Fields meta(section[0]);
  a.origin_id = static_cast<int64_t>(meta.Take(8));
  a.mri = static_cast<int64_t>(meta.Take(8));
  a.created_unix = static_cast<int64_t>(meta.Take(8));
  a.completed_unix = static_cast<int64_t>(meta.Take(8));
  a.exported_unix = static_cast<int64_t>(meta.Take(8));
  const uint64_t commit_size = meta.Take(4);
  if (!meta.ok() || commit_size > kMaxCommit) {
    return Damaged(what, "the meta section is malformed (cut short, or a commit id too long)");
  }
  a.commit = std::string(meta.TakeBytes(static_cast<size_t>(commit_size)));
  if (!meta.done()) {
    return Damaged(what, "the meta section is malformed (its size does not match its commit id)");
  }
  a.index = std::string(section[1]);
  a.inventory = std::string(section[2]);
  STE_ASSIGN_OR_RETURN(a.results, DecodeResults(section[3], what));
  if (sections > kSectionCountV1) {
    STE_ASSIGN_OR_RETURN(a.blobs, DecodeBlobs(section[4], what));
  }
  STE_RETURN_IF_ERROR(VerifyContent(a, what));
  return a;
}

absl::StatusOr<BaselineArchive> ReadBaselineArchiveFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return absl::ErrnoToStatus(err, absl::StrCat("cannot stat ", path));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return absl::DataLossError(absl::StrCat(path, " is a directory, not an ste baseline file"));
  }
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return absl::ErrnoToStatus(err, absl::StrCat("cannot read ", path));
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return DecodeBaselineArchive(bytes, path);
}

absl::Status WriteBaselineArchiveFile(const BaselineArchive& archive, const std::string& path) {
  STE_ASSIGN_OR_RETURN(std::string bytes, EncodeBaselineArchive(archive));
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("\"", path, "\" names a directory, not a file"));
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is a directory"));
  }
  return WriteFileDurably(dir, name, bytes);
}

namespace {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  std::string bytes;
  char buffer[1 << 16];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) bytes.append(buffer, static_cast<size_t>(n));
  }
  int err = errno;
  close(fd);
  if (n < 0) return absl::ErrnoToStatus(err, absl::StrCat("cannot read ", path));
  return bytes;
}

}  // namespace

absl::StatusOr<BaselineArchive> ArchiveFromStore(Store& store, int64_t id) {
  BaselineInfo info;
  if (id > 0) {
    STE_ASSIGN_OR_RETURN(info, store.Get(id));
    if (info.state != BaselineState::kComplete) {
      return absl::FailedPreconditionError(
          absl::StrCat("baseline ", id, " is ", std::string(BaselineStateName(info.state)),
                       ", not complete: only a complete baseline can be exported"));
    }
  } else {
    STE_ASSIGN_OR_RETURN(std::optional<BaselineInfo> latest,
                         store.LatestCompleted(std::numeric_limits<int64_t>::max()));
    if (!latest) return absl::NotFoundError("no completed baseline in the store (run 'ste record')");
    info = *latest;
  }
  BaselineArchive a;
  a.origin_id = info.id;
  a.commit = info.commit;
  a.mri = info.mri;
  a.created_unix = info.created_unix;
  a.completed_unix = info.completed_unix;
  a.exported_unix = static_cast<int64_t>(std::time(nullptr));
  for (auto [name, bytes] : {std::pair<const char*, std::string*>{"index", &a.index},
                             std::pair<const char*, std::string*>{"inventory", &a.inventory}}) {
    // BlobPath checks the bytes against the recorded hash.
    STE_ASSIGN_OR_RETURN(std::string path, store.BlobPath(info.id, name));
    STE_ASSIGN_OR_RETURN(*bytes, ReadWholeFile(path));
  }
  STE_ASSIGN_OR_RETURN(a.results, store.Results(info.id));
  // The optional blobs (flaky, opaque, writes), as the store has them.
  STE_ASSIGN_OR_RETURN(std::vector<BlobInfo> listed, store.Blobs(info.id));
  for (const BlobInfo& b : listed) {
    if (b.name != kFlakyBlob && b.name != kOpaqueBlob && b.name != kWritesBlob) continue;
    STE_ASSIGN_OR_RETURN(std::string path, store.BlobPath(info.id, b.name));
    STE_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
    a.blobs.emplace_back(b.name, std::move(bytes));
  }
  return a;
}

namespace {

// A complete baseline of `store` holding exactly `a`, if any.
absl::StatusOr<std::optional<int64_t>> FindCopy(Store& store, const BaselineArchive& a) {
  std::vector<BlobInfo> want = {
      {"index", static_cast<int64_t>(a.index.size()), Xxh3Hex(a.index)},
      {"inventory", static_cast<int64_t>(a.inventory.size()), Xxh3Hex(a.inventory)}};
  for (const auto& [name, bytes] : a.blobs) {
    want.push_back({name, static_cast<int64_t>(bytes.size()), Xxh3Hex(bytes)});
  }
  std::sort(want.begin(), want.end(), [](const BlobInfo& x, const BlobInfo& y) { return x.name < y.name; });
  STE_ASSIGN_OR_RETURN(std::vector<BaselineInfo> list, store.List());
  for (const BaselineInfo& b : list) {
    if (b.state != BaselineState::kComplete || b.commit != a.commit || b.mri != a.mri) continue;
    STE_ASSIGN_OR_RETURN(std::vector<BlobInfo> blobs, store.Blobs(b.id));
    bool same = blobs.size() == want.size();
    for (size_t i = 0; same && i < want.size(); ++i) {
      same = blobs[i].name == want[i].name && blobs[i].size == want[i].size &&
             blobs[i].xxh3_128 == want[i].xxh3_128;
    }
    if (!same) continue;
    STE_ASSIGN_OR_RETURN(std::vector<TestResult> results, store.Results(b.id));
    same = results.size() == a.results.size();
    for (size_t i = 0; same && i < results.size(); ++i) same = SameResult(results[i], a.results[i]);
    if (same) return std::optional<int64_t>(b.id);
  }
  return std::optional<int64_t>();
}

}  // namespace

absl::StatusOr<ImportOutcome> ImportBaseline(Store& store, const BaselineArchive& a) {
  STE_RETURN_IF_ERROR(VerifyBaselineArchive(a));
  STE_ASSIGN_OR_RETURN(std::optional<int64_t> copy, FindCopy(store, a));
  if (copy) return ImportOutcome{*copy, true};
  STE_ASSIGN_OR_RETURN(int64_t id, store.Begin(a.commit, a.mri));
  absl::StatusOr<int64_t> completed = [&]() -> absl::StatusOr<int64_t> {
    STE_RETURN_IF_ERROR(store.PutBlob(id, "index", a.index));
    STE_RETURN_IF_ERROR(store.PutBlob(id, "inventory", a.inventory));
    for (const auto& [name, bytes] : a.blobs) STE_RETURN_IF_ERROR(store.PutBlob(id, name, bytes));
    if (!a.results.empty()) STE_RETURN_IF_ERROR(store.PutResults(id, a.results));
    return store.CompleteImported(id, a.created_unix, a.completed_unix);
  }();
  if (!completed.ok() || *completed != id) {
    // Ours is building and its writer lock is ours: nothing else holds it.
    (void)store.Remove(id, BaselineState::kBuilding);
    if (!completed.ok()) return completed.status();
    return ImportOutcome{*completed, true};
  }
  return ImportOutcome{id, false};
}

}  // namespace ste
