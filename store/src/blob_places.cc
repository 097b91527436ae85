// Copyright: the ste authors. The two BlobPlace strategies
// (store_strategies.h): files written durably beside the SQLite database
// (the layout in sqlite_store.h), and bytea rows on the PostgreSQL server
// copied into a verified local cache (postgres_store.h, blob_cache.h).
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "blob_cache.h"
#include "blob_file.h"
#include "ste/status_macros.h"
#include "store_strategies.h"

namespace ste {
namespace {

// A file name a blob row may name: inside the directory, never hidden.
bool PlainFileName(const std::string& file) {
  return !file.empty() && file.find('/') == std::string::npos && file[0] != '.';
}

// The row of blob `name` of `baseline`: `columns` of ste.blobs. NotFound
// without one.
absl::StatusOr<std::unique_ptr<SqlRows>> BlobRow(SqlDb& db, absl::string_view columns,
                                                 int64_t baseline, const std::string& name) {
  STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> row,
                       db.Query(absl::StrCat("SELECT ", columns,
                                             " FROM ste.blobs WHERE baseline = $1 AND name = $2"),
                                SqlParams().Int(baseline).Text(name)));
  if (row->size() == 0) {
    return absl::NotFoundError(absl::StrCat("baseline ", baseline, " has no \"", name, "\" blob"));
  }
  return row;
}

class BlobFiles final : public BlobPlace {
 public:
  BlobFiles(std::string dir, bool verify_hash, FaultHook hook)
      : dir_(std::move(dir)), verify_hash_(verify_hash), hook_(std::move(hook)) {}

  const std::string& dir() const override { return dir_; }
  bool writes_before_rows() const override { return true; }
  bool temp_files_of_any_baseline() const override { return false; }

  absl::Status Admit(int64_t, const std::string&, size_t) const override {
    return absl::OkStatus();
  }

  absl::StatusOr<Staged> Stage(SqlDb& db, int64_t baseline, const std::string& name,
                               const std::string& hash, const std::string& bytes) override {
    Staged staged;
    STE_ASSIGN_OR_RETURN(staged.previous, StoredFile(db, baseline, name));
    staged.file = absl::StrCat(baseline, "-", name, "-", hash, ".blob");
    STE_RETURN_IF_ERROR(WriteFileDurably(dir_, staged.file, bytes, hook_));
    return staged;
  }

  absl::Status Record(SqlDb& db, int64_t baseline, const std::string& name,
                      const std::string& hash, const std::string& bytes,
                      Staged& staged) override {
    STE_ASSIGN_OR_RETURN(staged.previous, StoredFile(db, baseline, name));
    return db.Exec(
        "INSERT OR REPLACE INTO ste.blobs(baseline, name, file, size, xxh3_128) "
        "VALUES ($1, $2, $3, $4, $5)",
        SqlParams()
            .Int(baseline)
            .Text(name)
            .Text(staged.file)
            .Int(static_cast<int64_t>(bytes.size()))
            .Text(hash));
  }

  void Finish(const Staged& staged, bool committed) override {
    if (!committed) {
      // The file's name is unique to this baseline, blob name and content:
      // only the row of this baseline and name can name it (when the same
      // bytes were stored before; then the file stays).
      if (staged.previous != staged.file) unlink(absl::StrCat(dir_, "/", staged.file).c_str());
      return;
    }
    if (!staged.previous.empty() && staged.previous != staged.file &&
        staged.previous.find('/') == std::string::npos) {
      unlink(absl::StrCat(dir_, "/", staged.previous).c_str());  // best effort
    }
  }

  absl::StatusOr<bool> CheckDurable(SqlDb& db, int64_t baseline,
                                    const std::string& name) override {
    absl::StatusOr<std::unique_ptr<SqlRows>> blob = BlobRow(db, "file, size", baseline, name);
    if (absl::IsNotFound(blob.status())) return false;
    STE_RETURN_IF_ERROR(blob.status());
    STE_RETURN_IF_ERROR(
        CheckFile(db, baseline, name, (*blob)->Text(0, 0), (*blob)->Int(0, 1)).status());
    return true;
  }

  absl::StatusOr<std::string> Path(SqlDb& db, int64_t baseline,
                                   const std::string& name) override {
    STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> row,
                         BlobRow(db, "file, size, xxh3_128", baseline, name));
    const std::string expected_hash = row->Text(0, 2);
    STE_ASSIGN_OR_RETURN(std::string path,
                         CheckFile(db, baseline, name, row->Text(0, 0), row->Int(0, 1)));
    if (verify_hash_) {
      absl::StatusOr<std::string> hash = Xxh3HexOfFileCached(path);
      if (absl::IsNotFound(hash.status())) {
        return absl::DataLossError(absl::StrCat("blob file ", path, " (\"", name,
                                                "\" of baseline ", baseline, ") is missing"));
      }
      if (!hash.ok()) return hash.status();
      if (*hash != expected_hash) {
        return absl::DataLossError(absl::StrCat(
            "blob file ", path, " (\"", name, "\" of baseline ", baseline, ") has XXH3-128 ",
            *hash, ", ", expected_hash, " was recorded (its content changed)"));
      }
    }
    return path;
  }

  absl::StatusOr<std::vector<std::string>> LocalFiles(SqlDb& db, int64_t baseline) override {
    STE_ASSIGN_OR_RETURN(
        std::unique_ptr<SqlRows> rows,
        db.Query("SELECT file FROM ste.blobs WHERE baseline = $1", SqlParams().Int(baseline)));
    std::vector<std::string> files;
    for (int i = 0; i < rows->size(); ++i) {
      const std::string file = rows->Text(i, 0);
      if (PlainFileName(file)) files.push_back(absl::StrCat(dir_, "/", file));
    }
    return files;
  }
  absl::Status DeleteBytes(SqlDb&, int64_t) override { return absl::OkStatus(); }

  absl::StatusOr<std::set<std::pair<int64_t, std::string>>> NamedFiles(SqlDb& db) override {
    STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> rows,
                         db.Query("SELECT baseline, file FROM ste.blobs"));
    std::set<std::pair<int64_t, std::string>> named;
    for (int i = 0; i < rows->size(); ++i) named.emplace(rows->Int(i, 0), rows->Text(i, 1));
    return named;
  }

 private:
  // The file the row of blob `name` names, or "" if there is no such row.
  absl::StatusOr<std::string> StoredFile(SqlDb& db, int64_t baseline, const std::string& name) {
    absl::StatusOr<std::unique_ptr<SqlRows>> row = BlobRow(db, "file", baseline, name);
    if (absl::IsNotFound(row.status())) return std::string();
    STE_RETURN_IF_ERROR(row.status());
    return (*row)->Text(0, 0);
  }

  // DataLoss unless <dir>/`file` exists with `size` bytes; returns its path.
  absl::StatusOr<std::string> CheckFile(SqlDb& db, int64_t baseline, const std::string& name,
                                        const std::string& file, int64_t size) const {
    // The row comes from the database: never let it point outside blobs/.
    if (!PlainFileName(file)) {
      return absl::DataLossError(absl::StrCat(db.name(), ": blob \"", name, "\" of baseline ",
                                              baseline, " names a bad file \"", file, "\""));
    }
    std::string path = absl::StrCat(dir_, "/", file);
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      int err = errno;
      if (err == ENOENT) {
        return absl::DataLossError(absl::StrCat("blob file ", path, " (\"", name,
                                                "\" of baseline ", baseline, ") is missing"));
      }
      return absl::ErrnoToStatus(err, absl::StrCat("stat blob file ", path));
    }
    if (!S_ISREG(st.st_mode) || static_cast<int64_t>(st.st_size) != size) {
      return absl::DataLossError(absl::StrCat(
          "blob file ", path, " (\"", name, "\" of baseline ", baseline, ") is ",
          static_cast<int64_t>(st.st_size), " bytes, ", size,
          " were recorded (truncated or replaced)"));
    }
    return path;
  }

  std::string dir_;
  bool verify_hash_;
  FaultHook hook_;
};

bool IsLowerHex32(absl::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

class BlobBytes final : public BlobPlace {
 public:
  BlobBytes(std::string cache_dir, bool verify_hash, size_t chunk, size_t max_bytes,
            FaultHook hook)
      : cache_(std::move(cache_dir)),
        verify_hash_(verify_hash),
        chunk_(static_cast<int64_t>(std::max<size_t>(chunk, 1))),
        max_bytes_(max_bytes),
        hook_(std::move(hook)) {}

  const std::string& dir() const override { return cache_.dir(); }
  bool writes_before_rows() const override { return false; }
  bool temp_files_of_any_baseline() const override { return true; }

  absl::Status Admit(int64_t baseline, const std::string& name, size_t size) const override {
    if (size <= max_bytes_) return absl::OkStatus();
    return absl::ResourceExhaustedError(
        absl::StrCat("blob \"", name, "\" of baseline ", baseline, " is ", size,
                     " bytes; the PostgreSQL store takes at most ", max_bytes_,
                     " (one bytea value)"));
  }

  absl::StatusOr<Staged> Stage(SqlDb&, int64_t, const std::string&, const std::string&,
                               const std::string&) override {
    return Staged();  // the bytes travel with the rows
  }

  absl::Status Record(SqlDb& db, int64_t baseline, const std::string& name,
                      const std::string& hash, const std::string& bytes, Staged&) override {
    STE_RETURN_IF_ERROR(db.Exec(
        "INSERT INTO ste.blobs (baseline, name, size, xxh3_128) "
        "VALUES ($1, $2, $3, $4) ON CONFLICT (baseline, name) DO "
        "UPDATE SET size = EXCLUDED.size, xxh3_128 = EXCLUDED.xxh3_128",
        SqlParams().Int(baseline).Text(name).Int(static_cast<int64_t>(bytes.size())).Text(hash)));
    STE_RETURN_IF_ERROR(db.Exec(
        "INSERT INTO ste.blob_contents (baseline, name, bytes) "
        "VALUES ($1, $2, $3) ON CONFLICT (baseline, name) DO "
        "UPDATE SET bytes = EXCLUDED.bytes",
        SqlParams().Int(baseline).Text(name).Bytes(bytes)));
    if (hook_) hook_("blob-before-commit");  // PutBlob commits next
    return absl::OkStatus();
  }

  void Finish(const Staged&, bool) override {}

  absl::StatusOr<bool> CheckDurable(SqlDb& db, int64_t baseline,
                                    const std::string& name) override {
    absl::StatusOr<StoredBlob> blob = ReadStored(db, baseline, name);
    if (absl::IsNotFound(blob.status())) return false;
    STE_RETURN_IF_ERROR(blob.status());
    STE_RETURN_IF_ERROR(CheckStoredBytes(db, baseline, name, *blob));
    return true;
  }

  absl::StatusOr<std::string> Path(SqlDb& db, int64_t baseline,
                                   const std::string& name) override {
    STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> row,
                         BlobRow(db, "size, xxh3_128", baseline, name));
    const int64_t size = row->Int(0, 0);
    const std::string hash = row->Text(0, 1);
    STE_RETURN_IF_ERROR(row->ParseStatus());
    // Both become part of a local file name: never trust them blindly.
    if (!ValidateBlobName(name).ok() || !IsLowerHex32(hash) || size < 0) {
      return BadRow(db, baseline, name, size, hash);
    }
    const std::string path = cache_.PathFor(baseline, name, hash);
    STE_ASSIGN_OR_RETURN(bool cached, cache_.Holds(path, size, hash, verify_hash_));
    if (cached) return path;
    return FetchIntoCache(db, baseline, name);
  }

  absl::StatusOr<std::vector<std::string>> LocalFiles(SqlDb& db, int64_t baseline) override {
    STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> blobs,
                         db.Query("SELECT name, xxh3_128 FROM ste.blobs WHERE baseline = $1",
                                  SqlParams().Int(baseline)));
    std::vector<std::string> copies;
    for (int i = 0; i < blobs->size(); ++i) {
      const std::string name = blobs->Text(i, 0);
      const std::string hash = blobs->Text(i, 1);
      if (ValidateBlobName(name).ok() && IsLowerHex32(hash)) {
        copies.push_back(cache_.PathFor(baseline, name, hash));
      }
    }
    return copies;
  }
  absl::Status DeleteBytes(SqlDb& db, int64_t baseline) override {
    return db.Exec("DELETE FROM ste.blob_contents WHERE baseline = $1", SqlParams().Int(baseline));
  }

  absl::StatusOr<std::set<std::pair<int64_t, std::string>>> NamedFiles(SqlDb& db) override {
    STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> blobs,
                         db.Query("SELECT baseline, name, xxh3_128 FROM ste.blobs"));
    std::set<std::pair<int64_t, std::string>> named;  // the copies' file names
    for (int i = 0; i < blobs->size(); ++i) {
      const int64_t baseline = blobs->Int(i, 0);
      named.emplace(baseline, absl::StrCat(baseline, "-", blobs->Text(i, 1), "-",
                                           blobs->Text(i, 2), ".blob"));
    }
    STE_RETURN_IF_ERROR(blobs->ParseStatus());
    return named;
  }

 private:
  // "blob \"index\" of baseline 3 in postgresql database ...", for messages.
  static std::string BlobWhere(SqlDb& db, int64_t baseline, absl::string_view name) {
    return absl::StrCat("blob \"", name, "\" of baseline ", baseline, " in ", db.name());
  }
  static absl::Status BadRow(SqlDb& db, int64_t baseline, absl::string_view name, int64_t size,
                             absl::string_view hash) {
    return absl::DataLossError(absl::StrCat(BlobWhere(db, baseline, name), " has a bad row (size ",
                                            size, ", xxh3_128 \"", hash, "\")"));
  }
  // What the server holds of a blob: its row, and whether its bytes are
  // there and how many (octet_length() reads the TOAST header, not the
  // bytes). NotFound without a row.
  struct StoredBlob {
    int64_t size = 0;
    std::string hash;
    bool present = false;
    int64_t stored = 0;
  };
  static absl::StatusOr<StoredBlob> ReadStored(SqlDb& db, int64_t baseline,
                                               const std::string& name) {
    STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> row,
                         db.Query("SELECT b.size, b.xxh3_128, c.bytes IS NOT NULL, "
                                  "coalesce(octet_length(c.bytes), 0) FROM ste.blobs b "
                                  "LEFT JOIN ste.blob_contents c USING (baseline, name) "
                                  "WHERE b.baseline = $1 AND b.name = $2",
                                  SqlParams().Int(baseline).Text(name)));
    if (row->size() == 0) {
      return absl::NotFoundError(
          absl::StrCat("baseline ", baseline, " has no \"", name, "\" blob"));
    }
    StoredBlob blob{row->Int(0, 0), row->Text(0, 1), row->Bool(0, 2), row->Int(0, 3)};
    STE_RETURN_IF_ERROR(row->ParseStatus());
    return blob;
  }
  // DataLoss unless the blob's bytes are on the server with the recorded
  // size.
  static absl::Status CheckStoredBytes(SqlDb& db, int64_t baseline, absl::string_view name,
                                       const StoredBlob& blob) {
    if (!blob.present) {
      return absl::DataLossError(
          absl::StrCat(BlobWhere(db, baseline, name), " is missing from ste.blob_contents"));
    }
    if (blob.stored != blob.size) {
      return absl::DataLossError(absl::StrCat(BlobWhere(db, baseline, name), " is ", blob.stored,
                                              " bytes, ", blob.size,
                                              " were recorded (truncated or replaced)"));
    }
    return absl::OkStatus();
  }

  // Reads blob `name` of `baseline` from the server into the cache: in
  // slices, in one snapshot (a concurrent PutBlob cannot mix two
  // versions), hashed as written, renamed into place only if it matches.
  absl::StatusOr<std::string> FetchIntoCache(SqlDb& db, int64_t baseline,
                                             const std::string& name) {
    STE_ASSIGN_OR_RETURN(SqlTransaction txn, db.Begin(TxnKind::kSnapshot));
    STE_ASSIGN_OR_RETURN(StoredBlob blob, ReadStored(db, baseline, name));
    const int64_t size = blob.size;
    const std::string& hash = blob.hash;
    if (!IsLowerHex32(hash) || size < 0) return BadRow(db, baseline, name, size, hash);
    STE_RETURN_IF_ERROR(CheckStoredBytes(db, baseline, name, blob));

    const std::string path = cache_.PathFor(baseline, name, hash);
    STE_ASSIGN_OR_RETURN(BlobCache::Writer writer, cache_.Create(path));
    for (int64_t offset = 0; offset < size; offset += chunk_) {
      const int64_t want = std::min(chunk_, size - offset);
      STE_ASSIGN_OR_RETURN(
          std::unique_ptr<SqlRows> slice,
          db.Query("SELECT substring(bytes FROM $3 FOR $4) FROM "
                   "ste.blob_contents WHERE baseline = $1 AND name = $2",
                   SqlParams().Int(baseline).Text(name).Int(offset + 1).Int(want),
                   /*binary=*/true));
      if (slice->size() != 1 || static_cast<int64_t>(slice->Bytes(0, 0).size()) != want) {
        return absl::DataLossError(absl::StrCat(
            BlobWhere(db, baseline, name), " returned ",
            slice->size() == 1 ? slice->Bytes(0, 0).size() : 0, " bytes at offset ", offset,
            ", ", want, " were expected"));
      }
      STE_RETURN_IF_ERROR(writer.Append(slice->Bytes(0, 0)));
    }
    STE_RETURN_IF_ERROR(txn.Commit());
    if (writer.hash() != hash) {
      return absl::DataLossError(absl::StrCat(BlobWhere(db, baseline, name), " has XXH3-128 ",
                                              writer.hash(), ", ", hash,
                                              " was recorded (its content changed)"));
    }
    STE_RETURN_IF_ERROR(writer.Commit());
    return path;
  }

  BlobCache cache_;
  bool verify_hash_;
  int64_t chunk_;
  size_t max_bytes_;
  FaultHook hook_;
};

}  // namespace

std::unique_ptr<BlobPlace> BlobFilesBesideDatabase(std::string blobs_dir, bool verify_hash,
                                                   FaultHook hook) {
  return std::make_unique<BlobFiles>(std::move(blobs_dir), verify_hash, std::move(hook));
}

std::unique_ptr<BlobPlace> BlobBytesWithCache(std::string cache_dir, bool verify_hash,
                                              size_t fetch_chunk_bytes, size_t max_bytes,
                                              FaultHook hook) {
  return std::make_unique<BlobBytes>(std::move(cache_dir), verify_hash, fetch_chunk_bytes,
                                     max_bytes, std::move(hook));
}

}  // namespace ste
