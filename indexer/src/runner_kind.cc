#include "ste/runner_kind.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
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

// When a row of kRunEnvironment applies.
enum class EnvWhen : uint8_t {
  kBatchRun,           // a batch runner's run
  kImportHook,         // runner.python_imports = "names", with the integrations folder
  kDefinitions,        // granularity = "definition"
  kDefinitionTracker,  // granularity = "definition", with the integrations folder
};

// How a row's value meets the inherited one (IntegrationEnvironment).
enum class EnvMerge : uint8_t {
  kSet,                  // ours only
  kPrependPath,          // ours (the rows of the variable, ':'-joined), ':', inherited
  kPrependOptions,       // ours, ' ', inherited; nothing if ours holds white space
  kReplaceRemembering,   // ours; the inherited one in STE_<name>
};

struct EnvRow {
  const char* integration;  // "python", "ruby", "ste" (read by every tracker)
  const char* name;
  EnvWhen when;
  const char* value;  // "{integrations}" and "{root}" are replaced
  EnvMerge merge;
};

// The one table of what the integrations add to a run's environment, in
// the order the variables are given (runner_kind.h, the second table).
constexpr EnvRow kRunEnvironment[] = {
    {"python", "PYTHONPATH", EnvWhen::kImportHook, "{integrations}/python/ste_site",
     EnvMerge::kPrependPath},
    {"python", "PYTHONPATH", EnvWhen::kBatchRun, "{integrations}/python", EnvMerge::kPrependPath},
    {"ruby", "RUBYLIB", EnvWhen::kBatchRun, "{integrations}/ruby", EnvMerge::kPrependPath},
    // integrations/python/ste_site/ste_names.py, "How it gets in early":
    // ste's user base, whose .pth installs the hook before site.py scans
    // the machine's site-packages; the user base it replaces is added back
    // by the hook.
    {"python", "PYTHONUSERBASE", EnvWhen::kImportHook, "{integrations}/python/ste_userbase",
     EnvMerge::kReplaceRemembering},
    // This ste turns the hook's views into dependencies (ReduceLogs, the
    // inventory's views): the hook may pause the listings it replaces.
    {"python", "STE_PYTHON_VIEWS", EnvWhen::kImportHook, "1", EnvMerge::kSet},
    // The trackers of definitions.h: Python's is started by the hook
    // (ste_defs.py), Ruby's loaded before any script.
    {"ste", "STE_DEFINITIONS", EnvWhen::kDefinitions, "{root}", EnvMerge::kSet},
    {"ruby", "RUBYOPT", EnvWhen::kDefinitionTracker, "-r{integrations}/ruby/ste_defs.rb",
     EnvMerge::kPrependOptions},
};

bool Applies(EnvWhen when, const RunEnvironmentInputs& run) {
  const bool folder = !run.integrations_dir.empty();
  switch (when) {
    case EnvWhen::kBatchRun: return run.batch;
    case EnvWhen::kImportHook: return run.python_imports_by_name && folder;
    case EnvWhen::kDefinitions: return run.definitions;
    case EnvWhen::kDefinitionTracker: return run.definitions && folder;
  }
  return false;
}

}  // namespace

std::vector<std::string> IntegrationEnvironment(
    const RunEnvironmentInputs& run, const std::function<const char*(const char* name)>& inherited) {
  auto inherited_value = [&](const std::string& name) {
    const char* v = inherited(name.c_str());
    return std::string(v != nullptr ? v : "");
  };
  std::vector<std::string> out;
  const size_t n = sizeof(kRunEnvironment) / sizeof(kRunEnvironment[0]);
  std::vector<bool> done(n, false);
  for (size_t i = 0; i < n; i++) {
    const EnvRow& row = kRunEnvironment[i];
    if (done[i] || !Applies(row.when, run)) continue;
    // Every applying row of this variable, in order.
    std::vector<std::string> ours;
    for (size_t j = i; j < n; j++) {
      const EnvRow& same = kRunEnvironment[j];
      if (std::string_view(same.name) != row.name || !Applies(same.when, run)) continue;
      done[j] = true;
      ours.push_back(absl::StrReplaceAll(
          same.value, {{"{integrations}", run.integrations_dir}, {"{root}", run.root}}));
    }
    const std::string name = row.name;
    const std::string old = inherited_value(name);
    switch (row.merge) {
      case EnvMerge::kSet:
        out.push_back(absl::StrCat(name, "=", ours[0]));
        break;
      case EnvMerge::kPrependPath: {
        std::string value = absl::StrJoin(ours, ":");
        if (!old.empty()) absl::StrAppend(&value, ":", old);
        out.push_back(absl::StrCat(name, "=", value));
        break;
      }
      case EnvMerge::kPrependOptions: {
        if (ours[0].find_first_of(" \t\n\v\f\r") != std::string::npos) break;
        std::string value = ours[0];
        if (!old.empty()) absl::StrAppend(&value, " ", old);
        out.push_back(absl::StrCat(name, "=", value));
        break;
      }
      case EnvMerge::kReplaceRemembering: {
        const std::string remembered = "STE_" + name;
        std::string real = old;
        if (real == ours[0]) real = inherited_value(remembered);  // ste under ste
        out.push_back(absl::StrCat(name, "=", ours[0]));
        out.push_back(absl::StrCat(remembered, "=", real));
        break;
      }
    }
  }
  return out;
}

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

bool CaseReadsOwn(RunnerKind kind) { return kind == RunnerKind::kCTest; }

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
