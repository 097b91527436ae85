#include "rpc_flags.h"

#include <cstdio>

namespace ste::cli {

std::vector<FlagSpec> WithClientFlags(std::vector<FlagSpec> specs, const std::string& scheduler_help) {
  specs.push_back({"scheduler", 0, true, "ADDR", scheduler_help});
  specs.push_back({"token-file", 0, true, "FILE",
                   "the scheduler's token (first line of FILE); also $STE_TOKEN_FILE"});
  specs.push_back({"tls-ca", 0, true, "FILE",
                   "talk TLS to the scheduler, trusting the CA certificate (PEM) in FILE"});
  return specs;
}

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
