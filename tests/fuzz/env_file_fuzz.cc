// Copyright: the ste authors. Fuzz target: an `ste select --env-file` file
// (ste/environment.h), which a CI job may build from what a pull request
// controls.
//
// Properties: a file that parses gives the same variables when written
// back as `env -0` output and parsed again; every name is non-empty,
// without '=' or NUL; its view name unescapes to it. A file that does not
// parse is InvalidArgument (exit 2), never anything else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "ste/environment.h"
#include "ste/inventory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ste::Environment> env = ste::Environment::Parse(bytes, "fuzz.env");
  if (!env.ok()) {
    STE_FUZZ_CHECK(absl::IsInvalidArgument(env.status()));
    return 0;
  }
  std::string again;
  for (const std::string& name : env->Names()) {
    STE_FUZZ_CHECK(!name.empty());
    STE_FUZZ_CHECK(name.find('=') == std::string::npos && name.find('\0') == std::string::npos);
    std::optional<std::string_view> value = env->Get(name);
    STE_FUZZ_CHECK(value.has_value());
    again.append(name).push_back('=');
    again.append(*value).push_back('\0');
    const std::string view = ste::EnvViewName(name);
    std::optional<std::string> back = ste::UnescapeEnvName(std::string_view(view).substr(8));
    STE_FUZZ_CHECK(back.has_value() && *back == name);
    std::optional<ste::View> parsed = ste::ParseView(ste::EnvViewPath(name));
    STE_FUZZ_CHECK(parsed.has_value() && parsed->kind == ste::ViewKind::kEnv && parsed->arg == name);
  }
  if (again.empty()) return 0;
  absl::StatusOr<ste::Environment> reread = ste::Environment::Parse(again, "again");
  STE_FUZZ_CHECK(reread.ok());
  STE_FUZZ_CHECK(reread->Names() == env->Names());
  for (const std::string& name : env->Names()) STE_FUZZ_CHECK(reread->Get(name) == env->Get(name));
  return 0;
}
