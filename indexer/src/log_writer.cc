#include "ste/log_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ste/atomic_file.h"
#include "absl/strings/str_format.h"
#include "ste/log_format.h"

namespace ste {
namespace {

void AppendRecord(uint8_t kind, uint8_t op, uint32_t scope_id,
                  const std::string& path, std::string* out) {
  SteRecordHeader r{};
  r.size = ste_log_record_size(static_cast<uint32_t>(path.size()));
  r.kind = kind;
  r.op = op;
  r.scope_id = scope_id;
  r.path_len = static_cast<uint32_t>(path.size());
  r.check = ste_log_check(kind, op, scope_id, path.data(), r.path_len);
  size_t at = out->size();
  out->append(reinterpret_cast<const char*>(&r), sizeof r);
  out->append(path);
  out->resize(at + r.size, '\0');
}

}  // namespace

std::string EncodeLog(uint32_t pid, uint32_t ppid, uint64_t start_ns,
                      const std::vector<LogEntry>& entries) {
  std::string out(STE_LOG_HEADER_SIZE, '\0');
  absl::flat_hash_map<std::string, uint32_t> scope_ids;
  for (const LogEntry& e : entries) {
    auto [it, added] = scope_ids.try_emplace(e.scope, scope_ids.size() + 1);
    if (added) AppendRecord(STE_KIND_SCOPE, STE_OP_SCOPE, it->second, e.scope, &out);
    AppendRecord(static_cast<uint8_t>(e.kind), e.op, it->second, e.path, &out);
  }
  SteLogHeader h{};
  std::memcpy(h.magic, STE_LOG_MAGIC, 8);
  h.version = STE_LOG_VERSION;
  h.header_size = STE_LOG_HEADER_SIZE;
  h.pid = pid;
  h.ppid = ppid;
  h.start_ns = start_ns;
  h.cursor = out.size();
  h.capacity = out.size();
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

absl::Status WriteLogFile(const std::string& dir, uint32_t pid, uint32_t ppid,
                          const std::vector<LogEntry>& entries) {
  uint64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  std::string bytes = EncodeLog(pid, ppid, now, entries);
  std::string name = absl::StrFormat("%s/p%d-%x%s", dir, pid, now, STE_LOG_SUFFIX);
  // Whole or not at all: a reader takes only names ending in
  // STE_LOG_SUFFIX, never the temporary (ste/atomic_file.h).
  absl::Status written = WriteFileAtomically(name, bytes);
  if (!written.ok()) {
    return absl::UnavailableError(absl::StrCat(name, ": cannot write: ", written.message()));
  }
  return absl::OkStatus();
}

}  // namespace ste
