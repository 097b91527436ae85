// The one way ste replaces a file it writes (an inventory, an index, a
// JUnit report, a port file, a log): readers, and a machine that loses
// power, see the old content or the new one whole, never a part.
//
//   1. a temporary file beside the target, `.tmp-<name>-XXXXXX` (mkstemp:
//      a name no reader of ste's files looks for);
//   2. the bytes, then chmod to `mode`, then fsync;
//   3. rename over the target;
//   4. fsync of the directory (the rename is durable only then).
//
// Any error removes the temporary and leaves the target as it was.
#ifndef STE_ATOMIC_FILE_H_
#define STE_ATOMIC_FILE_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ste {

// For content written as it is made (an index streamed to its fd).
// Not thread-safe; one writer per object.
class AtomicFileWriter {
 public:
  // Creates the temporary beside `path` (step 1). The directory must exist.
  static absl::StatusOr<std::unique_ptr<AtomicFileWriter>> Create(const std::string& path,
                                                                   mode_t mode = 0644);
  // Removes the temporary unless Commit() succeeded.
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // The temporary's descriptor, for a writer of its own; -1 once committed.
  int fd() const { return fd_; }
  const std::string& temp_path() const { return temp_; }
  // Appends `bytes` (retrying short writes and EINTR).
  absl::Status Write(absl::string_view bytes);
  // Steps 2 to 4. Once it failed, the object is spent (the temporary gone).
  absl::Status Commit();

 private:
  AtomicFileWriter(std::string path, std::string temp, int fd, mode_t mode);
  std::string path_, temp_;
  int fd_;
  mode_t mode_;
  bool committed_ = false;
};

// Writes `bytes` to `path` by steps 1 to 4.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes,
                                 mode_t mode = 0644);

// fsync of a directory, so that a rename or a creation in it is durable.
absl::Status SyncDirectory(const std::string& dir);

}  // namespace ste

#endif  // STE_ATOMIC_FILE_H_
