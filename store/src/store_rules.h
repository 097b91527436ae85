// Copyright: the ste authors. The rules both baseline stores apply, written
// once: what results may be stored, when a baseline may still be written,
// how a stored state or outcome is read back, and whether a store's schema
// version is one this ste reads. The relational store (relational_store.h)
// calls these on what it is about to write or has just read; each
// back-end's Open (sqlite_store.cc, postgres_store.cc) on its meta rows.
// Defined in baseline_store.cc; tested in baseline_store_test.cc.
//
// Stored values: a BaselineState or TestOutcome is stored as its enum value
// (the numbers in baseline_store.h); kBaselineStates and kTestOutcomes list
// every value, so nothing here spells a number.
#ifndef STE_SCHEDULER_STORE_RULES_H_
#define STE_SCHEDULER_STORE_RULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ste/baseline_store.h"

namespace ste {

// The statement LatestCompletedAmong runs for `n` commits (1 <= n <=
// kMaxCommitsPerLookup): the columns of kBaselineColumns' order from
// `table`, complete ones whose commit_id is one of the parameters
// `<param_prefix>1..n` ('?' for SQLite, '$' for PostgreSQL), newest first,
// one row. `state = 1` is a literal so that the partial index of complete
// baselines is used. InvalidArgument for n out of range.
absl::StatusOr<std::string> LatestCompletedAmongSql(absl::string_view table, char param_prefix,
                                                    size_t n);

// The statement CompleteImported runs to find a duplicate of baseline
// `self` (a parameter placeholder: "?1", "$1"): the lowest id of a complete
// baseline other than it with the same commit_id and mri, the same blob
// rows (name, size, xxh3_128) and the same result rows (test, outcome,
// exit_code, seconds, opaque), compared both ways with EXCEPT; tables are
// named `prefix` + "baselines" ("", "ste."). One column, at most one row.
std::string DuplicateBaselineSql(absl::string_view prefix, absl::string_view self);

// OK iff every result names a test and has a known outcome (one of
// kTestOutcomes); otherwise InvalidArgument naming the first that does not.
// A back-end checks this before it writes anything, so a batch of results
// is stored whole or not at all.
absl::Status ValidateResults(const std::vector<TestResult>& results);

// The state stored as `stored` for baseline `baseline` of store `store` (a
// name for messages: "sqlite /path/ste.db", "postgresql database ...").
// DataLoss "<store>: baseline <id> has unknown state <stored>" for a value
// that is none of kBaselineStates.
absl::StatusOr<BaselineState> BaselineStateFromStored(int64_t stored,
                                                      absl::string_view store,
                                                      int64_t baseline);

// The outcome stored as `stored` for `test` in baseline `baseline` of
// `store`. DataLoss "<store>: result of <test> in baseline <id> has
// unknown outcome <stored>" for a value that is none of kTestOutcomes.
absl::StatusOr<TestOutcome> TestOutcomeFromStored(int64_t stored,
                                                  absl::string_view store,
                                                  int64_t baseline,
                                                  absl::string_view test);

// The rule of every write after Begin(): OK when baseline `baseline`, found
// with stored state `stored_state`, is still building; otherwise
// FailedPrecondition "cannot <action>: baseline <id> is complete, not
// building" (an unknown stored value is named by its number). The caller
// reads the state under the lock its write takes, and reports a missing
// baseline (NotFound) itself.
absl::Status CheckStillBuilding(int64_t baseline, int64_t stored_state,
                                absl::string_view action);

// What a back-end expects of the meta rows of its stores.
struct StoreSchemaExpectation {
  absl::string_view magic;       // the "magic" row
  int version = 0;               // the "schema_version" this ste reads
  absl::string_view meta_table;  // "meta", "ste.meta": for messages
  absl::string_view elsewhere;   // what `[store] url` could name instead:
                                 // "file", "database"
  // The oldest version this ste still reads and migrates on a read-write
  // open (0: only `version`).
  int oldest_version = 0;
};

// The meta rows of a store, as read ("" for a row that is absent).
struct StoreMetaRows {
  std::string magic;
  std::string schema_version;

  // Takes row `key` = `value` when `key` is "magic" or "schema_version";
  // ignores any other key.
  void Take(absl::string_view key, absl::string_view value);
};

// The verdict on the meta rows of store `where` (a path or database name,
// for messages). OK for the expected magic and a schema_version equal to
// `expected.version`. DataLoss when the magic differs or the version is not
// a number (the meta table is damaged). OK for an older version down to
// `expected.oldest_version` (the caller migrates it). FailedPrecondition
// for a newer version (a newer ste wrote the store) or an older one (no
// migration reads it).
absl::Status SchemaVersionVerdict(absl::string_view where,
                                  const StoreSchemaExpectation& expected,
                                  const StoreMetaRows& found);

}  // namespace ste

#endif  // STE_SCHEDULER_STORE_RULES_H_
