#include "ste/repo_path.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ste/status_macros.h"

namespace ste {
namespace {

std::string Quoted(std::string_view path) {
  return absl::StrCat("'", absl::CHexEscape(std::string(path.substr(0, 200))),
                      path.size() > 200 ? "...'" : "'");
}

}  // namespace

bool HasCleanComponents(std::string_view rest) {
  size_t start = 0;
  for (;;) {
    size_t slash = rest.find('/', start);
    std::string_view c = rest.substr(start, slash == std::string_view::npos ? rest.npos : slash - start);
    if (c.empty() || c == "." || c == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

bool IsNormalizedAbsolute(std::string_view path) {
  if (path.empty() || path[0] != '/') return false;
  return path == "/" || HasCleanComponents(path.substr(1));
}

bool IsCleanRelative(std::string_view path) {
  return !path.empty() && path[0] != '/' && HasCleanComponents(path);
}

bool IsCleanPath(std::string_view path) {
  return path == "." || IsNormalizedAbsolute(path) || IsCleanRelative(path);
}

absl::Status ValidateDependencyPath(std::string_view path) {
  if (path.empty()) return absl::InvalidArgumentError("an empty path");
  if (path.size() > kMaxRepoPathBytes) {
    return absl::InvalidArgumentError(absl::StrCat("a path of ", path.size(), " bytes: ", Quoted(path)));
  }
  if (path.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("a path with a NUL byte: ", Quoted(path)));
  }
  if (IsCleanPath(path)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      path[0] == '/' ? "an absolute path that is not normalised: "
                     : "a repo-relative path with an empty, '.' or '..' component (it could "
                       "escape the repo): ",
      Quoted(path)));
}

absl::Status ValidateTestPath(std::string_view path) {
  STE_RETURN_IF_ERROR(ValidateDependencyPath(path));
  if (path[0] == '/' || path == ".") {
    return absl::InvalidArgumentError(absl::StrCat("a test path must be repo-relative: ", Quoted(path)));
  }
  return absl::OkStatus();
}

std::string MakeNormalAbsolute(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  if (parts.empty()) return "/";
  std::string normal;
  for (std::string_view p : parts) absl::StrAppend(&normal, "/", std::string(p));
  return normal;
}

absl::StatusOr<std::string> AbsoluteNormalPath(std::string_view path) {
  if (!path.empty() && path[0] == '/') return MakeNormalAbsolute(path);
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) {
    return absl::ErrnoToStatus(errno, "cannot read the current directory");
  }
  return MakeNormalAbsolute(absl::StrCat(cwd, "/", std::string(path)));
}

}  // namespace ste
