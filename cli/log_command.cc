// `ste log dump [--format text|json] DIR|FILE`
#include <sys/stat.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "commands.h"
#include "invocation.h"
#include "output_format.h"
#include "ste/log_reader.h"

namespace ste::cli {
namespace {

constexpr char kLogHelp[] =
    "Usage: ste log dump [--format text|json] DIR|FILE\n"
    "\n"
    "Prints every record of every log in DIR (or of one log FILE), one per\n"
    "line, logs ordered by start time. Text columns, tab-separated:\n"
    "  pid  ppid  scope  kind  op  path\n"
    "kind is content, absent, listing, write or unfollowed; op is the call\n"
    "that produced it. Paths are escaped (\\n, \\t, \\\\, \\xNN) so that one\n"
    "record is one line. json (or --json) prints objects with the keys pid,\n"
    "ppid, scope, kind, op, path (and path_hex when the path is not UTF-8),\n"
    "log, version (1).\n"
    "\n"
    "A corrupt or truncated log is reported on stderr with its file and byte\n"
    "offset; every readable record is still printed, and the exit status is\n"
    "1. Exit status 0: every log was whole.\n"
    "\n";

const CommandSpec kDumpSpec = {"log dump", kLogHelp, {}, {OutputFormat::kText, OutputFormat::kJson}};

}  // namespace

int LogCommand(const std::vector<std::string>& args) {
  Invocation in(kDumpSpec);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    in.Parse({"--help"});  // the help, on stdout
    return ExitCode(args.empty() ? Outcome::kUsage : Outcome::kSuccess);
  }
  if (args[0] != "dump") {
    return UsageError("log", absl::StrCat("unknown subcommand '", args[0], "'"));
  }
  if (std::optional<int> done = in.Parse({args.begin() + 1, args.end()})) return *done;
  if (in.flags().positional.size() != 1) return in.UsageError("expected one DIR or FILE");
  const std::string& target = in.flags().positional[0];
  struct stat st;
  if (stat(target.c_str(), &st) != 0) {
    return in.Fail(target + " does not exist");
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
    for (const LogRecord& r : log.records) {
      const std::string line = LogRecordLine(log, r, in.format());
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
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
  return ExitCode(status.ok() ? Outcome::kSuccess : Outcome::kFailure);
}

}  // namespace ste::cli
