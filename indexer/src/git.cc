#include "ste/git.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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

// Where a spawned program's standard descriptor goes: a descriptor of
// ours (dup2'd), or these.
constexpr int kInherit = -1;
constexpr int kDevNull = -2;

// posix_spawnp of args[0] (looked up in PATH) with its stdin, stdout and
// stderr set as `fds` says; 0 or the error number.
int SpawnProgram(const std::vector<std::string>& args, const int (&fds)[3], pid_t* pid) {
  std::vector<std::string> argv_s = args;
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int target = 0; target < 3; target++) {
    if (fds[target] >= 0) posix_spawn_file_actions_adddup2(&fa, fds[target], target);
    if (fds[target] == kDevNull) {
      posix_spawn_file_actions_addopen(&fa, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0);
    }
  }
  const int rc = posix_spawnp(pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}

// `git` with the options every git command of ste gets (RunGit), then `args`.
std::vector<std::string> GitArgv(const std::string& dir, const std::vector<std::string>& args) {
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
  return argv;
}

}  // namespace

absl::StatusOr<std::string> RunAndCapture(const std::vector<std::string>& args) {
  if (args.empty()) return absl::InvalidArgumentError("no command");
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  pid_t pid;
  const int rc = SpawnProgram(args, {kInherit, out[1], err[1]}, &pid);
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
  std::vector<std::string> argv = GitArgv(dir, args);
  ScopedPhase phase(TimingsEnabled() && !args.empty() ? absl::StrCat("git ", args[0]) : std::string());
  return RunAndCapture(argv);
}

absl::StatusOr<std::unique_ptr<GitObjectReader>> GitObjectReader::Start(const std::string& dir) {
  int in[2], out[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) {
    return absl::InternalError(absl::StrCat("socketpair: ", std::strerror(errno)));
  }
  if (pipe2(out, O_CLOEXEC) != 0) {
    const int err = errno;
    close(in[0]);
    close(in[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(err)));
  }
  // Its answers for a missing object are on stdout; stderr says only why
  // it could not start or went on, which Read reports as the process gone.
  pid_t pid;
  const int rc = SpawnProgram(GitArgv(dir, {"cat-file", "--batch"}), {in[1], out[1], kDevNull}, &pid);
  close(in[1]);
  close(out[1]);
  if (rc != 0) {
    close(in[0]);
    close(out[0]);
    return absl::NotFoundError(absl::StrCat("cannot run git: ", std::strerror(rc)));
  }
  return std::unique_ptr<GitObjectReader>(new GitObjectReader(pid, in[0], out[0]));
}

GitObjectReader::GitObjectReader(pid_t pid, int to_git, int from_git)
    : pid_(pid), to_git_(to_git), from_git_(from_git) {}

GitObjectReader::~GitObjectReader() {
  close(to_git_);  // end of its input: it exits
  close(from_git_);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

bool GitObjectReader::ReadLine(std::string* line) {
  for (;;) {
    const size_t eol = buffer_.find('\n');
    if (eol != std::string::npos) {
      line->assign(buffer_, 0, eol);
      buffer_.erase(0, eol + 1);
      return true;
    }
    char chunk[8192];
    const ssize_t n = read(from_git_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

bool GitObjectReader::ReadExactly(size_t n, std::string* out) {
  while (buffer_.size() < n) {
    char chunk[65536];
    const ssize_t got = read(from_git_, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(got));
  }
  out->assign(buffer_, 0, n);
  buffer_.erase(0, n);
  return true;
}

absl::StatusOr<GitObject> GitObjectReader::Read(const std::string& name) {
  if (name.empty() || name.find('\n') != std::string::npos) {
    return absl::InvalidArgumentError("git cat-file: an object name must be one non-empty line");
  }
  ScopedPhase phase("git cat-file --batch: one object");
  const std::string request = name + "\n";
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = send(to_git_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError("git cat-file --batch ended early");
    sent += static_cast<size_t>(n);
  }
  // "<oid> <type> <size>", the content and a newline; or "<name> missing"
  // (or "ambiguous").
  std::string header;
  if (!ReadLine(&header)) return absl::UnavailableError("git cat-file --batch ended early");
  std::vector<std::string> words = absl::StrSplit(header, ' ');
  if (words.size() == 2 && (words[1] == "missing" || words[1] == "ambiguous")) {
    return absl::NotFoundError(absl::StrCat("object ", name, " is ", words[1]));
  }
  size_t size = 0;
  if (words.size() != 3 || !absl::SimpleAtoi(words[2], &size)) {
    return absl::UnavailableError(absl::StrCat("git cat-file --batch printed '", header, "'"));
  }
  GitObject object;
  object.type = words[1];
  std::string newline;
  if (!ReadExactly(size, &object.content) || !ReadExactly(1, &newline) || newline != "\n") {
    return absl::UnavailableError("git cat-file --batch ended in the middle of an object");
  }
  return object;
}

absl::StatusOr<std::string> GitHead(const std::string& dir) {
  absl::StatusOr<std::string> out = RunGit(dir, {"rev-parse", "HEAD"});
  if (!out.ok()) return out.status();
  return std::string(absl::StripAsciiWhitespace(*out));
}

}  // namespace ste
