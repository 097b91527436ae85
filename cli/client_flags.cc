#include "client_flags.h"

namespace ste::cli {

std::vector<FlagSpec> WithClientFlags(std::vector<FlagSpec> specs, const std::string& scheduler_help) {
  specs.push_back({"scheduler", 0, true, "ADDR", scheduler_help});
  specs.push_back({"token-file", 0, true, "FILE",
                   "the scheduler's token (first line of FILE); also $STE_TOKEN_FILE"});
  specs.push_back({"tls-ca", 0, true, "FILE",
                   "talk TLS to the scheduler, trusting the CA certificate (PEM) in FILE"});
  return specs;
}

}  // namespace ste::cli
