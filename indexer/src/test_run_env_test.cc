// What a killed ste leaves of its tests' private temporary directories and
// of its scratch directories, and who removes it (test_run_env.h,
// RemoveDeadOwnersDirs; traced_run.h, MakeScratchDir): real processes, real
// directories.
#include "ste/test_run_env.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ste/traced_run.h"

namespace ste {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

void MakeDir(const std::string& path) { ASSERT_EQ(mkdir(path.c_str(), 0700), 0) << path; }

void Touch(const std::string& path) { std::ofstream(path) << "x\n"; }

// A child that exited and was waited for: a pid no process has.
pid_t DeadPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

class PrivateTmpSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ste-sweep-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    // "<base>/ste-tmp-<ns>-<pid>-": this process's namespace.
    const std::string prefix = PrivateTmpPrefix(base_);
    const std::string head = base_ + "/ste-tmp-";
    ASSERT_TRUE(absl::StartsWith(prefix, head)) << prefix;
    ASSERT_TRUE(absl::EndsWith(prefix, absl::StrCat("-", getpid(), "-"))) << prefix;
    ns_ = prefix.substr(head.size(), prefix.size() - head.size() - absl::StrCat("-", getpid(), "-").size());
  }
  void TearDown() override { RemoveTree(base_); }

  std::string Named(const std::string& ns, pid_t pid, const std::string& six) const {
    return absl::StrCat(base_, "/ste-tmp-", ns, "-", pid, "-", six);
  }

  std::string base_, ns_;
};

TEST_F(PrivateTmpSweep, RemovesOnlyWhatAGoneMakerOfThisNamespaceLeft) {
  if (ns_ == "0") GTEST_SKIP() << "/proc/self/ns/pid cannot be read here: the sweep never runs";
  const pid_t dead = DeadPid();
  // A live maker: a child blocked on a pipe until the sweep is done.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t live = fork();
  if (live == 0) {
    close(fds[1]);
    char c;
    (void)!read(fds[0], &c, 1);
    _exit(0);
  }
  close(fds[0]);

  const std::string left = Named(ns_, dead, "aB3dEf");
  MakeDir(left);
  MakeDir(left + "/pytest-of-root");
  Touch(left + "/pytest-of-root/data.txt");
  const std::string busy = Named(ns_, live, "aB3dEf");
  MakeDir(busy);
  Touch(busy + "/in-use");
  std::string own = PrivateTmpPrefix(base_) + "XXXXXX";
  ASSERT_NE(mkdtemp(own.data()), nullptr);
  const std::string foreign = Named(ns_ == "1" ? "2" : "1", dead, "aB3dEf");  // another namespace
  MakeDir(foreign);
  const std::string short_name = Named(ns_, dead, "aB3");  // not mkdtemp's shape
  MakeDir(short_name);
  const std::string old_style = base_ + "/ste-tmp-Qw12Er";  // before the maker was named
  MakeDir(old_style);
  // A symlink named like a left-over: removed never, nor followed.
  const std::string target = base_ + "/target";
  MakeDir(target);
  Touch(target + "/keep");
  const std::string link = Named(ns_, dead, "zZ9yY8");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);

  EXPECT_EQ(RemoveDeadOwnersTmps(base_), 1);

  EXPECT_FALSE(Exists(left));
  EXPECT_TRUE(Exists(busy + "/in-use"));
  EXPECT_TRUE(Exists(own));
  EXPECT_TRUE(Exists(foreign));
  EXPECT_TRUE(Exists(short_name));
  EXPECT_TRUE(Exists(old_style));
  EXPECT_TRUE(Exists(link));
  EXPECT_TRUE(Exists(target + "/keep"));

  close(fds[1]);
  int status = 0;
  waitpid(live, &status, 0);
  // Its maker gone now, the busy one goes at the next sweep.
  EXPECT_EQ(RemoveDeadOwnersTmps(base_), 1);
  EXPECT_FALSE(Exists(busy));
}

// A command's scratch directory (its tests' logs) under $STE_TMPDIR: a
// killed worker's or record's is removed by the next command of its kind.
TEST_F(PrivateTmpSweep, AKilledCommandsScratchGoesWithTheNextOfItsKind) {
  if (ns_ == "0") GTEST_SKIP() << "/proc/self/ns/pid cannot be read here: the sweep never runs";
  const char* was = std::getenv("STE_TMPDIR");
  const std::string saved = was ? was : "";
  ASSERT_EQ(setenv("STE_TMPDIR", base_.c_str(), 1), 0);
  const pid_t dead = DeadPid();
  const std::string worker = absl::StrCat(base_, "/ste-worker-", ns_, "-", dead, "-aB3dEf");
  const std::string record = absl::StrCat(base_, "/ste-record-", ns_, "-", dead, "-aB3dEf");
  MakeDir(worker);
  Touch(worker + "/p12-0123.stelog");
  MakeDir(record);

  absl::StatusOr<std::string> made = MakeScratchDir("ste-worker");
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_TRUE(absl::StartsWith(*made, OwnedDirPrefix(base_, "ste-worker"))) << *made;
  EXPECT_TRUE(Exists(*made));
  EXPECT_FALSE(Exists(worker));
  EXPECT_TRUE(Exists(record)) << "another kind's";
  absl::StatusOr<std::string> second = MakeScratchDir("ste-record");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(Exists(record));
  EXPECT_TRUE(Exists(*made)) << "this process's own, alive";

  if (was) setenv("STE_TMPDIR", saved.c_str(), 1);
  else unsetenv("STE_TMPDIR");
}

TEST_F(PrivateTmpSweep, AMissingBaseIsNothingToDo) {
  EXPECT_EQ(RemoveDeadOwnersTmps(base_ + "/missing"), 0);
}

}  // namespace
}  // namespace ste
