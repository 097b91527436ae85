// The one rule for the paths ste keys dependencies, tests and views by.
//
// A path in a record, an index, an inventory or an archive is one of:
//   "."            the repository's root
//   a/b/c          repo-relative: no leading '/', every '/'-separated
//                  component non-empty and neither "." nor ".." (nothing
//                  that could name a file outside the repository)
//   "/" or /a/b    absolute and normalised, the same rule after the '/'
// Every reader of untrusted paths (a worker's results, an archive, a view's
// directory, an inventory's external entries) checks them here, so the rule
// is written once. MakeNormalAbsolute is the other direction: a path a user
// typed, normalised lexically ("." and ".." folded, as the interceptor
// records paths: symlinks are not resolved).
#ifndef STE_REPO_PATH_H_
#define STE_REPO_PATH_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ste {

// The longest path a record may carry (PATH_MAX).
inline constexpr size_t kMaxRepoPathBytes = 4096;

// Every '/'-separated component of `rest` is non-empty, not "." or "..".
// False for "" (one empty component).
bool HasCleanComponents(std::string_view rest);

// "/" or '/' followed by clean components (no trailing '/').
bool IsNormalizedAbsolute(std::string_view path);

// Clean repo-relative components (not ".", not empty).
bool IsCleanRelative(std::string_view path);

// ".", "/", clean repo-relative or normalised absolute.
bool IsCleanPath(std::string_view path);

// OK iff `path` may be a dependency key: IsCleanPath, no NUL byte, at most
// kMaxRepoPathBytes. InvalidArgument naming the path (escaped, cut at 200
// bytes) otherwise.
absl::Status ValidateDependencyPath(std::string_view path);

// A test path: as above, and repo-relative (not "." nor absolute).
absl::Status ValidateTestPath(std::string_view path);

// `path` (absolute) with "." and empty components dropped and ".." taking
// the previous component off ("/.." is "/"); "/" for nothing left.
std::string MakeNormalAbsolute(std::string_view path);

// `path` made absolute against the current directory (when relative), then
// MakeNormalAbsolute. The errno of getcwd when that fails.
absl::StatusOr<std::string> AbsoluteNormalPath(std::string_view path);

}  // namespace ste

#endif  // STE_REPO_PATH_H_
