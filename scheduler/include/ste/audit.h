// `ste audit`: the miss rate, measured. A selection is only as good as the
// tests it leaves out were irrelevant; an audit runs some of them and says
// whether one fails.
//
//   1. The selection, exactly as `ste select` makes it (SelectForCheckout).
//   2. The tests it left out: those that exist now (the tree's list) and
//      are not selected. Mode all leaves none; mode none leaves all. A
//      left-out test passed in the baseline (rule 5 of selection.h selects
//      every test that did not, and every new test).
//   3. The sample: every left-out test, or `sample` of them, or a `fraction`
//      (rounded up) — chosen by a seeded shuffle that is the same on every
//      machine (a Fisher-Yates over the sorted list with SplitMix64), so
//      an audit can be repeated.
//   4. Each sampled test runs as `ste record` runs it: under the
//      interceptor, in its scope, with the runner of ste.toml (a batch
//      runner takes the sample as one batch), its output in a file.
//   5. A sampled test that does not pass is run again, alone, up to
//      `reruns` times: one that then passes is *flaky* (its outcome changed
//      while none of its dependencies did), named, and no miss. One that
//      never passes is a *miss*: the selection
//      skipped a test that fails. It is reported with the baseline's
//      dependencies of it and the changes since the baseline, and its
//      output's end.
//
// Observation mode is the same question asked of a full run: `ste record
// --observe` makes the selection before it runs every test, and a test the
// selection left out that does not pass in the record is a miss.
//
// An audit decides nothing: whatever it finds, the selection it audited is
// unchanged. A miss means a dependency ste did not see (a misconfigured
// inventory.ignore, a variable a shell read, a network service) or a flaky
// test; either way the test should run.
#ifndef STE_AUDIT_H_
#define STE_AUDIT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ste/baseline_loader.h"
#include "ste/build_session.h"
#include "ste/checkout.h"
#include "ste/config.h"
#include "ste/dependency.h"
#include "ste/selection_pipeline.h"
#include "ste/test_outcome.h"
#include "ste/test_recorder.h"

namespace ste {

struct AuditOptions {
  // How many left-out tests to run: `sample` when > 0, else ceil(fraction
  // x left out) when fraction is in (0, 1], else all of them.
  size_t sample = 0;
  double fraction = 0;
  uint64_t seed = 1;
  // How many times a test that did not pass runs again (step 5).
  size_t reruns = 1;
  // How each test runs (preload library, scratch and integrations
  // folders); output_file is set per test, in `output_dir`.
  RunOneTestOptions run;
  std::string output_dir;
  // Called before and after each test (progress); may be empty.
  std::function<void(size_t index, size_t count, const std::string& test)> on_start;
};

struct AuditedTest {
  std::string test;
  TestOutcome outcome = TestOutcome::kPassed;
  int exit_code = 0;
  double seconds = 0;
  std::string error;       // why it could not be run
  std::string output_log;  // its output ("" when not captured)
  std::string output_tail; // the end of it, for a miss
  bool miss = false;       // did not pass now, nor when run again
  bool flaky = false;      // did not pass, then passed when run again
  size_t reruns = 0;       // how many times it ran again
  // A miss's dependencies in the baseline (all of them: the repository's
  // in key order, then those outside it);
  // empty when the index could not say (dependencies_error then).
  std::vector<DepKey> dependencies;
  std::string dependencies_error;
};

struct AuditResult {
  SelectionOutcome selection;          // what was audited
  std::vector<std::string> left_out;   // every test the selection left out, sorted
  std::vector<AuditedTest> ran;        // the sample, in the order run
  size_t misses = 0;
  size_t flaky = 0;
};

// The tests `selection` left out (step 2), sorted: none for mode all or
// an unreadable tree.
std::vector<std::string> LeftOut(const SelectionOutcome& selection);

// Observation mode (`ste record --observe`): the selection is made before
// the record runs every test; afterwards the tests it left out that did not
// pass in the record (`finished`) are its misses, in test order.
std::vector<FinishedTest> ObservedMisses(const std::vector<std::string>& left_out,
                                         const std::vector<FinishedTest>& finished);

// The history's rows (baseline_store.h, "The history"): an audit's
// counts and names (kind "audit"), and an observation's (kind "observe":
// every left-out test ran, in the record). `commit` is the checkout's HEAD.
AuditEntry AuditHistoryEntry(const AuditResult& audit, std::string commit);
AuditEntry ObservationHistoryEntry(const SelectionOutcome& observed,
                                   const std::vector<FinishedTest>& finished, std::string commit);

// The miss rate an audit measured, bounded: the largest rate p of misses
// among the tests a selection leaves out for which seeing `misses` or
// fewer in `ran` sampled tests still has probability 1 - confidence (the
// exact one-sided Clopper-Pearson bound of a binomial). 0 misses in 60
// runs: below 4.9% at 95%. 1 when ran is 0.
double MissRateUpperBound(size_t misses, size_t ran, double confidence);

// The sample of step 3: the tests of `left_out` (sorted, unique) to run,
// in the order to run them.
std::vector<std::string> AuditSample(const std::vector<std::string>& left_out,
                                     const AuditOptions& options);

// Steps 1 to 5. The selection's own failures are in result.selection (an
// unreadable tree: .tree not OK, and nothing ran).
AuditResult RunAudit(Checkout& checkout, BaselineSource& source, const BaselineQuery& query,
                     const Config& config, const AuditOptions& options);

}  // namespace ste

#endif  // STE_AUDIT_H_
