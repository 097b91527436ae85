// What the repository-level commands (record, select, why, deps, index,
// inventory) share: finding and loading ste.toml, loading a baseline for
// the query commands. Commands reach these through invocation.h, which
// calls each at most once.
#ifndef STE_CLI_REPO_CONTEXT_H_
#define STE_CLI_REPO_CONTEXT_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "flags.h"
#include "ste/baseline_loader.h"
#include "ste/baseline_store.h"
#include "ste/config.h"
#include "ste/inventory.h"
#include "ste/selection_index.h"

namespace ste::cli {

// Finds ste.toml from the current directory (or `config_flag` if given)
// and loads it. On error prints "ste <command>: <message>" and returns the
// exit code (2) in *exit_code.
std::optional<Config> LoadRepoConfig(const std::string& command,
                                     const std::string& config_flag,
                                     int* exit_code);

// The baseline to compare with: `base` is "auto" (the latest complete one
// with mri <= the MRI of HEAD, or of any baseline outside git) or an id.
// Any problem (none, unreadable, wrong version, checksum) is an error
// whose message says why; callers selecting tests turn it into mode all.
absl::StatusOr<LoadedBaseline> LoadBaseline(BaselineStore& store,
                                            const Config& config,
                                            const std::string& base);

// The MRI asked for: --mri N, else $STE_MRI, else nullopt. A value that is
// not a number >= 0 prints "ste <command>: ..." and sets *exit_code to 2.
std::optional<int64_t> MriFlag(const ParsedFlags& flags, const std::string& command,
                               int* exit_code);

// `path` made absolute (from the current directory) and lexically
// normal, without a trailing '/'.
std::string AbsolutePath(const std::string& path);

// A path argument as the index and the inventory name it: from the
// current directory, lexically normal (as the interceptor records paths),
// relative to the repository root, or absolute outside it.
std::string IndexPath(const Config& config, const std::string& arg);

// Formats seconds as "1.2s" / "3m04s".
std::string Seconds(double s);

}  // namespace ste::cli

#endif  // STE_CLI_REPO_CONTEXT_H_
