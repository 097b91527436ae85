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
#ifndef STE_RUNNER_KIND_H_
#define STE_RUNNER_KIND_H_

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

}  // namespace ste

#endif  // STE_RUNNER_KIND_H_
