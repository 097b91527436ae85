// Copyright: the ste authors. `ste audit` (audit.h): the tests a selection
// left out, run, and their outcomes compared with the baseline's.
#include "ste/audit.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ste/test_output.h"
#include "ste/test_scope.h"

namespace ste {
namespace {

// SplitMix64: a fixed sequence for a seed, the same on every machine.
uint64_t NextRandom(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A file name for a test's output: its path with '/' as '_', numbered.
std::string OutputName(size_t index, const std::string& test) {
  std::string name = absl::StrCat(index + 1, "-");
  for (char c : test) name.push_back(c == '/' ? '_' : c);
  return name + ".log";
}

}  // namespace

std::vector<std::string> LeftOut(const SelectionOutcome& s) {
  std::vector<std::string> out;
  if (!s.tree.ok() || s.selection.mode == SelectionMode::kAll) return out;
  std::set<std::string> selected;
  for (const SelectedTest& t : s.selection.tests) selected.insert(t.test);
  for (const std::string& t : s.head_tests) {
    if (!selected.count(t)) out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<FinishedTest> ObservedMisses(const std::vector<std::string>& left_out,
                                         const std::vector<FinishedTest>& finished) {
  std::set<std::string> left(left_out.begin(), left_out.end());
  std::vector<FinishedTest> out;
  for (const FinishedTest& t : finished) {
    if (left.count(t.test) && t.outcome != TestOutcome::kPassed) out.push_back(t);
  }
  std::sort(out.begin(), out.end(), [](const FinishedTest& a, const FinishedTest& b) { return a.test < b.test; });
  return out;
}

namespace {

// P(X <= k) for X ~ Binomial(n, p), 0 < p < 1, summed in log space.
double BinomialCdf(size_t k, size_t n, double p) {
  const double lp = std::log(p), lq = std::log1p(-p);
  double sum = 0;
  for (size_t i = 0; i <= k && i <= n; i++) {
    const double log_term = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                            std::lgamma(static_cast<double>(n - i) + 1) + static_cast<double>(i) * lp +
                            static_cast<double>(n - i) * lq;
    sum += std::exp(log_term);
  }
  return std::min(sum, 1.0);
}

}  // namespace

double MissRateUpperBound(size_t misses, size_t ran, double confidence) {
  if (ran == 0 || misses >= ran) return 1;
  const double alpha = 1 - confidence;
  // The CDF falls as p grows: bisect for CDF(p) = alpha.
  double lo = static_cast<double>(misses) / static_cast<double>(ran), hi = 1;
  for (int i = 0; i < 100; i++) {
    const double mid = (lo + hi) / 2;
    (BinomialCdf(misses, ran, mid) > alpha ? lo : hi) = mid;
  }
  return hi;
}

std::vector<std::string> AuditSample(const std::vector<std::string>& left_out,
                                     const AuditOptions& options) {
  std::vector<std::string> order = left_out;
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  size_t count = order.size();
  if (options.sample > 0) {
    count = std::min(count, options.sample);
  } else if (options.fraction > 0 && options.fraction <= 1) {
    count = std::min(count, static_cast<size_t>(std::ceil(options.fraction * static_cast<double>(order.size()))));
  }
  // The first `count` places of a seeded Fisher-Yates shuffle.
  uint64_t state = options.seed;
  for (size_t i = 0; i < count; i++) {
    const size_t j = i + static_cast<size_t>(NextRandom(&state) % (order.size() - i));
    std::swap(order[i], order[j]);
  }
  order.resize(count);
  return order;
}

AuditResult RunAudit(Checkout& checkout, BaselineSource& source, const BaselineQuery& query,
                     const Config& config, const AuditOptions& options) {
  AuditResult out;
  out.selection = SelectForCheckout(checkout, source, query);
  const SelectionOutcome& s = out.selection;
  out.left_out = LeftOut(s);
  if (out.left_out.empty()) return out;
  const std::vector<std::string> sample = AuditSample(out.left_out, options);

  std::vector<TestRecord> records;
  RunOneTestOptions run = options.run;
  if (config.batch_runner() && !sample.empty()) {
    // One batch, as a record worker runs a lease of several tests.
    if (options.on_start) options.on_start(0, sample.size(), absl::StrCat(sample.size(), " tests, one batch"));
    if (!options.output_dir.empty()) run.output_file = options.output_dir + "/batch.log";
    records = RunBatch(config, sample, run);
  } else {
    for (size_t i = 0; i < sample.size(); i++) {
      if (options.on_start) options.on_start(i, sample.size(), sample[i]);
      if (!options.output_dir.empty()) run.output_file = options.output_dir + "/" + OutputName(i, sample[i]);
      records.push_back(RunOneTest(config, sample[i], run));
    }
  }
  for (TestRecord& r : records) {
    AuditedTest a;
    a.test = r.test;
    a.outcome = OutcomeOf(r);
    a.exit_code = r.exit_code;
    a.seconds = r.seconds;
    a.error = r.error;
    a.output_log = r.output_log;
    // Step 5: run again, alone, what did not pass.
    for (size_t k = 0; a.outcome != TestOutcome::kPassed && k < options.reruns; k++) {
      RunOneTestOptions again = options.run;
      if (!options.output_dir.empty()) {
        again.output_file = absl::StrCat(options.output_dir, "/rerun-", k + 1, "-", OutputName(out.ran.size(), a.test));
      }
      std::vector<TestRecord> rerun = config.batch_runner() ? RunBatch(config, {a.test}, again)
                                                            : std::vector<TestRecord>{RunOneTest(config, a.test, again)};
      a.reruns++;
      if (!rerun.empty() && OutcomeOf(rerun[0]) == TestOutcome::kPassed) a.flaky = true;
      if (a.flaky) break;
    }
    if (a.flaky) out.flaky++;
    a.miss = a.outcome != TestOutcome::kPassed && !a.flaky;
    if (a.miss) {
      out.misses++;
      if (!a.output_log.empty()) {
        absl::StatusOr<OutputTail> tail = ReadOutputTail(a.output_log);
        if (tail.ok()) a.output_tail = tail->text;
      }
      const SelectionIndex& index = *s.loaded->index;
      std::optional<uint32_t> id = index.FindTest(ScopeOfTest(a.test));
      if (!id) {
        a.dependencies_error = "the baseline's index does not hold it";
      } else if (absl::StatusOr<std::vector<DepKey>> deps = index.DependenciesOf(*id); deps.ok()) {
        // The repository's paths first: what a reader looks for.
        a.dependencies = *std::move(deps);
        std::stable_partition(a.dependencies.begin(), a.dependencies.end(),
                              [](const DepKey& k) { return !k.path.empty() && k.path[0] != '/'; });
      } else {
        a.dependencies_error = std::string(deps.status().message());
      }
    }
    out.ran.push_back(std::move(a));
  }
  return out;
}

AuditEntry AuditHistoryEntry(const AuditResult& audit, std::string commit) {
  AuditEntry e;
  e.baseline = audit.selection.baseline ? audit.selection.baseline->id : 0;
  e.commit = std::move(commit);
  e.kind = "audit";
  e.left_out = static_cast<int64_t>(audit.left_out.size());
  e.ran = static_cast<int64_t>(audit.ran.size());
  for (const AuditedTest& t : audit.ran) {
    if (t.miss) e.missed.push_back(t.test);
    if (t.flaky) e.flaky.push_back(t.test);
  }
  std::sort(e.missed.begin(), e.missed.end());
  std::sort(e.flaky.begin(), e.flaky.end());
  return e;
}

AuditEntry ObservationHistoryEntry(const SelectionOutcome& observed,
                                   const std::vector<FinishedTest>& finished, std::string commit) {
  AuditEntry e;
  e.baseline = observed.baseline ? observed.baseline->id : 0;
  e.commit = std::move(commit);
  e.kind = "observe";
  const std::vector<std::string> left_out = LeftOut(observed);
  e.left_out = static_cast<int64_t>(left_out.size());
  // Every left-out test the record ran.
  absl::flat_hash_set<std::string_view> out(left_out.begin(), left_out.end());
  for (const FinishedTest& f : finished) {
    if (!out.contains(f.test)) continue;
    e.ran++;
    if (f.flaky) e.flaky.push_back(f.test);
  }
  for (const FinishedTest& f : ObservedMisses(left_out, finished)) e.missed.push_back(f.test);
  std::sort(e.missed.begin(), e.missed.end());
  std::sort(e.flaky.begin(), e.flaky.end());
  return e;
}

}  // namespace ste
