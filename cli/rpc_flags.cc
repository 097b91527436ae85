#include "rpc_flags.h"

#include <cstdio>
#include <cstdlib>

namespace ste::cli {

std::optional<RpcAuth> ClientAuth(const std::string& command, const ParsedFlags& flags) {
  RpcAuth auth;
  std::string token_file = flags.Get("token-file");
  if (token_file.empty()) {
    if (const char* env = std::getenv("STE_TOKEN_FILE"); env != nullptr) token_file = env;
  }
  if (!token_file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile(token_file);
    if (!token.ok()) {
      std::fprintf(stderr, "ste %s: %s\n", command.c_str(), std::string(token.status().message()).c_str());
      return std::nullopt;
    }
    auth.token = *token;
  }
  if (flags.Has("tls-ca")) {
    absl::StatusOr<std::string> ca = ReadWholeFile(flags.Get("tls-ca"));
    if (!ca.ok()) {
      std::fprintf(stderr, "ste %s: %s\n", command.c_str(), std::string(ca.status().message()).c_str());
      return std::nullopt;
    }
    auth.tls_ca = *ca;
  }
  return auth;
}

}  // namespace ste::cli
