// Storage faults under a real `ste` (issue 15, item 4), on a small tmpfs
// the test mounts as the store's folder (.ste/), as CI does (root):
//   - the store's disk full: `ste record` fails, and the previous baseline
//     is intact and still selected, by 8 concurrent select loops too;
//   - the store read-only: `ste select` still selects from it, `ste record`
//     fails saying so; with a WAL it cannot read: all, with the reason;
//   - a blob file removed under a completed baseline: all, with the reason.
// A read-only store is opened read only, then immutable, by select
// (Store::OpenForReading) and selects as before. On a full disk
// SQLite cannot set up a -shm file, so select reads the store with its WAL
// index in memory, and selects as before.
// Without root (no mount) the tests are skipped, saying so.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);

class StorageFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root (CI runs as root)";
    root_ = MakeTempDir();
    store_ = root_ + "/.ste";
    ASSERT_EQ(mkdir(store_.c_str(), 0755), 0);
    Spawned m = Spawn({"mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", store_});
    if (m.exit_code != 0) GTEST_SKIP() << "cannot mount a tmpfs here: " << m.err;
    mounted_ = true;
    for (const char* t : {"a", "b", "c"}) {
      WriteFile(root_ + "/lib/" + t + ".sh", std::string(t) + "() { echo " + t + "; }\n");
      WriteFile(root_ + "/tests/test_" + t + ".sh",
                std::string(". lib/") + t + ".sh\n[ \"$(" + t + ")\" = " + t + " ]\n");
    }
    WriteFile(root_ + "/ste.toml",
              "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
    WriteFile(root_ + "/.gitignore", ".ste/\n");
    ::ste::testing::InitGitRepo(root_);
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "init"});
    Spawned r = Ste({"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    Git({"commit", "-q", "--allow-empty", "-m", "next"});
    WriteFile(root_ + "/lib/b.sh", "b() { echo b; }  # changed\n");
  }
  void TearDown() override {
    if (!mounted_) return;
    Spawned u = Spawn({"umount", store_});
    EXPECT_EQ(u.exit_code, 0) << u.err;
  }
  void Git(const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(root_, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, root_);
  }
  // Baseline 1's selection (lib/b.sh changed -> test_b only) in a select's
  // output and stderr.
  static void ExpectBaselineOnes(const std::string& when, const std::string& out, const std::string& err) {
    EXPECT_EQ(::ste::testing::SelectedTests(out), std::set<std::string>{"tests/test_b.sh"})
        << when << ": " << out << err;
    EXPECT_NE(err.find("(baseline 1,"), std::string::npos) << when << ": " << err;
  }
  // The selection must be baseline 1's.
  void ExpectBaselineOneSelects(const std::string& when) {
    Spawned s = Ste({"select"});
    EXPECT_EQ(s.exit_code, 0) << when << ": " << s.err;
    ExpectBaselineOnes(when, s.out, s.err);
  }
  // Eight loops of three selects at once: readers of a full disk take
  // turns on the database's lock (each waits up to 30 s). Each selection
  // is baseline 1's or, if a reader's wait ran out, all saying why: never
  // narrower, never an error.
  void ExpectConcurrentSelectsNeverNarrower() {
    // In root_: "$0" is ste, $1 the loop, $2 the folder of the outputs.
    const std::string loop =
        "for j in 1 2 3; do \"$0\" select > \"$2/out.$1.$j\" 2> \"$2/err.$1.$j\" || echo $? > \"$2/rc.$1.$j\"; done";
    std::string script = "for i in 1 2 3 4 5 6 7 8; do sh -c '" + loop + "' \"$0\" $i \"$1\" & done; wait";
    const std::string work = MakeTempDir();
    Spawned all = Spawn({"sh", "-c", script, kSte, work}, {}, root_);
    ASSERT_EQ(all.exit_code, 0) << all.err;
    int baseline_one = 0;
    for (int i = 1; i <= 8; ++i) {
      for (int j = 1; j <= 3; ++j) {
        const std::string k = std::to_string(i) + "." + std::to_string(j);
        EXPECT_NE(access((work + "/rc." + k).c_str(), F_OK), 0) << "select " << k << " failed";
        const std::string out = ::ste::testing::ReadFile(work + "/out." + k);
        const std::string err = ::ste::testing::ReadFile(work + "/err." + k);
        std::set<std::string> got = ::ste::testing::SelectedTests(out);
        if (::ste::testing::SelectedMode(err) == "all") {
          EXPECT_EQ(got.size(), 3u) << k << ": " << out;
          EXPECT_NE(err.find("no usable baseline: store unusable"), std::string::npos) << k << ": " << err;
        } else {
          ExpectBaselineOnes(k, out, err);
          ++baseline_one;
        }
      }
    }
    std::printf("StorageFaults: %d of 24 concurrent selects on the full disk used baseline 1\n", baseline_one);
  }
  // Fills the tmpfs (a file of zeros until ENOSPC).
  void Fill() {
    Spawned dd = Spawn({"dd", "if=/dev/zero", "of=" + store_ + "/filler", "bs=64k"});
    ASSERT_NE(dd.err.find("No space left"), std::string::npos) << dd.err;
  }

  std::string root_, store_;
  bool mounted_ = false;
};

TEST_F(StorageFaults, AFullDiskFailsTheRecordSayingSoAndKeepsThePreviousBaseline) {
  ExpectBaselineOneSelects("before");
  Fill();
  Spawned r = Ste({"record", "--progress", "none"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;  // no baseline recorded
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.out << r.err;
  // The disk still full: baseline 1 still selects (its WAL index in
  // memory, as there is no room for a -shm file), and again.
  ExpectBaselineOneSelects("the disk full");
  ExpectBaselineOneSelects("the disk still full");
  ExpectConcurrentSelectsNeverNarrower();
  ASSERT_EQ(unlink((store_ + "/filler").c_str()), 0);
  ExpectBaselineOneSelects("space again");
  // And the next record works and is the one selected.
  Spawned again = Ste({"record", "--progress", "none"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  Spawned s = Ste({"select"});
  EXPECT_NE(s.err.find("mode none"), std::string::npos) << s.err;
}

TEST_F(StorageFaults, AReadOnlyStoreStillSelectsAndRecordFailsClearly) {
  Spawned ro = Spawn({"mount", "-o", "remount,ro", store_});
  ASSERT_EQ(ro.exit_code, 0) << ro.err;
  // Read only, then immutable (nobody can write a read-only mount).
  ExpectBaselineOneSelects("read-only");
  Spawned r = Ste({"record", "--progress", "none"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;  // no baseline recorded
  EXPECT_NE(r.err.find("ste record: "), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("is on a read-only file system"), std::string::npos) << r.out << r.err;
  Spawned rw = Spawn({"mount", "-o", "remount,rw", store_});
  ASSERT_EQ(rw.exit_code, 0) << rw.err;
  ExpectBaselineOneSelects("writable again");
}

// A read-only store whose WAL still holds committed frames (a writer
// killed before its checkpoint) and has no -shm file: SQLite cannot read
// that WAL read only, and an immutable read would skip it: all, saying so.
TEST_F(StorageFaults, AReadOnlyStoreWithAnUnreadableWalSelectsAllSayingWhy) {
  const std::string db = store_ + "/ste.db";
  Spawned killed = Spawn({"/usr/bin/python3", "-c",
                          "import os, sqlite3, sys\n"
                          "c = sqlite3.connect(sys.argv[1])\n"
                          "c.execute('UPDATE baselines SET id = id')\n"
                          "c.commit()\n"
                          "os._exit(0)\n",
                          db});
  ASSERT_EQ(killed.exit_code, 0) << killed.err;
  struct stat wal;
  ASSERT_EQ(stat((db + "-wal").c_str(), &wal), 0);
  ASSERT_GT(wal.st_size, 0) << "the writer left no frames in the WAL";
  ASSERT_EQ(unlink((db + "-shm").c_str()), 0);
  Spawned ro = Spawn({"mount", "-o", "remount,ro", store_});
  ASSERT_EQ(ro.exit_code, 0) << ro.err;
  Spawned s = Ste({"select"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(::ste::testing::SelectedMode(s.err), "all") << s.err;
  EXPECT_NE(s.err.find("not read as immutable: its WAL"), std::string::npos) << s.err;
  EXPECT_EQ(::ste::testing::SelectedTests(s.out).size(), 3u) << s.out;
  Spawned rw = Spawn({"mount", "-o", "remount,rw", store_});
  ASSERT_EQ(rw.exit_code, 0) << rw.err;
  ExpectBaselineOneSelects("writable again");  // SQLite reads the WAL again
}

TEST_F(StorageFaults, ABlobRemovedUnderACompletedBaselineSelectsAllSayingWhy) {
  Spawned ls = Spawn({"sh", "-c", "ls " + store_ + "/blobs/1-index-*.blob"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  std::string blob = ls.out.substr(0, ls.out.find('\n'));
  ASSERT_EQ(unlink(blob.c_str()), 0) << blob;
  Spawned s = Ste({"select"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(::ste::testing::SelectedMode(s.err), "all") << s.err;
  EXPECT_NE(s.err.find("no usable baseline"), std::string::npos) << s.err;
  EXPECT_EQ(::ste::testing::SelectedTests(s.out).size(), 3u) << s.out;
}

}  // namespace
}  // namespace ste
