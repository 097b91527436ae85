// ste — selective test execution. This file only dispatches; each
// subcommand lives in its own file and calls the libraries.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "ste_build_commit.h"  // STE_BUILD_COMMIT, generated

namespace {

constexpr char kUsage[] =
    "Usage: ste <command> [flags] [args]\n"
    "\n"
    "ste runs only the tests a change can affect, by recording what every\n"
    "test actually opened.\n"
    "\n"
    "Commands:\n"
    "  record      record a baseline: run every test under the interceptor\n"
    "  select      print the tests the current changes can affect, and why\n"
    "  why PATH    the tests that depend on a file\n"
    "  deps TEST   what a test depends on\n"
    "  inventory   hash the tree; compare two inventories\n"
    "  index dump  every test of the baseline's index with its dependencies\n"
    "  baseline    export/import baselines as files; list them; gc old ones\n"
    "  scheduler   the service for distributed record builds and selection\n"
    "  worker      run the tests of a distributed record build\n"
    "  run         run a command under the interceptor, recording what it uses\n"
    "  log dump    print the records of a run's logs\n"
    "  --version   the version, and the commit ste was built from\n"
    "\n"
    "Configuration: ste.toml at the repository root.\n"
    "\n"
    "Run 'ste <command> --help' for the flags of a command.\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "--version" || command == "version") {
    // The version of project() in CMakeLists.txt, and the commit built.
    std::puts("ste " STE_VERSION " (" STE_BUILD_COMMIT ")");
    return 0;
  }
  if (command == "run") return ste::cli::RunCommand(args);
  if (command == "log") return ste::cli::LogCommand(args);
  if (command == "record") return ste::cli::RecordCommand(args);
  if (command == "select") return ste::cli::SelectCommand(args);
  if (command == "why") return ste::cli::WhyCommand(args);
  if (command == "deps") return ste::cli::DepsCommand(args);
  if (command == "index") return ste::cli::IndexCommand(args);
  if (command == "inventory") return ste::cli::InventoryCommand(args);
  if (command == "scheduler") return ste::cli::SchedulerCommand(args);
  if (command == "worker") return ste::cli::WorkerCommand(args);
  if (command == "baseline") return ste::cli::BaselineCommand(args);
  std::fprintf(stderr, "ste: unknown command '%s' (see 'ste --help')\n",
               command.c_str());
  return 2;
}
