// The few git facts ste needs, from the `git` command (a repo without git
// installed, or not a repo, is fine: callers fall back).
#ifndef STE_GIT_H_
#define STE_GIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ste {

// Runs `git -C dir args...`; its stdout, or an error with its stderr.
// Runs argv (argv[0] looked up in PATH) and returns its stdout;
// FailedPrecondition with its stderr when it exits non-zero.
absl::StatusOr<std::string> RunAndCapture(const std::vector<std::string>& argv);

absl::StatusOr<std::string> RunGit(const std::string& dir,
                                   const std::vector<std::string>& args);

bool IsGitRepo(const std::string& dir);
absl::StatusOr<std::string> GitHead(const std::string& dir);  // commit id
// The MRI of a commit: the number of commits reachable from it.
absl::StatusOr<int64_t> GitMri(const std::string& dir, const std::string& rev);
// The commit messages of base..HEAD when base is an ancestor of HEAD, else
// of HEAD alone.
absl::StatusOr<std::string> GitMessagesSince(const std::string& dir,
                                             const std::string& base);

}  // namespace ste

#endif  // STE_GIT_H_
