// Copyright: the ste authors. Fuzz target: the $STE_RESULTS lines a batch
// runner (any program the test command starts) appends, parsed by
// ParseRunnerResults (ste/batch_split.h).
//
// Properties: every result it returns has a non-empty path, one of the
// three outcomes and a duration that is wall time (finite, >= 0); and a line that it would form from each result again
// parses to that result (the protocol reads back what it says).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "fuzz_check.h"
#include "ste/test_recorder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::map<std::string, ste::RunnerResult> results = ste::ParseRunnerResults(text);
  for (const auto& [path, r] : results) {
    STE_FUZZ_CHECK(!path.empty());
    STE_FUZZ_CHECK(path.find('\n') == std::string::npos);
    STE_FUZZ_CHECK(ste::TestOutcomeName(r.outcome) != "unknown");
    STE_FUZZ_CHECK(std::isfinite(r.seconds) && r.seconds >= 0);
    std::string line = absl::StrCat(std::string(ste::TestOutcomeName(r.outcome)), "\t", r.exit_code, "\t0.5\t", path, "\n");
    std::map<std::string, ste::RunnerResult> again = ste::ParseRunnerResults(line);
    STE_FUZZ_CHECK(again.size() == 1 && again.begin()->first == path);
    STE_FUZZ_CHECK(again.begin()->second.outcome == r.outcome);
    STE_FUZZ_CHECK(again.begin()->second.exit_code == r.exit_code);
  }
  return 0;
}
