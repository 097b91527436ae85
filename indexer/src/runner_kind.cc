#include "ste/runner_kind.h"

#include "absl/strings/str_cat.h"
#include "ste/config.h"

namespace ste {
namespace {

struct KindTraits {
  RunnerKind kind;
  const char* name;
  bool batch;
  bool ctest_names;
  const char* default_command;  // "" when required
};

// The one table of what differs between runner kinds.
constexpr KindTraits kKinds[] = {
    {RunnerKind::kGeneric, "generic", false, false, ""},
    {RunnerKind::kBatch, "batch", true, false, ""},
    {RunnerKind::kPytest, "pytest", true, false, "python3 -m pytest -p ste_pytest {tests}"},
    {RunnerKind::kUnittest, "unittest", true, false,
     "python3 \"$STE_INTEGRATIONS/python/ste_unittest.py\" {tests}"},
    {RunnerKind::kMinitest, "minitest", true, false,
     "ruby \"$STE_INTEGRATIONS/ruby/ste_forking_runner.rb\" --framework minitest {tests}"},
    {RunnerKind::kRspec, "rspec", true, false,
     "ruby \"$STE_INTEGRATIONS/ruby/ste_forking_runner.rb\" --framework rspec {tests}"},
    {RunnerKind::kCTest, "ctest", false, true,
     "ctest --test-dir {build_dir} --output-on-failure -R {test_regex}"},
};

const KindTraits& Traits(RunnerKind kind) {
  for (const KindTraits& t : kKinds) {
    if (t.kind == kind) return t;
  }
  return kKinds[0];
}

}  // namespace

std::string_view RunnerKindName(RunnerKind kind) { return Traits(kind).name; }

std::optional<RunnerKind> ParseRunnerKind(std::string_view name) {
  for (const KindTraits& t : kKinds) {
    if (name == t.name) return t.kind;
  }
  return std::nullopt;
}

std::string RunnerKindList() {
  std::string out;
  const size_t n = sizeof(kKinds) / sizeof(kKinds[0]);
  for (size_t i = 0; i < n; i++) {
    absl::StrAppend(&out, i == 0 ? "" : i + 1 == n ? " or " : ", ", kKinds[i].name);
  }
  return out;
}

bool IsBatchRunner(RunnerKind kind) { return Traits(kind).batch; }

bool TestsAreCTestNames(RunnerKind kind) { return Traits(kind).ctest_names; }

std::string DefaultRunnerCommand(RunnerKind kind) { return Traits(kind).default_command; }

std::string_view RequiredPlaceholder(RunnerKind kind) {
  return IsBatchRunner(kind) ? "{tests}" : "{test}";
}

bool CommandHasPlaceholder(RunnerKind kind, std::string_view command) {
  if (IsBatchRunner(kind)) return command.find("{tests}") != std::string_view::npos;
  if (kind == RunnerKind::kCTest) return command.find("{test") != std::string_view::npos;
  return command.find("{test}") != std::string_view::npos;
}

std::string RunnerArguments(RunnerKind kind, const std::vector<std::string>& tests) {
  std::string line;
  if (TestsAreCTestNames(kind)) {
    std::string regex;
    for (const std::string& t : tests) absl::StrAppend(&regex, regex.empty() ? "" : "|", RegexEscape(t));
    if (!regex.empty()) line = "-R " + ShellQuote("^(" + regex + ")$");
    return line;
  }
  for (const std::string& t : tests) absl::StrAppend(&line, line.empty() ? "" : " ", ShellQuote(t));
  return line;
}

}  // namespace ste
