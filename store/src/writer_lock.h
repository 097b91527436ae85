// Copyright: the ste authors. Writer locks of the SQLite store: who may
// still write a building baseline.
//
// Internal to scheduler/. The store object that Begin()s baseline N
// creates <dir>/N.lock and holds an exclusive flock(2) on it (an open file
// description of its own, O_CLOEXEC) until it completes N, marks it
// failed, removes it, or is destroyed; the kernel lets go when the process
// dies, however it dies. Another open of the file (any process, this one
// included: flock locks belong to open file descriptions) then finds it
// locked while, and only while, that writer may still write N.
//
// The file is created, and locked, inside Begin()'s transaction, before
// the row is visible, so no reader sees a building baseline before its
// lock exists. A missing file means no writer (a ste from before writer
// locks, or a lock file that could not be created): the caller decides
// with the baseline's age (baseline_retention.h).
//
// Limits: flock works between processes of one machine (an SQLite store
// in WAL mode is only ever used from one machine). A probe takes the lock
// for an instant when it is free, so it never blocks a writer for long,
// and Acquire never waits: a lock it cannot take is no evidence, not an
// error of the build.
#ifndef STE_SCHEDULER_WRITER_LOCK_H_
#define STE_SCHEDULER_WRITER_LOCK_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ste {

class FlockWriterLocks {
 public:
  explicit FlockWriterLocks(std::string dir) : dir_(std::move(dir)) {}
  ~FlockWriterLocks();  // closes every lock held (their files stay)
  FlockWriterLocks(const FlockWriterLocks&) = delete;
  FlockWriterLocks& operator=(const FlockWriterLocks&) = delete;

  const std::string& dir() const { return dir_; }
  std::string PathOf(int64_t baseline) const;

  // Creates (with the directory) and locks the file of `baseline`.
  absl::Status Acquire(int64_t baseline);
  // Whether this object holds the lock of `baseline`.
  bool Holds(int64_t baseline) const { return held_.count(baseline) > 0; }
  // Lets go of the lock of `baseline` (if held) and removes its file.
  void Release(int64_t baseline);
  // Lets go of the lock without removing the file (a Begin rolled back
  // removes it itself).
  void Forget(int64_t baseline);

  // Whether anything (this object included) holds the lock of `baseline`:
  // probed with an open of its own. A missing file is false.
  absl::StatusOr<bool> Held(int64_t baseline) const;

 private:
  std::string dir_;
  std::map<int64_t, int> held_;  // baseline -> fd
};

// A lock file "<baseline>.lock" found in a writer lock directory.
struct WriterLockFile {
  int64_t baseline = 0;
  std::string file;
};
// Every lock file in `dir` (other names are left out; a missing directory
// has none).
absl::StatusOr<std::vector<WriterLockFile>> ListWriterLockFiles(const std::string& dir);

}  // namespace ste

#endif  // STE_SCHEDULER_WRITER_LOCK_H_
