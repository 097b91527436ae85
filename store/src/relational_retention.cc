// Copyright: the ste authors. The relational store's copies and retention
// (RetentionStore): blob lists, summaries, imports, removal (rows first,
// files after) and the sweep of local files (what they are: blob_sweep.h).
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "blob_file.h"
#include "blob_sweep.h"
#include "relational_store.h"
#include "ste/status_macros.h"
#include "store_rules.h"

namespace ste {

absl::StatusOr<std::vector<BlobInfo>> RelationalStore::Blobs(int64_t baseline) {
  STE_RETURN_IF_ERROR(Get(baseline).status());
  STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> rows,
                       db_->Query("SELECT name, size, xxh3_128 FROM ste.blobs "
                                  "WHERE baseline = $1 ORDER BY name",
                                  SqlParams().Int(baseline)));
  std::vector<BlobInfo> blobs;
  for (int i = 0; i < rows->size(); ++i) {
    blobs.push_back({rows->Text(i, 0), rows->Int(i, 1), rows->Text(i, 2)});
  }
  STE_RETURN_IF_ERROR(rows->ParseStatus());
  return blobs;
}

absl::StatusOr<std::vector<BaselineSummary>> RelationalStore::ListSummaries() {
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> rows,
      db_->Query(absl::StrCat(
          "SELECT ", kBaselineColumns,
          ", (SELECT count(*) FROM ste.results r WHERE r.baseline = b.id)"
          ", (SELECT coalesce(sum(size), 0) FROM ste.blobs l WHERE l.baseline = b.id), ",
          writers_->AliveSql(), " FROM ste.baselines b ORDER BY id DESC")));
  std::vector<BaselineSummary> list;
  list.reserve(static_cast<size_t>(rows->size()));
  for (int i = 0; i < rows->size(); ++i) {
    BaselineSummary summary;
    STE_ASSIGN_OR_RETURN(summary.info, ReadBaseline(*rows, i));
    summary.tests = rows->Int(i, 7);
    summary.blob_bytes = rows->Int(i, 8);
    const bool alive = rows->Bool(i, 9);
    STE_RETURN_IF_ERROR(rows->ParseStatus());
    if (summary.info.state == BaselineState::kBuilding) {
      summary.writer_alive = writers_->Alive(summary.info.id, alive);
    }
    list.push_back(std::move(summary));
  }
  return list;
}

absl::StatusOr<int64_t> RelationalStore::CompleteImported(int64_t baseline, int64_t created_unix,
                                                          int64_t completed_unix) {
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(SqlTransaction txn, db_->Begin(TxnKind::kWrite));
  STE_RETURN_IF_ERROR(LockBuilding(baseline, "complete it", Lock::kUpdate));
  STE_RETURN_IF_ERROR(CheckCompletable(baseline));
  // Imports check for a duplicate one at a time, so the check and the
  // completion see every import that completed before this one.
  STE_RETURN_IF_ERROR(writers_->SerialiseImports());
  STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> dup,
                       db_->Query(DuplicateBaselineSql("ste.", "$1"), SqlParams().Int(baseline)));
  if (dup->size() > 0) {
    const int64_t id = dup->Int(0, 0);
    STE_RETURN_IF_ERROR(dup->ParseStatus());
    return id;  // rolled back: nothing changed
  }
  STE_RETURN_IF_ERROR(CommitCompletion(std::move(txn), baseline,
                                       std::max<int64_t>(created_unix, 0),
                                       std::max<int64_t>(completed_unix, 0)));
  return baseline;
}

absl::StatusOr<bool> RelationalStore::Remove(int64_t baseline, BaselineState expected) {
  STE_RETURN_IF_ERROR(Ready());
  std::vector<std::string> files;
  {
    STE_ASSIGN_OR_RETURN(SqlTransaction txn, db_->Begin(TxnKind::kWrite));
    // FOR UPDATE: waits for a PutBlob/PutResults in progress (FOR SHARE),
    // and no Complete or MarkFailed can change the state under us.
    STE_ASSIGN_OR_RETURN(
        std::unique_ptr<SqlRows> row,
        db_->Query(absl::StrCat("SELECT state FROM ste.baselines WHERE id = $1",
                                dialect_.for_update),
                   SqlParams().Int(baseline)));
    if (row->size() == 0) return false;
    const int64_t state = row->Int(0, 0);
    STE_RETURN_IF_ERROR(row->ParseStatus());
    if (state != static_cast<int64_t>(expected)) return false;
    if (expected == BaselineState::kBuilding) {
      STE_ASSIGN_OR_RETURN(bool free, writers_->FreeToRemove(baseline));
      if (!free) return false;
    }
    STE_ASSIGN_OR_RETURN(files, blobs_->LocalFiles(*db_, baseline));
    STE_RETURN_IF_ERROR(DeleteBuildRows(baseline));
    STE_RETURN_IF_ERROR(blobs_->DeleteBytes(*db_, baseline));
    for (const char* sql : {"DELETE FROM ste.blobs WHERE baseline = $1",
                            "DELETE FROM ste.results WHERE baseline = $1",
                            "DELETE FROM ste.baselines WHERE id = $1"}) {
      STE_RETURN_IF_ERROR(db_->Exec(sql, SqlParams().Int(baseline)));
    }
    STE_RETURN_IF_ERROR(txn.Commit());
  }
  // The rows are gone: no reader finds these files any more (one that
  // found them before and has them mapped keeps its mapping). Other
  // machines' caches are swept by their own RemoveStaleFiles.
  writers_->Release(baseline);
  writers_->RemoveLeftovers(baseline);
  claims_.erase(baseline);
  for (const std::string& path : files) {
    unlink(path.c_str());
    unlink(HashStampPath(path).c_str());
  }
  RemoveBaselineFiles(blobs_->dir(), baseline, nullptr);
  return true;
}

absl::StatusOr<std::vector<std::string>> RelationalStore::RemoveStaleFiles() {
  STE_RETURN_IF_ERROR(Ready());
  // The directories are listed before the rows are read: a blob file (or
  // a cached copy) is only made for a baseline whose row is visible, so
  // every file listed has its rows in what is read below. Lock files are
  // made inside Begin's transaction: with them, the listing happens under
  // the database's write lock, so that no Begin is half done.
  std::map<int64_t, int64_t> states;                // baseline -> state
  std::set<std::pair<int64_t, std::string>> named;  // (baseline, file)
  BlobDirListing listing;
  std::vector<WriterLockFile> locks;
  {
    STE_ASSIGN_OR_RETURN(SqlTransaction txn,
                         db_->Begin(writers_->sweep_under_write_lock() ? TxnKind::kWrite
                                                                      : TxnKind::kSnapshot));
    STE_ASSIGN_OR_RETURN(listing, ListBlobDirectory(blobs_->dir()));
    STE_ASSIGN_OR_RETURN(locks, writers_->ListFiles());
    STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> rows,
                         db_->Query("SELECT id, state FROM ste.baselines"));
    for (int i = 0; i < rows->size(); ++i) states[rows->Int(i, 0)] = rows->Int(i, 1);
    STE_RETURN_IF_ERROR(rows->ParseStatus());
    STE_ASSIGN_OR_RETURN(named, blobs_->NamedFiles(*db_));
  }  // rolled back: nothing was written
  auto gone = [&](int64_t baseline) { return states.count(baseline) == 0; };
  auto building = [&](int64_t baseline) {
    return !gone(baseline) && states[baseline] == static_cast<int64_t>(BaselineState::kBuilding);
  };
  // What a file of `f.baseline` may still be: a write in progress, or
  // the file a row names.
  auto keep = [&](const BlobFileName& f, const std::string& final_name) {
    if (building(f.baseline)) return true;  // may still be written
    if (f.temp) return blobs_->temp_files_of_any_baseline() && !gone(f.baseline);
    return named.count({f.baseline, final_name}) > 0;
  };
  std::vector<std::string> removed;
  for (const BlobFileName& f : listing.files) {
    if (!keep(f, f.file)) RemoveFileIn(blobs_->dir(), f.file, &removed);
  }
  const std::string stamps = StampDirectoryOf(blobs_->dir());
  for (const BlobFileName& s : listing.stamps) {
    if (!keep(s, s.final)) RemoveFileIn(stamps, s.file, &removed);
  }
  for (const WriterLockFile& l : locks) {
    if (!building(l.baseline)) RemoveFileIn(writers_->dir(), l.file, &removed);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

}  // namespace ste
