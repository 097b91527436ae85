// Copyright: the ste authors. The build journal's records; the format is
// written down in build_journal.h.
#include "build_journal.h"

#include <xxhash.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "ste/status_macros.h"

namespace ste {
namespace {

constexpr uint32_t kKindSpec = 1;
constexpr uint32_t kKindAccepted = 2;

class Writer {
 public:
  explicit Writer(uint32_t kind) {
    out_.append(kJournalMagic, sizeof kJournalMagic);
    U32(kJournalVersion);
    U32(kind);
  }
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; i++) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; i++) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    U64(bits);
  }
  void Str(absl::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.append(s.data(), s.size());
  }
  std::string Finish() {
    U64(XXH3_64bits(out_.data(), out_.size()));
    return std::move(out_);
  }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(absl::string_view bytes, uint32_t kind, const char* what) : what_(what) {
    if (bytes.size() < sizeof kJournalMagic + 8 + 8) {
      status_ = Fail(absl::StrCat("is ", bytes.size(), " bytes, too short"));
      return;
    }
    if (std::memcmp(bytes.data(), kJournalMagic, sizeof kJournalMagic) != 0) {
      status_ = Fail("has no journal magic");
      return;
    }
    const absl::string_view body = bytes.substr(0, bytes.size() - 8);
    uint64_t sum = 0;
    for (int i = 0; i < 8; i++) {
      sum |= uint64_t{static_cast<unsigned char>(bytes[bytes.size() - 8 + i])} << (8 * i);
    }
    if (XXH3_64bits(body.data(), body.size()) != sum) {
      status_ = Fail("has a bad checksum");
      return;
    }
    rest_ = body.substr(sizeof kJournalMagic);
    const uint32_t version = U32(), got_kind = U32();
    if (!status_.ok()) return;
    version_ = version;
    if (version < kJournalOldestVersion || version > kJournalVersion) {
      status_ = Fail(absl::StrCat("has format version ", version, ", this ste reads ", kJournalOldestVersion,
                                  " to ", kJournalVersion));
    } else if (got_kind != kind) {
      status_ = Fail(absl::StrCat("is of kind ", got_kind, ", not ", kind));
    }
  }
  uint8_t U8() {
    absl::string_view b = Take(1);
    return b.empty() ? 0 : static_cast<uint8_t>(b[0]);
  }
  bool Flag() {
    uint8_t v = U8();
    if (v > 1 && status_.ok()) status_ = Fail(absl::StrCat("has a flag of value ", v));
    return v == 1;
  }
  uint32_t U32() {
    absl::string_view b = Take(4);
    uint32_t v = 0;
    for (size_t i = 0; i < b.size(); i++) v |= uint32_t{static_cast<unsigned char>(b[i])} << (8 * i);
    return v;
  }
  uint64_t U64() {
    absl::string_view b = Take(8);
    uint64_t v = 0;
    for (size_t i = 0; i < b.size(); i++) v |= uint64_t{static_cast<unsigned char>(b[i])} << (8 * i);
    return v;
  }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  double F64() {
    uint64_t bits = U64();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  std::string Str() {
    uint32_t n = U32();
    return std::string(Take(n));
  }
  // A count of items of at least `min_bytes` each: refused when the bytes
  // left cannot hold them (so a damaged count allocates nothing).
  uint32_t Count(size_t min_bytes) {
    uint32_t n = U32();
    if (status_.ok() && n > rest_.size() / min_bytes) {
      status_ = Fail(absl::StrCat("counts ", n, " items in ", rest_.size(), " bytes"));
      return 0;
    }
    return n;
  }
  absl::Status Done() {
    if (status_.ok() && !rest_.empty()) status_ = Fail(absl::StrCat("has ", rest_.size(), " bytes left over"));
    return status_;
  }
  const absl::Status& status() const { return status_; }
  uint32_t version() const { return version_; }
  absl::Status Fail(const std::string& why) const {
    return absl::DataLossError(absl::StrCat("build journal: ", what_, " ", why));
  }

 private:
  absl::string_view Take(size_t n) {
    if (!status_.ok()) return {};
    if (n > rest_.size()) {
      status_ = Fail(absl::StrCat("ends early (", n, " bytes wanted, ", rest_.size(), " left)"));
      return {};
    }
    absl::string_view b = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return b;
  }

  const char* what_;
  absl::string_view rest_;
  absl::Status status_;
  uint32_t version_ = 0;
};

}  // namespace

std::string EncodeBuildSpec(const BuildSpec& spec) {
  Writer w(kKindSpec);
  w.Str(spec.commit);
  w.I64(spec.mri);
  w.U8(spec.external ? 1 : 0);
  w.U32(static_cast<uint32_t>(spec.tests.size()));
  for (const BuildTest& t : spec.tests) {
    w.Str(t.test);
    w.F64(t.historical_seconds);
  }
  w.Str(spec.inventory.Serialize());
  w.U8(spec.cases ? (spec.case_reads ? 2 : 1) : 0);
  return w.Finish();
}

absl::StatusOr<BuildSpec> DecodeBuildSpec(absl::string_view bytes) {
  Reader r(bytes, kKindSpec, "build spec");
  BuildSpec spec;
  spec.commit = r.Str();
  spec.mri = r.I64();
  spec.external = r.Flag();
  const uint32_t n = r.Count(4 + 8);
  for (uint32_t i = 0; i < n && r.status().ok(); i++) {
    BuildTest t;
    t.test = r.Str();
    t.historical_seconds = r.F64();
    spec.tests.push_back(std::move(t));
  }
  const std::string inventory = r.Str();
  if (r.version() >= 2) {
    const uint8_t cases = r.U8();
    if (cases > 2 && r.status().ok()) return r.Fail(absl::StrCat("has a cases value of ", cases));
    spec.cases = cases >= 1;
    spec.case_reads = cases == 2;
  }
  STE_RETURN_IF_ERROR(r.Done());
  absl::StatusOr<Inventory> parsed = Inventory::Parse(inventory);
  if (!parsed.ok()) return r.Fail(absl::StrCat("has an unreadable inventory: ", parsed.status().message()));
  spec.inventory = *std::move(parsed);
  return spec;
}

std::string EncodeAcceptedRecord(const AcceptedRecord& record) {
  const FinishedTest& f = record.finished;
  Writer w(kKindAccepted);
  w.Str(f.test);
  w.U8(static_cast<uint8_t>(f.outcome));
  w.U32(static_cast<uint32_t>(f.exit_code));
  w.F64(f.seconds);
  w.U8(f.opaque ? 1 : 0);
  w.Str(f.detail);
  w.Str(f.output_log);
  w.U8(f.output_shared ? 1 : 0);
  w.Str(f.output_tail);
  w.U64(f.output_bytes);
  w.Str(f.worker_name);
  w.U32(static_cast<uint32_t>(record.scopes.size()));
  for (const JournalScope& s : record.scopes) {
    w.Str(s.scope);
    for (const std::vector<std::string>& paths : s.paths) {
      w.U32(static_cast<uint32_t>(paths.size()));
      for (const std::string& p : paths) w.Str(p);
    }
  }
  absl::StatusOr<Inventory> external = Inventory::FromEntries(record.external, 0);
  // The entries come from a build's map (unique, valid paths); an error
  // here would be a bug, and an empty inventory keeps the record readable.
  w.Str(external.ok() ? external->Serialize() : Inventory().Serialize());
  w.U8(f.flaky ? 1 : 0);
  w.U32(static_cast<uint32_t>(record.writes.size()));
  for (const std::string& p : record.writes) w.Str(p);
  w.U32(static_cast<uint32_t>(record.case_order.size()));
  for (const std::string& c : record.case_order) w.Str(c);
  return w.Finish();
}

absl::StatusOr<AcceptedRecord> DecodeAcceptedRecord(absl::string_view bytes) {
  Reader r(bytes, kKindAccepted, "accepted result");
  AcceptedRecord record;
  FinishedTest& f = record.finished;
  f.test = r.Str();
  const uint8_t outcome = r.U8();
  f.exit_code = static_cast<int>(r.U32());
  f.seconds = r.F64();
  f.opaque = r.Flag();
  f.detail = r.Str();
  f.output_log = r.Str();
  f.output_shared = r.Flag();
  f.output_tail = r.Str();
  f.output_bytes = r.U64();
  f.worker_name = r.Str();
  const uint32_t scopes = r.Count(4 + 3 * 4);
  for (uint32_t i = 0; i < scopes && r.status().ok(); i++) {
    JournalScope s;
    s.scope = r.Str();
    for (std::vector<std::string>& paths : s.paths) {
      const uint32_t n = r.Count(4);
      for (uint32_t j = 0; j < n && r.status().ok(); j++) paths.push_back(r.Str());
    }
    record.scopes.push_back(std::move(s));
  }
  const std::string external = r.Str();
  if (r.version() >= 2) {
    f.flaky = r.Flag();
    const uint32_t writes = r.Count(4);
    for (uint32_t i = 0; i < writes && r.status().ok(); i++) record.writes.push_back(r.Str());
    const uint32_t cases = r.Count(4);
    for (uint32_t i = 0; i < cases && r.status().ok(); i++) record.case_order.push_back(r.Str());
  }
  STE_RETURN_IF_ERROR(r.Done());
  bool known = false;
  for (TestOutcome o : kTestOutcomes) known = known || static_cast<uint8_t>(o) == outcome;
  if (!known) return r.Fail(absl::StrCat("of ", f.test, " has unknown outcome ", outcome));
  f.outcome = static_cast<TestOutcome>(outcome);
  absl::StatusOr<Inventory> parsed = Inventory::Parse(external);
  if (!parsed.ok()) {
    return r.Fail(absl::StrCat("of ", f.test, " has unreadable external entries: ", parsed.status().message()));
  }
  record.external = parsed->entries();
  return record;
}

}  // namespace ste
