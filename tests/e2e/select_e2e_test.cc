// End-to-end tests of `ste record` and `ste select` on real temporary git
// repositories: the real binary, real test processes, a real SQLite store.
//
// The fixture repo has three shell tests:
//   tests/test_a.sh  sources lib/a.sh, reads fixtures/*.txt (a glob)
//   tests/test_b.sh  sources lib/b.sh, probes config/local.env (absent)
//   tests/test_ext.sh reads <ext>/site/lib.py, outside the repo
// plus docs/ (skip_all), .ci/ (run_all), ste.toml (run_all).
//
// A little over ~600 lines: one fixture for every guardrail and every
// dependency kind; CI checkouts (shallow clones) are in shallow_e2e_test.cc.
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "github_files.h"
#include "gtest/gtest.h"
#include "test_support.h"

extern char** environ;

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::ReadFile;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);
const std::string kStaticOpener = STE_CASES_DIR "/static_opener";


struct SelectResult {
  Spawned run;
  std::string mode;
  std::set<std::string> tests;
};

class Repo : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    ext_ = MakeTempDir();
    WriteFile(ext_ + "/site/lib.py", "VERSION = 1\n");
    W("lib/a.sh", "a() { echo A; }\n");
    W("lib/b.sh", "b() { echo B; }\n");
    W("fixtures/one.txt", "1\n");
    W("fixtures/two.txt", "2\n");
    W("tests/test_a.sh",
      ". lib/a.sh\n[ \"$(a)\" = A ] || exit 1\nfor f in fixtures/*.txt; do read x < \"$f\"; done\n");
    W("tests/test_b.sh",
      ". lib/b.sh\n[ \"$(b)\" = B ] || exit 1\n[ -f config/local.env ] && . config/local.env\n"
      "exit 0\n");
    W("tests/test_ext.sh", "grep -q VERSION '" + ext_ + "/site/lib.py'\n");
    W("docs/guide.md", "# guide\n");
    W(".ci/pipeline.yml", "steps: []\n");
    W("ste.toml",
      "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n"
      "[selection]\nrun_all = [\"ste.toml\", \".ci/**\"]\nskip_all = [\"docs/**\", \"*.md\"]\n");
    ::ste::testing::InitGitRepo(root_);
    Commit("init");
  }

  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  void Git(const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(root_, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  void Commit(const std::string& message) {
    Git({"add", "-A"});
    Git({"commit", "-q", "--allow-empty", "-m", message});
  }
  Spawned Ste(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), kSte);
    return Spawn(args, env, root_);
  }
  void Record() {
    Spawned r = Ste({"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  SelectResult Select(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"select", "--explain"};
    args.insert(args.end(), extra.begin(), extra.end());
    SelectResult s;
    s.run = Ste(args);
    s.mode = ::ste::testing::SelectedMode(s.run.err);
    s.tests = ::ste::testing::SelectedTests(s.run.out);
    return s;
  }
  std::string Describe(const SelectResult& s) { return s.run.err + s.run.out; }

  std::string root_, ext_;
  const std::set<std::string> all_ = {"tests/test_a.sh", "tests/test_b.sh", "tests/test_ext.sh"};
};

// ---- guardrails ---------------------------------------------------------------

TEST_F(Repo, NoBaselineSelectsAllWithTheReason) {
  SelectResult s = Select();
  EXPECT_EQ(s.run.exit_code, 0);
  EXPECT_EQ(s.mode, "all") << Describe(s);
  EXPECT_EQ(s.tests, all_);
  EXPECT_NE(s.run.err.find("no usable baseline"), std::string::npos) << s.run.err;
}

TEST_F(Repo, NothingChangedSelectsNone) {
  Record();
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "none") << Describe(s);
  EXPECT_TRUE(s.tests.empty());
}

TEST_F(Repo, OnlySkipAllPathsChangedSelectsNone) {
  Record();
  W("docs/guide.md", "# guide, edited\n");
  W("NOTES.md", "new notes\n");
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "none") << Describe(s);
  EXPECT_NE(s.run.err.find("skip_all"), std::string::npos);
}

TEST_F(Repo, RunAllPathSelectsAll) {
  Record();
  W(".ci/pipeline.yml", "steps: [lint]\n");
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "all") << Describe(s);
  EXPECT_EQ(s.tests, all_);
  EXPECT_NE(s.run.err.find(".ci/pipeline.yml changed and matches selection.run_all '.ci/**'"),
            std::string::npos)
      << s.run.err;
}

TEST_F(Repo, ChangingSteTomlAlwaysSelectsAll) {
  W("ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
  Record();  // no run_all at all now
  W("ste.toml", ReadFile(root_ + "/ste.toml") + "jobs = 1\n");
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "all") << Describe(s);
  EXPECT_NE(s.run.err.find("ste.toml (the configuration) changed"), std::string::npos) << s.run.err;
}

TEST_F(Repo, ForceTagInACommitMessageOrAllFlagSelectsAll) {
  Record();
  W("lib/a.sh", "a() { echo A; }  # touched\n");
  EXPECT_EQ(Select().tests, std::set<std::string>{"tests/test_a.sh"});
  EXPECT_EQ(Select({"--all"}).mode, "all");
  Commit("refactor [test all] please");
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "all") << Describe(s);
  EXPECT_NE(s.run.err.find("force tag [test all]"), std::string::npos) << s.run.err;
}

TEST_F(Repo, AWideSelectionSaysWhatPulledItIn) {
  Record();
  W("fixtures/three.txt", "3\n");  // test_a lists fixtures/
  W("lib/b.sh", "b() { echo B; }  # touched\n");
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "subset") << Describe(s);
  EXPECT_EQ(s.tests, (std::set<std::string>{"tests/test_a.sh", "tests/test_b.sh"}));
  EXPECT_NE(s.run.err.find("ste select: wide: fixtures/three.txt added: listing of fixtures -> 1 test"),
            std::string::npos)
      << s.run.err;
  EXPECT_NE(s.run.err.find("ste select: wide: lib/b.sh modified: content -> 1 test"), std::string::npos)
      << s.run.err;
  Spawned json = Ste({"select", "--format", "json"});
  EXPECT_NE(json.out.find("\"wide\":[{\"path\":"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"entries\":[{\"path\":\"fixtures/three.txt\",\"change\":\"added\"}]"),
            std::string::npos)
      << json.out;
}

TEST_F(Repo, WhatATestDoesInItsTemporaryDirectoryIsNoDependency) {
  // Like pytest's tmp_path: list $TMPDIR, make a numbered directory there.
  W("tests/test_tmp.sh",
    "ls \"$TMPDIR\" > /dev/null; mkdir \"$TMPDIR/run-$$\"; echo x > \"$TMPDIR/run-$$/f\"; "
    "cat \"$TMPDIR/run-$$/f\" > /dev/null\n");
  Commit("a test using its temporary directory");
  Record();
  Spawned deps = Ste({"deps", "tests/test_tmp.sh"});
  EXPECT_EQ(deps.out.find("ste-tmp-"), std::string::npos) << deps.out;
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "none") << Describe(s);
  // Off: the inherited $TMPDIR, recorded like any directory.
  std::string shared = MakeTempDir();
  std::string toml = ReadFile(root_ + "/ste.toml");
  toml.replace(toml.find("command = \"sh {test}\"\n"), 21, "command = \"sh {test}\"\nprivate_tmp = false\n");
  W("ste.toml", toml);
  EXPECT_EQ(Ste({"record", "--progress", "none"}, {"TMPDIR=" + shared}).exit_code, 0);
  deps = Ste({"deps", "tests/test_tmp.sh"});
  EXPECT_NE(deps.out.find(shared), std::string::npos) << deps.out;
}

TEST_F(Repo, ABaselineCommitGoneFromTheHistoryWidensToAll) {
  // The baseline's commit was amended away and collected (as in a shallow
  // clone that does not reach it): a force tag in between cannot be ruled
  // out, so the selection is all, saying why.
  Record();
  W("lib/a.sh", "a() { echo A; }  # touched\n");
  Git({"commit", "-q", "-a", "--amend", "-m", "init, amended"});
  Git({"reflog", "expire", "--expire=now", "--all"});
  Git({"gc", "-q", "--prune=now"});
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "all") << Describe(s);
  EXPECT_EQ(s.tests, all_);
  EXPECT_NE(s.run.err.find("cannot read the commit messages since the baseline's commit"),
            std::string::npos)
      << s.run.err;
}

// ---- each dependency kind ----------------------------------------------------------

TEST_F(Repo, EditingASourceSelectsExactlyItsTest) {
  Record();
  W("lib/a.sh", "a() { echo A; }\n# comment\n");
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "subset") << Describe(s);
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_a.sh"});
  EXPECT_NE(s.run.out.find("  <- lib/a.sh (content modified)"), std::string::npos) << s.run.out;
}


// --assume-changed PATH...: the selection as if only those paths had
// changed; the tree is not read, the guardrails apply.
TEST_F(Repo, AssumeChangedSelectsAsIfOnlyThosePathsHadChanged) {
  Record();
  W("lib/b.sh", "b() { echo B; }\n# a real edit the what-if does not see\n");
  SelectResult a = Select({"--assume-changed", "lib/a.sh"});
  EXPECT_EQ(a.run.exit_code, 0) << Describe(a);
  EXPECT_EQ(a.mode, "subset") << Describe(a);
  EXPECT_EQ(a.tests, std::set<std::string>{"tests/test_a.sh"});
  EXPECT_NE(a.run.out.find("  <- lib/a.sh (content modified)"), std::string::npos) << a.run.out;
  EXPECT_NE(a.run.err.find("assumed: only the path --assume-changed named changed"), std::string::npos)
      << a.run.err;
  // Without it, the real edit.
  EXPECT_EQ(Select().tests, std::set<std::string>{"tests/test_b.sh"});

  // A directory: everything the baseline saw beneath it; relative to the
  // current directory.
  Spawned dir = Spawn({kSte, "select", "--assume-changed", "."}, {}, root_ + "/lib");
  EXPECT_EQ(dir.exit_code, 0) << dir.err;
  EXPECT_EQ(::ste::testing::SelectedTests(dir.out),
            (std::set<std::string>{"tests/test_a.sh", "tests/test_b.sh"}))
      << dir.err;
  // A test file the baseline never saw is new: selected with the rest.
  SelectResult fresh = Select({"--assume-changed", "tests/test_new.sh", "fixtures/one.txt"});
  EXPECT_EQ(fresh.tests, (std::set<std::string>{"tests/test_a.sh", "tests/test_new.sh"})) << Describe(fresh);
  // The guardrails: run_all, skip_all.
  SelectResult config = Select({"--assume-changed", "ste.toml"});
  EXPECT_EQ(config.mode, "all") << Describe(config);
  EXPECT_EQ(config.tests, all_);
  EXPECT_EQ(Select({"--assume-changed", "docs/guide.md"}).mode, "none");
  // Paths only with the flag, and the flag only with paths.
  EXPECT_EQ(Ste({"select", "--assume-changed"}).exit_code, 2);
  EXPECT_EQ(Ste({"select", "--scheduler", "127.0.0.1:1", "--assume-changed", "lib/a.sh"}).exit_code, 2);
  Spawned stray = Ste({"select", "lib/a.sh"});
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.err.find("paths go with --assume-changed"), std::string::npos) << stray.err;
}

// `ste` links no gRPC: the commands that talk it (record, scheduler,
// worker, select --scheduler) are in libste_rpc.so, loaded when one runs.
// A lone copy of the binary still selects, and says what is missing for
// the others. Nor libpq: a PostgreSQL store loads it with its first
// connection (the PostgreSQL e2e and store suites connect through that).
std::string FindRpcModule() {
  const std::filesystem::path dir = std::filesystem::path(kSte).parent_path();
  for (const std::filesystem::path& p : {dir / "libste_rpc.so", dir / "../lib/ste/libste_rpc.so"}) {
    if (std::filesystem::exists(p)) return p.string();
  }
  ADD_FAILURE() << "no libste_rpc.so beside " << kSte;
  return kSte;
}

TEST_F(Repo, OnlyTheCommandsThatTalkGrpcLoadTheRpcModule) {
  Record();
  for (const std::string& binary : {std::string(kSte), FindRpcModule()}) {
    Spawned ldd = Spawn({"ldd", binary});
    ASSERT_EQ(ldd.exit_code, 0) << ldd.err;
    EXPECT_EQ(ldd.out.find("libpq"), std::string::npos) << binary << ": " << ldd.out;
    if (binary != kSte) continue;
    EXPECT_EQ(ldd.out.find("libgrpc"), std::string::npos) << ldd.out;
    EXPECT_EQ(ldd.out.find("libprotobuf"), std::string::npos) << ldd.out;
  }

  const std::string lone = MakeTempDir() + "/ste";
  std::filesystem::copy_file(kSte, lone);
  W("lib/a.sh", "a() { echo A; }\n# comment\n");
  Spawned select = Spawn({lone, "select"}, {}, root_);
  EXPECT_EQ(select.exit_code, 0) << select.err;
  EXPECT_EQ(::ste::testing::SelectedTests(select.out), std::set<std::string>{"tests/test_a.sh"})
      << select.err;
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"record"}, {"worker", "--scheduler", "127.0.0.1:1"}, {"select", "--scheduler", "127.0.0.1:1"}}) {
    args.insert(args.begin(), lone);
    Spawned r = Spawn(args, {}, root_);
    EXPECT_EQ(r.exit_code, 1) << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find("ste " + args[1] + ": cannot find the part of ste that talks to schedulers: "
                         "libste_rpc.so not found beside "),
              std::string::npos)
        << r.err;
  }
}

// A PostgreSQL store loads libpq.so.5 with its first connection. A libpq
// that cannot serve (here a real library of another name standing in for
// it, first on LD_LIBRARY_PATH) is a store that cannot open: everything
// runs, and the reason says what is wrong.
TEST_F(Repo, ALibpqThatCannotServeRunsEverythingWithTheReason) {
  Record();
  const std::string libs = MakeTempDir();
  std::string stand_in;
  for (const char* p : {"/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1",
                        "/lib/aarch64-linux-gnu/libz.so.1", "/usr/lib/aarch64-linux-gnu/libz.so.1"}) {
    if (std::filesystem::exists(p)) stand_in = p;
  }
  if (stand_in.empty()) GTEST_SKIP() << "no libz.so.1 to stand in for libpq.so.5";
  std::filesystem::copy_file(stand_in, libs + "/libpq.so.5");
  Spawned select = Spawn({kSte, "select", "--store", "postgresql://ste@127.0.0.1:1/none"},
                         {"LD_LIBRARY_PATH=" + libs}, root_);
  EXPECT_EQ(select.exit_code, 0) << select.err;
  EXPECT_NE(select.err.find("mode all"), std::string::npos) << select.err;
  EXPECT_NE(select.err.find("libpq.so.5 has no PQclear"), std::string::npos) << select.err;
  EXPECT_EQ(::ste::testing::SelectedTests(select.out),
            (std::set<std::string>{"tests/test_a.sh", "tests/test_b.sh", "tests/test_ext.sh"}))
      << select.out;
}

// --timings: where the time went, phase by phase, on stderr only; the
// selection on stdout is the same as without it.
TEST_F(Repo, TimingsNameThePhasesOnStderrAndChangeNothingElse) {
  Record();
  W("lib/a.sh", "a() { echo A; }\n# comment\n");
  SelectResult plain = Select();
  SelectResult timed = Select({"--timings"});
  EXPECT_EQ(timed.run.exit_code, 0) << Describe(timed);
  EXPECT_EQ(timed.run.out, plain.run.out);
  EXPECT_EQ(timed.mode, "subset");
  EXPECT_EQ(plain.run.err.find("timings"), std::string::npos) << plain.run.err;
  for (const char* phase :
       {"configuration (ste.toml)", "store opened", "baseline lookup (git facts)", "git rev-parse",
        "baseline: inventory read", "tree read: walk and stat (hash what changed)", "diff",
        "force tags (commit messages)", "git log", "output", "wall after the flags were read"}) {
    EXPECT_NE(timed.run.err.find(std::string(" ") + phase), std::string::npos) << phase << "\n"
                                                                                << timed.run.err;
  }
  // Each line: "ste select: timings: <ms> ms ...", the milliseconds a number.
  size_t lines = 0;
  for (absl::string_view line : absl::StrSplit(timed.run.err, '\n')) {
    if (!absl::ConsumePrefix(&line, "ste select: timings: ")) continue;
    lines++;
    double ms = -1;
    std::string number(absl::StripLeadingAsciiWhitespace(line.substr(0, line.find(" ms"))));
    EXPECT_TRUE(absl::SimpleAtod(number, &ms) && ms >= 0) << line;
  }
  EXPECT_GE(lines, 12u) << timed.run.err;
}
TEST_F(Repo, AddingAFileToAGlobbedDirectorySelectsTheGlobber) {
  Record();
  W("fixtures/three.txt", "3\n");
  SelectResult s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_a.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find("  <- fixtures (listing changed)"), std::string::npos) << s.run.out;
}

TEST_F(Repo, CreatingAProbedAbsentFileSelectsTheProber) {
  Record();
  W("config/local.env", "X=1\n");
  SelectResult s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_b.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find("  <- config/local.env (was absent, now exists)"), std::string::npos)
      << s.run.out;
}

TEST_F(Repo, DeletingADependencySelectsItsTest) {
  Record();
  ASSERT_EQ(unlink((root_ + "/lib/b.sh").c_str()), 0);
  SelectResult s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_b.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find("  <- lib/b.sh (content deleted)"), std::string::npos) << s.run.out;
}

TEST_F(Repo, AnExternalFileChangeSelectsItsReader) {
  Record();
  WriteFile(ext_ + "/site/lib.py", "VERSION = 2\n");
  SelectResult s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_ext.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find(ext_ + "/site/lib.py (content modified)"), std::string::npos)
      << s.run.out;
}

TEST_F(Repo, ReadingThroughASymlinkedDirectorySeesTheRealFile) {
  // vendor -> <ext>/vendor (outside the repo): the test names vendor/v.sh,
  // the change happens to the file behind the link.
  WriteFile(ext_ + "/vendor/v.sh", "v() { echo V; }\n");
  ASSERT_EQ(symlink((ext_ + "/vendor").c_str(), (root_ + "/vendor").c_str()), 0);
  W("tests/test_v.sh", ". vendor/v.sh\n[ \"$(v)\" = V ]\n[ -f vendor/extra.sh ] && exit 1\nexit 0\n");
  Record();
  WriteFile(ext_ + "/vendor/v.sh", "v() { echo W; }\n");
  SelectResult s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_v.sh"}) << Describe(s);
  WriteFile(ext_ + "/vendor/v.sh", "v() { echo V; }\n");
  WriteFile(ext_ + "/vendor/extra.sh", "# appears behind the link\n");
  s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_v.sh"}) << Describe(s);
}

TEST_F(Repo, AFileAddedToAnExternalDirectoryATestListsSelectsIt) {
  // Found by the safety oracle's author: only the external directory's
  // listing changes (its entries are not inventoried), and that alone must
  // select the test, never "none".
  WriteFile(ext_ + "/plugins/one.sh", "");
  W("tests/test_plugins.sh", "[ \"$(ls '" + ext_ + "/plugins' | wc -l)\" -eq 1 ]\n");
  Record();
  WriteFile(ext_ + "/plugins/two.sh", "");
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "subset") << Describe(s);
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_plugins.sh"}) << Describe(s);
}

TEST_F(Repo, APathATestCouldNotLookAtIsRecordedAndItsRepairSelectsTheTest) {
  // A test looks for a program behind a loop of links outside the repo
  // (as another user: in a folder it may not search, a PATH entry under
  // /root). ste cannot look either: the path is an entry saying so, the
  // record completes (it once hung: the worker's report was refused for
  // want of that entry), and the path becoming readable selects the test.
  ASSERT_EQ(symlink("loop", (ext_ + "/loop").c_str()), 0);
  W("tests/test_loop.sh", "[ -e '" + ext_ + "/loop/ruby' ] && exit 1\nexit 0\n");
  Commit("test_loop");
  Spawned r = Ste({"record", "--progress", "none"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("4 tests, 4 passed, 0 failed, 0 errors, 0 opaque"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  SelectResult none = Select();
  EXPECT_EQ(none.mode, "none") << Describe(none);

  ASSERT_EQ(unlink((ext_ + "/loop").c_str()), 0);
  WriteFile(ext_ + "/loop/ruby", "#!/bin/sh\n");
  SelectResult s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_loop.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find(ext_ + "/loop/ruby"), std::string::npos) << s.run.out;
}

TEST_F(Repo, ADirectoryOnlyStatedIsAnExistenceAndTypeDependency) {
  // Issue 11: `[ -d data ]` stats data and lists nothing in it. Entries
  // created or removed inside it do not affect the test; the directory
  // removed, or replaced by a file or a link, does.
  W("data/one.txt", "1\n");
  W("tests/test_stat.sh", "[ -d data ]\n");
  Commit("a test that stats a directory");
  Record();
  W("data/two.txt", "2\n");
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "none") << Describe(s);
  ASSERT_EQ(unlink((root_ + "/data/one.txt").c_str()), 0);
  s = Select();
  EXPECT_EQ(s.mode, "none") << Describe(s);
  ASSERT_EQ(unlink((root_ + "/data/two.txt").c_str()), 0);
  ASSERT_EQ(rmdir((root_ + "/data").c_str()), 0);
  s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_stat.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find("  <- data (content deleted)"), std::string::npos) << s.run.out;
  W("data", "a file now\n");
  s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_stat.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find("  <- data (content modified)"), std::string::npos) << s.run.out;
  ASSERT_EQ(unlink((root_ + "/data").c_str()), 0);
  WriteFile(ext_ + "/data/one.txt", "1\n");
  ASSERT_EQ(symlink((ext_ + "/data").c_str(), (root_ + "/data").c_str()), 0);
  s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_stat.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find("  <- data (content modified)"), std::string::npos) << s.run.out;
}

TEST_F(Repo, ADirectoryCreatedNextToTheCheckoutChangesNothing) {
  // Issue 11: a test that stats the checkout's parent (pytest stats every
  // parent of its arguments) and reads a skip_all file. A directory
  // created next to the checkout changes the parent's names only: with a
  // docs-only change, skip_all still decides (was: 1 test selected).
  W("tests/test_doc.sh", "[ -d .. ] && grep -q guide docs/guide.md\n");
  Commit("a test that stats the parent and reads the docs");
  Record();
  Spawned why = Ste({"why", root_.substr(0, root_.rfind('/'))});
  EXPECT_NE(why.out.find("content\ttests/test_doc.sh"), std::string::npos) << why.out << why.err;
  const std::string sibling = root_ + "-sibling";
  ASSERT_EQ(mkdir(sibling.c_str(), 0755), 0);
  W("docs/guide.md", "# guide, edited\n");
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "none") << Describe(s);
  EXPECT_NE(s.run.err.find("skip_all"), std::string::npos) << s.run.err;
  EXPECT_EQ(Ste({"select", "--changed-files"}).out, "docs/guide.md\n");
  rmdir(sibling.c_str());
}

// ---- tests themselves ---------------------------------------------------------------

TEST_F(Repo, ANewTestFileIsSelected) {
  Record();
  W("tests/test_new.sh", "exit 0\n");
  SelectResult s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_new.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find("  <- new test"), std::string::npos);
}

TEST_F(Repo, ATestThatFailedInTheBaselineIsRerun) {
  W("tests/test_fail.sh", "exit 1\n");
  Spawned r = Ste({"record", "--progress", "none"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;  // a test failed; the baseline is stored
  SelectResult s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_fail.sh"}) << Describe(s);
  EXPECT_NE(s.run.out.find("  <- failed in baseline"), std::string::npos);
}

TEST_F(Repo, MandatoryTestsAreAlwaysSelected) {
  W("ste.toml", ReadFile(root_ + "/ste.toml") + "mandatory = [\"tests/test_ext.sh\"]\n");
  Record();
  W("lib/a.sh", "a() { echo A; }\n# x\n");
  SelectResult s = Select();
  EXPECT_EQ(s.tests, (std::set<std::string>{"tests/test_a.sh", "tests/test_ext.sh"}))
      << Describe(s);
}

TEST_F(Repo, ATestThatRunsAStaticBinaryIsOpaqueAndAlwaysSelected) {
  W("tests/test_static.sh", "'" + kStaticOpener + "' lib/a.sh\n");
  Record();
  W("lib/b.sh", "b() { echo B; }\n# y\n");
  SelectResult s = Select();
  EXPECT_EQ(s.tests, (std::set<std::string>{"tests/test_b.sh", "tests/test_static.sh"}))
      << Describe(s);
  EXPECT_NE(s.run.out.find("opaque"), std::string::npos);
  Spawned deps = Ste({"deps", "tests/test_static.sh"});
  EXPECT_NE(deps.out.find("opaque"), std::string::npos) << deps.out;
}

// ---- outside git, and what the store holds --------------------------------------------

TEST_F(Repo, WorksInADirectoryThatIsNotAGitRepo) {
  Spawned rm = Spawn({"rm", "-rf", root_ + "/.git"});
  ASSERT_EQ(rm.exit_code, 0);
  Record();
  Record();  // mri taken as a counter: 1, then 2
  W("lib/a.sh", "a() { echo A; }\n# z\n");
  SelectResult s = Select();
  EXPECT_EQ(s.tests, std::set<std::string>{"tests/test_a.sh"}) << Describe(s);
  EXPECT_NE(s.run.err.find("baseline 2, mri 2"), std::string::npos) << s.run.err;
}

TEST_F(Repo, WhyDepsAndIndexDump) {
  Record();
  Spawned why = Ste({"why", "lib/a.sh"});
  EXPECT_EQ(why.exit_code, 0) << why.err;
  EXPECT_EQ(why.out, "content\ttests/test_a.sh\n");
  Spawned deps = Ste({"deps", "tests/test_b.sh"});
  EXPECT_NE(deps.out.find("content\tlib/b.sh\n"), std::string::npos) << deps.out;
  EXPECT_NE(deps.out.find("absent\tconfig/local.env\n"), std::string::npos) << deps.out;
  Spawned dump = Ste({"index", "dump", "--json"});
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(::ste::testing::Lines(dump.out), 3u);
  EXPECT_NE(dump.out.find("{\"test\":\"//r/tests/test_a.sh\",\"opaque\":false,\"deps\":["),
            std::string::npos);
  EXPECT_EQ(Ste({"deps", "tests/nope.sh"}).exit_code, 1);
}

TEST_F(Repo, InventoryListsDiffsAndWritesTheTree) {
  Spawned plain = Ste({"inventory"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  // The hash is XXH3-128 as an independent implementation prints it.
  Spawned sum = Spawn({"xxh128sum", root_ + "/lib/a.sh"});
  ASSERT_EQ(sum.exit_code, 0) << "xxh128sum (Debian xxhash) is installed by make deps";
  std::string hex = sum.out.substr(0, 32);
  EXPECT_NE(plain.out.find("regular\t16\t" + hex + "\tlib/a.sh\n"), std::string::npos)
      << hex << "\n" << plain.out;
  EXPECT_EQ(plain.out.find(".git/"), std::string::npos) << "ignored";
  Spawned json = Ste({"inventory", "--json"});
  ASSERT_EQ(json.exit_code, 0);
  EXPECT_NE(json.out.find("\"path\":\"lib/a.sh\""), std::string::npos) << json.out;

  std::string saved = MakeTempDir() + "/before.inv";
  ASSERT_EQ(Ste({"inventory", "-o", saved}).exit_code, 0);
  W("lib/a.sh", "a() { echo A; }\n# inv\n");
  W("lib/new.sh", "\n");
  ASSERT_EQ(unlink((root_ + "/lib/b.sh").c_str()), 0);
  Spawned diff = Ste({"inventory", "--diff", saved});
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_EQ(diff.out,
            "modified\tdirectory\tlib\nmodified\tregular\tlib/a.sh\n"
            "deleted\tregular\tlib/b.sh\nadded\tregular\tlib/new.sh\n");
  Spawned bad = Ste({"inventory", "--diff", root_ + "/ste.toml"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("ste inventory: "), std::string::npos) << bad.err;
}

TEST_F(Repo, JsonGithubAndChangedFilesOutputs) {
  Record();
  W("lib/a.sh", "a() { echo A; }\n# j\n");
  Spawned json = Ste({"select", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0);
  EXPECT_NE(json.out.find("\"mode\":\"subset\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"tests\":[{\"test\":\"tests/test_a.sh\",\"reasons\":[{\"path\":"
                          "\"lib/a.sh\",\"kind\":\"content\",\"change\":\"modified\"}]"),
            std::string::npos)
      << json.out;
  EXPECT_NE(json.out.find("\"baseline\":{\"id\":1,"), std::string::npos);

  std::string gh = MakeTempDir();
  Spawned github = Ste({"select", "--format", "github"},
                       {"GITHUB_OUTPUT=" + gh + "/out", "GITHUB_STEP_SUMMARY=" + gh + "/summary"});
  ASSERT_EQ(github.exit_code, 0) << github.err;
  // Read as GitHub reads it (multi-line entries: ci_outputs_e2e_test.cc).
  std::optional<std::map<std::string, std::string>> out = testing::ParseGithubFile(ReadFile(gh + "/out"));
  ASSERT_TRUE(out.has_value()) << ReadFile(gh + "/out");
  EXPECT_EQ((*out)["mode"], "subset");
  EXPECT_EQ((*out)["tests_file"], root_ + "/.ste/selected-tests.txt");
  EXPECT_EQ(ReadFile(root_ + "/.ste/selected-tests.txt"), "tests/test_a.sh\n");
  EXPECT_NE(ReadFile(gh + "/summary").find("| <code>tests/test\\_a.sh</code> | lib/a.sh \\(content modified\\) |"),
            std::string::npos)
      << ReadFile(gh + "/summary");

  Spawned changed = Ste({"select", "--changed-files"});
  EXPECT_EQ(changed.out, "lib/a.sh\n");
}

TEST_F(Repo, AnInterruptedRecordLeavesThePreviousBaselineInUse) {
  Record();
  // The slow test says when it runs (outside the repo): by then the killed
  // build has begun baseline 2.
  const std::string started = MakeTempDir() + "/slow-started";
  W("tests/test_slow.sh", ": > '" + started + "'\nsleep 5\n");
  W("lib/a.sh", "a() { echo A; }\n# interrupted\n");
  // Start `ste record` in a process group of its own, wait until it runs
  // the slow test, then SIGKILL the group (only what this test started).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, root_.c_str());
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::string ste = kSte, record = "record", jobs = "-j1";
  char* argv[] = {ste.data(), record.data(), jobs.data(), nullptr};
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, &attr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  for (int waited_ms = 0; access(started.c_str(), F_OK) != 0 && waited_ms < 60000; waited_ms += 20) {
    usleep(20 * 1000);
  }
  EXPECT_EQ(access(started.c_str(), F_OK), 0) << "the slow test never started";
  ASSERT_EQ(kill(-pid, SIGKILL), 0);
  int status;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));

  SelectResult s = Select();
  EXPECT_EQ(s.mode, "subset") << Describe(s);
  EXPECT_NE(s.run.err.find("(baseline 1, mri 1)"), std::string::npos) << s.run.err;
  EXPECT_EQ(s.tests, (std::set<std::string>{"tests/test_a.sh", "tests/test_slow.sh"}));
  // And the next record completes and takes over.
  W("tests/test_slow.sh", "exit 0\n");
  Record();
  EXPECT_NE(Select().run.err.find("(baseline 3, mri 1)"), std::string::npos);
}

// ---- never narrow on an error ------------------------------------------------------

class Damage : public Repo {
 protected:
  std::string Blob(const std::string& name) {
    std::string dir = root_ + "/.ste/blobs";
    Spawned ls = Spawn({"sh", "-c", "ls " + dir + " | grep -- '-" + name + "-'"});
    return dir + "/" + ls.out.substr(0, ls.out.find('\n'));
  }
  void ExpectAll(const std::string& why_substring) {
    W("lib/a.sh", "a() { echo A; }\n# damage\n");
    SelectResult s = Select();
    EXPECT_EQ(s.run.exit_code, 0) << Describe(s);
    EXPECT_EQ(s.mode, "all") << Describe(s);
    EXPECT_EQ(s.tests, all_);
    EXPECT_NE(s.run.err.find(why_substring), std::string::npos) << s.run.err;
  }
};

TEST_F(Damage, CorruptIndexSelectsAll) {
  Record();
  std::string index = Blob("index");
  std::string bytes = ReadFile(index);
  bytes[bytes.size() / 2] ^= 0x5a;
  WriteFile(index, bytes);
  ExpectAll("no usable baseline");
}

TEST_F(Damage, TruncatedIndexSelectsAll) {
  Record();
  ASSERT_EQ(truncate(Blob("index").c_str(), 40), 0);
  ExpectAll("no usable baseline");
}

TEST_F(Damage, WrongVersionInventorySelectsAll) {
  Record();
  std::string inventory = Blob("inventory");
  std::string bytes = ReadFile(inventory);
  bytes[8] = 9;  // format version
  WriteFile(inventory, bytes);
  ExpectAll("no usable baseline");
}

TEST_F(Damage, MissingIndexFileSelectsAll) {
  Record();
  ASSERT_EQ(unlink(Blob("index").c_str()), 0);
  ExpectAll("no usable baseline");
}

TEST_F(Damage, GarbageStoreSelectsAll) {
  Record();
  WriteFile(root_ + "/.ste/ste.db", std::string(4096, 'x'));
  unlink((root_ + "/.ste/ste.db-wal").c_str());
  unlink((root_ + "/.ste/ste.db-shm").c_str());
  ExpectAll("no usable baseline");
}

// ---- configuration errors ---------------------------------------------------------

TEST_F(Repo, ConfigErrorsNameTheKeyAndLineAndExit2) {
  W("ste.toml", "[tests]\ninclude = [\"tests/*.sh\"]\n[runner]\ncomand = \"sh {test}\"\n");
  Spawned s = Ste({"select"});
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.err.find("ste.toml:4:1: unknown key 'runner.comand'"), std::string::npos) << s.err;
  Spawned r = Ste({"record"});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(unlink((root_ + "/ste.toml").c_str()), 0);
  Spawned none = Ste({"select"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no ste.toml"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("[runner]"), std::string::npos) << "a hint on how to write one";
  EXPECT_EQ(Ste({"select", "--format", "xml"}).exit_code, 2);
  EXPECT_EQ(Ste({"select", "--help"}).exit_code, 0);
  EXPECT_EQ(Ste({"record", "-j", "0"}).exit_code, 2);
}

// ---- batch runners (integrations/README.md) ---------------------------------

// A minimal runner speaking the batch protocol, in Python: it reads
// lib/shared.sh in the root scope, then per test file forks a child that
// pushes the file's scope (ctypes) and execs `sh <file>`; it appends the
// STE_RESULTS line per file.
constexpr char kBatchRunner[] = R"(import ctypes, os, sys, time
open('lib/shared.sh').read()
push = getattr(ctypes.CDLL(None), 'ste_scope_push', None)
results = os.environ.get('STE_RESULTS')
worst = 0
for test in sys.argv[1:]:
    start = time.time()
    os.stat(test)  # in the shared scope: must count for this test only
    pid = os.fork()
    if pid == 0:
        if push is not None:
            push(test.encode())
        os.execvp('sh', ['sh', test])
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    worst = max(worst, code)
    if results:
        with open(results, 'a') as f:
            f.write('%s\t%d\t%.3f\t%s\n' % ('passed' if code == 0 else 'failed', code,
                                           time.time() - start, test))
sys.exit(1 if worst else 0)
)";

class BatchRepo : public Repo {
 protected:
  void SetUp() override {
    Repo::SetUp();
    W("lib/shared.sh", "shared=1\n");
    W("runner.py", kBatchRunner);
    // test_b reads lib/a.sh too: the same file in another test's scope
    // must be recorded again there.
    W("tests/test_b.sh", ". lib/a.sh\n. lib/b.sh\n[ \"$(b)\" = B ]\n");
    W("tests/test_c.sh", "exit 1\n");
    W("ste.toml",
      "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\nkind = \"batch\"\n"
      "command = \"/usr/bin/python3 runner.py {tests}\"\n");
    Commit("batch runner");
  }
};

TEST_F(BatchRepo, FilesAreAttributedToTheirTestAndTheRunnersSetupToAll) {
  Spawned r = Ste({"record", "--progress", "plain"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;  // test_c fails
  EXPECT_NE(r.out.find("4 tests, 3 passed, 1 failed"), std::string::npos) << r.out;
  Spawned deps = Ste({"deps", "tests/test_b.sh"});
  EXPECT_NE(deps.out.find("lib/a.sh"), std::string::npos) << deps.out;
  // Only the tests that read lib/a.sh (and test_c, failed in the baseline).
  W("lib/a.sh", "a() { echo A; }\n# changed\n");
  SelectResult s = Select();
  EXPECT_EQ(s.mode, "subset") << Describe(s);
  EXPECT_EQ(s.tests, (std::set<std::string>{"tests/test_a.sh", "tests/test_b.sh", "tests/test_c.sh"}))
      << Describe(s);
  Spawned runner = Ste({"select", "--format", "runner"});
  EXPECT_EQ(runner.out, "tests/test_a.sh tests/test_b.sh tests/test_c.sh\n") << runner.err;
  // What the runner read before forking is every test's dependency.
  W("lib/a.sh", "a() { echo A; }\n");
  // A test file the runner's parent looked at before forking is that
  // test's dependency, not everyone's.
  W("tests/test_b.sh", ". lib/a.sh\n. lib/b.sh\n[ \"$(b)\" = B ]\n# changed\n");
  s = Select();
  EXPECT_EQ(s.tests, (std::set<std::string>{"tests/test_b.sh", "tests/test_c.sh"})) << Describe(s);
  W("tests/test_b.sh", ". lib/a.sh\n. lib/b.sh\n[ \"$(b)\" = B ]\n");
  W("lib/shared.sh", "shared=2\n");
  s = Select();
  EXPECT_EQ(s.tests, (std::set<std::string>{"tests/test_a.sh", "tests/test_b.sh", "tests/test_c.sh",
                                            "tests/test_ext.sh"}))
      << Describe(s);
}

TEST_F(BatchRepo, ATestTheRunnerGaveNoResultForIsAnErrorAndAlwaysSelected) {
  // The runner dies before any file: no result line at all.
  W("runner.py", "import os, sys\nos.kill(os.getpid(), 9)\n");
  Commit("a runner that dies");
  Spawned r = Ste({"record", "--progress", "none"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;  // errors count as failures
  EXPECT_NE(r.out.find("4 tests, 0 passed, 0 failed, 4 errors"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gave no result"), std::string::npos) << r.out;
  SelectResult s = Select();
  EXPECT_EQ(s.tests.size(), 4u) << Describe(s);
}

TEST_F(Repo, RunnerKindsAreChecked) {
  W("ste.toml", "[tests]\ninclude = [\"tests/*.sh\"]\n[runner]\nkind = \"nose\"\n");
  Spawned s = Ste({"select"});
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.err.find("'runner.kind' must be"), std::string::npos) << s.err;
  W("ste.toml", "[tests]\ninclude = [\"tests/*.sh\"]\n[runner]\nkind = \"pytest\"\ncommand = \"pytest {test}\"\n");
  s = Ste({"select"});
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.err.find("must contain {tests}"), std::string::npos) << s.err;
  W("ste.toml", "[tests]\ninclude = [\"tests/*.sh\"]\n[runner]\nkind = \"batch\"\n");
  s = Ste({"select"});
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.err.find("missing key 'runner.command'"), std::string::npos) << s.err;
}

}  // namespace
}  // namespace ste
