// `ste run [--scope S] [--log-dir D] -- CMD ARGS...`
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "commands.h"
#include "invocation.h"
#include "ste/traced_run.h"

namespace ste::cli {
namespace {

const std::vector<FlagSpec> kRunFlags = {
    {"scope", 0, true, "SCOPE",
     "scope of the process tree (default //r; a test: //r/<path>)"},
    {"log-dir", 0, true, "DIR",
     "write the per-process logs here (created if missing; default: a new "
     "directory under $STE_TMPDIR, else /dev/shm when it is tmpfs, else "
     "$TMPDIR; printed on stderr)"},
};

constexpr char kRunHelp[] =
    "Usage: ste run [--scope SCOPE] [--log-dir DIR] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD with libste_preload.so, which records in DIR, for every\n"
    "process CMD starts, each file it reads, looks for, lists, writes or\n"
    "executes. Read the records with 'ste log dump DIR'.\n"
    "\n"
    "Exit status: CMD's exit status (128+N if a signal N killed it); 2 for\n"
    "bad usage; 127 if CMD cannot be started.\n"
    "\n";

int MakeDirs(const std::string& dir) {
  std::string partial;
  for (size_t i = 0; i <= dir.size(); i++) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      partial = dir.substr(0, i);
      if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return -1;
    }
  }
  return 0;
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  Invocation in({"run", kRunHelp, kRunFlags, {}, /*stop_at_positional=*/true});
  if (std::optional<int> done = in.Parse(args)) return *done;
  const ParsedFlags* flags = &in.flags();
  if (flags->rest.empty()) return in.UsageError("no command given");

  TracedRunOptions options;
  options.argv = flags->rest;
  options.scope = flags->Get("scope", "//r");
  if (!IsValidScope(options.scope)) {
    return in.UsageError(absl::StrCat("bad scope '", options.scope,
                                      "': expected //r or //r/<name>..."));
  }
  auto preload = FindPreloadLibrary();
  if (!preload.ok()) return in.Fail(preload.status());
  options.preload_library = *preload;

  std::string dir = flags->Get("log-dir");
  if (dir.empty()) {
    std::string pattern = absl::StrCat(DefaultScratchRoot(), "/ste-run-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      return in.Fail(absl::StrCat("cannot create a log directory: ", std::strerror(errno)));
    }
    dir = pattern;
    std::fprintf(stderr, "ste: logs in %s\n", dir.c_str());
  } else if (MakeDirs(dir) != 0) {
    return in.Fail(absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  if (dir[0] != '/') {
    char* abs = realpath(dir.c_str(), nullptr);
    if (abs != nullptr) {
      dir = abs;
      std::free(abs);
    }
  }
  options.log_dir = dir;

  auto exit = RunTraced(options);
  if (!exit.ok()) {
    return in.Fail(exit.status(), absl::IsNotFound(exit.status()) ? Outcome::kNotStarted
                                                                   : Outcome::kFailure);
  }
  if (exit->root_unfollowed) {
    std::fprintf(stderr,
                 "ste run: warning: %s left no log (a static or setuid "
                 "program?); recorded as unfollowed\n",
                 options.argv[0].c_str());
  }
  return exit->exit_code;  // CMD's own status, as it is
}

}  // namespace ste::cli
