// The flags every command that talks to a scheduler shares:
// --scheduler ADDR, --token-file F, --tls-ca F.
#ifndef STE_CLI_RPC_FLAGS_H_
#define STE_CLI_RPC_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "flags.h"
#include "ste/rpc_common.h"

namespace ste::cli {

// Appends the client flags to `specs`.
std::vector<FlagSpec> WithClientFlags(std::vector<FlagSpec> specs, const std::string& scheduler_help);

// The auth the flags give: the token file's first line, the CA file's PEM.
// On error prints "ste <command>: ..." and returns nullopt.
std::optional<RpcAuth> ClientAuth(const std::string& command, const ParsedFlags& flags);

}  // namespace ste::cli

#endif  // STE_CLI_RPC_FLAGS_H_
