// The flags every command that talks to a scheduler shares: --scheduler
// ADDR, --token-file F, --tls-ca F. (Reading them into an RpcAuth is
// rpc_flags.h's, in the RPC half of the command.)
#ifndef STE_CLI_CLIENT_FLAGS_H_
#define STE_CLI_CLIENT_FLAGS_H_

#include <string>
#include <vector>

#include "flags.h"

namespace ste::cli {

// Appends the client flags to `specs`.
std::vector<FlagSpec> WithClientFlags(std::vector<FlagSpec> specs, const std::string& scheduler_help);

}  // namespace ste::cli

#endif  // STE_CLI_CLIENT_FLAGS_H_
