// `ste log dump [--json] DIR|FILE`
#include <sys/stat.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "commands.h"
#include "flags.h"
#include "ste/json.h"
#include "ste/log_reader.h"

namespace ste::cli {
namespace {

const std::vector<FlagSpec> kDumpFlags = {
    {"json", 0, false, "", "one JSON object per line"},
};

constexpr char kLogHelp[] =
    "Usage: ste log dump [--json] DIR|FILE\n"
    "\n"
    "Prints every record of every log in DIR (or of one log FILE), one per\n"
    "line, logs ordered by start time. Text columns, tab-separated:\n"
    "  pid  ppid  scope  kind  op  path\n"
    "kind is content, absent, listing, write or unfollowed; op is the call\n"
    "that produced it. Paths are escaped (\\n, \\t, \\\\, \\xNN) so that one\n"
    "record is one line. --json prints objects with the keys pid, ppid,\n"
    "scope, kind, op, path (and path_hex when the path is not UTF-8), log.\n"
    "\n"
    "A corrupt or truncated log is reported on stderr with its file and byte\n"
    "offset; every readable record is still printed, and the exit status is\n"
    "1. Exit status 0: every log was whole.\n"
    "\n";

void PrintRecord(const ProcessLog& log, const LogRecord& r, bool json) {
  std::string line;
  if (json) {
    absl::StrAppendFormat(&line, "{\"pid\":%d,\"ppid\":%d,", log.pid, log.ppid);
    AppendJsonPathField("scope", r.scope, &line);
    absl::StrAppend(&line, ",\"kind\":\"", std::string(RecordKindName(r.kind)),
                    "\",\"op\":\"", RecordOpName(r.op), "\",");
    AppendJsonPathField("path", r.path, &line);
    line.push_back(',');
    AppendJsonPathField("log", log.file, &line);
    line.append("}\n");
  } else {
    absl::StrAppend(&line, log.pid, "\t", log.ppid, "\t",
                    EscapeForText(r.scope), "\t",
                    std::string(RecordKindName(r.kind)), "\t",
                    RecordOpName(r.op), "\t", EscapeForText(r.path), "\n");
  }
  std::fwrite(line.data(), 1, line.size(), stdout);
}

}  // namespace

int LogCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::printf("%s%s", kLogHelp, FlagsHelp(kDumpFlags).c_str());
    return args.empty() ? 2 : 0;
  }
  if (args[0] != "dump") {
    return UsageError("log", absl::StrCat("unknown subcommand '", args[0], "'"));
  }
  auto flags = ParseFlags({args.begin() + 1, args.end()}, kDumpFlags);
  if (!flags.ok()) return UsageError("log", std::string(flags.status().message()));
  if (flags->Has("help")) {
    std::printf("%s%s", kLogHelp, FlagsHelp(kDumpFlags).c_str());
    return 0;
  }
  if (flags->positional.size() != 1) {
    return UsageError("log", "expected one DIR or FILE");
  }
  const std::string& target = flags->positional[0];
  const bool json = flags->Has("json");
  struct stat st;
  if (stat(target.c_str(), &st) != 0) {
    std::fprintf(stderr, "ste log dump: %s does not exist\n", target.c_str());
    return 1;
  }
  std::vector<ProcessLog> logs;
  absl::Status status;
  if (S_ISDIR(st.st_mode)) {
    status = ReadLogDir(target, &logs);
  } else {
    logs.emplace_back();
    status = ReadLogFile(target, &logs.back());
    logs.back().status = status;
  }
  for (const ProcessLog& log : logs) {
    for (const LogRecord& r : log.records) PrintRecord(log, r, json);
  }
  std::fflush(stdout);
  for (const ProcessLog& log : logs) {
    if (!log.status.ok()) {
      std::fprintf(stderr, "ste log dump: %s\n",
                   std::string(log.status.message()).c_str());
    }
    if (log.incomplete_records > 0) {
      std::fprintf(stderr,
                   "ste log dump: %s: %d incomplete record(s) skipped (the "
                   "process was killed inside a hook)\n",
                   log.file.c_str(), static_cast<int>(log.incomplete_records));
    }
  }
  return status.ok() ? 0 : 1;
}

}  // namespace ste::cli
