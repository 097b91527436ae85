// Copyright: the ste authors. `ste report`'s data (report.h).
#include "ste/report.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ste/audit.h"
#include "ste/baseline_loader.h"
#include "ste/inventory.h"
#include "ste/test_scope.h"

namespace ste {
namespace {

void NoteError(std::string* into, const absl::Status& status) {
  if (!into->empty()) into->append("; ");
  into->append(std::string(status.message()));
}

void History(Store& store, const ReportOptions& options, ReportData* d) {
  absl::StatusOr<std::vector<SelectionEntry>> selections = store.Selections(options.history);
  if (selections.ok()) {
    d->selections = *std::move(selections);
  } else {
    d->selections_error = std::string(selections.status().message());
  }
  absl::StatusOr<std::vector<AuditEntry>> audits = store.Audits(options.history);
  if (audits.ok()) {
    d->audits = *std::move(audits);
  } else {
    d->audits_error = std::string(audits.status().message());
  }
  std::vector<double> fractions;
  for (const SelectionEntry& e : d->selections) {
    if (!CountsAsBuild(e)) continue;
    d->builds++;
    d->saved_seconds += e.skipped_seconds;
    (e.mode == "all" ? d->mode_all : e.mode == "none" ? d->mode_none : d->mode_subset)++;
    if (e.tests > 0) fractions.push_back(static_cast<double>(e.selected) / static_cast<double>(e.tests));
  }
  if (!fractions.empty()) {
    double sum = 0;
    for (double f : fractions) sum += f;
    d->mean_fraction = sum / static_cast<double>(fractions.size());
    std::sort(fractions.begin(), fractions.end());
    const size_t n = fractions.size();
    d->median_fraction = n % 2 ? fractions[n / 2] : (fractions[n / 2 - 1] + fractions[n / 2]) / 2;
  }
  std::map<std::string, int> flaky;
  for (const AuditEntry& a : d->audits) {
    d->audit_ran += a.ran;
    d->audit_misses += static_cast<int64_t>(a.missed.size());
    d->audit_flaky += static_cast<int64_t>(a.flaky.size());
    for (const std::string& t : a.flaky) flaky[t]++;
  }
  d->miss_rate_upper_95 =
      MissRateUpperBound(static_cast<size_t>(d->audit_misses), static_cast<size_t>(d->audit_ran), 0.95);
  d->flaky_seen.assign(flaky.begin(), flaky.end());
  std::stable_sort(d->flaky_seen.begin(), d->flaky_seen.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
}

// The keys: the widest (not every test's) and every test's.
absl::Status Keys(const SelectionIndex& index, size_t top, ReportData* d) {
  d->keys = index.key_count();
  const uint64_t n = index.test_count();
  std::vector<ReportKey> widest;
  std::vector<DepKey> everyone;
  auto narrower = [](const ReportKey& a, const ReportKey& b) { return a.tests > b.tests; };
  for (size_t i = 0; i < index.key_count(); i++) {
    absl::StatusOr<Roaring> tests = index.BitmapAt(i);
    if (!tests.ok()) return tests.status();
    const uint64_t count = tests->cardinality();
    if (count == 0) continue;
    if (count == n) {
      d->everyone_count++;
      if (everyone.size() < 4 * top) {
        absl::StatusOr<DepKey> key = index.KeyAt(i);
        if (!key.ok()) return key.status();
        everyone.push_back(*std::move(key));
      }
      continue;
    }
    if (widest.size() == top && count <= widest.back().tests) continue;
    absl::StatusOr<DepKey> key = index.KeyAt(i);
    if (!key.ok()) return key.status();
    // The repository's own (a change there is what selects): not files
    // outside it nor environment variables, whose keys are absolute.
    if (absl::StartsWith(key->path, "/")) continue;
    ReportKey k{*std::move(key), count};
    widest.insert(std::upper_bound(widest.begin(), widest.end(), k, narrower), std::move(k));
    if (widest.size() > top) widest.pop_back();
  }
  // The repository's own paths first: what a change in the repository
  // selects every test for.
  std::stable_sort(everyone.begin(), everyone.end(), [](const DepKey& a, const DepKey& b) {
    const bool ra = !absl::StartsWith(a.path, "/") && !IsViewPath(a.path);
    const bool rb = !absl::StartsWith(b.path, "/") && !IsViewPath(b.path);
    return ra > rb;
  });
  if (everyone.size() > top) everyone.resize(top);
  d->widest = std::move(widest);
  d->everyone = std::move(everyone);
  return absl::OkStatus();
}

void Baseline(Store& store, const ReportOptions& options, ReportData* d) {
  absl::StatusOr<LoadedBaseline> loaded = LoadCompletedBaseline(store, INT64_MAX, 0);
  if (!loaded.ok()) {
    d->baseline_error = std::string(loaded.status().message());
    return;
  }
  d->baseline = loaded->info;
  d->flaky = loaded->flaky_tests;
  absl::StatusOr<std::vector<TestResult>> results = store.Results(loaded->info.id);
  if (results.ok()) {
    d->tests = results->size();
    for (const TestResult& r : *results) {
      (r.outcome == TestOutcome::kPassed ? d->passed : r.outcome == TestOutcome::kFailed ? d->failed : d->errors)++;
      d->test_seconds += r.seconds;
    }
    std::vector<TestResult> slowest = *results;
    const size_t keep = std::min(options.top, slowest.size());
    std::partial_sort(slowest.begin(), slowest.begin() + static_cast<std::ptrdiff_t>(keep), slowest.end(),
                      [](const TestResult& a, const TestResult& b) { return a.seconds > b.seconds; });
    slowest.resize(keep);
    d->slowest = std::move(slowest);
    // Opaque: why, from the blob; a baseline without one (recorded
    // before ste kept it) says so.
    absl::StatusOr<std::optional<std::string>> blob = ReadOptionalBlob(store, loaded->info.id, kOpaqueBlob);
    std::map<std::string, std::vector<std::string>> why;
    if (blob.ok() && blob->has_value()) {
      absl::StatusOr<std::map<std::string, std::vector<std::string>>> decoded = DecodeWrites(**blob);
      if (decoded.ok()) {
        why = *std::move(decoded);
      } else {
        NoteError(&d->details_error, decoded.status());
      }
    } else if (!blob.ok()) {
      NoteError(&d->details_error, blob.status());
    }
    for (const TestResult& r : *results) {
      if (!r.opaque) continue;
      d->opaque_count++;
      if (d->opaque.size() >= options.top) continue;
      auto it = why.find(r.test);
      d->opaque.emplace_back(r.test, it != why.end() && !it->second.empty()
                                         ? it->second.front()
                                         : std::string("(why was not kept: a baseline from before ste kept it)"));
    }
  } else {
    NoteError(&d->details_error, results.status());
  }
  if (absl::Status keys = Keys(*loaded->index, options.top, d); !keys.ok()) NoteError(&d->details_error, keys);
  absl::StatusOr<std::optional<std::string>> writes_blob = ReadOptionalBlob(store, loaded->info.id, kWritesBlob);
  if (!writes_blob.ok()) {
    NoteError(&d->details_error, writes_blob.status());
  } else if (writes_blob->has_value()) {
    absl::StatusOr<std::map<std::string, std::vector<std::string>>> writes = DecodeWrites(**writes_blob);
    absl::StatusOr<std::vector<Hazard>> hazards =
        writes.ok() ? FindHazards(*loaded->index, *writes, options.top, &d->hazards_count) : writes.status();
    if (hazards.ok()) {
      d->hazards = *std::move(hazards);
    } else {
      NoteError(&d->details_error, hazards.status());
    }
  }
}

}  // namespace

bool CountsAsBuild(const SelectionEntry& entry) {
  if (!absl::StartsWith(entry.origin, "select ")) return true;
  return absl::StartsWith(entry.origin, "select 1/");
}

absl::StatusOr<ReportData> GatherReport(Store& store, const ReportOptions& options) {
  ReportData d;
  History(store, options, &d);
  Baseline(store, options, &d);
  return d;
}

}  // namespace ste
