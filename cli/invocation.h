// One run of one `ste` command: what every command file used to repeat.
// It parses the flags (with --help and the usage error), resolves
// --format (and its alias --json), and loads what the command asks for,
// each at most once and only when asked: the configuration (ste.toml,
// --config, --store), the store and the baseline. Errors are printed here
// as "ste <command>: <message>"; the exit code comes from ExitCode, the
// one place that maps an outcome to a number.
//
//   Invocation in(kWhySpec);
//   if (std::optional<int> done = in.Parse(args)) return *done;  // --help, bad usage
//   LoadedBaseline* base = in.Baseline();
//   if (base == nullptr) return in.exit_code();
//
// Not thread-safe; one per process.
#ifndef STE_CLI_INVOCATION_H_
#define STE_CLI_INVOCATION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flags.h"
#include "output_format.h"
#include "ste/baseline_loader.h"
#include "ste/baseline_store.h"
#include "ste/config.h"

namespace ste::cli {

// What a command came to. The exit codes each command's --help documents
// are these, so they are the same for every command:
enum class Outcome {
  kSuccess,     // 0
  kFailure,     // 1: the command could not do its job (a store, a file,
                //    no baseline), or what it ran failed (record: a test)
  kUsage,       // 2: bad usage or configuration
  kNoResult,    // 3: no result at all (select: the tree could not be read,
                //    run everything; record: no baseline was stored)
  kNotStarted,  // 127: run: the command could not be started
};
// (`ste run` otherwise exits with its command's own status.)

// The process exit status of an outcome (above).
int ExitCode(Outcome outcome);

// ok -> kSuccess, InvalidArgument -> kUsage, anything else -> kFailure.
Outcome OutcomeOf(const absl::Status& status);

struct CommandSpec {
  std::string name;  // as in messages: "select", "baseline list"
  std::string help;  // --help: this text, then the flags
  std::vector<FlagSpec> flags;
  // The formats the command prints, its default first. Not empty: the
  // command takes --format FORMAT, and --json (the same as --format json)
  // when json is one of them; both are added to `flags` for --help.
  std::vector<OutputFormat> formats = {};
  // "ste run CMD ARGS...": the first positional argument ends the flags.
  bool stop_at_positional = false;
};

// How the store is opened: as Store::OpenForReading (never creates
// nor migrates it: a selection) or Store::Open.
enum class StoreAccess { kRead, kReadWrite };

class Invocation {
 public:
  explicit Invocation(CommandSpec spec);

  // Parses `args`. nullopt: go on. Otherwise the command is done, with this
  // exit code: --help was printed (0), or a usage error (2).
  std::optional<int> Parse(const std::vector<std::string>& args);

  const std::string& name() const { return spec_.name; }
  const ParsedFlags& flags() const { return flags_; }
  // --format (or --json), checked by Parse against the spec's formats.
  OutputFormat format() const { return format_; }
  bool json() const { return format_ == OutputFormat::kJson; }

  // Prints "ste <name>: <message> (see 'ste <name> --help')"; returns 2.
  int UsageError(const std::string& message);
  // Prints "ste <name>: <message>"; returns ExitCode(outcome).
  int Fail(const std::string& message, Outcome outcome = Outcome::kFailure);
  int Fail(const absl::Status& status, Outcome outcome = Outcome::kFailure);

  // The configuration: --config FILE, else ste.toml found from the current
  // directory up; --store URL (when the command has that flag) overrides
  // its store.url. Loaded once. nullptr after an error, printed (exit 2).
  Config* config();

  // The store of config(), opened once (`access` is the first call's).
  // The error is returned, not printed: a selection widens to all on it.
  absl::StatusOr<Store*> store(StoreAccess access);
  // The same store, handed over (to a StoreBaselineSource); store() is not
  // to be called after.
  absl::StatusOr<std::unique_ptr<Store>> TakeStore(StoreAccess access);

  // The baseline --base names (auto, the default, or an ID) in store(),
  // loaded once. nullptr after an error, printed (exit 1).
  LoadedBaseline* Baseline();

  // The exit code of the last error config() or Baseline() printed.
  int exit_code() const { return exit_code_; }

 private:
  CommandSpec spec_;
  ParsedFlags flags_;
  OutputFormat format_ = OutputFormat::kText;
  int exit_code_ = 0;
  std::optional<Config> config_;
  bool config_loaded_ = false;
  std::optional<absl::StatusOr<std::unique_ptr<Store>>> store_;
  std::optional<LoadedBaseline> baseline_;
  bool baseline_loaded_ = false;
};

}  // namespace ste::cli

#endif  // STE_CLI_INVOCATION_H_
