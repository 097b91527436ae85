#include "ste/traced_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ste/log_format.h"
#include "ste/log_writer.h"
#include "ste/test_run_env.h"
#include "ste/test_scope.h"

extern char** environ;

namespace ste {
namespace {

// True if `dir` holds a log written by process `pid`.
bool HasLogOf(const std::string& dir, pid_t pid) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  std::string prefix = absl::StrCat("p", pid, "-");
  bool found = false;
  while (struct dirent* e = readdir(d)) {
    absl::string_view name = e->d_name;
    if (absl::StartsWith(name, prefix) && absl::EndsWith(name, STE_LOG_SUFFIX)) {
      found = true;
      break;
    }
  }
  closedir(d);
  return found;
}

// The file execvp would run for `program`, or `program` itself.
std::string ResolveProgram(const std::string& program) {
  if (program.find('/') == std::string::npos) {
    const char* path = std::getenv("PATH");
    for (absl::string_view dir :
         absl::StrSplit(path ? path : "/bin:/usr/bin", ':')) {
      std::string candidate =
          absl::StrCat(dir.empty() ? "." : dir, "/", program);
      if (access(candidate.c_str(), X_OK) == 0) return ResolveProgram(candidate);
    }
    return program;
  }
  char real[PATH_MAX];
  return realpath(program.c_str(), real) ? std::string(real) : program;
}

}  // namespace

std::string DefaultScratchRoot() {
  if (const char* dir = std::getenv("STE_TMPDIR"); dir && *dir) return dir;
  struct statfs fs;
  if (statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC &&
      access("/dev/shm", W_OK | X_OK) == 0) {
    return "/dev/shm";
  }
  if (const char* dir = std::getenv("TMPDIR"); dir && *dir) return dir;
  return "/tmp";
}

absl::StatusOr<std::string> MakeScratchDir(std::string_view kind) {
  const std::string root = DefaultScratchRoot();
  RemoveDeadOwnersDirs(root, std::string(kind));
  std::string dir = OwnedDirPrefix(root, std::string(kind)) + "XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create a scratch directory under ", root, ": ",
                                            std::strerror(errno)));
  }
  return dir;
}

bool IsValidScope(std::string_view scope) {
  if (scope == kRootScope) return true;
  return IsTestScope(scope) && scope.back() != '/' &&
         scope.find("//", 2) == std::string_view::npos &&
         scope.find('\0') == std::string_view::npos;
}

namespace {

// The directory of the running executable.
absl::StatusOr<std::string> ExecutableDir() {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return absl::NotFoundError("cannot read /proc/self/exe");
  exe[n] = '\0';
  return std::string(exe, std::string(exe).rfind('/'));
}

}  // namespace

absl::StatusOr<std::string> FindPreloadLibrary() {
  struct stat st;
  if (const char* env = std::getenv("STE_PRELOAD"); env && *env) {
    if (stat(env, &st) != 0) {
      return absl::NotFoundError(
          absl::StrCat("STE_PRELOAD=", env, ": ", std::strerror(errno)));
    }
    char real[PATH_MAX];
    if (realpath(env, real) == nullptr) return std::string(env);
    return std::string(real);
  }
  absl::StatusOr<std::string> found = FindPrivateFile("libste_preload.so");
  if (!found.ok()) {
    return absl::NotFoundError(absl::StrCat(found.status().message(), "; set STE_PRELOAD to its path"));
  }
  return found;
}

absl::StatusOr<std::string> FindPrivateFile(const std::string& name) {
  absl::StatusOr<std::string> dir = ExecutableDir();
  if (!dir.ok()) return dir.status();
  struct stat st;
  for (const std::string& candidate :
       {absl::StrCat(*dir, "/", name), absl::StrCat(*dir, "/../lib/ste/", name)}) {
    if (stat(candidate.c_str(), &st) == 0) return candidate;
  }
  return absl::NotFoundError(
      absl::StrCat(name, " not found beside ", *dir, "/ste nor in ../lib/ste/"));
}

absl::StatusOr<std::string> FindIntegrationsDir() {
  struct stat st;
  if (const char* env = std::getenv("STE_INTEGRATIONS"); env && *env) {
    if (stat(env, &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::NotFoundError(absl::StrCat("STE_INTEGRATIONS=", env, " is not a directory"));
    }
    return std::string(env);
  }
  absl::StatusOr<std::string> dir = ExecutableDir();
  if (!dir.ok()) return dir.status();
  const std::string exe = *dir + "/ste";
  for (const std::string& candidate :
       {absl::StrCat(*dir, "/integrations"), absl::StrCat(*dir, "/../share/ste/integrations")}) {
    if (stat(candidate.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      char real[PATH_MAX];
      return realpath(candidate.c_str(), real) ? std::string(real) : candidate;
    }
  }
  return absl::NotFoundError(absl::StrCat("the integrations folder is not beside ", exe,
                                          " nor in ../share/ste/; set STE_INTEGRATIONS"));
}

absl::StatusOr<TracedExit> RunTraced(const TracedRunOptions& options) {
  if (options.argv.empty()) {
    return absl::InvalidArgumentError("no command to run");
  }
  if (!IsValidScope(options.scope)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad scope '", options.scope, "': expected //r or //r/<name>..."));
  }
  struct stat st;
  if (stat(options.log_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(
        absl::StrCat("log directory '", options.log_dir, "' does not exist"));
  }
  if (stat(options.preload_library.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(
        "preload library '", options.preload_library, "' does not exist"));
  }

  // The child's environment: ours, minus the ste variables, plus them.
  std::vector<std::string> env;
  std::string preload;
  for (char** e = environ; *e != nullptr; ++e) {
    absl::string_view entry = *e;
    if (absl::StartsWith(entry, "LD_PRELOAD=")) {
      preload = std::string(entry.substr(11));
      continue;
    }
    // STE_SEEN: what a traced parent wrote, which a new run has not.
    if (absl::StartsWith(entry, "STE_LOG_DIR=") || absl::StartsWith(entry, "STE_SCOPE=") ||
        absl::StartsWith(entry, "STE_SEEN=")) {
      continue;
    }
    bool overridden = false;
    for (const std::string& extra : options.extra_env) {
      absl::string_view name(extra.data(), extra.find('=') + 1);
      if (absl::StartsWith(entry, name)) overridden = true;
    }
    if (!overridden) env.emplace_back(entry);
  }
  bool present = false;
  for (absl::string_view token :
       absl::StrSplit(preload, absl::ByAnyChar(" :"), absl::SkipEmpty())) {
    if (token == options.preload_library) present = true;
  }
  if (!present) {
    preload = preload.empty() ? options.preload_library
                              : absl::StrCat(preload, " ",
                                             options.preload_library);
  }
  env.push_back(absl::StrCat("LD_PRELOAD=", preload));
  env.push_back(absl::StrCat("STE_LOG_DIR=", options.log_dir));
  env.push_back(absl::StrCat("STE_SCOPE=", options.scope));
  for (const std::string& extra : options.extra_env) env.push_back(extra);

  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = options.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // The output file is opened here, close-on-exec (another thread's spawn
  // must not inherit it), above the standard descriptors (dup2 onto
  // itself would keep close-on-exec), and given to the child as 1 and 2.
  int output = -1;
  if (!options.output_file.empty()) {
    output = open(options.output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (output >= 0 && output <= 2) {
      const int low = output;
      output = fcntl(low, F_DUPFD_CLOEXEC, 3);
      const int saved = errno;
      close(low);
      errno = saved;
    }
    if (output < 0) {
      return absl::NotFoundError(absl::StrCat("cannot create the output file '", options.output_file,
                                              "': ", std::strerror(errno)));
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (output >= 0) {
    posix_spawn_file_actions_adddup2(&actions, output, 1);
    posix_spawn_file_actions_adddup2(&actions, output, 2);
  }
  if (!options.working_directory.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions,
                                         options.working_directory.c_str());
  }
  auto start = std::chrono::steady_clock::now();
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(),
                        envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (output >= 0) close(output);
  if (rc != 0) {
    return absl::NotFoundError(absl::StrCat("cannot run '", options.argv[0],
                                            "': ", std::strerror(rc)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return absl::InternalError(
          absl::StrCat("waitpid: ", std::strerror(errno)));
    }
  }
  TracedExit result;
  result.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  if (!HasLogOf(options.log_dir, pid)) {
    result.root_unfollowed = true;
    absl::Status written = WriteLogFile(
        options.log_dir, static_cast<uint32_t>(pid), static_cast<uint32_t>(getpid()),
        {LogEntry{options.scope, RecordKind::kUnfollowed, STE_OP_EXEC,
                  ResolveProgram(options.argv[0])}});
    if (!written.ok()) return written;
  }
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = 128 + result.signal;
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

}  // namespace ste
