// ste — selective test execution. This file only dispatches; each
// subcommand lives in its own file and calls the libraries.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "rpc_module.h"
#include "ste_build_commit.h"  // STE_BUILD_COMMIT, generated

namespace {

// One row per command: the usage text, `ste help CMD` and the dispatch are
// all made from this table (Ninja's Tool table), so they cannot disagree.
// The commands that talk gRPC run in the RPC module (rpc_module.h).
struct CommandEntry {
  const char* name;
  const char* args;     // shown after the name in the usage text
  const char* summary;  // one line
  int (*run)(const std::vector<std::string>& args);
};

constexpr CommandEntry kCommands[] = {
    {"record", "", "record a baseline: run every test under the interceptor", ste::cli::RecordInRpcModule},
    {"select", "", "print the tests the current changes can affect, and why", ste::cli::SelectCommand},
    {"audit", "", "run the tests the selection leaves out: would it miss a failing one?",
     ste::cli::AuditCommand},
    {"why", "PATH", "the tests that depend on a file", ste::cli::WhyCommand},
    {"deps", "TEST", "what a test depends on", ste::cli::DepsCommand},
    {"hazards", "", "order dependences: a test that writes what another reads", ste::cli::HazardsCommand},
    {"report", "", "one HTML page: selections over time, time saved, audits, flaky tests", ste::cli::ReportCommand},
    {"inventory", "", "hash the tree; compare two inventories", ste::cli::InventoryCommand},
    {"index", "dump", "every test of the baseline's index with its dependencies", ste::cli::IndexCommand},
    {"baseline", "", "export/import baselines as files; list them; gc old ones", ste::cli::BaselineCommand},
    {"scheduler", "", "the service for distributed record builds and selection", ste::cli::SchedulerInRpcModule},
    {"worker", "", "run the tests of a distributed record build", ste::cli::WorkerInRpcModule},
    {"run", "", "run a command under the interceptor, recording what it uses", ste::cli::RunCommand},
    {"log", "dump", "print the records of a run's logs", ste::cli::LogCommand},
};

const CommandEntry* FindCommand(const std::string& name) {
  for (const CommandEntry& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

std::string Usage() {
  std::string out =
      "Usage: ste <command> [flags] [args]\n"
      "\n"
      "ste runs only the tests a change can affect, by recording what every\n"
      "test actually opened.\n"
      "\n"
      "Commands:\n";
  for (const CommandEntry& c : kCommands) {
    std::string head = std::string(c.name) + (*c.args ? " " : "") + c.args;
    head.resize(std::max<size_t>(head.size() + 2, 12), ' ');
    out += "  " + head + c.summary + "\n";
  }
  out +=
      "  help CMD    the flags of a command (the same as 'ste CMD --help')\n"
      "  --version   the version, and the commit ste was built from\n"
      "\n"
      "Configuration: ste.toml at the repository root.\n"
      "\n"
      "Run 'ste help <command>' for the flags of a command.\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(Usage().c_str(), stderr);
    return 2;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "--help" || command == "-h" || (command == "help" && args.empty())) {
    std::fputs(Usage().c_str(), stdout);
    return 0;
  }
  if (command == "--version" || command == "version") {
    // The version of project() in CMakeLists.txt, and the commit built.
    std::puts("ste " STE_VERSION " (" STE_BUILD_COMMIT ")");
    return 0;
  }
  if (command == "help") {
    // `ste help CMD [SUB]`: that command's own --help.
    const CommandEntry* c = FindCommand(args[0]);
    if (c == nullptr) {
      std::fprintf(stderr, "ste help: unknown command '%s' (see 'ste --help')\n", args[0].c_str());
      return 2;
    }
    std::vector<std::string> rest(args.begin() + 1, args.end());
    rest.push_back("--help");
    return c->run(rest);
  }
  if (const CommandEntry* c = FindCommand(command)) return c->run(args);
  std::fprintf(stderr, "ste: unknown command '%s' (see 'ste --help')\n", command.c_str());
  return 2;
}
