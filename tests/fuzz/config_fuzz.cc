// Copyright: the ste authors. Fuzz target: a ste.toml (ste/config.h)
// parsed by ParseConfig, as `ste select` parses the one a pull request
// brings. toml++ parses; ParseConfig checks every key and compiles the
// globs.
//
// Property: a config that parses answers the questions select asks of it
// (its globs match, its runner arguments can be formed) without failing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "ste/config.h"
#include "ste/runner_kind.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ste::Config> config = ste::ParseConfig(text, "/fuzz/ste.toml", "/fuzz");
  if (!config.ok()) {
    STE_FUZZ_CHECK(absl::IsInvalidArgument(config.status()));
    return 0;
  }
  (void)config->SqlitePath();
  (void)config->BuildDir();
  const char* paths[] = {"ste.toml", "tests/test_a.py", "src/a/b.c", ".git/HEAD", "."};
  for (const char* p : paths) {
    (void)config->test_include.Matches(p);
    (void)config->inventory_ignore.Matches(p);
    (void)config->selection.run_all.FirstMatch(p);
    (void)config->selection.skip_all.Matches(p);
    (void)config->selection.mandatory.Matches(p);
  }
  std::string one = config->CommandFor("tests/it's a test.py");
  STE_FUZZ_CHECK(config->runner_command.empty() || !one.empty());
  if (config->batch_runner()) (void)config->CommandForBatch({"a.py", "b c.py"});
  (void)ste::RunnerArguments(config->runner_kind, {"tests/a.py", "t;rm"});
  return 0;
}
