// Copyright: the ste authors. The two WriterLocks strategies
// (store_strategies.h): flock files for SQLite (over FlockWriterLocks,
// writer_lock.h), session advisory locks for PostgreSQL.
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "blob_sweep.h"
#include "postgres_store.h"
#include "ste/status_macros.h"
#include "store_strategies.h"

namespace ste {
namespace {

class FlockLocks final : public WriterLocks {
 public:
  explicit FlockLocks(std::string dir) : locks_(std::move(dir)) {}

  void Acquire(int64_t baseline) override { (void)locks_.Acquire(baseline); }
  bool Holds(int64_t baseline) const override { return locks_.Holds(baseline); }
  void Release(int64_t baseline) override { locks_.Release(baseline); }
  void Forget(int64_t baseline) override { locks_.Forget(baseline); }
  void Retake() override {}  // held by open file descriptions: never lost

  absl::StatusOr<bool> FreeToRemove(int64_t baseline) override {
    if (locks_.Holds(baseline)) return true;
    // Under the database's write lock; only Begin() takes a writer lock,
    // and for a new id, so a free lock stays free.
    absl::StatusOr<bool> held = locks_.Held(baseline);
    return held.ok() && !*held;
  }
  void RemoveLeftovers(int64_t baseline) override {
    RemoveFileIn(locks_.dir(), absl::StrCat(baseline, ".lock"), nullptr);
  }

  std::string AliveSql() const override { return "0"; }
  bool Alive(int64_t baseline, bool /*from_sql*/) const override {
    absl::StatusOr<bool> held = locks_.Held(baseline);
    return locks_.Holds(baseline) || !held.ok() || *held;
  }

  absl::Status SerialiseImports() override {
    return absl::OkStatus();  // BEGIN IMMEDIATE serialises every writer
  }

  bool sweep_under_write_lock() const override { return true; }
  absl::StatusOr<std::vector<WriterLockFile>> ListFiles() const override {
    return ListWriterLockFiles(locks_.dir());
  }
  const std::string& dir() const override { return locks_.dir(); }

 private:
  FlockWriterLocks locks_;
};

class AdvisoryLocks final : public WriterLocks {
 public:
  AdvisoryLocks(SqlDb& db, int64_t import_key) : db_(db), import_key_(import_key) {}
  // Lets go of the locks now (closing the connection would too, but the
  // server notices a closed connection a moment later).
  ~AdvisoryLocks() override {
    for (int64_t id : held_) Unlock(id);
  }

  void Acquire(int64_t baseline) override {
    // A session lock: it outlives the transaction it is taken in.
    if (TryLock(baseline)) held_.insert(baseline);
  }
  bool Holds(int64_t baseline) const override { return held_.count(baseline) > 0; }
  void Release(int64_t baseline) override {
    if (held_.erase(baseline) > 0) Unlock(baseline);
  }
  void Forget(int64_t baseline) override { Release(baseline); }
  void Retake() override {
    for (auto it = held_.begin(); it != held_.end();) {
      it = TryLock(*it) ? std::next(it) : held_.erase(it);
    }
  }

  absl::StatusOr<bool> FreeToRemove(int64_t baseline) override {
    // Granted when no other session holds the writer lock (ours: the
    // same session may take it again); released at COMMIT.
    STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> free,
                         db_.Query("SELECT pg_try_advisory_xact_lock($1)",
                                   SqlParams().Int(PostgresWriterLockKey(baseline))));
    return free->size() == 1 && free->Bool(0, 0);
  }
  void RemoveLeftovers(int64_t /*baseline*/) override {}

  std::string AliveSql() const override {
    // pg_locks shows a bigint advisory key as classid (high half), objid
    // (low half), objsubid 1: probed there, without taking the lock.
    return absl::StrCat(
        "b.state = 0 AND EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'advisory'"
        " AND k.granted AND k.database = (SELECT oid FROM pg_database WHERE datname ="
        " current_database()) AND k.classid = (",
        PostgresWriterLockKey(0) >> 32,
        ")::oid AND k.objid = (b.id & 4294967295)::oid AND k.objsubid = 1)");
  }
  bool Alive(int64_t /*baseline*/, bool from_sql) const override { return from_sql; }

  absl::Status SerialiseImports() override {
    // Under READ COMMITTED the duplicate check that follows then sees
    // every import that completed before this one.
    return db_.Exec("SELECT pg_advisory_xact_lock($1)", SqlParams().Int(import_key_));
  }

  bool sweep_under_write_lock() const override { return false; }
  absl::StatusOr<std::vector<WriterLockFile>> ListFiles() const override {
    return std::vector<WriterLockFile>();
  }
  const std::string& dir() const override { return no_dir_; }

 private:
  bool TryLock(int64_t baseline) {
    absl::StatusOr<std::unique_ptr<SqlRows>> locked = db_.Query(
        "SELECT pg_try_advisory_lock($1)", SqlParams().Int(PostgresWriterLockKey(baseline)));
    return locked.ok() && (*locked)->size() == 1 && (*locked)->Bool(0, 0);
  }
  void Unlock(int64_t baseline) {
    (void)db_.Exec("SELECT pg_advisory_unlock($1)",
                   SqlParams().Int(PostgresWriterLockKey(baseline)));
  }

  SqlDb& db_;
  int64_t import_key_;
  std::set<int64_t> held_;
  std::string no_dir_;
};

}  // namespace

std::unique_ptr<WriterLocks> FlockWriterLocksIn(std::string writers_dir) {
  return std::make_unique<FlockLocks>(std::move(writers_dir));
}

std::unique_ptr<WriterLocks> AdvisoryWriterLocks(SqlDb& db, int64_t import_key) {
  return std::make_unique<AdvisoryLocks>(db, import_key);
}

}  // namespace ste
