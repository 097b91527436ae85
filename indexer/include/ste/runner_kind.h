// The runner kinds of ste.toml's `runner.kind`, and everything that differs
// between them, in one place: how the tests of a tree are found, the
// command a kind runs when ste.toml gives none (and the placeholder a given
// one must hold), whether it runs a batch of tests per process tree, and
// how a selection is given back to it (`ste select --format runner`).
//
//   kind      tests are                 runs                   default command
//   generic   files (tests.include)     one test per process   (required, {test})
//   batch     files                     a batch per runner     (required, {tests})
//   pytest    files                     a batch per runner     python3 -m pytest -p ste_pytest {tests}
//   unittest  files                     a batch per runner     python3 .../ste_unittest.py {tests}
//   minitest  files                     a batch per runner     ruby .../ste_forking_runner.rb ...
//   rspec     files                     a batch per runner     ruby .../ste_forking_runner.rb ...
//   ctest     CTest names (ctest -N)    one test per process   ctest --test-dir {build_dir} ... -R {test_regex}
//
// The batch protocol is integrations/README.md; $STE_INTEGRATIONS is set by
// ste when it runs a runner.
//
// Beside it, what each integration adds to the environment of a test's run
// (one row per variable, kRunEnvironment in runner_kind.cc; ours first,
// then what the user's environment held):
//
//   integration  variable          when                       value
//   python       PYTHONPATH        python_imports = "names"   <integrations>/python/ste_site
//   python       PYTHONPATH        a batch runner's run       <integrations>/python
//   ruby         RUBYLIB           a batch runner's run       <integrations>/ruby
//   python       PYTHONUSERBASE    python_imports = "names"   <integrations>/python/ste_userbase,
//                                                             the user's in STE_PYTHONUSERBASE
//   python       STE_PYTHON_VIEWS  python_imports = "names"   1
//   ste          STE_DEFINITIONS   granularity = "definition" <root>
//   ruby         RUBYOPT           granularity = "definition" -r<integrations>/ruby/ste_defs.rb
#ifndef STE_RUNNER_KIND_H_
#define STE_RUNNER_KIND_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ste {

enum class RunnerKind { kGeneric, kBatch, kPytest, kUnittest, kMinitest, kRspec, kCTest };

// "generic", "batch", "pytest", ... as written in ste.toml.
std::string_view RunnerKindName(RunnerKind kind);
// The kind named `name`, or nullopt for a name that is not one.
std::optional<RunnerKind> ParseRunnerKind(std::string_view name);
// "generic, batch, pytest, unittest, minitest, rspec or ctest", for messages.
std::string RunnerKindList();

// True for the kinds that run a batch of test files in one runner process
// tree (the protocol of integrations/README.md).
bool IsBatchRunner(RunnerKind kind);

// True when the tests are the CTest tests of runner.build_dir rather than
// the tree's files matching tests.include.
bool TestsAreCTestNames(RunnerKind kind);

// With tests.unit = "case": true when a case also owns the files it read
// (SplitCaseScopes' reads_own), not only the definitions it ran: ctest,
// whose GoogleTest cases have no definition tracker (case_split.h).
bool CaseReadsOwn(RunnerKind kind);

// The command of a kind when ste.toml gives none; "" when it must be given
// (generic, batch).
std::string DefaultRunnerCommand(RunnerKind kind);

// The placeholder a runner.command of this kind must contain: "{tests}"
// for batch kinds, "{test}" otherwise ("{test_regex}" also does for ctest).
bool CommandHasPlaceholder(RunnerKind kind, std::string_view command);
std::string_view RequiredPlaceholder(RunnerKind kind);

// The selected tests as arguments the runner takes back, on one line,
// shell-quoted: the files for file kinds, one -R '^(a|b)$' for ctest; ""
// for no tests (run no test at all: do not call the runner).
std::string RunnerArguments(RunnerKind kind, const std::vector<std::string>& tests);

// What a test run's environment depends on (IntegrationEnvironment).
struct RunEnvironmentInputs {
  bool batch = false;                   // a batch runner's run (RunBatch)
  bool python_imports_by_name = false;  // runner.python_imports = "names"
  // granularity = "definition" with a DefinitionCache to resolve the
  // trackers' records (RunOneTestOptions::definitions).
  bool definitions = false;
  std::string root;                     // the repository root
  std::string integrations_dir;         // RunOneTestOptions::integrations_dir; "" none
};

// The "NAME=value" entries the integrations add to a test run's
// environment (RunTraced's extra_env), one per variable, in the order of
// the table at the top, from the rows whose condition holds. A row that
// names a file of the integrations folder is left out without one (the
// Python hook: its imports are then recorded as listings; the Ruby
// tracker: Ruby processes stay at file level), but for a batch run's,
// which always has one (IntegrationsDirForRuns). How each variable meets
// the value the user's environment gave (`inherited`, getenv):
//   PYTHONPATH, RUBYLIB  ours, ':' and the inherited value (if not empty);
//   RUBYOPT              ours, ' ' and the inherited value, or nothing when
//                        ours holds white space (Ruby splits it there);
//   PYTHONUSERBASE       ours; the inherited one goes in STE_PYTHONUSERBASE
//                        ("" for none) for the hook to add back, and when
//                        it is ours already (ste under ste) the outer
//                        STE_PYTHONUSERBASE is passed on instead;
//   the others           ours.
std::vector<std::string> IntegrationEnvironment(
    const RunEnvironmentInputs& run, const std::function<const char*(const char* name)>& inherited);

}  // namespace ste

#endif  // STE_RUNNER_KIND_H_
