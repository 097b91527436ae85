// The batch split (batch_split.h): ParseRunnerResults on good, malformed
// and torn lines; each test's outcome and share of a batch's dependencies,
// as tables.
#include "ste/batch_split.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace ste {
namespace {

void ExpectResults(
    std::string_view text,
    const std::map<std::string, std::pair<std::string, int>>& want,
    const std::map<std::string, double>& want_seconds = {}) {
  std::map<std::string, RunnerResult> got = ParseRunnerResults(text);
  std::map<std::string, std::pair<std::string, int>> shown;
  for (const auto& [path, r] : got) shown[path] = {std::string(TestOutcomeName(r.outcome)), r.exit_code};
  EXPECT_EQ(shown, want) << "input: " << text;
  for (const auto& [path, seconds] : want_seconds) {
    ASSERT_TRUE(got.count(path)) << path;
    EXPECT_DOUBLE_EQ(got[path].seconds, seconds) << path;
  }
}

TEST(ParseRunnerResults, ReadsGoodLines) {
  ExpectResults(
      "passed\t0\t0.125\ttests/a.py\nfailed\t1\t2.5\ttests/"
      "b.py\nerror\t2\t0\ttests/c.py\n",
      {{"tests/a.py", {"passed", 0}},
       {"tests/b.py", {"failed", 1}},
       {"tests/c.py", {"error", 2}}},
      {{"tests/a.py", 0.125}, {"tests/b.py", 2.5}, {"tests/c.py", 0}});
}

TEST(ParseRunnerResults, EmptyInputGivesNothing) { ExpectResults("", {}); }

TEST(ParseRunnerResults, SkipsMalformedLinesAndKeepsTheOthers) {
  const std::vector<std::string> malformed = {
      "\n",
      "passed\n",
      "passed\t0\n",
      "passed\t0\ttests/x.py\n",  // three fields
      "passed\t0\t1\t\n",         // no path
      "\t0\t1\ttests/x.py\n",     // no outcome
      "PASSED\t0\t1\ttests/x.py\n",
      "skipped\t0\t1\ttests/x.py\n",
      "passed\tzero\t1\ttests/x.py\n",
      "passed\t1.5\t1\ttests/x.py\n",
      "passed\t\t1\ttests/x.py\n",
      "passed\t99999999999\t1\ttests/x.py\n",
  };
  for (const std::string& bad : malformed) {
    ExpectResults(bad, {});
    ExpectResults(
        "passed\t0\t1\ttests/a.py\n" + bad + "failed\t1\t1\ttests/b.py\n",
        {{"tests/a.py", {"passed", 0}}, {"tests/b.py", {"failed", 1}}});
  }
}

TEST(ParseRunnerResults, SkipsATornLastLine) {
  ExpectResults("passed\t0\t1\ttests/a.py\npassed\t0\t1\ttests/b.py",
                {{"tests/a.py", {"passed", 0}}});
}

TEST(ParseRunnerResults, AnUnreadableDurationCountsAsZero) {
  ExpectResults("passed\t0\tfast\ttests/a.py\n",
                {{"tests/a.py", {"passed", 0}}}, {{"tests/a.py", 0}});
}

// Found writing the properties of tests/fuzz/runner_results: SimpleAtod
// reads these, and a NaN duration reached the store, whose export then
// refused the baseline.
TEST(ParseRunnerResults, ADurationThatIsNoWallTimeCountsAsZero) {
  ExpectResults("passed\t0\tnan\ttests/a.py\npassed\t0\t-inf\ttests/b.py\n"
                "passed\t0\t-0.5\ttests/c.py\npassed\t0\t1e999\ttests/d.py\n",
                {{"tests/a.py", {"passed", 0}}, {"tests/b.py", {"passed", 0}},
                 {"tests/c.py", {"passed", 0}}, {"tests/d.py", {"passed", 0}}},
                {{"tests/a.py", 0}, {"tests/b.py", 0}, {"tests/c.py", 0}, {"tests/d.py", 0}});
}

TEST(ParseRunnerResults, LaterLinesWin) {
  ExpectResults(
      "failed\t1\t1\ttests/a.py\npassed\t0\t2\ttests/b.py\npassed\t0\t3\ttests/"
      "a.py\n",
      {{"tests/a.py", {"passed", 0}}, {"tests/b.py", {"passed", 0}}},
      {{"tests/a.py", 3}});
}

TEST(ParseRunnerResults, ThePathIsEverythingAfterTheThirdTab) {
  ExpectResults(
      "passed\t0\t1\ttests/with space/a\tb.py\nfailed\t1\t1\t tests/lead.py \n",
      {{"tests/with space/a\tb.py", {"passed", 0}},
       {" tests/lead.py ", {"failed", 1}}});
}

TEST(ParseRunnerResults, ACarriageReturnIsPartOfThePath) {
  // Lines end in "\n" (integrations/README.md); a runner writing "\r\n"
  // reports a path that is not the test's, whose test then has no result
  // (an error, selected next time): wrong, but never silently passed.
  ExpectResults("passed\t0\t1\ttests/a.py\r\n",
                {{"tests/a.py\r", {"passed", 0}}});
}


// ---- OutcomeInBatch ----

TEST(OutcomeInBatch, Table) {
  struct Case {
    const char* name;
    const char* results;  // the $STE_RESULTS text
    int runner_exit;
    double runner_seconds;
    size_t batch_size;
    BatchTestOutcome want;  // of tests/a.py
  };
  // clang-format off
  const Case cases[] = {
      {"passed", "passed\t0\t1.5\ttests/a.py\n", 1, 9, 3, {true, 0, 1.5, ""}},
      {"a passed line's exit code is ignored", "passed\t4\t1\ttests/a.py\n", 0, 9, 3, {true, 0, 1, ""}},
      {"failed", "failed\t2\t1\ttests/a.py\n", 1, 9, 3, {true, 2, 1, ""}},
      {"failed with exit 0 is exit 1", "failed\t0\t1\ttests/a.py\n", 0, 9, 3, {true, 1, 1, ""}},
      {"an error line", "error\t5\t0.5\ttests/a.py\n", 1, 9, 3,
       {false, 5, 0.5, "the pytest runner could not run it (exit 5)"}},
      {"no line: the runner's exit and a share of its time", "passed\t0\t1\ttests/b.py\n", 3, 9, 3,
       {false, 3, 3, "the pytest runner gave no result for it (runner exit 3)"}},
      {"killed by a signal before its line", "passed\t0\t1\ttests/b.py\n", 137, 2, 2,
       {false, 137, 1, "the pytest runner gave no result for it (runner exit 137)"}},
      {"no results file", "", 0, 4, 1,
       {false, 0, 4, "the pytest runner gave no result for it (runner exit 0)"}},
      {"a garbled line", "passed\tzero\t1\ttests/a.py\n", 0, 4, 1,
       {false, 0, 4, "the pytest runner gave no result for it (runner exit 0)"}},
      {"a torn line", "passed\t0\t1\ttests/a.py", 0, 4, 1,
       {false, 0, 4, "the pytest runner gave no result for it (runner exit 0)"}},
      {"the last line wins", "failed\t1\t1\ttests/a.py\npassed\t0\t2\ttests/a.py\n", 1, 9, 3, {true, 0, 2, ""}},
  };
  // clang-format on
  for (const Case& c : cases) {
    BatchTestOutcome got = OutcomeInBatch(ParseRunnerResults(c.results), "tests/a.py", c.runner_exit,
                                          c.runner_seconds, c.batch_size, "pytest");
    EXPECT_EQ(got.started, c.want.started) << c.name;
    EXPECT_EQ(got.exit_code, c.want.exit_code) << c.name;
    EXPECT_DOUBLE_EQ(got.seconds, c.want.seconds) << c.name;
    EXPECT_EQ(got.error, c.want.error) << c.name;
  }
}

// ---- SplitBatchDependencies ----

// A scope's content dependencies, written "scope: a b".
ScopeDependencies SplitScope(const std::string& scope, std::vector<std::string> paths) {
  ScopeDependencies s{scope, {}};
  for (std::string& p : paths) s.deps.push_back(DepKey{std::move(p), DepKind::kContent});
  std::sort(s.deps.begin(), s.deps.end());
  return s;
}

// A test's share as the table writes it: "scope: a b" per scope, then
// "opaque: <reason> @<scope>" per reason.
std::vector<std::string> SplitShown(const TestDependencies& d) {
  std::vector<std::string> out;
  for (const ScopeDependencies& s : d.scopes) {
    std::string line = s.scope + ":";
    for (const DepKey& k : s.deps) line += " " + k.path;
    out.push_back(line);
  }
  EXPECT_EQ(d.opaque, !d.opaque_reasons.empty());
  EXPECT_EQ(d.opaque_reasons.size(), d.opaque_scopes.size());
  for (size_t i = 0; i < d.opaque_reasons.size() && i < d.opaque_scopes.size(); i++) {
    out.push_back("opaque: " + d.opaque_reasons[i] + " @" + d.opaque_scopes[i]);
  }
  return out;
}

TEST(SplitBatchDependencies, Table) {
  const std::string a = "//r/tests/a.py", b = "//r/tests/b.py";
  struct Case {
    const char* name;
    std::vector<ScopeDependencies> scopes;  // the whole run's (sorted)
    std::vector<std::pair<std::string, std::string>> opaque;  // reason, scope
    std::map<std::string, std::vector<std::string>> definition_files;
    std::set<std::string> untracked_scopes;
    std::vector<std::vector<std::string>> want;  // per test of tests/a.py, tests/b.py
  };
  // clang-format off
  const std::vector<Case> cases = {
      {"nothing recorded", {}, {}, {}, {}, {{}, {}}},
      {"the shared scope goes to every test, a test's own to it alone",
       {SplitScope("//r", {"conftest.py"}), SplitScope(a, {"src/x.py"}), SplitScope(b, {"src/y.py"})},
       {}, {}, {},
       {{"//r: conftest.py", a + ": src/x.py"}, {"//r: conftest.py", b + ": src/y.py"}}},
      {"a scope beneath a test is the test's; an unrelated one nobody's",
       {SplitScope(a + "/test_one", {"data/one"}), SplitScope("//r/tests/c.py", {"c"}),
        SplitScope(a + "x", {"ax"})},
       {}, {}, {},
       {{a + "/test_one: data/one"}, {}}},
      {"the parent's record of a test file moves to that test",
       {SplitScope("//r", {"conftest.py", "tests/a.py", "tests/b.py"}), SplitScope(a, {"src/x.py"})},
       {}, {}, {},
       {{"//r: conftest.py", a + ": src/x.py tests/a.py"}, {"//r: conftest.py", b + ": tests/b.py"}}},
      {"so does its definition view (the parent's check of it, at definition level)",
       {SplitScope("//r", {"conftest.py/\x01ste-def", "tests/a.py/\x01ste-def"})},
       {}, {}, {},
       {{"//r: conftest.py/\x01ste-def", a + ": tests/a.py/\x01ste-def"}, {"//r: conftest.py/\x01ste-def"}}},
      {"any other part of a test file there stays shared (a unit the parent ran, another test may run)",
       {SplitScope("//r", {"tests/a.py/\x01ste-def", "tests/a.py/\x01ste-def:helper", "tests/a.py/\x01ste-const:N"})},
       {}, {}, {},
       {{"//r: tests/a.py/\x01ste-const:N tests/a.py/\x01ste-def:helper", a + ": tests/a.py/\x01ste-def"},
        {"//r: tests/a.py/\x01ste-const:N tests/a.py/\x01ste-def:helper"}}},
      {"a shared scope left empty by the move is nobody's",
       {SplitScope("//r", {"tests/a.py"}), SplitScope("//r/tests", {"tests/b.py"})},
       {}, {}, {},
       {{a + ": tests/a.py"}, {b + ": tests/b.py"}}},
      {"a test file recorded in a test's own scope stays there",
       {SplitScope(a, {"tests/b.py"})},
       {}, {}, {},
       {{a + ": tests/b.py"}, {}}},
      {"opacity: the whole run's and an ancestor's to all, a test's to it",
       {},
       {{"logs unreadable: x", ""}, {"unfollowed: /s1", "//r"}, {"unfollowed: /s2", b + "/test_two"},
        {"unfollowed: /s3", "//r/tests/c.py"}},
       {}, {},
       {{"opaque: logs unreadable: x @", "opaque: unfollowed: /s1 @//r"},
        {"opaque: logs unreadable: x @", "opaque: unfollowed: /s1 @//r",
         "opaque: unfollowed: /s2 @" + b + "/test_two"}}},
      {"definitions: a test whose child was not tracked whole falls back to file level",
       {SplitScope("//r", {"geo.py/\x01ste-def"}), SplitScope(a, {"geo.py/\x01ste-def:area"})},
       {}, {{"//r", {"geo.py"}}}, {b},
       {{"//r: geo.py/\x01ste-def", a + ": geo.py/\x01ste-def:area"},
        {"//r: geo.py/\x01ste-def", b + ": geo.py"}}},
  };
  // clang-format on
  for (const Case& c : cases) {
    TestDependencies all;
    all.scopes = c.scopes;
    for (const auto& [reason, scope] : c.opaque) {
      all.opaque = true;
      all.opaque_reasons.push_back(reason);
      all.opaque_scopes.push_back(scope);
    }
    all.definition_files = c.definition_files;
    all.untracked_scopes = c.untracked_scopes;
    std::vector<TestDependencies> got = SplitBatchDependencies(all, {"tests/a.py", "tests/b.py"});
    ASSERT_EQ(got.size(), 2u) << c.name;
    EXPECT_EQ(SplitShown(got[0]), c.want[0]) << c.name;
    EXPECT_EQ(SplitShown(got[1]), c.want[1]) << c.name;
  }
}

}  // namespace
}  // namespace ste
