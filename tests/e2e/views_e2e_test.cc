// Views (inventory.h, "Views") end to end: `ste record` then `ste select`
// on a real temporary git repository, the real binary and real test
// processes. A generic-runner shell test records a view itself, by
// stat'ing "<dir>/\x01<view>" (what ste's Python start-up hook does);
// another lists the root directory. A new file at the root must select
// only the lister; a new *.dist-info both.
//
//   tests/test_list.sh     ls .                                 (a listing)
//   tests/test_dists.sh    stat ./\x01ste-dists                 (a repo view)
//   tests/test_plugins.sh  stat <ext>/site/\x01ste-entry-points:pytest11
//   tests/test_typo.sh     stat ./\x01ste-distz                 (unknown: a listing)
//   tests/test_lib.sh      reads lib/x.sh
#include <signal.h>
#include <unistd.h>

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

struct Selected {
  Spawned run;
  std::string mode;
  std::set<std::string> tests;
};

class Views : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    ext_ = MakeTempDir();
    WriteFile(ext_ + "/site/plugin_a-1.0.dist-info/entry_points.txt", "[pytest11]\na = plugin_a.hooks\n");
    WriteFile(ext_ + "/site/plugin_a-1.0.dist-info/METADATA", "Name: plugin_a\n");
    W("lib/x.sh", "x=1\n");
    W("tests/test_list.sh", "ls . > /dev/null\n");
    // What ste's Python hook does: a stat of a path that never exists.
    W("tests/test_dists.sh", "stat \"$PWD/$(printf '\\001')ste-dists\" > /dev/null 2>&1\nexit 0\n");
    W("tests/test_plugins.sh",
      "stat '" + ext_ + "/site/'\"$(printf '\\001')ste-entry-points:pytest11\" > /dev/null 2>&1\nexit 0\n");
    W("tests/test_typo.sh", "stat \"$PWD/$(printf '\\001')ste-distz\" > /dev/null 2>&1\nexit 0\n");
    W("tests/test_lib.sh", ". lib/x.sh\n");
    W("ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
    ::ste::testing::InitGitRepo(root_);
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "init"});
  }

  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  void Git(const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(root_, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, root_);
  }
  void Record() {
    Spawned r = Ste({"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  Selected Select(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"select", "--explain"};
    args.insert(args.end(), extra.begin(), extra.end());
    Selected s;
    s.run = Ste(args);
    s.mode = ::ste::testing::SelectedMode(s.run.err);
    s.tests = ::ste::testing::SelectedTests(s.run.out);
    return s;
  }
  std::string Describe(const Selected& s) { return s.run.err + s.run.out; }

  std::string root_, ext_;
};

using Tests = std::set<std::string>;

TEST_F(Views, TheViewIsRecordedAsContentAndTheTypoAsAListing) {
  Record();
  Spawned deps = Ste({"deps", "tests/test_dists.sh"});
  EXPECT_NE(deps.out.find("content\t\\x01ste-dists\n"), std::string::npos) << deps.out;
  EXPECT_EQ(deps.out.find("listing\t.\n"), std::string::npos) << deps.out;
  deps = Ste({"deps", "tests/test_typo.sh"});
  EXPECT_NE(deps.out.find("listing\t.\n"), std::string::npos) << deps.out;
  deps = Ste({"deps", "tests/test_plugins.sh"});
  EXPECT_NE(deps.out.find("content\t" + ext_ + "/site/\\x01ste-entry-points:pytest11\n"),
            std::string::npos)
      << deps.out;
  Spawned why = Ste({"why", "."});
  EXPECT_NE(why.out.find("view ste-dists\ttests/test_dists.sh\t(the *.dist-info and *.egg-info names)\n"),
            std::string::npos)
      << why.out << why.err;
  why = Ste({"why", ext_ + "/site"});
  EXPECT_NE(why.out.find("view ste-entry-points:pytest11\ttests/test_plugins.sh\t"), std::string::npos)
      << why.out << why.err;
  Selected s = Select();
  EXPECT_EQ(s.mode, "none") << Describe(s);
}

TEST_F(Views, ANewFileAtTheRootSelectsOnlyTheListers) {
  Record();
  W("NOTES.txt", "notes\n");
  Selected s = Select();
  EXPECT_EQ(s.mode, "subset") << Describe(s);
  EXPECT_EQ(s.tests, (Tests{"tests/test_list.sh", "tests/test_typo.sh"})) << Describe(s);
}

TEST_F(Views, ANewDistributionAtTheRootSelectsTheViewToo) {
  Record();
  W("foo-1.0.dist-info/METADATA", "Name: foo\n");
  Selected s = Select();
  EXPECT_EQ(s.tests, (Tests{"tests/test_dists.sh", "tests/test_list.sh", "tests/test_typo.sh"}))
      << Describe(s);
  EXPECT_NE(s.run.out.find("tests/test_dists.sh\n  <- .: the *.dist-info and *.egg-info names changed\n"),
            std::string::npos)
      << s.run.out;
  Spawned json = Ste({"select", "--format", "json"});
  EXPECT_NE(json.out.find("{\"path\":\"\\u0001ste-dists\",\"kind\":\"content\",\"change\":\"modified\"}"),
            std::string::npos)
      << json.out;
  // Editing its metadata is no change of the names.
  Record();
  W("foo-1.0.dist-info/METADATA", "Name: foo\nVersion: 1.0\n");
  s = Select();
  EXPECT_EQ(s.mode, "none") << Describe(s);
}

TEST_F(Views, AnOutsideViewSeesOnlyThePluginsOfItsGroup) {
  Record();
  // A package whose entry points are only console_scripts: no plugin.
  WriteFile(ext_ + "/site/tool-2.0.dist-info/entry_points.txt", "[console_scripts]\ntool = tool:main\n");
  WriteFile(ext_ + "/site/NOTES.txt", "");
  Selected s = Select();
  EXPECT_EQ(s.mode, "none") << Describe(s);
  // A new pytest plugin.
  WriteFile(ext_ + "/site/plugin_b-1.0.dist-info/entry_points.txt", "[pytest11]\nb = plugin_b\n");
  s = Select();
  EXPECT_EQ(s.tests, Tests{"tests/test_plugins.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find("  <- " + ext_ + "/site: entry points [pytest11] of its distributions changed\n"),
            std::string::npos)
      << s.run.out;
  // A changed plugin entry, with the new one gone again.
  ASSERT_EQ(unlink((ext_ + "/site/plugin_b-1.0.dist-info/entry_points.txt").c_str()), 0);
  WriteFile(ext_ + "/site/plugin_a-1.0.dist-info/entry_points.txt", "[pytest11]\na = plugin_a.hooks2\n");
  s = Select();
  EXPECT_EQ(s.tests, Tests{"tests/test_plugins.sh"}) << Describe(s);
  // The directory gone: the view is missing now.
  WriteFile(ext_ + "/site/plugin_a-1.0.dist-info/entry_points.txt", "[pytest11]\na = plugin_a.hooks\n");
  EXPECT_EQ(Select().mode, "none");
  Spawned rm = Spawn({"rm", "-rf", ext_ + "/site"});
  ASSERT_EQ(rm.exit_code, 0);
  s = Select();
  EXPECT_EQ(s.tests, Tests{"tests/test_plugins.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find("(the directory went)"), std::string::npos) << s.run.out;
}

TEST_F(Views, WithoutExternalFilesOutsideViewsAreLeftOutAndRepoViewsKept) {
  W("ste.toml", ReadFile(root_ + "/ste.toml") + "[inventory]\nexternal = false\n");
  Git({"commit", "-q", "-a", "-m", "no external files"});
  Record();
  WriteFile(ext_ + "/site/plugin_b-1.0.dist-info/entry_points.txt", "[pytest11]\nb = plugin_b\n");
  Selected s = Select();
  EXPECT_EQ(s.mode, "none") << "outside the repo nothing is inventoried: " << Describe(s);
  W("foo-1.0.dist-info/METADATA", "Name: foo\n");
  s = Select();
  EXPECT_EQ(s.tests, (Tests{"tests/test_dists.sh", "tests/test_list.sh", "tests/test_typo.sh"}))
      << Describe(s);
}

TEST_F(Views, ThroughASchedulerTheViewsAreComputedHere) {
  Record();
  ::ste::testing::SchedulerProcess server(kSte, "sqlite:" + root_ + "/.ste/ste.db", MakeTempDir());
  ::ste::testing::Process& scheduler = server.process();
  const std::string address = server.address();
  ASSERT_FALSE(address.empty()) << scheduler.err();
  W("NOTES.txt", "notes\n");
  Selected notes = Select({"--scheduler", address});
  EXPECT_EQ(notes.tests, (Tests{"tests/test_list.sh", "tests/test_typo.sh"})) << Describe(notes);
  W("foo-1.0.dist-info/METADATA", "Name: foo\n");
  WriteFile(ext_ + "/site/plugin_b-1.0.dist-info/entry_points.txt", "[pytest11]\nb = plugin_b\n");
  Selected local = Select();
  Selected remote = Select({"--scheduler", address});
  EXPECT_EQ(remote.mode, "subset") << Describe(remote) << scheduler.err();
  EXPECT_EQ(remote.tests, local.tests) << Describe(remote);
  EXPECT_EQ(remote.tests, (Tests{"tests/test_dists.sh", "tests/test_list.sh", "tests/test_plugins.sh",
                                 "tests/test_typo.sh"}))
      << Describe(remote);
  scheduler.Signal(SIGTERM);
  EXPECT_EQ(scheduler.Wait(60), 0) << scheduler.err();
}

}  // namespace
}  // namespace ste
