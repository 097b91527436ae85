#include "ste/log_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ste/log_format.h"

namespace ste {
namespace {

static_assert(sizeof(SteLogHeader) == STE_LOG_HEADER_SIZE, "log header");
static_assert(sizeof(SteRecordHeader) == STE_LOG_RECORD_HEADER_SIZE, "record");

absl::Status FileError(const std::string& name, uint64_t offset,
                       std::string_view what) {
  return absl::DataLossError(
      absl::StrFormat("%s: offset %d: %s", name, offset, what));
}

// A record at `off` whose every field is consistent, or false.
bool PlausibleRecord(std::string_view bytes, uint64_t off, uint64_t end,
                     SteRecordHeader* rec) {
  if (off + STE_LOG_RECORD_HEADER_SIZE > end) return false;
  std::memcpy(rec, bytes.data() + off, sizeof *rec);
  if (rec->size < STE_LOG_RECORD_HEADER_SIZE + 8 || rec->size % 8 != 0 ||
      off + rec->size > end || rec->kind > STE_KIND_MAX ||
      rec->op > STE_OP_MAX ||
      rec->path_len >= rec->size - STE_LOG_RECORD_HEADER_SIZE ||
      ste_log_record_size(rec->path_len) != rec->size) {
    return false;
  }
  const char* path = bytes.data() + off + STE_LOG_RECORD_HEADER_SIZE;
  if (path[rec->path_len] != '\0' ||
      std::memchr(path, '\0', rec->path_len) != nullptr) {
    return false;
  }
  return ste_log_check(rec->kind, rec->op, rec->scope_id, path,
                       rec->path_len) == rec->check;
}

}  // namespace

std::string_view RecordKindName(RecordKind kind) {
  switch (kind) {
    case RecordKind::kContent: return "content";
    case RecordKind::kAbsent: return "absent";
    case RecordKind::kListing: return "listing";
    case RecordKind::kWrite: return "write";
    case RecordKind::kUnfollowed: return "unfollowed";
  }
  return "unknown";
}

std::string RecordOpName(uint8_t op) {
  static constexpr const char* kNames[] = {
      "none",    "open",   "fopen",  "stat",   "access",
      "readlink", "opendir", "dlopen", "exec",  "spawn",
      "loaded",  "realpath", "path_search", "scope", "getenv"};
  if (op < sizeof kNames / sizeof kNames[0]) return kNames[op];
  return absl::StrCat("op", op);
}

absl::Status ParseLog(std::string_view bytes, const std::string& name,
                      ProcessLog* out) {
  *out = ProcessLog{};
  out->file = name;
  if (bytes.size() < STE_LOG_HEADER_SIZE) {
    return FileError(name, 0,
                     absl::StrFormat("truncated header (%d of %d bytes)",
                                     bytes.size(), STE_LOG_HEADER_SIZE));
  }
  SteLogHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, STE_LOG_MAGIC, 8) != 0) {
    return FileError(name, 0, "not a ste log (bad magic)");
  }
  if (h.version != STE_LOG_VERSION) {
    return FileError(name, 8,
                     absl::StrFormat("unsupported log version %d (this ste "
                                     "reads version %d)",
                                     h.version, STE_LOG_VERSION));
  }
  if (h.header_size != STE_LOG_HEADER_SIZE) {
    return FileError(name, 12, "unexpected header size");
  }
  out->pid = h.pid;
  out->ppid = h.ppid;
  out->start_ns = h.start_ns;
  out->flags = h.flags;
  out->lost = h.lost;

  absl::Status status;
  auto note = [&status](absl::Status s) {
    if (status.ok()) status = std::move(s);
  };
  uint64_t end = h.cursor;
  if (end < STE_LOG_HEADER_SIZE) {
    return FileError(name, 24, "cursor before the first record");
  }
  if (end > bytes.size()) {
    note(FileError(name, bytes.size(),
                   absl::StrFormat("truncated: records reach %d but the file "
                                   "has %d bytes",
                                   end, bytes.size())));
    end = bytes.size();
  }
  // The writer reserves before it writes, so nothing but zeros lies past
  // the cursor. Data there means a damaged cursor: say so, and read on to
  // the last data (more records can only widen a selection).
  uint64_t last = bytes.size();
  while (last > end && bytes[last - 1] == '\0') last--;
  if (last > end) {
    note(FileError(name, end,
                   absl::StrFormat("data after the end of records (up to "
                                   "offset %d): damaged cursor",
                                   last)));
    end = std::min<uint64_t>(bytes.size(), (last + 7) & ~uint64_t{7});
  }
  absl::flat_hash_map<uint32_t, std::string> scopes;
  uint64_t off = STE_LOG_HEADER_SIZE;
  while (off + STE_LOG_RECORD_HEADER_SIZE <= end) {
    uint32_t size;
    std::memcpy(&size, bytes.data() + off, 4);
    SteRecordHeader rec;
    bool plausible = PlausibleRecord(bytes, off, end, &rec);
    if (!plausible) {
      if (size == 0) {
        out->incomplete_records++;
      } else {
        note(FileError(name, off, "corrupt record"));
      }
      // Resynchronise on the next consistent record.
      uint64_t next = off + 8;
      while (next + STE_LOG_RECORD_HEADER_SIZE <= end &&
             !PlausibleRecord(bytes, next, end, &rec)) {
        next += 8;
      }
      off = next + STE_LOG_RECORD_HEADER_SIZE <= end ? next : end;
      continue;
    }
    std::string_view path(bytes.data() + off + STE_LOG_RECORD_HEADER_SIZE,
                          rec.path_len);
    if (rec.kind == STE_KIND_SCOPE) {
      scopes[rec.scope_id] = std::string(path);
    } else {
      auto it = scopes.find(rec.scope_id);
      if (it == scopes.end()) {
        note(FileError(name, off,
                       absl::StrFormat("record uses undefined scope id %d",
                                       rec.scope_id)));
      } else {
        out->records.push_back(LogRecord{it->second,
                                         static_cast<RecordKind>(rec.kind),
                                         rec.op, std::string(path), off});
      }
    }
    off += rec.size;
  }
  if (off < end) {
    note(FileError(name, off, "truncated record at the end of the log"));
  }
  if (out->lost > 0) {
    note(FileError(name, 40,
                   absl::StrFormat("the writer dropped %d records (log full "
                                   "or could not grow)",
                                   out->lost)));
  }
  return status;
}

absl::Status ReadLogFile(const std::string& path, ProcessLog* out) {
  *out = ProcessLog{};
  out->file = path;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return absl::DataLossError(
          absl::StrCat(path, ": read error: ", std::strerror(err)));
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return ParseLog(bytes, path, out);
}

absl::Status ReadLogDir(const std::string& dir, std::vector<ProcessLog>* out) {
  out->clear();
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(dir, ": cannot list: ", std::strerror(errno)));
  }
  std::vector<std::string> files;
  const std::string_view suffix = STE_LOG_SUFFIX;
  while (struct dirent* e = readdir(d)) {
    std::string_view name = e->d_name;
    if (name.size() > suffix.size() &&
        name.substr(name.size() - suffix.size()) == suffix) {
      files.push_back(dir + "/" + std::string(name));
    }
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  absl::Status status;
  for (const std::string& file : files) {
    ProcessLog log;
    absl::Status s = ReadLogFile(file, &log);
    if (!s.ok() && status.ok()) status = s;
    log.status = s;
    out->push_back(std::move(log));
  }
  std::stable_sort(out->begin(), out->end(),
                   [](const ProcessLog& a, const ProcessLog& b) {
                     return std::tie(a.start_ns, a.pid) <
                            std::tie(b.start_ns, b.pid);
                   });
  return status;
}

}  // namespace ste
