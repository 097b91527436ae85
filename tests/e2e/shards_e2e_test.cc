// `ste select --shards N --format matrix` and `--shard K/N` on a real
// repository: every shard split is a partition of the selection (each
// selected test in exactly one shard), the matrix and the per-job shards
// agree, mode none is an empty matrix, mode all splits every test, and the
// durations travel through a scheduler unchanged.
#include <signal.h>
#include <unistd.h>

#include <map>
#include <set>
#include <sstream>
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
constexpr int kTests = 10;

// The shards of a matrix, read by Debian's Python: shard -> tests, with
// "of", "count", "args" and "seconds" checked against them there.
const char kReadMatrix[] = R"PY(
import json, shlex, sys
m = json.load(open(sys.argv[1]))
assert list(m) == ["include"], m
for e in m["include"]:
    assert e["of"] == len(m["include"]), e
    assert e["count"] == len(e["tests"]) > 0, e
    assert shlex.split(e["args"]) == e["tests"], e
    assert e["seconds"] >= 0, e
    print(e["shard"], " ".join(e["tests"]))
)PY";

class Shards : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    W("lib/common.sh", "common() { echo C; }\n");
    W("lib/odd.sh", "odd() { echo O; }\n");
    for (int n = 1; n <= kTests; n++) {
      std::string t = "tests/test_" + std::to_string(n) + ".sh";
      std::string body = ". lib/common.sh\n[ \"$(common)\" = C ]\n";
      if (n % 2) body += ". lib/odd.sh\n[ \"$(odd)\" = O ]\n";
      W(t, body);
      all_.insert(t);
    }
    W("ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
    ::ste::testing::InitGitRepo(root_);
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "init"});
    Spawned r = Ste({"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
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
  std::map<int, std::set<std::string>> Matrix(std::vector<std::string> extra) {
    std::vector<std::string> args = {"select", "--format", "matrix"};
    args.insert(args.end(), extra.begin(), extra.end());
    Spawned s = Ste(args);
    EXPECT_EQ(s.exit_code, 0) << s.err;
    const std::string file = MakeTempDir() + "/matrix.json";
    WriteFile(file, s.out);
    Spawned read = Spawn({"/usr/bin/python3", "-c", kReadMatrix, file});
    EXPECT_EQ(read.exit_code, 0) << read.err << "\n" << s.out;
    std::map<int, std::set<std::string>> out;
    std::istringstream in(read.out);
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      int shard = 0;
      words >> shard;
      for (std::string t; words >> t;) out[shard].insert(t);
    }
    return out;
  }
  // --shard K/N for every K, as N CI jobs would run it.
  std::map<int, std::set<std::string>> Jobs(int n, std::vector<std::string> extra = {}) {
    std::map<int, std::set<std::string>> out;
    for (int k = 1; k <= n; k++) {
      std::vector<std::string> args = {"select", "--shard", std::to_string(k) + "/" + std::to_string(n)};
      args.insert(args.end(), extra.begin(), extra.end());
      Spawned s = Ste(args);
      EXPECT_EQ(s.exit_code, 0) << s.err;
      std::set<std::string> tests = ::ste::testing::SelectedTests(s.out);
      if (!tests.empty()) out[k] = tests;
    }
    return out;
  }
  // Each test in exactly one shard; the union is `expected`.
  static void ExpectPartition(const std::map<int, std::set<std::string>>& shards,
                              const std::set<std::string>& expected) {
    std::set<std::string> seen;
    size_t total = 0;
    for (const auto& [k, tests] : shards) {
      EXPECT_FALSE(tests.empty()) << "shard " << k;
      total += tests.size();
      seen.insert(tests.begin(), tests.end());
    }
    EXPECT_EQ(total, seen.size()) << "a test in two shards";
    EXPECT_EQ(seen, expected);
  }

  std::string root_;
  std::set<std::string> all_;
};

TEST_F(Shards, ModeAllSplitsEveryTestAndTheJobsAgreeWithTheMatrix) {
  std::map<int, std::set<std::string>> matrix = Matrix({"--all", "--shards", "3"});
  EXPECT_EQ(matrix.size(), 3u);
  ExpectPartition(matrix, all_);
  EXPECT_EQ(Jobs(3, {"--all"}), matrix);
  // More shards than tests: one test each, no empty shard.
  std::map<int, std::set<std::string>> wide = Matrix({"--all", "--shards", "50"});
  EXPECT_EQ(wide.size(), static_cast<size_t>(kTests));
  ExpectPartition(wide, all_);
}

TEST_F(Shards, ASubsetIsSplitAndEachJobRunsItsShardOnly) {
  W("lib/odd.sh", "odd() { echo O; }  # changed\n");
  std::set<std::string> odd;
  for (int n = 1; n <= kTests; n += 2) odd.insert("tests/test_" + std::to_string(n) + ".sh");
  std::map<int, std::set<std::string>> matrix = Matrix({"--shards", "2"});
  EXPECT_EQ(matrix.size(), 2u);
  ExpectPartition(matrix, odd);
  EXPECT_EQ(Jobs(2), matrix);
  // The runner format of one shard: its tests as arguments.
  Spawned runner = Ste({"select", "--shard", "1/2", "--format", "runner"});
  ASSERT_EQ(runner.exit_code, 0) << runner.err;
  std::set<std::string> args;
  std::istringstream in(runner.out);
  for (std::string a; in >> a;) args.insert(a);
  EXPECT_EQ(args, matrix[1]);
  EXPECT_NE(runner.err.find("shard 1/2: " + std::to_string(matrix[1].size()) + " tests"),
            std::string::npos)
      << runner.err;
}

TEST_F(Shards, NothingSelectedIsAnEmptyMatrixAndEmptyShards) {
  Spawned s = Ste({"select", "--format", "matrix", "--shards", "4"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out, "{\"include\":[]}\n");
  for (int k = 1; k <= 4; k++) {
    Spawned r = Ste({"select", "--shard", std::to_string(k) + "/4", "--format", "runner"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "") << k;
  }
}

TEST_F(Shards, RecordedSecondsAreInTheJsonAndANewTestHasNone) {
  W("tests/test_new.sh", "true\n");
  Spawned s = Ste({"select", "--all", "--format", "json"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::string file = MakeTempDir() + "/s.json";
  WriteFile(file, s.out);
  Spawned read = Spawn({"/usr/bin/python3", "-c",
                        "import json,sys\n"
                        "for t in json.load(open(sys.argv[1]))['tests']:\n"
                        "  print(t['test'], 'seconds' in t and t['seconds'] >= 0)\n",
                        file});
  ASSERT_EQ(read.exit_code, 0) << read.err;
  for (const std::string& t : all_) EXPECT_NE(read.out.find(t + " True\n"), std::string::npos) << read.out;
  EXPECT_NE(read.out.find("tests/test_new.sh False\n"), std::string::npos) << read.out;
  // The new test is split too (as the median).
  std::set<std::string> with_new = all_;
  with_new.insert("tests/test_new.sh");
  ExpectPartition(Matrix({"--all", "--shards", "4"}), with_new);
}

TEST_F(Shards, BadFlagsAreUsageErrors) {
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--format", "matrix"}, {"--shards", "0"}, {"--shards", "x"},
        {"--shard", "0/3"}, {"--shard", "4/3"}, {"--shard", "3"}, {"--shard", "1/"},
        {"--shard", "1/2", "--format", "matrix", "--shards", "2"}}) {
    std::vector<std::string> args = {"select"};
    args.insert(args.end(), bad.begin(), bad.end());
    Spawned s = Ste(args);
    EXPECT_EQ(s.exit_code, 2) << ::testing::PrintToString(bad) << s.err;
  }
}

TEST_F(Shards, ThroughASchedulerTheSplitIsTheSame) {
  ::ste::testing::SchedulerProcess server(kSte, "sqlite:" + root_ + "/.ste/ste.db", MakeTempDir());
  ::ste::testing::Process& scheduler = server.process();
  const std::string address = server.address();
  ASSERT_FALSE(address.empty()) << scheduler.err();
  Spawned local = Ste({"select", "--all", "--format", "matrix", "--shards", "3"});
  Spawned remote = Ste({"select", "--all", "--format", "matrix", "--shards", "3", "--scheduler", address});
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(remote.out, local.out);
  EXPECT_NE(local.out.find("\"seconds\":"), std::string::npos);
  scheduler.Signal(SIGTERM);
  EXPECT_EQ(scheduler.Wait(60), 0) << scheduler.err();
}

}  // namespace
}  // namespace ste
