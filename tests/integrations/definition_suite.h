// The fixture the definition-level e2e suites share (definitions_e2e_test.cc
// for Python, ruby_definitions_e2e_test.cc for Ruby): a git repository the
// suite fills with a generated library and its tests; Configure records it
// with a ste.toml; Edit makes one change to a library file, selects, runs
// every test alone without ste if asked (the ground truth), and undoes the
// change.
#ifndef STE_TESTS_INTEGRATIONS_DEFINITION_SUITE_H_
#define STE_TESTS_INTEGRATIONS_DEFINITION_SUITE_H_

#include <algorithm>
#include <functional>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "test_support.h"

namespace ste::testing {

template <typename Param>
class DefinitionSuiteTest : public ::testing::TestWithParam<Param> {
 protected:
  // Runs `test` (a path under root_) alone, without ste. Called from
  // GroundTruthJobs() threads at once (Edit): a suite's tests read the
  // tree only.
  virtual Spawned RunAlone(const std::string& test) = 0;
  virtual size_t GroundTruthJobs() { return 1; }

  // Writes `content` to root_/`rel`.
  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  void Git(const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(root_, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  // ste_ with `args`, in root_, with ste_env_.
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), ste_);
    return Spawn(args, ste_env_, root_);
  }
  // `ste select` with select_args_; its stderr is kept in last_err_.
  std::set<std::string> Select() {
    std::vector<std::string> args = {"select"};
    args.insert(args.end(), select_args_.begin(), select_args_.end());
    Spawned s = Ste(args);
    EXPECT_EQ(s.exit_code, 0) << s.err;
    last_err_ = s.err;
    return SelectedTests(s.out);
  }
  // Commits the tree with `toml` as its ste.toml and records it: every one
  // of all_ passes, and the unchanged tree then selects nothing.
  void Configure(const std::string& toml) {
    W("ste.toml", toml);
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "suite"});
    Spawned r = Ste({"record", "--progress", "none"});
    record_out_ = r.out;
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::string n = std::to_string(all_.size());
    ASSERT_NE(r.out.find(n + " tests, " + n + " passed, 0 failed, 0 errors, 0 opaque"), std::string::npos)
        << r.out << r.err;
    ASSERT_EQ(Select(), std::set<std::string>{}) << "an unchanged tree selects nothing";
  }
  // Replaces `from` by `to` in root_/`rel` (the change `name`), returns the
  // selection and (if asked) the tests of all_ that, each run alone
  // without ste, no longer pass; then undoes the change.
  std::set<std::string> Edit(const std::string& name, const std::string& rel, const std::string& from,
                             const std::string& to, std::set<std::string>* failing) {
    const std::string path = root_ + "/" + rel;
    const std::string before = ReadFile(path);
    std::string after = before;
    size_t at = after.find(from);
    EXPECT_NE(at, std::string::npos) << name;
    if (at != std::string::npos) after.replace(at, from.size(), to);
    WriteFile(path, after);
    std::set<std::string> selected = Select();
    if (failing != nullptr) {
      // Each test alone, in its own process, a few at a time: the ground
      // truth of every change runs every test (most of these suites' time).
      const std::vector<std::string> tests(all_.begin(), all_.end());
      const size_t jobs = std::max<size_t>(1, GroundTruthJobs());
      for (size_t at = 0; at < tests.size(); at += jobs) {
        std::vector<std::future<int>> runs;
        for (size_t i = at; i < std::min(tests.size(), at + jobs); i++) {
          runs.push_back(std::async(std::launch::async, [this, &tests, i] { return RunAlone(tests[i]).exit_code; }));
        }
        for (size_t i = 0; i < runs.size(); i++) {
          if (runs[i].get() != 0) failing->insert(tests[at + i]);
        }
      }
    }
    WriteFile(path, before);
    return selected;
  }

  // The same for test cases (the `unit = "case"` suites): replaces `from`
  // by `to` in root_/`rel` (the change `name`), selects, runs each of
  // `cases` alone (RunAlone) and checks the ground truth: every case that
  // fails is selected, as itself or with its file (`file_of`); `fails`
  // says whether one was meant to. Undoes the change; returns the
  // selection.
  std::set<std::string> EditCases(const std::string& name, const std::string& rel, const std::string& from,
                                  const std::string& to, bool fails, const std::vector<std::string>& cases,
                                  const std::function<std::string(const std::string&)>& file_of) {
    SCOPED_TRACE(name);
    const std::string path = root_ + "/" + rel;
    const std::string before = ReadFile(path);
    std::string after = before;
    const size_t at = after.find(from);
    EXPECT_NE(at, std::string::npos);
    if (at != std::string::npos) after.replace(at, from.size(), to);
    WriteFile(path, after);
    const std::set<std::string> selected = Select();
    size_t failing = 0;
    for (const std::string& c : cases) {
      Spawned alone = RunAlone(c);
      if (alone.exit_code == 0) continue;
      failing++;
      EXPECT_TRUE(selected.count(c) || selected.count(file_of(c)))
          << c << " fails after the change but was not selected\n" << alone.out << alone.err;
    }
    EXPECT_EQ(failing > 0, fails) << "the change was meant " << (fails ? "" : "not ") << "to fail a case";
    WriteFile(path, before);
    return selected;
  }

  std::string ste_ = SteBinary(STE_BINARY);
  std::vector<std::string> ste_env_;      // beyond the test's own environment
  std::vector<std::string> select_args_;  // after "select"
  std::string root_ = MakeTempDir();
  std::string last_err_;
  std::string record_out_;  // the last Configure's `ste record` summary
  std::set<std::string> all_;  // every test, as select prints it
};

}  // namespace ste::testing

#endif  // STE_TESTS_INTEGRATIONS_DEFINITION_SUITE_H_
