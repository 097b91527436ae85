// The `ste` subcommands. Each takes the arguments after its name and
// returns the process exit code, made by invocation.h's ExitCode (0
// success, 1 failure with the message already printed, 2 bad usage, 3 no
// result); `ste run` returns its command's code.
#ifndef STE_CLI_COMMANDS_H_
#define STE_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace ste::cli {

int RunCommand(const std::vector<std::string>& args);
int LogCommand(const std::vector<std::string>& args);
int RecordCommand(const std::vector<std::string>& args);
int SelectCommand(const std::vector<std::string>& args);
int AuditCommand(const std::vector<std::string>& args);
int WhyCommand(const std::vector<std::string>& args);
int DepsCommand(const std::vector<std::string>& args);
int HazardsCommand(const std::vector<std::string>& args);
int ReportCommand(const std::vector<std::string>& args);
int IndexCommand(const std::vector<std::string>& args);
int InventoryCommand(const std::vector<std::string>& args);
int SchedulerCommand(const std::vector<std::string>& args);
int WorkerCommand(const std::vector<std::string>& args);
int BaselineCommand(const std::vector<std::string>& args);

// Prints "ste <command>: <message> (see ...)" to stderr and returns 2
// (invocation.h ExitCode(Outcome::kUsage)). For a command that is not
// parsed by an Invocation yet (an unknown subcommand).
int UsageError(const std::string& command, const std::string& message);

}  // namespace ste::cli

#endif  // STE_CLI_COMMANDS_H_
