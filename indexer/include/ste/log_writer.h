// Encodes logs in the format of ste/log_format.h from user space.
//
// The interceptor writes its own logs; this encoder is for records ste
// makes on a process's behalf — a traced command whose first process the
// interceptor could not enter (a static or setuid program) is recorded as
// `unfollowed` this way — and for tests that need exact bytes.
#ifndef STE_LOG_WRITER_H_
#define STE_LOG_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ste/log_reader.h"

namespace ste {

struct LogEntry {
  std::string scope;  // "//r/..."
  RecordKind kind;
  uint8_t op;         // SteRecordOp
  std::string path;
};

// The bytes of a whole, valid log holding `entries` in order (each scope
// defined before its first use).
std::string EncodeLog(uint32_t pid, uint32_t ppid, uint64_t start_ns,
                      const std::vector<LogEntry>& entries);

// Writes EncodeLog(...) as a new file in `dir`, named as the interceptor
// names its logs, atomically (temporary name, then rename).
absl::Status WriteLogFile(const std::string& dir, uint32_t pid, uint32_t ppid,
                          const std::vector<LogEntry>& entries);

}  // namespace ste

#endif  // STE_LOG_WRITER_H_
