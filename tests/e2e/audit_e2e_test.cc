// `ste audit` end to end (scheduler's ste/audit.h): a real repository
// whose ste.toml hides from the inventory a file a test reads (a
// misconfigured inventory.ignore). A change there selects nothing; the
// audit runs what the selection left out, and names the test that now
// fails, with its dependencies, and --fail-on-miss fails; `ste record
// --observe` names the same miss in a full run.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::ReadFile;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);

class Audit : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    // settings/ is ignored (say, its author took it for generated files),
    // but test_settings reads it.
    W("settings/mode.conf", "fast\n");
    W("lib/a.sh", "a() { echo A; }\n");
    W("tests/test_settings.sh", "read mode < settings/mode.conf\n[ \"$mode\" = fast ]\n");
    W("tests/test_a.sh", ". lib/a.sh\n[ \"$(a)\" = A ]\n");
    for (int i = 0; i < 6; i++) W("tests/test_plain" + std::to_string(i) + ".sh", "true\n");
    W("ste.toml",
      "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n"
      "[inventory]\nignore = [\"settings/**\"]\n");
    ::ste::testing::InitGitRepo(root_);
    ASSERT_EQ(::ste::testing::Git(root_, {"add", "-A"}).exit_code, 0);
    ASSERT_EQ(::ste::testing::Git(root_, {"commit", "-qm", "init"}).exit_code, 0);
    Spawned r = Ste({"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, root_);
  }
  std::string root_;
};

TEST_F(Audit, AMissOnlyASkippedTestCatchesIsNamedAndFailsTheAudit) {
  W("settings/mode.conf", "slow\n");
  Spawned select = Ste({"select"});
  ASSERT_EQ(select.exit_code, 0) << select.err;
  EXPECT_EQ(::ste::testing::SelectedMode(select.err), "none") << "the hidden change selects nothing: " << select.err;

  Spawned audit = Ste({"audit"});
  EXPECT_EQ(audit.exit_code, 0) << "without --fail-on-miss: " << audit.err;
  EXPECT_NE(audit.err.find("left out 8 of 8 tests; ran 8 (seed 1)"), std::string::npos) << audit.err;
  EXPECT_NE(audit.err.find("ste audit: MISS  tests/test_settings.sh"), std::string::npos) << audit.err;
  EXPECT_NE(audit.err.find("ste audit: MISS: tests/test_settings.sh was left out by the selection and does not "
                           "pass (exit 1); it passed in baseline 1"),
            std::string::npos)
      << audit.err;
  EXPECT_NE(audit.err.find("    content tests/test_settings.sh"), std::string::npos)
      << "its dependencies: " << audit.err;
  EXPECT_NE(audit.err.find("ste audit: 1 MISS in 8 left-out tests run"), std::string::npos) << audit.err;
  EXPECT_NE(audit.err.find("ste audit: measured: 1 miss in 8 left-out tests run: the miss rate among the tests "
                           "this selection left out is at most 47.07% (95% confidence)"),
            std::string::npos)
      << audit.err;
  EXPECT_EQ(audit.err.find("MISS  tests/test_a.sh"), std::string::npos) << audit.err;

  Spawned failing = Ste({"audit", "--fail-on-miss"});
  EXPECT_EQ(failing.exit_code, 1) << failing.err;

  Spawned json = Ste({"audit", "--json"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"misses\":1"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("{\"test\":\"tests/test_settings.sh\",\"outcome\":\"failed\",\"exit_code\":1"),
            std::string::npos)
      << json.out;
}

TEST_F(Audit, ASampleIsSeededAndNoMissPasses) {
  W("lib/a.sh", "a() { echo A; }  # touched\n");  // selects test_a only
  Spawned a = Ste({"audit", "--sample", "3", "--seed", "7", "--fail-on-miss", "--json"});
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.err.find("left out 7 of 8 tests; ran 3 (seed 7)"), std::string::npos) << a.err;
  EXPECT_NE(a.err.find("ste audit: no miss"), std::string::npos) << a.err;
  EXPECT_EQ(a.out.find("tests/test_a.sh"), std::string::npos) << "the selected test is not audited: " << a.out;
  Spawned again = Ste({"audit", "--sample", "3", "--seed", "7", "--json"});
  // The same tests, in the same order (the seconds differ).
  auto names = [](const std::string& out) {
    std::vector<std::string> got;
    for (size_t at = out.find("\"test\":\""); at != std::string::npos; at = out.find("\"test\":\"", at + 1)) {
      got.push_back(out.substr(at + 8, out.find('"', at + 8) - at - 8));
    }
    return got;
  };
  EXPECT_EQ(names(a.out).size(), 3u) << a.out;
  EXPECT_EQ(names(a.out), names(again.out));
  EXPECT_EQ(Ste({"audit", "--sample", "0"}).exit_code, 2);
  EXPECT_EQ(Ste({"audit", "--fraction", "1.5"}).exit_code, 2);
  EXPECT_EQ(Ste({"audit", "--sample", "2", "--fraction", "0.5"}).exit_code, 2);
}

TEST_F(Audit, ObservationModeNamesWhatTheSelectionWouldHaveMissedInAFullRun) {
  W("settings/mode.conf", "slow\n");
  W("lib/a.sh", "a() { echo A; }  # touched\n");  // the selection takes test_a
  Spawned r = Ste({"record", "--observe", "--progress", "none", "--allow-failures"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ste record: observed: the selection against baseline 1 (mode subset: 1 of 8 tests are "
                       "affected) would have left out 7 of 8 tests"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ste record: observed: MISS: tests/test_settings.sh was left out by the selection and did "
                       "not pass here (failed, exit 1)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ste record: observed: 1 MISS"), std::string::npos) << r.out;
  // Put right, and observed again against the new baseline: no miss.
  W("settings/mode.conf", "fast\n");
  r = Ste({"record", "--observe", "--progress", "none"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ste record: observed: no miss"), std::string::npos) << r.out;
  EXPECT_EQ(Ste({"record", "--observe", "--scheduler", "127.0.0.1:1"}).exit_code, 2);
}

TEST_F(Audit, ATestThatPassesWhenRunAgainIsFlakyNotAMiss) {
  // Passes when a marker is there, and leaves one when it fails: so it
  // fails once after the marker goes, then passes. The marker is in the
  // ignored settings/, so nothing records it: the test's outcome changes
  // while its dependencies do not.
  const std::string marker = root_ + "/settings/ran-once";
  W("tests/test_plain0.sh", "[ -e settings/ran-once ] && exit 0\n: > settings/ran-once\nexit 1\n");
  ASSERT_EQ(::ste::testing::Git(root_, {"commit", "-qam", "flaky"}).exit_code, 0);
  W("settings/ran-once", "");
  Spawned r = Ste({"record", "--progress", "none"});  // passes: the marker is there
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_EQ(std::remove(marker.c_str()), 0);
  Spawned a = Ste({"audit", "--fail-on-miss", "--json"});
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.err.find("ste audit: FLAKY tests/test_plain0.sh"), std::string::npos) << a.err;
  EXPECT_NE(a.err.find("ste audit: FLAKY: tests/test_plain0.sh did not pass (exit 1), then passed when run again "
                       "(run 1 of 1)"),
            std::string::npos)
      << a.err;
  EXPECT_NE(a.out.find("\"misses\":0,\"flaky\":1"), std::string::npos) << a.out;
  // --reruns 0: never run again, so a miss.
  ASSERT_EQ(std::remove(marker.c_str()), 0);
  a = Ste({"audit", "--fail-on-miss", "--reruns", "0"});
  EXPECT_EQ(a.exit_code, 1) << a.err;
  EXPECT_NE(a.err.find("MISS: tests/test_plain0.sh"), std::string::npos) << a.err;
  // Both audits are stored: the miss rate they measured together.
  EXPECT_NE(a.err.find("ste audit: over the 2 audits stored: 1 miss in 16 left-out tests run: at most "),
            std::string::npos)
      << a.err;
}

TEST_F(Audit, RecordRetriesAndNamesAFlakyTestThatSelectExplains) {
  // As in the audit's flaky test: fails once when its marker is gone.
  W("tests/test_plain0.sh", "[ -e settings/ran-once ] && exit 0\n: > settings/ran-once\nexit 1\n");
  W("ste.toml",
    "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\nretries = 2\n"
    "[inventory]\nignore = [\"settings/**\"]\n");
  ASSERT_EQ(::ste::testing::Git(root_, {"commit", "-qam", "retries"}).exit_code, 0);
  Spawned r = Ste({"record", "--progress", "none"});
  EXPECT_EQ(r.exit_code, 0) << "a flaky test passed: " << r.out << r.err;
  EXPECT_NE(r.out.find("8 passed, 0 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  flaky  tests/test_plain0.sh: did not pass, then passed when run again (runner.retries)"),
            std::string::npos)
      << r.out;
  W("tests/test_plain0.sh", ReadFile(root_ + "/tests/test_plain0.sh") + "# touched\n");
  Spawned s = Ste({"select", "--explain"});
  EXPECT_NE(s.out.find("tests/test_plain0.sh\n  <- tests/test_plain0.sh (content modified)\n"
                       "  (flaky: in the baseline it did not pass, then passed when run again)\n"),
            std::string::npos)
      << s.out;
  Spawned json = Ste({"select", "--json"});
  EXPECT_NE(json.out.find("\"flaky\":true"), std::string::npos) << json.out;
  // Without retries it fails the record.
  W("ste.toml",
    "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n"
    "[inventory]\nignore = [\"settings/**\"]\n");
  ASSERT_EQ(std::remove((root_ + "/settings/ran-once").c_str()), 0);
  r = Ste({"record", "--progress", "none"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
}

TEST_F(Audit, ModeAllLeavesNothingToAudit) {
  W("ste.toml", ReadFile(root_ + "/ste.toml") + "# changed\n");
  Spawned a = Ste({"audit", "--fail-on-miss"});
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.err.find("nothing to audit: the selection runs every test"), std::string::npos) << a.err;
}

}  // namespace
}  // namespace ste
