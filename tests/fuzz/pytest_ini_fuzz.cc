// Copyright: the ste authors. Fuzz target: a pyproject.toml's
// ste-pytest-ini view (ste/pytest_ini.h), as a selection computes it for
// the pyproject.toml a pull request brings. toml++ parses (ste's own
// prelude, indexer/src/toml.h).
//
// Property: every text has a value, one of the four forms, the same each
// time it is asked for.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "ste/pytest_ini.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string value = ste::PytestIniValue(text);
  STE_FUZZ_CHECK(!value.empty());
  STE_FUZZ_CHECK(value[0] == 'A' || value[0] == 'T' || value[0] == 'X' || value[0] == 'E');
  STE_FUZZ_CHECK(value[0] != 'E' || value.size() == 17);
  STE_FUZZ_CHECK(ste::PytestIniValue(text) == value);
  return 0;
}
