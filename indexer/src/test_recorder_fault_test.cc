// RunOneTest and RunBatch (test_recorder.h) when the operating system
// fails them: each failure at the top of test_recorder.h, injected through
// a TestRunEnv double, gives its documented record, and never a narrower
// dependency set than the run can vouch for.
//
// The double wraps the real environment (LevelDB's FaultInjectionTestEnv is
// the model): directories are really made and removed, logs really written
// (log_writer.h) and read back. Only the traced process is played: the
// double writes the log and the results file the runner would have left
// (the real RunTraced is run by the end-to-end tests of tests/integrations).
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ste/log_format.h"
#include "ste/log_writer.h"
#include "ste/test_recorder.h"

namespace ste {
namespace {

bool PathExists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// What the played runner leaves and how it ends.
struct PlayedRunner {
  bool writes_log = true;            // one process log holding `records`
  bool tears_log = false;            // ... cut short, as a crash could leave it
  std::vector<LogEntry> records;     // in the run's scope unless given
  std::optional<std::string> results;  // written to $STE_RESULTS; none: no file
  int exit_code = 0;
  int signal = 0;                    // killed by it: exit 128 + signal
  double seconds = 2;
};

class FaultInjectionTestRunEnv : public TestRunEnv {
 public:
  // MakeTempDir of a prefix whose last component starts as `suffix` does
  // after its '/' ("/logs-", "/batch-", "/ste-tmp-": PrivateTmpPrefix's
  // "<base>/ste-tmp-<ns>-<pid>-") fails with `err`.
  void FailMakeTempDir(const std::string& suffix, int err) { make_faults_.push_back({suffix, err}); }
  void FailStart(absl::Status s) { start_fault_ = std::move(s); }
  void FailReadLogDir(absl::Status s) { read_logs_fault_ = std::move(s); }
  void FailReadFile(absl::Status s) { read_file_fault_ = std::move(s); }

  PlayedRunner runner;

  // What happened.
  std::vector<std::string> made;
  std::vector<std::string> removed;
  std::optional<TracedRunOptions> ran;
  std::vector<bool> made_existed_during_run;  // parallel to `made`

  absl::StatusOr<std::string> MakeTempDir(const std::string& prefix) override {
    for (const auto& [suffix, err] : make_faults_) {
      const size_t slash = prefix.rfind('/');
      if (slash != std::string::npos && prefix.compare(slash, suffix.size(), suffix) == 0) {
        return absl::Status(absl::ErrnoToStatusCode(err), std::strerror(err));
      }
    }
    absl::StatusOr<std::string> dir = RealTestRunEnv()->MakeTempDir(prefix);
    if (dir.ok()) made.push_back(*dir);
    return dir;
  }
  void RemoveTree(const std::string& path) override {
    removed.push_back(path);
    RealTestRunEnv()->RemoveTree(path);
  }
  absl::StatusOr<TracedExit> RunTraced(const TracedRunOptions& options) override {
    ran = options;
    for (const std::string& d : made) made_existed_during_run.push_back(PathExists(d));
    if (!start_fault_.ok()) return start_fault_;
    if (runner.writes_log) {
      std::vector<LogEntry> entries = runner.records;
      for (LogEntry& e : entries) {
        if (e.scope.empty()) e.scope = options.scope;
      }
      absl::Status written = WriteLogFile(options.log_dir, 4242, 1, entries);
      if (!written.ok()) return written;
      if (runner.tears_log) TearLogsIn(options.log_dir);
    }
    if (runner.results) {
      for (const std::string& e : options.extra_env) {
        if (e.rfind("STE_RESULTS=", 0) == 0) std::ofstream(e.substr(12)) << *runner.results;
      }
    }
    TracedExit exit;
    exit.signal = runner.signal;
    exit.exit_code = runner.signal ? 128 + runner.signal : runner.exit_code;
    exit.seconds = runner.seconds;
    return exit;
  }
  absl::Status ReadLogDir(const std::string& dir, std::vector<ProcessLog>* out) override {
    if (!read_logs_fault_.ok()) return read_logs_fault_;
    return RealTestRunEnv()->ReadLogDir(dir, out);
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    if (!read_file_fault_.ok()) return read_file_fault_;
    return RealTestRunEnv()->ReadFile(path);
  }

  // The entry "NAME=value" the runner was given, or nullopt.
  std::optional<std::string> EnvOf(const std::string& name) const {
    if (!ran) return std::nullopt;
    for (const std::string& e : ran->extra_env) {
      if (e.rfind(name + "=", 0) == 0) return e.substr(name.size() + 1);
    }
    return std::nullopt;
  }

 private:
  // Cuts every log in `dir` to half its size.
  static void TearLogsIn(const std::string& dir) {
    std::vector<ProcessLog> logs;
    (void)ste::ReadLogDir(dir, &logs);
    for (const ProcessLog& log : logs) {
      struct stat st;
      if (stat(log.file.c_str(), &st) == 0) (void)truncate(log.file.c_str(), st.st_size / 2);
    }
  }

  std::vector<std::pair<std::string, int>> make_faults_;
  absl::Status start_fault_;
  absl::Status read_logs_fault_;
  absl::Status read_file_fault_;
};

// A repository and a scratch folder on the real file system.
class RecorderFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/ste-recorder-fault-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    char* real = realpath(dir, nullptr);
    ASSERT_NE(real, nullptr);
    base_ = real;
    free(real);
    root_ = base_ + "/repo";
    scratch_ = base_ + "/scratch";
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(scratch_.c_str(), 0755), 0);
    std::ofstream(root_ + "/src.py") << "x = 1\n";
    config_.root = root_;
    config_.runner_command = "true {test}";
    config_.runner_python_imports = PythonImports::kListing;
    options_.preload_library = "/nonexistent-ste/libste_preload.so";
    options_.scratch_dir = scratch_;
    options_.env = &env_;
    env_.runner.records = {{"", RecordKind::kContent, STE_OP_OPEN, root_ + "/src.py"}};
  }
  void TearDown() override {
    // Whatever happened, the recorder left nothing behind it.
    for (const std::string& d : env_.made) EXPECT_FALSE(PathExists(d)) << d << " was not removed";
    RemoveTree(base_);
  }
  void UseBatchRunner() {
    config_.runner_kind = RunnerKind::kPytest;
    config_.runner_command = "pytest {tests}";
  }
  // The dependencies of `deps` in `scope`, as "path(kind)".
  static std::vector<std::string> DepsIn(const TestDependencies& deps, const std::string& scope) {
    std::vector<std::string> out;
    for (const ScopeDependencies& s : deps.scopes) {
      if (s.scope != scope) continue;
      for (const DepKey& k : s.deps) out.push_back(k.path + "(" + std::string(DepKindName(k.kind)) + ")");
    }
    return out;
  }

  std::string base_, root_, scratch_;
  Config config_;
  RunOneTestOptions options_;
  FaultInjectionTestRunEnv env_;
};

const std::vector<std::string> kFaultBatch = {"tests/a.py", "tests/b.py"};
const std::string kFaultScope = "//r/tests/a.py";

TEST_F(RecorderFaultTest, WithoutAFaultTheTestRunsInItsOwnTmpAndLeavesItsDependencies) {
  TestRecord r = RunOneTest(config_, "tests/a.py", options_);
  ASSERT_TRUE(env_.ran.has_value());
  EXPECT_EQ(env_.ran->scope, kFaultScope);
  ASSERT_EQ(env_.made.size(), 2u) << "the log directory and the private tmp";
  EXPECT_EQ(env_.made_existed_during_run, (std::vector<bool>{true, true}));
  EXPECT_EQ(env_.EnvOf("TMPDIR"), env_.made[1]);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.deps.opaque);
  EXPECT_EQ(DepsIn(r.deps, kFaultScope), std::vector<std::string>{"src.py(content)"});
}

TEST_F(RecorderFaultTest, NoLogDirectory_RunOneTest_IsAnOpaqueErrorAndNothingRuns) {
  env_.FailMakeTempDir("/logs-", ENOSPC);
  options_.output_file = base_ + "/a.log";
  TestRecord r = RunOneTest(config_, "tests/a.py", options_);
  EXPECT_FALSE(env_.ran.has_value());
  EXPECT_FALSE(r.started);
  const std::string why = "cannot create a log directory in " + scratch_ + ": " + std::strerror(ENOSPC);
  EXPECT_EQ(r.error, why);
  EXPECT_TRUE(r.deps.opaque);
  EXPECT_EQ(r.deps.opaque_reasons, std::vector<std::string>{why});
  EXPECT_TRUE(r.deps.scopes.empty());
  EXPECT_EQ(r.output_log, "") << "its output was never captured";
}

TEST_F(RecorderFaultTest, NoLogDirectory_RunBatch_IsAnOpaqueErrorForEveryTest) {
  UseBatchRunner();
  env_.FailMakeTempDir("/batch-", EACCES);
  options_.output_file = base_ + "/batch.log";
  std::vector<TestRecord> records = RunBatch(config_, kFaultBatch, options_);
  EXPECT_FALSE(env_.ran.has_value());
  ASSERT_EQ(records.size(), 2u);
  const std::string why = "cannot create a log directory in " + scratch_ + ": " + std::strerror(EACCES);
  for (const TestRecord& r : records) {
    EXPECT_FALSE(r.started) << r.test;
    EXPECT_EQ(r.error, why);
    EXPECT_TRUE(r.deps.opaque);
    EXPECT_EQ(r.deps.opaque_reasons, std::vector<std::string>{why});
    EXPECT_EQ(r.output_log, options_.output_file);
    EXPECT_TRUE(r.output_shared);
  }
  EXPECT_EQ(records[0].test, "tests/a.py");
  EXPECT_EQ(records[1].test, "tests/b.py");
}

TEST_F(RecorderFaultTest, NoPrivateTmp_TheTestRunsWithTheInheritedOneWhoseRecordsCount) {
  const char* inherited = std::getenv("TMPDIR");
  const std::string shared_tmp = std::string(inherited && *inherited ? inherited : "/tmp") + "/shared.json";
  env_.runner.records.push_back({"", RecordKind::kContent, STE_OP_OPEN, shared_tmp});
  env_.FailMakeTempDir("/ste-tmp-", ENOSPC);
  TestRecord r = RunOneTest(config_, "tests/a.py", options_);
  ASSERT_TRUE(env_.ran.has_value());
  for (const char* var : {"TMPDIR", "TMP", "TEMP"}) EXPECT_FALSE(env_.EnvOf(var).has_value()) << var;
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.deps.opaque);
  std::vector<std::string> deps = DepsIn(r.deps, kFaultScope);
  EXPECT_NE(std::find(deps.begin(), deps.end(), shared_tmp + "(content)"), deps.end())
      << "a file in a shared tmp is a dependency";
}

TEST_F(RecorderFaultTest, TheRunnerCannotStart_RunOneTest_IsAnOpaqueError) {
  env_.FailStart(absl::NotFoundError("cannot run '/bin/sh': No such file or directory"));
  options_.output_file = base_ + "/a.log";
  TestRecord r = RunOneTest(config_, "tests/a.py", options_);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.error, "cannot run '/bin/sh': No such file or directory");
  EXPECT_TRUE(r.deps.opaque);
  EXPECT_EQ(r.deps.opaque_reasons, std::vector<std::string>{r.error});
  EXPECT_TRUE(r.deps.scopes.empty());
  EXPECT_EQ(r.output_log, options_.output_file);
  EXPECT_EQ(env_.removed.size(), 2u) << "the log directory and the private tmp";
}

TEST_F(RecorderFaultTest, TheRunnerCannotStart_RunBatch_IsAnOpaqueErrorForEveryTest) {
  UseBatchRunner();
  env_.FailStart(absl::NotFoundError("preload library 'x' does not exist"));
  std::vector<TestRecord> records = RunBatch(config_, kFaultBatch, options_);
  ASSERT_EQ(records.size(), 2u);
  for (const TestRecord& r : records) {
    EXPECT_FALSE(r.started) << r.test;
    EXPECT_EQ(r.error, "preload library 'x' does not exist");
    EXPECT_TRUE(r.deps.opaque);
    EXPECT_TRUE(r.deps.scopes.empty());
  }
}

// A killed test fails (exit 128 + signal): a failed test is selected until
// it passes (selection.h, rule 5), so the logs it left are all it needs.
TEST_F(RecorderFaultTest, KilledBySignal_RunOneTest_FailsWithWhatItRecorded) {
  env_.runner.signal = 9;
  TestRecord r = RunOneTest(config_, "tests/a.py", options_);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 137);
  EXPECT_EQ(DepsIn(r.deps, kFaultScope), std::vector<std::string>{"src.py(content)"});
}

TEST_F(RecorderFaultTest, KilledBySignal_RunBatch_TheTestsWithoutALineAreErrors) {
  UseBatchRunner();
  env_.runner.signal = 9;
  env_.runner.seconds = 4;
  env_.runner.results = "passed\t0\t1\ttests/a.py\n";
  std::vector<TestRecord> records = RunBatch(config_, kFaultBatch, options_);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].started);
  EXPECT_EQ(records[0].exit_code, 0);
  EXPECT_FALSE(records[1].started);
  EXPECT_EQ(records[1].exit_code, 137);
  EXPECT_DOUBLE_EQ(records[1].seconds, 2);
  EXPECT_EQ(records[1].error, "the pytest runner gave no result for it (runner exit 137)");
  // Both keep the shared scope's dependencies.
  for (const TestRecord& r : records) {
    EXPECT_EQ(DepsIn(r.deps, "//r"), std::vector<std::string>{"src.py(content)"}) << r.test;
  }
}

TEST_F(RecorderFaultTest, UnreadableLogs_MakeTheTestOpaque) {
  env_.FailReadLogDir(absl::PermissionDeniedError("opendir: Permission denied"));
  TestRecord r = RunOneTest(config_, "tests/a.py", options_);
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.deps.opaque);
  EXPECT_EQ(r.deps.opaque_reasons, std::vector<std::string>{"logs unreadable: opendir: Permission denied"});
  EXPECT_EQ(r.deps.opaque_scopes, std::vector<std::string>{""});
}

TEST_F(RecorderFaultTest, UnreadableLogs_RunBatch_MakeEveryTestOpaque) {
  UseBatchRunner();
  env_.runner.results = "passed\t0\t1\ttests/a.py\npassed\t0\t1\ttests/b.py\n";
  env_.FailReadLogDir(absl::PermissionDeniedError("opendir: Permission denied"));
  std::vector<TestRecord> records = RunBatch(config_, kFaultBatch, options_);
  ASSERT_EQ(records.size(), 2u);
  for (const TestRecord& r : records) {
    EXPECT_TRUE(r.started) << r.test;
    EXPECT_TRUE(r.deps.opaque) << r.test;
    EXPECT_EQ(r.deps.opaque_reasons, std::vector<std::string>{"logs unreadable: opendir: Permission denied"});
  }
}

TEST_F(RecorderFaultTest, NoLogs_MakeTheTestOpaque) {
  env_.runner.writes_log = false;
  TestRecord r = RunOneTest(config_, "tests/a.py", options_);
  EXPECT_TRUE(r.deps.opaque);
  EXPECT_EQ(r.deps.opaque_reasons, std::vector<std::string>{"logs unreadable: the test left no logs"});
  UseBatchRunner();
  env_.runner.results = "passed\t0\t1\ttests/a.py\npassed\t0\t1\ttests/b.py\n";
  for (const TestRecord& b : RunBatch(config_, kFaultBatch, options_)) {
    EXPECT_EQ(b.deps.opaque_reasons, std::vector<std::string>{"logs unreadable: the runner left no logs"});
  }
}

TEST_F(RecorderFaultTest, ATornLog_MakesTheTestOpaque) {
  env_.runner.tears_log = true;
  TestRecord r = RunOneTest(config_, "tests/a.py", options_);
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.deps.opaque);
  ASSERT_EQ(r.deps.opaque_reasons.size(), 1u);
  EXPECT_EQ(r.deps.opaque_reasons[0].rfind("logs unreadable: ", 0), 0u) << r.deps.opaque_reasons[0];
}

TEST_F(RecorderFaultTest, NoResultsFile_EveryTestOfTheBatchIsAnError) {
  UseBatchRunner();
  env_.runner.exit_code = 2;
  std::vector<TestRecord> records = RunBatch(config_, kFaultBatch, options_);
  ASSERT_EQ(records.size(), 2u);
  for (const TestRecord& r : records) {
    EXPECT_FALSE(r.started) << r.test;
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_DOUBLE_EQ(r.seconds, 1);
    EXPECT_EQ(r.error, "the pytest runner gave no result for it (runner exit 2)");
  }
}

TEST_F(RecorderFaultTest, AnUnreadableResultsFile_IsNoResultsFile) {
  UseBatchRunner();
  env_.runner.results = "passed\t0\t1\ttests/a.py\npassed\t0\t1\ttests/b.py\n";
  env_.FailReadFile(absl::DataLossError("read: Input/output error"));
  for (const TestRecord& r : RunBatch(config_, kFaultBatch, options_)) {
    EXPECT_FALSE(r.started) << r.test;
  }
}

TEST_F(RecorderFaultTest, AGarbledResultsFile_OnlyItsValidLinesCount) {
  UseBatchRunner();
  env_.runner.results = "passed\t0\tx\n\x01\x02garbage\nfailed\t1\t1\ttests/b.py\npassed\t0\t1\ttests/a";
  std::vector<TestRecord> records = RunBatch(config_, kFaultBatch, options_);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_FALSE(records[0].started) << "a torn line is no line";
  EXPECT_TRUE(records[1].started);
  EXPECT_EQ(records[1].exit_code, 1);
}

TEST_F(RecorderFaultTest, KeepLogs_LeavesTheLogDirectoryButNotTheTmp) {
  options_.keep_logs = true;
  EXPECT_TRUE(RunOneTest(config_, "tests/a.py", options_).started);
  ASSERT_EQ(env_.made.size(), 2u);
  EXPECT_TRUE(PathExists(env_.made[0]));
  EXPECT_FALSE(PathExists(env_.made[1]));
  RemoveTree(env_.made[0]);
}

}  // namespace
}  // namespace ste
