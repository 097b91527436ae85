// Helpers shared by the end-to-end tests: temporary directories, files,
// and running real programs with their output captured.
#ifndef STE_TESTS_SUPPORT_TEST_SUPPORT_H_
#define STE_TESTS_SUPPORT_TEST_SUPPORT_H_

#include <set>
#include <string>
#include <vector>

namespace ste::testing {

// The `ste` the end-to-end tests run: $STE_TEST_BINARY when it is set
// and not empty (another build of the same sources, e.g. the sanitized
// build-san/ste of `make test-sanitize`), else `built`, the one of this
// build tree (the STE_BINARY each test binary is compiled with).
std::string SteBinary(const char* built);

// A new directory under $TMPDIR (or /tmp), its real path. When the test
// process ends by returning from main or exit() and every test in it
// passed, the directories it made are removed (a forked child that exits
// removes none); after a failure, or with $STE_KEEP_TEST_DIRS set, they
// are kept and the process says where.
std::string MakeTempDir();

// Writes `content` to `path`, creating missing parent directories.
void WriteFile(const std::string& path, const std::string& content);
std::string ReadFile(const std::string& path);

struct Spawned {
  int exit_code = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// Runs argv (argv[0] an absolute path, or a name looked up in PATH) in
// `cwd` (empty: ours) with our environment plus `extra_env` ("NAME=value",
// overriding), waits, and captures stdout and stderr.
Spawned Spawn(const std::vector<std::string>& argv,
              const std::vector<std::string>& extra_env = {},
              const std::string& cwd = "");

// A program running in the background (real process), stdout and stderr
// going to files. Stopped only by its pid: Signal(), or SIGKILL by the
// destructor if it is still running then.
class Process {
 public:
  // Starts argv as Spawn does; output to `out_file` and `err_file`.
  Process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
          const std::string& cwd, const std::string& out_file, const std::string& err_file);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  int pid() const { return pid_; }
  bool running();
  void Signal(int sig);
  // The exit code (128+N when killed by signal N), or -1 if it is still
  // running after `timeout_seconds` (< 0: wait for ever).
  int Wait(double timeout_seconds = -1);
  std::string out() const;
  std::string err() const;
  // Why it did not start (posix_spawnp's error), or why it could not be
  // waited for (waitpid's errno); "" when neither happened.
  std::string failure() const;

 private:
  int pid_ = -1;
  int exit_code_ = -1;
  int spawn_error_ = 0, wait_error_ = 0;
  std::string out_file_, err_file_;
};

// The test names `ste select` printed: the lines of `out` that do not
// start with a space (--explain adds indented "  <- ..." lines).
std::set<std::string> SelectedTests(const std::string& out);

// The mode `ste select` printed on stderr ("ste select: mode subset: ..."),
// or "" when there is none.
std::string SelectedMode(const std::string& err);

// `git -C dir args...`; the exit code and output.
Spawned Git(const std::string& dir, const std::vector<std::string>& args);
// `git init` in `dir` with a committer identity set, so commits work
// whatever the machine's git configuration.
void InitGitRepo(const std::string& dir);

// Number of '\n' in `text`.
size_t Lines(const std::string& text);

// `ste scheduler` (the binary `ste`) on a unix socket in `dir`, serving
// `store` ("sqlite:..."): started, and waited for until it has written its
// address (a condition, not a time). address() is "" if it never did
// (look at process().err()). Stopped by its pid when destroyed.
class SchedulerProcess {
 public:
  SchedulerProcess(const std::string& ste, const std::string& store, const std::string& dir);
  const std::string& address() const { return address_; }
  Process& process() { return process_; }

 private:
  Process process_;
  std::string address_;
};

}  // namespace ste::testing

#endif  // STE_TESTS_SUPPORT_TEST_SUPPORT_H_
