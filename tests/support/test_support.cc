#include "test_support.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

extern char** environ;

namespace ste::testing {

std::string SteBinary(const char* built) {
  const char* chosen = std::getenv("STE_TEST_BINARY");
  return chosen != nullptr && *chosen != '\0' ? std::string(chosen) : std::string(built);
}

namespace {

// The directories MakeTempDir made in this process, removed at its end
// (MakeTempDir's comment). atexit runs the removal before gtest's own
// statics go (they were made first), so whether the tests passed is known.
struct MadeDirs {
  std::mutex mu;
  pid_t owner = 0;
  std::vector<std::string> dirs;
};

MadeDirs& Made() {
  static MadeDirs* made = new MadeDirs;  // (never destroyed: read at exit)
  return *made;
}

void RemoveMadeDirs() {
  MadeDirs& made = Made();
  std::lock_guard<std::mutex> lock(made.mu);
  if (made.owner != getpid() || made.dirs.empty()) return;  // a forked child's exit
  const char* keep = std::getenv("STE_KEEP_TEST_DIRS");
  const ::testing::UnitTest* unit = ::testing::UnitTest::GetInstance();
  if ((keep != nullptr && *keep != '\0') || unit == nullptr || !unit->Passed()) {
    std::fprintf(stderr, "test_support: kept %zu test director%s, e.g. %s\n", made.dirs.size(),
                 made.dirs.size() == 1 ? "y" : "ies", made.dirs.front().c_str());
    return;
  }
  for (const std::string& dir : made.dirs) {
    std::error_code ignored;  // (what cannot be removed stays)
    std::filesystem::remove_all(dir, ignored);
  }
  made.dirs.clear();
}

}  // namespace

std::string MakeTempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ste-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  char real[PATH_MAX];
  std::string dir = realpath(pattern.c_str(), real) ? std::string(real) : pattern;
  MadeDirs& made = Made();
  std::lock_guard<std::mutex> lock(made.mu);
  if (made.owner != getpid()) {  // the first in this process (or a forked child's own)
    made.owner = getpid();
    made.dirs.clear();
    std::atexit(RemoveMadeDirs);
  }
  made.dirs.push_back(dir);
  return dir;
}

void WriteFile(const std::string& path, const std::string& content) {
  for (size_t i = 1; i < path.size(); i++) {
    if (path[i] == '/') mkdir(path.substr(0, i).c_str(), 0755);
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Process::Process(const std::vector<std::string>& argv,
                 const std::vector<std::string>& extra_env, const std::string& cwd,
                 const std::string& out_file, const std::string& err_file)
    : out_file_(out_file), err_file_(err_file) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    bool overridden = false;
    for (const std::string& x : extra_env) {
      size_t eq = x.find('=') + 1;
      if (entry.compare(0, eq, x, 0, eq) == 0) overridden = true;
    }
    if (!overridden) env.push_back(entry);
  }
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp, args;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid;
  spawn_error_ = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  if (spawn_error_ == 0) pid_ = pid;
  posix_spawn_file_actions_destroy(&actions);
}

Process::~Process() {
  if (running()) {
    Signal(SIGKILL);
    Wait();
  }
}

bool Process::running() { return pid_ > 0 && Wait(0) == -1; }

void Process::Signal(int sig) {
  if (pid_ > 0 && exit_code_ == -1) kill(pid_, sig);
}

int Process::Wait(double timeout_seconds) {
  if (pid_ <= 0 || exit_code_ != -1) return exit_code_;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  for (;;) {
    int status = 0;
    pid_t got = waitpid(pid_, &status, timeout_seconds < 0 ? 0 : WNOHANG);
    if (got == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (got < 0) {
      if (errno == EINTR) continue;
      wait_error_ = errno;
      return exit_code_;
    }
    if (timeout_seconds >= 0 && std::chrono::steady_clock::now() >= deadline) return -1;
    usleep(10000);
  }
}

std::string Process::failure() const {
  if (spawn_error_ != 0) return std::string("posix_spawnp: ") + std::strerror(spawn_error_);
  if (wait_error_ != 0) return std::string("waitpid: ") + std::strerror(wait_error_);
  return "";
}

std::string Process::out() const { return ReadFile(out_file_); }
std::string Process::err() const { return ReadFile(err_file_); }

Spawned Spawn(const std::vector<std::string>& argv,
              const std::vector<std::string>& extra_env, const std::string& cwd) {
  std::string dir = MakeTempDir();
  std::string out_file = dir + "/stdout", err_file = dir + "/stderr";
  Spawned result;
  std::string failure;
  {
    Process p(argv, extra_env, cwd, out_file, err_file);
    result.exit_code = p.Wait();
    failure = p.failure();
  }
  result.out = ReadFile(out_file);
  result.err = ReadFile(err_file);
  if (!failure.empty()) result.err += "\ntest_support: " + argv[0] + ": " + failure + "\n";
  unlink(out_file.c_str());
  unlink(err_file.c_str());
  rmdir(dir.c_str());
  return result;
}

std::string SelectedMode(const std::string& err) {
  size_t at = err.find("mode ");
  if (at == std::string::npos) return "";
  return err.substr(at + 5, err.find(':', at) - at - 5);
}

std::set<std::string> SelectedTests(const std::string& out) {
  std::set<std::string> tests;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') tests.insert(line);
  }
  return tests;
}

Spawned Git(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  return Spawn(argv);
}

void InitGitRepo(const std::string& dir) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"init", "-q"}, {"config", "user.email", "t@example.com"},
        {"config", "user.name", "t"}}) {
    Spawned s = Git(dir, args);
    if (s.exit_code != 0) std::abort();
  }
}

size_t Lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

SchedulerProcess::SchedulerProcess(const std::string& ste, const std::string& store,
                                   const std::string& dir)
    : process_({ste, "scheduler", "--listen", "unix:" + dir + "/s.sock", "--store", store,
                "--port-file", dir + "/addr"},
               {}, "/", dir + "/out", dir + "/err") {
  for (int i = 0; i < 6000 && ReadFile(dir + "/addr").empty() && process_.running(); i++) {
    usleep(10000);
  }
  address_ = ReadFile(dir + "/addr");
  while (!address_.empty() && address_.back() == '\n') address_.pop_back();
}

}  // namespace ste::testing
