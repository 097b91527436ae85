// Copyright: the ste authors. Store::Open: picks the
// implementation named by the URL's scheme; the names of states and
// outcomes; and the rules both implementations apply (store_rules.h).
#include "ste/baseline_store.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cstdint>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "postgres_store.h"
#include "sqlite_store.h"
#include "ste/status_macros.h"
#include "ste/store_url.h"
#include "store_rules.h"

namespace ste {
namespace {

// The value of `all` (every value of an enum) stored as `stored`, if any.
template <typename Enum, size_t N>
std::optional<Enum> FromStored(const Enum (&all)[N], int64_t stored) {
  for (Enum value : all) {
    if (static_cast<int64_t>(value) == stored) return value;
  }
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<Store>> OpenParsed(const StoreUrl& url, const std::string& root) {
  if (url.scheme == StoreUrl::Scheme::kSqlite) return OpenSqliteStore(url.SqliteFile(root));
  return OpenPostgresStore(url.text, PostgresCacheDir(root));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(
    const std::string& url, const std::string& root) {
  STE_ASSIGN_OR_RETURN(StoreUrl parsed, StoreUrl::Parse(url));
  return OpenParsed(parsed, root);
}

absl::StatusOr<std::unique_ptr<Store>> Store::OpenForReading(
    const std::string& url, const std::string& root) {
  STE_ASSIGN_OR_RETURN(StoreUrl parsed, StoreUrl::Parse(url));
  absl::StatusOr<std::unique_ptr<Store>> store = OpenParsed(parsed, root);
  if (store.ok() || parsed.scheme != StoreUrl::Scheme::kSqlite) return store;
  const std::string path = parsed.SqliteFile(root);
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return store;
  SqliteStoreOptions options;
  options.open_mode = SqliteDb::Mode::kReadOnly;
  absl::StatusOr<std::unique_ptr<Store>> ro = OpenSqliteStore(path, options);
  if (ro.ok()) return ro;
  struct statvfs fs;
  if (statvfs(path.c_str(), &fs) != 0) return store;
  if (fs.f_flag & ST_RDONLY) {
    // An immutable read skips the WAL: only when there is none to skip
    // (a crash left committed frames there, and no -shm to read them by).
    struct stat wal;
    if (stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0) {
      return absl::Status(store.status().code(),
                          absl::StrCat(store.status().message(), "; not read as immutable: its WAL ", path,
                                       "-wal holds ", wal.st_size, " bytes that such a read would skip"));
    }
    options.open_mode = SqliteDb::Mode::kImmutable;
  } else if (static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize < (uint64_t{1} << 20)) {
    // Only on a full disk: this reader holds the database's lock.
    options.open_mode = SqliteDb::Mode::kPrivateIndex;
  } else {
    return store;
  }
  absl::StatusOr<std::unique_ptr<Store>> fallback = OpenSqliteStore(path, options);
  if (fallback.ok()) return fallback;
  return absl::Status(store.status().code(),
                      absl::StrCat(store.status().message(), "; read ",
                                   options.open_mode == SqliteDb::Mode::kImmutable ? "as immutable"
                                                                                    : "with its WAL index in memory",
                                   ": ", fallback.status().message()));
}

std::string_view BaselineStateName(BaselineState state) {
  switch (state) {
    case BaselineState::kBuilding:
      return "building";
    case BaselineState::kComplete:
      return "complete";
    case BaselineState::kFailed:
      return "failed";
  }
  return "unknown";
}

// --- The rules of both stores (store_rules.h). ---

absl::StatusOr<std::string> LatestCompletedAmongSql(absl::string_view table, char param_prefix,
                                                    size_t n) {
  if (n == 0 || n > kMaxCommitsPerLookup) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a baseline lookup takes 1 to ", kMaxCommitsPerLookup, " commits, not ", n));
  }
  std::string in;
  for (size_t i = 1; i <= n; i++) absl::StrAppend(&in, i == 1 ? "" : ",", std::string(1, param_prefix), i);
  return absl::StrCat(
      "SELECT id, commit_id, mri, state, created_unix, completed_unix, failure FROM ", table,
      " WHERE state = 1 AND commit_id IN (", in, ") ORDER BY mri DESC, id DESC LIMIT 1");
}

std::string DuplicateBaselineSql(absl::string_view prefix, absl::string_view self) {
  auto both_ways = [&](absl::string_view columns, absl::string_view table) {
    auto of = [&](absl::string_view who) {
      return absl::StrCat("SELECT ", columns, " FROM ", prefix, table, " WHERE baseline = ", who);
    };
    return absl::StrCat(" AND NOT EXISTS (", of("d.id"), " EXCEPT ", of("me.id"), ")",
                        " AND NOT EXISTS (", of("me.id"), " EXCEPT ", of("d.id"), ")");
  };
  return absl::StrCat(
      "SELECT d.id FROM ", prefix, "baselines d JOIN ", prefix, "baselines me ON me.id = ", self,
      " WHERE d.state = 1 AND d.id <> me.id AND d.commit_id = me.commit_id AND d.mri = me.mri",
      both_ways("name, size, xxh3_128", "blobs"),
      both_ways("test, outcome, exit_code, seconds, opaque", "results"),
      " ORDER BY d.id LIMIT 1");
}

absl::Status ValidateResults(const std::vector<TestResult>& results) {
  for (const TestResult& r : results) {
    if (r.test.empty()) {
      return absl::InvalidArgumentError("a test result without a test name");
    }
    const int64_t outcome = static_cast<int64_t>(r.outcome);
    if (!FromStored(kTestOutcomes, outcome).has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("test ", r.test, ": unknown outcome ", outcome));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BaselineState> BaselineStateFromStored(int64_t stored,
                                                      absl::string_view store,
                                                      int64_t baseline) {
  std::optional<BaselineState> state = FromStored(kBaselineStates, stored);
  if (!state.has_value()) {
    return absl::DataLossError(absl::StrCat(store, ": baseline ", baseline,
                                            " has unknown state ", stored));
  }
  return *state;
}

absl::StatusOr<TestOutcome> TestOutcomeFromStored(int64_t stored,
                                                  absl::string_view store,
                                                  int64_t baseline,
                                                  absl::string_view test) {
  std::optional<TestOutcome> outcome = FromStored(kTestOutcomes, stored);
  if (!outcome.has_value()) {
    return absl::DataLossError(absl::StrCat(store, ": result of ", test,
                                            " in baseline ", baseline,
                                            " has unknown outcome ", stored));
  }
  return *outcome;
}

absl::Status CheckStillBuilding(int64_t baseline, int64_t stored_state,
                                absl::string_view action) {
  std::optional<BaselineState> state =
      FromStored(kBaselineStates, stored_state);
  if (state == BaselineState::kBuilding) return absl::OkStatus();
  const std::string is = state.has_value()
                             ? std::string(BaselineStateName(*state))
                             : absl::StrCat("in unknown state ", stored_state);
  return absl::FailedPreconditionError(
      absl::StrCat("cannot ", action, ": baseline ", baseline, " is ", is,
                   ", not building"));
}

void StoreMetaRows::Take(absl::string_view key, absl::string_view value) {
  if (key == "magic") {
    magic = std::string(value);
  } else if (key == "schema_version") {
    schema_version = std::string(value);
  }
}

absl::Status SchemaVersionVerdict(absl::string_view where,
                                  const StoreSchemaExpectation& expected,
                                  const StoreMetaRows& found) {
  int version = 0;
  if (found.magic != expected.magic ||
      !absl::SimpleAtoi(found.schema_version, &version)) {
    return absl::DataLossError(absl::StrCat(
        where, " has a damaged ", expected.meta_table, " table (magic \"",
        found.magic, "\", schema_version \"", found.schema_version, "\")"));
  }
  if (version > expected.version) {
    return absl::FailedPreconditionError(absl::StrCat(
        where, " has store schema version ", version,
        ", newer than this ste understands (", expected.version,
        "); a newer ste wrote it: upgrade ste, or point [store] url at "
        "another ",
        expected.elsewhere));
  }
  if (version < expected.version &&
      !(expected.oldest_version > 0 && version >= expected.oldest_version)) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, " has store schema version ", version,
                     ", which this ste (schema version ", expected.version,
                     ") cannot read"));
  }
  return absl::OkStatus();
}

}  // namespace ste
