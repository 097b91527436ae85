// Reads the per-process logs written by libste_preload.so.
//
// The format is defined in ste/log_format.h (interceptor/include), the one
// contract between writer and reader. A reader never stops at the first
// problem: it returns every record it could read, and a Status naming the
// file and byte offset of what was wrong.
//
// What counts as an error (the log cannot be trusted to be complete):
//   a short or foreign header, an unknown version, a cursor past the end
//   of the file (truncated), a record whose fields disagree (size, check,
//   undefined scope id), records the writer reported as lost.
// What does not: an incomplete record (its size word still 0), which is
// what a process killed inside a hook leaves; it is skipped and counted.
#ifndef STE_LOG_READER_H_
#define STE_LOG_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace ste {

// The record kinds of ste/log_format.h, without the internal SCOPE kind.
enum class RecordKind : uint8_t {
  kContent = 1,
  kAbsent = 2,
  kListing = 3,
  kWrite = 4,
  kUnfollowed = 5,
};

// "content", "absent", "listing", "write", "unfollowed".
std::string_view RecordKindName(RecordKind kind);
// "open", "fopen", "stat", ... ("op<N>" for an unknown op).
std::string RecordOpName(uint8_t op);

struct LogRecord {
  std::string scope;  // e.g. "//r/tests/test_a.py"
  RecordKind kind;
  uint8_t op;         // SteRecordOp
  std::string path;   // absolute, normalised; any bytes but NUL
  uint64_t offset;    // of the record in its file
};

struct ProcessLog {
  std::string file;  // path of the log file
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t start_ns = 0;
  uint32_t flags = 0;           // SteLogFlags
  uint64_t lost = 0;            // records the writer dropped
  uint64_t incomplete_records = 0;  // reserved, never completed (killed)
  std::vector<LogRecord> records;
  absl::Status status;  // what ReadLogFile returned for this file
};

// Reads one log file into *out (which is overwritten). Returns OK, or the
// first error found; *out holds every record that could be read either way.
absl::Status ReadLogFile(const std::string& path, ProcessLog* out);

// Same, from bytes already in memory (`name` is used in messages).
absl::Status ParseLog(std::string_view bytes, const std::string& name,
                      ProcessLog* out);

// Reads every *.stelog in `dir`, ordered by (start_ns, pid, file). Returns
// the first error (each file is still read to its end); *out holds every
// log and record that could be read.
absl::Status ReadLogDir(const std::string& dir, std::vector<ProcessLog>* out);

}  // namespace ste

#endif  // STE_LOG_READER_H_
