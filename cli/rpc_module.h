// The RPC half of the command: record, scheduler, worker and select
// --scheduler live in libste_rpc.so (cli/CMakeLists.txt), which `ste` loads
// only when one of them runs, so that the other commands do not load
// gRPC. The module exports one C function:
//
//   int ste_rpc_command(const char* name, int argc, const char* const* argv);
//
// which runs command `name` ("record", "scheduler", "worker", "select")
// with argv[0..argc) (the arguments after the command's name) and returns
// its exit code. The module is built from the same sources as `ste`, in
// the same build: no version handshake.
#ifndef STE_CLI_RPC_MODULE_H_
#define STE_CLI_RPC_MODULE_H_

#include <string>
#include <vector>

namespace ste::cli {

// Runs `name` in the RPC module. When the module cannot be found or
// loaded, prints why ("ste <name>: ...") and returns 1.
int RunInRpcModule(const std::string& name, const std::vector<std::string>& args);

// RunInRpcModule for each command, for the command table.
int RecordInRpcModule(const std::vector<std::string>& args);
int SchedulerInRpcModule(const std::vector<std::string>& args);
int WorkerInRpcModule(const std::vector<std::string>& args);

}  // namespace ste::cli

#endif  // STE_CLI_RPC_MODULE_H_
