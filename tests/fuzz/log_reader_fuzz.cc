// Copyright: the ste authors. Fuzz target: a per-process log
// (ste/log_format.h) read by ParseLog, the reader every record build runs
// on logs that any traced process could have written.
//
// Property: whatever the bytes, the records returned lie inside them (an
// offset past the end would mean the reader read what is not there), and
// a log read OK reports no lost record.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checksum_repair.h"
#include "fuzz_check.h"
#include "ste/log_reader.h"

namespace {

void Read(std::string_view input) {
  const char* data = input.data();
  const size_t size = input.size();
  std::string_view bytes(data, size);
  ste::ProcessLog log;
  absl::Status status = ste::ParseLog(bytes, "fuzz.stelog", &log);
  for (const ste::LogRecord& r : log.records) {
    STE_FUZZ_CHECK(r.offset < size);
    STE_FUZZ_CHECK(r.path.find('\0') == std::string::npos);
    (void)ste::RecordKindName(r.kind);
    (void)ste::RecordOpName(r.op);
  }
  if (status.ok()) STE_FUZZ_CHECK(log.lost == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Exactly sized copies, so that ASan sees a read one byte past the end.
  const std::vector<char> raw(data, data + size);
  Read(std::string_view(raw.data(), raw.size()));
  std::vector<char> repaired = raw;
  ste::fuzz::RepairLog(repaired.data(), repaired.size());
  if (repaired != raw) Read(std::string_view(repaired.data(), repaired.size()));
  return 0;
}
