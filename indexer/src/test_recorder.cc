// Running a test or a batch under the interceptor (test_recorder.h): one
// path, RecordTraced, makes the log and temporary directories, starts the
// runner, reads what it left and reduces it; RunOneTest and RunBatch only
// say what to run and how the result is divided. Every call to the
// operating system goes through TestRunEnv.
#include "ste/test_recorder.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ste/batch_split.h"
#include "ste/case_split.h"
#include "ste/runner_kind.h"
#include "ste/traced_run.h"

namespace ste {

absl::StatusOr<std::string> IntegrationsDirForRuns(const Config& config, std::string* warning) {
  warning->clear();
  const bool wanted = config.batch_runner() || config.runner_python_imports == PythonImports::kNames;
  if (!wanted) return std::string();
  absl::StatusOr<std::string> dir = FindIntegrationsDir();
  if (dir.ok() || config.batch_runner()) return dir;
  *warning = absl::StrCat(dir.status().message(),
                          ": Python imports will be recorded as directory listings (coarser: a new "
                          "file in a directory on sys.path selects every test that imported "
                          "through it)");
  return std::string();
}

namespace {

// A test that could not be run: an error (always selected next time),
// opaque for the same reason (no scope: the whole run).
void MarkNotRun(const std::string& why, TestRecord* r) {
  r->started = false;
  r->error = why;
  r->deps.opaque = true;
  r->deps.opaque_reasons.push_back(why);
}

// A test's private temporary directory (runner.private_tmp): created empty
// under the system's temporary directory, $TMPDIR (and TMP, TEMP) while
// the test runs, removed afterwards. "" when off or when it cannot be
// made (the test then runs with the inherited $TMPDIR: coarser, honest).
// Making one first removes those a killed ste left there (the real env
// does it once per base and process: RemoveDeadOwnersTmps).
class PrivateTmp {
 public:
  PrivateTmp(TestRunEnv* env, bool on) : env_(env) {
    if (!on) return;
    const char* tmpdir = std::getenv("TMPDIR");
    const std::string base = tmpdir && *tmpdir ? tmpdir : "/tmp";
    env_->RemoveDeadOwnersTmps(base);
    absl::StatusOr<std::string> dir = env_->MakeTempDir(PrivateTmpPrefix(base));
    if (dir.ok()) path_ = *std::move(dir);
  }
  ~PrivateTmp() {
    if (!path_.empty()) env_->RemoveTree(path_);
  }
  PrivateTmp(const PrivateTmp&) = delete;
  PrivateTmp& operator=(const PrivateTmp&) = delete;

  const std::string& path() const { return path_; }
  void AddEnv(std::vector<std::string>* env) const {
    if (path_.empty()) return;
    for (const char* var : {"TMPDIR", "TMP", "TEMP"}) env->push_back(absl::StrCat(var, "=", path_));
  }

 private:
  TestRunEnv* env_;
  std::string path_;
};

// What one traced run gave: either why it could not run at all, or how the
// runner ended, what it reported and its logs reduced.
struct TracedRecording {
  bool made_log_dir = false;
  std::string failure;   // not "": nothing ran, for this reason
  TracedExit exit;
  std::string results;   // a batch's $STE_RESULTS text ("" when none)
  TestDependencies all;  // ReduceLogs of the whole run
};

// The one path of RunOneTest and RunBatch: `command` in `scope`, a batch
// runner's when `batch` (the protocol's variables and results file).
TracedRecording RecordTraced(const Config& config, const RunOneTestOptions& options, bool batch,
                             const std::string& command, const std::string& scope) {
  TestRunEnv* env = options.env != nullptr ? options.env : RealTestRunEnv();
  TracedRecording out;
  absl::StatusOr<std::string> made =
      env->MakeTempDir(options.scratch_dir + (batch ? "/batch-" : "/logs-"));
  if (!made.ok()) {
    out.failure = absl::StrCat("cannot create a log directory in ", options.scratch_dir, ": ",
                               made.status().message());
    return out;
  }
  out.made_log_dir = true;
  const std::string dir = *std::move(made);
  // The results file sits in the log directory: records of it are dropped.
  const std::string results_file = dir + "/ste-results.tsv";
  TracedRunOptions run;
  run.argv = {"/bin/sh", "-c", command};
  run.scope = scope;
  run.log_dir = dir;
  run.preload_library = options.preload_library;
  run.working_directory = config.root;
  if (batch) {
    std::string preload;
    for (const std::string& p : config.runner_preload) absl::StrAppend(&preload, p, "\n");
    run.extra_env = {
        "STE_RESULTS=" + results_file,
        "STE_INTEGRATIONS=" + options.integrations_dir,
        absl::StrCat("STE_JOBS=", std::max(1, options.jobs)),
        "STE_PRELOAD_FILES=" + preload,
        absl::StrCat("STE_CASE_SCOPES=", config.runner_case_scopes ? "1" : "0"),
    };
  }
  RunEnvironmentInputs inputs;
  inputs.batch = batch;
  inputs.python_imports_by_name = config.runner_python_imports == PythonImports::kNames;
  inputs.definitions = config.selection_definitions && options.definitions != nullptr;
  inputs.root = config.root;
  inputs.integrations_dir = options.integrations_dir;
  for (std::string& e : IntegrationEnvironment(inputs, [](const char* name) { return std::getenv(name); })) {
    run.extra_env.push_back(std::move(e));
  }
  PrivateTmp tmp(env, config.runner_private_tmp);
  tmp.AddEnv(&run.extra_env);
  run.output_file = options.output_file;
  absl::StatusOr<TracedExit> exit = env->RunTraced(run);
  if (!exit.ok()) {
    out.failure = std::string(exit.status().message());
  } else {
    out.exit = *exit;
    if (batch) {
      // Missing or unreadable: no test has a line (each is an error).
      absl::StatusOr<std::string> text = env->ReadFile(results_file);
      if (text.ok()) out.results = *std::move(text);
    }
    std::vector<ProcessLog> logs;
    absl::Status read = env->ReadLogDir(dir, &logs);
    if (read.ok() && logs.empty()) {
      read = absl::DataLossError(batch ? "the runner left no logs" : "the test left no logs");
    }
    PathPolicy policy;
    policy.root = config.root;
    policy.ignore = config.inventory_ignore;
    policy.log_dir = dir;
    policy.private_tmp = tmp.path();
    policy.env_ignore = config.selection.env_ignore;
    policy.definitions = options.definitions;
    out.all = ReduceLogs(logs, read, policy);
  }
  if (!options.keep_logs) env->RemoveTree(dir);
  return out;
}

}  // namespace

TestOutcome OutcomeOf(const TestRecord& r) {
  if (!r.started) return TestOutcome::kError;
  return r.exit_code == 0 ? TestOutcome::kPassed : TestOutcome::kFailed;
}

TestRecord RunOneTest(const Config& config, const std::string& test,
                      const RunOneTestOptions& options) {
  TestRecord record;
  record.test = test;
  TracedRecording run =
      RecordTraced(config, options, /*batch=*/false, config.CommandFor(test), ScopeOfTest(test));
  if (run.made_log_dir) record.output_log = options.output_file;
  if (!run.failure.empty()) {
    MarkNotRun(run.failure, &record);
    return record;
  }
  record.exit_code = run.exit.exit_code;
  record.seconds = run.exit.seconds;
  record.deps = run.all;
  ApplyDefinitionFallback(run.all, test, &record.deps);
  if (config.selection.cases) {
    SplitCaseScopes(run.all, test, &record.deps, CaseReadsOwn(config.runner_kind));
  }
  return record;
}

std::vector<TestRecord> RunBatch(const Config& config, const std::vector<std::string>& tests,
                                 const RunOneTestOptions& options) {
  std::vector<TestRecord> records(tests.size());
  for (size_t i = 0; i < tests.size(); i++) {
    records[i].test = tests[i];
    records[i].output_log = options.output_file;
    records[i].output_shared = !options.output_file.empty();
  }
  TracedRecording run =
      RecordTraced(config, options, /*batch=*/true, config.CommandForBatch(tests), "//r");
  if (!run.failure.empty()) {
    for (TestRecord& r : records) MarkNotRun(run.failure, &r);
    return records;
  }
  const std::map<std::string, RunnerResult> results = ParseRunnerResults(run.results);
  std::vector<TestDependencies> deps = SplitBatchDependencies(run.all, tests);
  for (size_t i = 0; i < records.size(); i++) {
    TestRecord& r = records[i];
    r.deps = std::move(deps[i]);
    if (config.selection.cases) {
      SplitCaseScopes(run.all, r.test, &r.deps, CaseReadsOwn(config.runner_kind));
    }
    r.deps.slow_trackers = run.all.slow_trackers;  // the batch's processes ran every test
    BatchTestOutcome outcome = OutcomeInBatch(results, r.test, run.exit.exit_code, run.exit.seconds,
                                              tests.size(), RunnerKindName(config.runner_kind));
    r.started = outcome.started;
    r.exit_code = outcome.exit_code;
    r.seconds = outcome.seconds;
    r.error = std::move(outcome.error);
  }
  return records;
}

}  // namespace ste
