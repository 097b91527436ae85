// Command-line parsing for the `ste` subcommands: GNU-style long flags
// ("--name value", "--name=value", "-x value" for declared short aliases),
// boolean flags, positional arguments, and "--" ending the flags.
// Unknown flags and missing values are errors (the caller prints one line
// and exits 2).
#ifndef STE_CLI_FLAGS_H_
#define STE_CLI_FLAGS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ste::cli {

struct FlagSpec {
  std::string name;        // without dashes: "scope"
  char short_name = 0;     // e.g. 'j', or 0
  bool takes_value = true;
  std::string value_name;  // for --help: "DIR"
  std::string help;
};

struct ParsedFlags {
  std::map<std::string, std::string> values;  // flag name -> value ("" for bools)
  std::vector<std::string> positional;        // before "--"
  std::vector<std::string> rest;              // after "--"
  bool has_rest = false;
  bool Has(const std::string& name) const { return values.count(name) > 0; }
  std::string Get(const std::string& name, const std::string& fallback = "") const;
};

// Parses args (without the program and subcommand names). "--help"/"-h"
// is always accepted as a boolean flag named "help".
// With `stop_at_positional`, the first positional argument and everything
// after it go to `rest` (for "ste run CMD ARGS..." without "--").
absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       const std::vector<FlagSpec>& specs,
                                       bool stop_at_positional = false);

// The "Flags:" block of a --help text.
std::string FlagsHelp(const std::vector<FlagSpec>& specs);

}  // namespace ste::cli

#endif  // STE_CLI_FLAGS_H_
