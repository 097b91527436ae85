// The value of a pyproject.toml's ste-pytest-ini view (ste/inventory.h,
// "Views"): what pytest's configuration discovery takes from the file.
#ifndef STE_PYTEST_INI_H_
#define STE_PYTEST_INI_H_

#include <string>
#include <string_view>

namespace ste {

// The bytes the view hashes, from the file's text. pytest reads
// `tomllib.loads(text).get("tool", {}).get("pytest", {}).get("ini_options")`
// (_pytest/config/findpaths.py); this gives, wider:
//   "A"                the file parses and has no [tool.pytest] (or no
//                      [tool]): pytest finds no configuration there;
//   "T" + a dump       the [tool.pytest] table, whatever it holds, each
//                      node as its type and value, table keys sorted;
//   "X" + a dump       [tool] or [tool.pytest] is no table (pytest fails
//                      on it): that node;
//   "E" + 16 bytes     the file does not parse as TOML (pytest fails on
//                      it): the XXH3-128 of the whole text, so that any
//                      change of it counts.
std::string PytestIniValue(std::string_view text);

}  // namespace ste

#endif  // STE_PYTEST_INI_H_
