// `ste report`: what a store knows, gathered for one page. Read only; the
// page itself is cli/report_html.cc's.
//
//   1. The history (baseline_store.h, "The history"): the newest
//      `history` selections and audits. A store that has none (an older
//      schema read only) says why, and the page says so.
//   2. The latest complete baseline: its results (counts, the slowest),
//      its index (the repository keys with the most tests, and those every test
//      depends on: the root scope's dependencies and what every test
//      read), its blobs kFlakyBlob, kOpaqueBlob and kWritesBlob (the
//      flaky tests, why each opaque test is opaque, the hazards).
//   3. Aggregates: the mean and median selected fraction, the time the
//      selections saved, and the miss rate over every audit stored (the
//      summed counts through MissRateUpperBound, audit.h).
//
// Lists are cut to `top` entries, with their full counts kept: a store of
// 100,000 tests and thousands of selections gives a page of a few hundred
// rows. Reading every key's bitmap is O(index size).
#ifndef STE_REPORT_H_
#define STE_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/baseline_store.h"
#include "ste/dependency.h"
#include "ste/hazards.h"

namespace ste {

struct ReportOptions {
  int64_t history = 5000;  // the newest selections (and audits) read
  size_t top = 20;         // the longest a list gets
};

struct ReportKey {
  DepKey key;
  uint64_t tests = 0;  // how many depend on it
};

struct ReportData {
  // 1. The history, oldest first; *_error when it could not be read.
  std::vector<SelectionEntry> selections;
  std::string selections_error;
  std::vector<AuditEntry> audits;
  std::string audits_error;

  // 2. The latest complete baseline (none: baseline_error says why).
  std::optional<BaselineInfo> baseline;
  std::string baseline_error;
  size_t tests = 0, passed = 0, failed = 0, errors = 0;
  double test_seconds = 0;          // their recorded wall time, summed
  size_t keys = 0;                  // dependency keys in the index
  std::vector<ReportKey> widest;    // the repository's, most tests first, not every test's
  std::vector<DepKey> everyone;     // keys every test depends on (repository first)
  size_t everyone_count = 0;
  std::vector<std::pair<std::string, std::string>> opaque;  // test, why
  size_t opaque_count = 0;
  std::vector<TestResult> slowest;  // longest first
  std::vector<std::string> flaky;   // the baseline's (runner.retries)
  std::vector<Hazard> hazards;
  size_t hazards_count = 0;
  std::string details_error;        // a blob or bitmap that could not be read

  // 3. Aggregates over the history read.
  size_t builds = 0;                // selections counted (a shard K > 1 of N is not)
  double mean_fraction = 0, median_fraction = 0;  // of selections with tests
  size_t mode_all = 0, mode_subset = 0, mode_none = 0;
  double saved_seconds = 0;         // skipped_seconds summed
  int64_t audit_ran = 0, audit_misses = 0, audit_flaky = 0;
  double miss_rate_upper_95 = 1;    // 1 when nothing ran
  // Tests named flaky by audits and observations, with how many times.
  std::vector<std::pair<std::string, int>> flaky_seen;
};

// Whether a history row counts as a build of its own: not shard K > 1 of
// N ("select K/N"), whose build the row of shard 1 counts.
bool CountsAsBuild(const SelectionEntry& entry);

// Steps 1 to 3. Only an unusable store is an error; each part that cannot
// be read says why in its *_error field.
absl::StatusOr<ReportData> GatherReport(Store& store, const ReportOptions& options);

}  // namespace ste

#endif  // STE_REPORT_H_
