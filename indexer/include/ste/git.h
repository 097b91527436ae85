// The few git facts ste needs, from the `git` command (a repo without git
// installed, or not a repo, is fine: callers fall back).
#ifndef STE_GIT_H_
#define STE_GIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ste {

// Runs argv (argv[0] looked up in PATH) and returns its stdout;
// FailedPrecondition with its stderr when it exits non-zero.
absl::StatusOr<std::string> RunAndCapture(const std::vector<std::string>& argv);

// Runs `git --no-pager -c log.showSignature=false -c core.fsmonitor=false
// -C dir args...`; its stdout, or an error with its stderr. The options
// keep a git configuration from making a read-only command run a program
// (docs/SECURITY.md); ste runs only rev-parse, rev-list, log --format and
// cat-file through it, none of which runs hooks, filters or diff drivers.
absl::StatusOr<std::string> RunGit(const std::string& dir,
                                   const std::vector<std::string>& args);

// The commit id of HEAD. (Whether there is a HEAD, and the MRI: checkout.h,
// ReadCommitFacts.)
absl::StatusOr<std::string> GitHead(const std::string& dir);

}  // namespace ste

#endif  // STE_GIT_H_
