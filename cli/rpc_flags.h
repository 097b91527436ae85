// The client flags (client_flags.h) read into what a gRPC client needs.
#ifndef STE_CLI_RPC_FLAGS_H_
#define STE_CLI_RPC_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "client_flags.h"
#include "flags.h"
#include "ste/rpc_common.h"

namespace ste::cli {

// The auth the flags give: the token file's first line, the CA file's PEM.
// On error prints "ste <command>: ..." and returns nullopt.
std::optional<RpcAuth> ClientAuth(const std::string& command, const ParsedFlags& flags);

}  // namespace ste::cli

#endif  // STE_CLI_RPC_FLAGS_H_
