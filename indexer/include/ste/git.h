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

// Runs `git -C dir args...`; its stdout, or an error with its stderr.
absl::StatusOr<std::string> RunGit(const std::string& dir,
                                   const std::vector<std::string>& args);

// The commit id of HEAD. (Whether there is a HEAD, and the MRI: checkout.h,
// ReadCommitFacts.)
absl::StatusOr<std::string> GitHead(const std::string& dir);

}  // namespace ste

#endif  // STE_GIT_H_
