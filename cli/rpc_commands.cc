// The entry point of libste_rpc.so, the RPC half of the command
// (rpc_module.h): the commands that talk gRPC.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"

extern "C" __attribute__((visibility("default"))) int ste_rpc_command(const char* name, int argc,
                                                                     const char* const* argv) {
  const std::vector<std::string> args(argv, argv + argc);
  const std::string command = name;
  int code;
  if (command == "record") {
    code = ste::cli::RecordCommand(args);
  } else if (command == "scheduler") {
    code = ste::cli::SchedulerCommand(args);
  } else if (command == "worker") {
    code = ste::cli::WorkerCommand(args);
  } else if (command == "select") {
    code = ste::cli::SelectCommand(args);
  } else {
    std::fprintf(stderr, "ste: the RPC module has no command '%s'\n", name);
    code = 2;
  }
  // The command's output, written through this module's stdio (the same
  // FILE objects as ste's: libc is shared), leaves before ste exits.
  std::fflush(stdout);
  std::fflush(stderr);
  return code;
}
