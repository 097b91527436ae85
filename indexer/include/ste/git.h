// The few git facts ste needs, from the `git` command (a repo without git
// installed, or not a repo, is fine: callers fall back).
#ifndef STE_GIT_H_
#define STE_GIT_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
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

// One object of the repository: its type ("commit", "blob", ...) and its
// content, as `git cat-file` gives them.
struct GitObject {
  std::string type;
  std::string content;
};

// One `git cat-file --batch` process (with RunGit's options), asked for one
// object at a time: a walk over many commits costs one git process, not
// one or two per commit. Not thread-safe.
class GitObjectReader {
 public:
  static absl::StatusOr<std::unique_ptr<GitObjectReader>> Start(const std::string& dir);
  ~GitObjectReader();  // ends the process and waits for it
  GitObjectReader(const GitObjectReader&) = delete;
  GitObjectReader& operator=(const GitObjectReader&) = delete;

  // The object `name` (an object id) names. NotFound when the repository
  // does not have it; InvalidArgument for a name with a newline or
  // nothing in it; Unavailable when the process is gone.
  absl::StatusOr<GitObject> Read(const std::string& name);

 private:
  GitObjectReader(pid_t pid, int to_git, int from_git);
  // Reads up to and without the next '\n'; false at the end of the output.
  bool ReadLine(std::string* line);
  bool ReadExactly(size_t n, std::string* out);

  pid_t pid_;
  int to_git_;    // a socket: a write to a process that ended is an error, not SIGPIPE
  int from_git_;
  std::string buffer_;  // read, not yet handed out
};

// The commit id of HEAD. (Whether there is a HEAD, and the MRI: checkout.h,
// ReadCommitFacts.)
absl::StatusOr<std::string> GitHead(const std::string& dir);

}  // namespace ste

#endif  // STE_GIT_H_
