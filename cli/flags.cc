#include "flags.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ste::cli {

std::string ParsedFlags::Get(const std::string& name,
                             const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       const std::vector<FlagSpec>& specs,
                                       bool stop_at_positional) {
  ParsedFlags parsed;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& arg = args[i];
    if (arg == "--") {
      parsed.has_rest = true;
      parsed.rest.assign(args.begin() + i + 1, args.end());
      break;
    }
    if (arg == "--help" || arg == "-h") {
      parsed.values["help"] = "";
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      if (stop_at_positional) {
        parsed.has_rest = true;
        parsed.rest.assign(args.begin() + i, args.end());
        break;
      }
      parsed.positional.push_back(arg);
      continue;
    }
    const FlagSpec* spec = nullptr;
    std::string value;
    bool has_inline_value = false;
    if (absl::StartsWith(arg, "--")) {
      std::string name = arg.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_inline_value = true;
      }
      for (const FlagSpec& s : specs) {
        if (s.name == name) spec = &s;
      }
    } else {
      for (const FlagSpec& s : specs) {
        if (s.short_name != 0 && arg[1] == s.short_name) spec = &s;
      }
      if (spec != nullptr && arg.size() > 2) {
        value = arg.substr(2);  // -j4
        has_inline_value = true;
      } else if (spec != nullptr && arg.size() != 2) {
        spec = nullptr;
      }
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
    }
    if (!spec->takes_value) {
      if (has_inline_value) {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", spec->name, " takes no value"));
      }
      parsed.values[spec->name] = "";
      continue;
    }
    if (!has_inline_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", spec->name, " needs a value"));
      }
      value = args[++i];
    }
    parsed.values[spec->name] = value;
  }
  return parsed;
}

std::string FlagsHelp(const std::vector<FlagSpec>& specs) {
  std::string out = "Flags:\n";
  for (const FlagSpec& s : specs) {
    std::string left = s.short_name ? absl::StrFormat("-%c, --%s", s.short_name, s.name)
                                    : absl::StrCat("    --", s.name);
    if (s.takes_value) absl::StrAppend(&left, " ", s.value_name);
    absl::StrAppendFormat(&out, "  %-26s %s\n", left, s.help);
  }
  absl::StrAppendFormat(&out, "  %-26s %s\n", "-h, --help", "show this help");
  return out;
}

}  // namespace ste::cli
