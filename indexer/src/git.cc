#include "ste/git.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ste/timings.h"

extern char** environ;

namespace ste {
namespace {

std::string ReadAll(int fd) {
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> RunAndCapture(const std::vector<std::string>& args) {
  if (args.empty()) return absl::InvalidArgumentError("no command");
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<std::string> argv_s = args;
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    return absl::NotFoundError(absl::StrCat("cannot run ", args[0], ": ", std::strerror(rc)));
  }
  // stderr is small for the programs run here; stdout first, then stderr.
  std::string stdout_text = ReadAll(out[0]);
  std::string stderr_text = ReadAll(err[0]);
  close(out[0]);
  close(err[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string what = args[0];
    if (args[0] == "git") {  // named by its subcommand, past git's own options
      for (size_t i = 1; i < args.size(); i++) {
        if (args[i] == "-C" || args[i] == "-c") {
          i++;
        } else if (args[i].rfind("-", 0) != 0) {
          what = absl::StrCat("git ", args[i]);
          break;
        }
      }
    }
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": ", absl::StripAsciiWhitespace(stderr_text)));
  }
  return stdout_text;
}

absl::StatusOr<std::string> RunGit(const std::string& dir,
                                   const std::vector<std::string>& args) {
  // Programs a git configuration can name and these read-only commands
  // could run, switched off (docs/SECURITY.md, "git"): log.showSignature
  // makes `git log` run gpg.program on every signed commit of the change;
  // no pager (stdout is a pipe anyway); core.fsmonitor is run by commands
  // that refresh the index, which these are not (off all the same).
  std::vector<std::string> argv = {"git",          "--no-pager",
                                   "-c",           "log.showSignature=false",
                                   "-c",           "core.fsmonitor=false",
                                   "-C",           dir};
  argv.insert(argv.end(), args.begin(), args.end());
  ScopedPhase phase(TimingsEnabled() && !args.empty() ? absl::StrCat("git ", args[0]) : std::string());
  return RunAndCapture(argv);
}

absl::StatusOr<std::string> GitHead(const std::string& dir) {
  absl::StatusOr<std::string> out = RunGit(dir, {"rev-parse", "HEAD"});
  if (!out.ok()) return out.status();
  return std::string(absl::StripAsciiWhitespace(*out));
}

}  // namespace ste
