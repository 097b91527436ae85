// The distributed record build end to end, with real processes: the real
// `ste scheduler`, `ste worker`s and `ste record --scheduler --wait` on a
// real git repository, a real PostgreSQL (tests/support/pg_test_server.h)
// or SQLite store, and real faults: workers SIGKILLed or SIGSTOPped
// mid-test, the scheduler SIGKILLed and restarted, SIGTERM, bad tokens.
//
// The measure of a faulty build is the index it stores: `ste index dump
// --json` must be identical to that of a fault-free embedded `ste record`
// of the same tree (a clone of it), and every test's result is taken once.
//
// The repository: kTests shell tests, each sourcing lib/common.sh, reading
// one of src/mod_*.txt, listing fixtures/, probing an absent file, reading
// a file outside the repo, and sleeping a little so that kills land
// mid-test; tests/test_07.sh fails. With $STE_E2E_GATE set (only where a
// test says so) each test first waits at a gate the test opens one run at
// a time (Gate below), so that "the build is still going" is decided by
// the test, never by how fast the machine is.
//
// Everything a test starts it stops by pid (testing::Process).
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "pg_test_server.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::PgTestServer;
using ::ste::testing::Process;
using ::ste::testing::ReadFile;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);
constexpr int kTests = 24;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

// The counts of a worker's last line ("build b1 done: ran 5 tests (4
// results accepted, 1 duplicates, 0 refused)"); all -1 when it is missing.
struct WorkerCounts {
  int accepted = -1, duplicates = -1, refused = -1;
};
WorkerCounts CountsOf(const std::string& worker_err) {
  static const std::regex kDone(
      "done: ran [0-9]+ tests \\(([0-9]+) results accepted, ([0-9]+) duplicates, ([0-9]+) "
      "refused\\)");
  WorkerCounts c;
  std::smatch m;
  if (std::regex_search(worker_err, m, kDone)) {
    c.accepted = std::stoi(m[1]);
    c.duplicates = std::stoi(m[2]);
    c.refused = std::stoi(m[3]);
  }
  return c;
}

// Polls `done` every 20 ms for up to `seconds`.
bool WaitFor(double seconds, const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// The tests' gate, in the shell every test starts with. Unset (every
// build but the ones a test gates, the reference one among them) it does
// nothing. Set, to a directory, the test waits until it claims one of the
// tokens t<N> the harness made there (c<N>, created with O_EXCL under
// `set -C`: one claim per token, whoever races for it), until `open`
// appears, or until the directory is gone (the harness's clean-up: a test
// left running exits). The gate is in /dev/shm, which the interceptor
// does not record (it skips /dev), and what the loop runs is builtins and
// `sleep`, which every test runs anyway: a gated build records what an
// ungated one does, so the index dumps compare.
constexpr char kGateScript[] =
    "if [ -n \"$STE_E2E_GATE\" ]; then\n"
    "  set -C\n"
    "  until [ -e \"$STE_E2E_GATE/open\" ] || [ ! -d \"$STE_E2E_GATE\" ]; do\n"
    "    for t in \"$STE_E2E_GATE\"/t*; do\n"
    "      [ -e \"$t\" ] && { true > \"$STE_E2E_GATE/c${t##*/t}\"; } 2>/dev/null && break 2\n"
    "    done\n"
    "    sleep 0.05\n"
    "  done\n"
    "  set +C\n"
    "fi\n";

// The harness's side of the gate: Release(n) lets n more test runs
// through, Claimed() is how many of those have gone through, Open() lets
// every run through. Removed (the directory and what is in it) on
// destruction.
class Gate {
 public:
  Gate() {
    char dir[] = "/dev/shm/ste-e2e-gate-XXXXXX";
    if (mkdtemp(dir) != nullptr) dir_ = dir;
  }
  ~Gate() {
    if (dir_.empty()) return;
    if (DIR* d = opendir(dir_.c_str())) {
      while (struct dirent* e = readdir(d)) {
        if (e->d_name[0] != '.') unlink((dir_ + "/" + e->d_name).c_str());
      }
      closedir(d);
    }
    rmdir(dir_.c_str());
  }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  bool ok() const { return !dir_.empty(); }
  // For the workers' environment.
  std::string Env() const { return "STE_E2E_GATE=" + dir_; }
  void Release(int n) {
    for (int i = 0; i < n; i++) WriteFile(absl::StrCat(dir_, "/t", ++tokens_), "");
  }
  int Released() const { return tokens_; }
  int Claimed() const {
    int n = 0;
    if (DIR* d = opendir(dir_.c_str())) {
      while (struct dirent* e = readdir(d)) n += e->d_name[0] == 'c';
      closedir(d);
    }
    return n;
  }
  void Open() { WriteFile(dir_ + "/open", ""); }

 private:
  std::string dir_;
  int tokens_ = 0;
};

class Distributed : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    root_ = dir_ + "/repo";
    ext_ = dir_ + "/ext";
    WriteFile(ext_ + "/site.cfg", "site = 1\n");
    W("lib/common.sh", "check() { [ -n \"$1\" ]; }\n");
    for (int m = 0; m < 5; m++) W(absl::StrFormat("src/mod_%d.txt", m), absl::StrCat("mod ", m, "\n"));
    W("fixtures/a.txt", "a\n");
    W("fixtures/b.txt", "b\n");
    for (int t = 0; t < kTests; t++) {
      W(absl::StrFormat("tests/test_%02d.sh", t),
        absl::StrFormat("%s. lib/common.sh\nread x < src/mod_%d.txt\ncheck \"$x\"\nls fixtures > /dev/null\n"
                        "[ -f config/t%d.env ] && exit 3\nread y < '%s/site.cfg'\nsleep 0.%d\n%s",
                        kGateScript, t % 5, t, ext_, 1 + t % 4, t == 7 ? "exit 1\n" : "exit 0\n"));
    }
    ::ste::testing::InitGitRepo(root_);
  }

  // ste.toml with `store` (a URL, or "" for the default SQLite store), committed.
  void Configure(const std::string& store) {
    W("ste.toml", absl::StrCat("[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n",
                               store.empty() ? "" : absl::StrCat("[store]\nurl = \"", store, "\"\n")));
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "init"});
  }

  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  void Git(const std::vector<std::string>& args, const std::string& cwd = "") {
    Spawned s = ::ste::testing::Git(cwd.empty() ? root_ : cwd, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  Spawned Ste(std::vector<std::string> args, const std::string& cwd = "") {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, cwd.empty() ? root_ : cwd);
  }
  std::unique_ptr<Process> Background(const std::string& name, std::vector<std::string> args,
                                      const std::string& cwd = "", const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), kSte);
    return std::make_unique<Process>(args, env, cwd.empty() ? root_ : cwd, dir_ + "/" + name + ".out",
                                     dir_ + "/" + name + ".err");
  }

  // `ste scheduler` on `listen` (port 0 for any) with `store`; returns its address.
  std::string StartScheduler(const std::string& store, const std::string& listen = "127.0.0.1:0",
                             std::vector<std::string> extra = {}) {
    std::string port_file = absl::StrCat(dir_, "/port", ++schedulers_);
    std::vector<std::string> args = {"scheduler", "--listen", listen, "--store", store,
                                     "--lease-timeout", "2", "--heartbeat", "0.3",
                                     "--port-file", port_file};
    args.insert(args.end(), extra.begin(), extra.end());
    scheduler_ = Background(absl::StrCat("scheduler", schedulers_), args, dir_);
    EXPECT_TRUE(WaitFor(20, [&] { return !ReadFile(port_file).empty() || !scheduler_->running(); }))
        << scheduler_->err();
    std::string address = ReadFile(port_file);
    if (!address.empty()) address.pop_back();  // '\n'
    EXPECT_FALSE(address.empty()) << scheduler_->err();
    return address;
  }

  std::unique_ptr<Process> StartWorker(const std::string& name, const std::string& address,
                                       std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"worker", "--scheduler", address, "-j", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Background(name, args, "", worker_env_);
  }

  // The tests' private temporary directories in `dir` (runner.private_tmp).
  static size_t PrivateTmps(const std::string& dir) {
    size_t n = 0;
    if (DIR* d = opendir(dir.c_str())) {
      while (struct dirent* e = readdir(d)) n += absl::StartsWith(e->d_name, "ste-tmp-");
      closedir(d);
    }
    return n;
  }

  // A fault-free embedded record of a clone of the repo: its index dump.
  std::string ReferenceDump() {
    std::string clone = dir_ + "/reference";
    Spawned c = Spawn({"git", "clone", "-q", root_, clone});
    EXPECT_EQ(c.exit_code, 0) << c.err;
    // Same tree, SQLite store of its own.
    W("../reference/ste.toml",
      "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
    Spawned r = Ste({"record", "--allow-failures", "--progress", "none", "-j", "4"}, clone);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    Spawned d = Ste({"index", "dump", "--json"}, clone);
    EXPECT_EQ(d.exit_code, 0) << d.err;
    return d.out;
  }
  std::string Dump() {
    Spawned d = Ste({"index", "dump", "--json"});
    EXPECT_EQ(d.exit_code, 0) << d.err;
    return d.out;
  }

  std::string Log() { return scheduler_ ? scheduler_->err() : ""; }

  // The results the store holds for baseline `id` (`ste baseline list`:
  // journaled ones while it builds), 0 when it is not listed.
  size_t StoredResults(int64_t id) {
    Spawned list = Ste({"baseline", "list", "--format", "json"});
    std::smatch m;
    if (!std::regex_search(list.out, m,
                           std::regex(absl::StrCat("\\{\"id\":", id, ",[^}]*\"tests\":([0-9]+)")))) {
      return 0;
    }
    return static_cast<size_t>(std::stoul(m[1]));
  }

  // Kill -9 the scheduler `kills` times mid-build, restart it, check the
  // build resumed (the body is with its tests below).
  void KillRestartResume(int kills);

  std::string dir_, root_, ext_;
  std::vector<std::string> worker_env_;  // StartWorker's
  std::string store_;  // the scheduler's store (DistributedPostgres: url_)
  int schedulers_ = 0;
  std::unique_ptr<Process> scheduler_;
};

// A PostgreSQL database of its own for each test, on the shared server.
class DistributedPostgres : public Distributed {
 protected:
  void SetUp() override {
    Distributed::SetUp();
    absl::StatusOr<PgTestServer*> server = PgTestServer::Shared();
    ASSERT_TRUE(server.ok()) << server.status();
    absl::StatusOr<std::string> url = (*server)->CreateDatabase();
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
    store_ = url_;
    Configure(url_);
  }
  std::string url_;
};

TEST_F(Distributed, FourWorkersBuildTheSameIndexAsTheEmbeddedRecord) {
  const std::string store = "sqlite:" + dir_ + "/sched.db";
  Configure(store);
  std::string address = StartScheduler(store);
  auto record = Background("record", {"record", "--scheduler", address, "--wait", "--progress", "plain"});
  std::vector<std::unique_ptr<Process>> workers;
  for (int i = 0; i < 4; i++) workers.push_back(StartWorker(absl::StrCat("w", i), address, {"-j", "1"}));
  ASSERT_EQ(record->Wait(120), 1) << "test 7 fails: exit 1, the baseline stored" << record->out() << record->err() << Log();
  for (auto& w : workers) EXPECT_EQ(w->Wait(30), 0) << w->err();
  EXPECT_NE(record->out().find(absl::StrCat(kTests, " tests, ", kTests - 1, " passed, 1 failed")),
            std::string::npos)
      << record->out();
  EXPECT_EQ(Count(record->err(), "] ok "), static_cast<size_t>(kTests - 1)) << record->err();
  EXPECT_NE(Log().find("joined"), std::string::npos);
  EXPECT_NE(Log().find("complete: baseline 1"), std::string::npos) << Log();
  std::string dump = Dump();
  EXPECT_EQ(Count(dump, "\"test\""), static_cast<size_t>(kTests));
  // What is compared is every dependency: in the repo, outside it (hashed
  // by the workers), absent and listed.
  EXPECT_EQ(Count(dump, ext_ + "/site.cfg"), static_cast<size_t>(kTests)) << dump.substr(0, 2000);
  EXPECT_EQ(Count(dump, "lib/common.sh"), static_cast<size_t>(kTests));
  EXPECT_GE(Count(dump, "config/t"), static_cast<size_t>(kTests));
  EXPECT_GE(Count(dump, "fixtures"), static_cast<size_t>(kTests));
  EXPECT_EQ(dump, ReferenceDump());
  // And `ste select` finds the baseline the workers built.
  W("src/mod_2.txt", "changed\n");
  Spawned s = Ste({"select"});
  EXPECT_NE(s.err.find("mode subset"), std::string::npos) << s.err;
}

TEST_F(DistributedPostgres, AWorkerKilledMidTestLosesItsTestsToAnotherAndTheIndexIsIdentical) {
  std::string address = StartScheduler(url_);
  auto record = Background("record", {"record", "--allow-failures", "--scheduler", address, "--wait", "--progress", "plain"});
  // The workers' $TMPDIR, where each test's private one is made.
  const std::string tmp = dir_ + "/tmp";
  ASSERT_EQ(mkdir(tmp.c_str(), 0700), 0);
  worker_env_ = {"TMPDIR=" + tmp};
  auto victim = StartWorker("victim", address);
  // Kill it mid-test: it has run one test and is running more (one has
  // its private $TMPDIR, which the victim cannot remove any more).
  ASSERT_TRUE(WaitFor(30, [&] { return Count(victim->err(), "ran tests/") >= 1 && PrivateTmps(tmp) >= 1; }))
      << victim->err();
  victim->Signal(SIGKILL);
  EXPECT_EQ(victim->Wait(10), 128 + SIGKILL);
  size_t ran_by_victim = Count(victim->err(), "ran tests/");
  auto survivor = StartWorker("survivor", address);
  ASSERT_EQ(record->Wait(120), 0) << record->out() << record->err() << Log();
  EXPECT_EQ(survivor->Wait(30), 0) << survivor->err();
  // The victim's unfinished leases went back after the lease timeout.
  EXPECT_NE(Log().find("silent past the lease timeout"), std::string::npos) << Log();
  // Every test taken once: kTests finished lines in the record's progress.
  EXPECT_EQ(Count(record->err(), "] ok ") + Count(record->err(), "] FAIL "), static_cast<size_t>(kTests))
      << record->err();
  // How often the survivor *ran* a test is no guarantee: on a busy machine
  // its own lease can lapse and the test be leased (to it) again. What the
  // design guarantees is that each result is taken once (above) and that
  // every test ran somewhere.
  EXPECT_GE(Count(survivor->err(), "ran tests/") + ran_by_victim, static_cast<size_t>(kTests));
  // The survivor removed what the victim left (named with its pid, now
  // gone) and its own: none is left.
  EXPECT_EQ(PrivateTmps(tmp), 0u);
  EXPECT_EQ(Dump(), ReferenceDump());
}

TEST_F(DistributedPostgres, TwoOfFourWorkersKilledAtRandomPointsStillGiveTheSameIndex) {
  const unsigned seed = static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count());
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937 rng(seed);
  std::string address = StartScheduler(url_);
  auto record = Background("record", {"record", "--allow-failures", "--scheduler", address, "--wait", "--progress", "plain"});
  std::vector<std::unique_ptr<Process>> workers;
  for (int i = 0; i < 4; i++) workers.push_back(StartWorker(absl::StrCat("w", i), address, {"-j", "1"}));
  // Two victims, each killed after a random number of its own tests (0-3)
  // plus a random delay: at any point of a test, or between tests.
  std::vector<int> victims = {0, 1, 2, 3};
  std::shuffle(victims.begin(), victims.end(), rng);
  victims.resize(2);
  for (int v : victims) {
    size_t after = std::uniform_int_distribution<int>(0, 3)(rng);
    int delay_ms = std::uniform_int_distribution<int>(0, 400)(rng);
    WaitFor(30, [&] { return Count(workers[v]->err(), "ran tests/") >= after || !workers[v]->running(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    workers[v]->Signal(SIGKILL);
  }
  ASSERT_EQ(record->Wait(120), 0) << record->out() << record->err() << Log();
  for (int i = 0; i < 4; i++) {
    int rc = workers[i]->Wait(30);
    if (i != victims[0] && i != victims[1]) {
      EXPECT_EQ(rc, 0) << workers[i]->err();
    }
  }
  EXPECT_EQ(Count(record->err(), "] ok ") + Count(record->err(), "] FAIL "), static_cast<size_t>(kTests));
  EXPECT_NE(record->out().find(absl::StrCat(kTests, " tests, ", kTests - 1, " passed, 1 failed")),
            std::string::npos)
      << record->out();
  EXPECT_EQ(Dump(), ReferenceDump());
}

TEST_F(DistributedPostgres, AStoppedWorkerComingBackLateIsADuplicateAndIgnored) {
  std::string address = StartScheduler(url_);
  auto record = Background("record", {"record", "--allow-failures", "--scheduler", address, "--wait", "--progress", "plain"});
  auto sleeper = StartWorker("sleeper", address, {"-j", "1"});
  ASSERT_TRUE(WaitFor(30, [&] { return Count(sleeper->err(), "ran tests/") >= 1; })) << sleeper->err();
  // Frozen mid-test, past the lease timeout: its test goes to another.
  sleeper->Signal(SIGSTOP);
  auto other = StartWorker("other", address);
  ASSERT_EQ(record->Wait(120), 0) << record->out() << record->err() << Log();
  EXPECT_EQ(other->Wait(30), 0) << other->err();
  // Thawed: it finishes the test it was running and reports it; the
  // scheduler has every result already.
  sleeper->Signal(SIGCONT);
  EXPECT_EQ(sleeper->Wait(60), 0) << sleeper->err();
  // How many of its results come late depends on where SIGSTOP landed (the
  // test it was running; the one it had leased ahead; the result of the
  // one it had just finished, if not sent yet): 1 to 3, at least one since
  // it always holds a lease it has not reported. What is guaranteed: every
  // late result is a duplicate the scheduler logs (before it answers the
  // stream), the workers' counts agree with its log, and every test was
  // accepted exactly once.
  const WorkerCounts late = CountsOf(sleeper->err());
  const WorkerCounts fresh = CountsOf(other->err());
  ASSERT_GE(late.duplicates, 1) << sleeper->err() << Log();
  ASSERT_GE(fresh.duplicates, 0) << "no summary line: " << other->err();
  EXPECT_EQ(Count(Log(), "duplicate result for "),
            static_cast<size_t>(late.duplicates + fresh.duplicates))
      << sleeper->err() << other->err() << Log();
  EXPECT_EQ(late.accepted + fresh.accepted, kTests) << sleeper->err() << other->err();
  EXPECT_EQ(late.refused + fresh.refused, 0);
  EXPECT_EQ(Count(record->err(), "] ok ") + Count(record->err(), "] FAIL "), static_cast<size_t>(kTests));
  EXPECT_EQ(Dump(), ReferenceDump());
}

// Issue 14, item 1: a scheduler SIGKILLed mid-build and restarted on the
// same store (and address, so the same instance id) resumes the build:
// the worker and the record client go on, only tests whose result was
// not accepted are run again, and the index equals a fault-free build's.
// Meanwhile the previous baseline is the one served.
void Distributed::KillRestartResume(int kills) {
  ASSERT_LE(kills, 2) << "the gate's cap below leaves the build unfinished for 2 kills at most";
  Spawned first = Ste({"record", "--allow-failures", "--progress", "none"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  W("src/mod_1.txt", "changed\n");
  Git({"commit", "-q", "-am", "change mod_1"});
  const std::string socket = "unix:" + dir_ + "/sched.sock";
  std::string address = StartScheduler(store_, socket);
  auto record = Background("record", {"record", "--allow-failures", "--scheduler", address, "--wait", "--progress", "plain"});
  // The worker's tests pass the gate one run at a time, the next let
  // through once the last has gone in, until the store holds the results
  // wanted before a kill. The store lags the runs: a worker's results are
  // journaled when its report stream closes, which it does once idle
  // (scheduler/src/rpc/worker.cc), and a steady flow of runs keeps it
  // open. So the runs let through before kill k are capped at
  // wanted + 6k: enough for `wanted` results (each kill can cost at most
  // 6 runs: 3 whose results were not in the store, from 2 slots and 1
  // lease ahead, run again; 2 held at the gate, which may go through
  // after their test was leased again), and fewer than the 24 a finished
  // build needs (21 before the second kill): the build
  // cannot end before the last kill, which opens the gate. Once the cap
  // is reached the tests wait at the gate, the worker goes idle and its
  // results reach the store. (Runs, not results: a test the worker held
  // across a kill is leased again, and may run twice.)
  Gate gate;
  ASSERT_TRUE(gate.ok()) << "cannot make a directory in /dev/shm: " << std::strerror(errno);
  worker_env_.push_back(gate.Env());
  auto worker = StartWorker("w", address);
  size_t journaled = 0;
  for (int kill = 1; kill <= kills; kill++) {
    // Killed once some results are in the store (rows, not log lines).
    const size_t wanted = 3 + 6 * static_cast<size_t>(kill - 1);
    const int cap = static_cast<int>(wanted) + 6 * kill;
    static_assert(3 + 6 * (2 - 1) + 6 * 2 < kTests, "the cap must leave the build unfinished");
    ASSERT_TRUE(WaitFor(60, [&] {
      if (StoredResults(2) >= wanted || !record->running()) return true;
      if (gate.Claimed() == gate.Released() && gate.Released() < cap) gate.Release(1);
      return false;
    })) << "stored " << StoredResults(2) << " of " << wanted << " wanted, runs let through "
        << gate.Released() << ", claimed " << gate.Claimed() << "\n"
        << record->err() << Log() << worker->err();
    ASSERT_TRUE(record->running()) << "the build ended before kill " << kill << ": " << record->err() << Log() << worker->err();
    scheduler_->Signal(SIGKILL);
    EXPECT_EQ(scheduler_->Wait(10), 128 + SIGKILL);
    journaled = StoredResults(2);
    // Half-way: baseline 2 is "building" in the store, never served.
    Spawned mid = Ste({"select", "--format", "json"});
    EXPECT_NE(mid.out.find("\"baseline\":{\"id\":1,"), std::string::npos) << mid.out << mid.err;
    unlink((dir_ + "/sched.sock").c_str());
    StartScheduler(store_, socket);
    // Resumed with what the store holds: at least what was there at the kill.
    ASSERT_TRUE(WaitFor(30, [&] { return Log().find("build b2 resumed (generation ") != std::string::npos; }))
        << Log();
    std::smatch m;
    const std::string log = Log();
    ASSERT_TRUE(std::regex_search(log, m, std::regex("build b2 resumed \\(generation ([0-9]+), from [^)]*\\): ([0-9]+) of 24")))
        << log;
    EXPECT_EQ(std::stoi(m[1]), kill + 1);
    EXPECT_GE(static_cast<size_t>(std::stoi(m[2])), journaled);
    if (kill == kills) gate.Open();
  }
  ASSERT_EQ(record->Wait(120), 0) << record->out() << record->err() << Log();
  EXPECT_EQ(worker->Wait(60), 0) << worker->err();
  EXPECT_NE(record->out().find(absl::StrCat(kTests, " tests, ", kTests - 1, " passed, 1 failed")),
            std::string::npos)
      << record->out();
  // Every test reported once to the client, whatever the restarts.
  EXPECT_EQ(Count(record->err(), "] ok ") + Count(record->err(), "] FAIL "), static_cast<size_t>(kTests))
      << record->err();
  // Only what was not in the store ran again: a test ran twice at most, and
  // no test journaled before the last kill is among those.
  const std::string ran = worker->err();
  size_t runs = 0, twice = 0;
  for (int t = 0; t < kTests; t++) {
    const size_t n = Count(ran, absl::StrFormat("ran tests/test_%02d.sh:", t));
    EXPECT_GE(n, 1u) << t;
    EXPECT_LE(n, 2u) << t;
    runs += n;
    twice += n == 2;
  }
  EXPECT_LE(twice, static_cast<size_t>(kTests) - journaled) << ran;
  EXPECT_EQ(runs, static_cast<size_t>(kTests) + twice);
  EXPECT_NE(Log().find("complete: baseline 2"), std::string::npos) << Log();
  EXPECT_EQ(Dump(), ReferenceDump());
  Spawned after = Ste({"select", "--format", "json"});
  EXPECT_NE(after.out.find("\"baseline\":{\"id\":2,"), std::string::npos) << after.out << after.err;
}

TEST_F(DistributedPostgres, SchedulerKilledMidBuildAndRestartedResumesIt) {
  KillRestartResume(1);
}

TEST_F(Distributed, SchedulerKilledTwiceOnSqliteResumesTheBuildBothTimes) {
  store_ = "sqlite:" + dir_ + "/sched.db";
  Configure(store_);
  KillRestartResume(2);
}

// A build whose scheduler does not come back within --abandon-after is
// failed by the next scheduler that finds it, not resumed; the previous
// baseline stays in use, and the next build goes through.
TEST_F(Distributed, ABuildNoSchedulerCameBackToIsFailedAfterTheTimeout) {
  store_ = "sqlite:" + dir_ + "/sched.db";
  Configure(store_);
  Spawned first = Ste({"record", "--allow-failures", "--progress", "none"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::vector<std::string> timeouts = {"--build-lease", "1", "--abandon-after", "1"};
  const std::string socket = "unix:" + dir_ + "/sched.sock";
  std::string address = StartScheduler(store_, socket, timeouts);
  // Created, never worked on (no worker), then the scheduler is killed.
  Spawned created = Ste({"record", "--allow-failures", "--scheduler", address, "--progress", "none"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ASSERT_NE(created.out.find("b2"), std::string::npos) << created.out;
  scheduler_->Signal(SIGKILL);
  EXPECT_EQ(scheduler_->Wait(10), 128 + SIGKILL);
  // The dead scheduler renewed the lease (1 s) at the latest when it died,
  // so on the store's clock (SQLite: this machine's) the build is
  // abandoned from 1 s + 1 s after the kill on: waiting for that point is
  // the condition itself (an upper bound from the stored lease's rule),
  // not a guess at how long something takes.
  const auto abandoned = std::chrono::system_clock::now() + std::chrono::milliseconds(2100);
  while (std::chrono::system_clock::now() < abandoned) std::this_thread::sleep_until(abandoned);
  unlink((dir_ + "/sched.sock").c_str());
  StartScheduler(store_, socket, timeouts);
  ASSERT_TRUE(WaitFor(30, [&] { return Log().find("build b2 failed: no scheduler ran it for 1s") != std::string::npos; }))
      << Log();
  EXPECT_EQ(Log().find("build b2 resumed"), std::string::npos) << Log();
  Spawned list = Ste({"baseline", "list", "--format", "json"});
  EXPECT_NE(list.out.find("\"id\":2,"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("\"state\":\"failed\""), std::string::npos) << list.out;
  Spawned s = Ste({"select", "--format", "json"});
  EXPECT_NE(s.out.find("\"baseline\":{\"id\":1,"), std::string::npos) << s.out;
  auto again = Background("again", {"record", "--allow-failures", "--scheduler", address, "--wait", "--progress", "none"});
  auto w = StartWorker("w", address);
  ASSERT_EQ(again->Wait(120), 0) << again->err() << Log();
  EXPECT_NE(again->out().find("baseline 3"), std::string::npos) << again->out();
  EXPECT_EQ(w->Wait(30), 0) << w->err();
}

// Issue 14, item 2: two schedulers on one PostgreSQL store run a build each,
// side by side; one is SIGKILLed, and the other takes its build over when
// its lease expires: that build's workers and client, given both
// addresses (ipv4:A,B), fail over and go on. Both builds complete, each
// index equal to a fault-free build's.
TEST_F(DistributedPostgres, TwoSchedulersOneKilledHandsItsBuildToTheOther) {
  const std::vector<std::string> lease = {"--build-lease", "2"};
  const std::string a = StartScheduler(url_, "127.0.0.1:0", lease);
  std::unique_ptr<Process> sched_a = std::move(scheduler_);
  const std::string b = StartScheduler(url_, "127.0.0.1:0", lease);
  std::unique_ptr<Process> sched_b = std::move(scheduler_);
  auto port = [](const std::string& address) { return address.substr(address.rfind(':') + 1); };
  const std::string a_first = absl::StrCat("ipv4:127.0.0.1:", port(a), ",127.0.0.1:", port(b));
  const std::string b_first = absl::StrCat("ipv4:127.0.0.1:", port(b), ",127.0.0.1:", port(a));
  auto record_a = Background("record_a", {"record", "--allow-failures", "--scheduler", a_first, "--wait", "--progress", "plain"});
  ASSERT_TRUE(WaitFor(30, [&] { return sched_a->err().find("build b1 created") != std::string::npos; }))
      << sched_a->err();
  auto record_b = Background("record_b", {"record", "--allow-failures", "--scheduler", b_first, "--wait", "--progress", "plain"});
  ASSERT_TRUE(WaitFor(30, [&] { return sched_b->err().find("build b2 created") != std::string::npos; }))
      << sched_b->err();
  std::vector<std::unique_ptr<Process>> workers;
  for (int i = 0; i < 2; i++) {
    workers.push_back(StartWorker(absl::StrCat("wa", i), a_first, {"--build", "b1", "-j", "1"}));
    workers.push_back(StartWorker(absl::StrCat("wb", i), b_first, {"--build", "b2", "-j", "1"}));
  }
  // Both run at once; A is killed with results of b1 in the store.
  ASSERT_TRUE(WaitFor(60, [&] { return StoredResults(1) >= 3 && StoredResults(2) >= 1; }))
      << sched_a->err() << sched_b->err();
  ASSERT_TRUE(record_a->running()) << record_a->err();
  sched_a->Signal(SIGKILL);
  EXPECT_EQ(sched_a->Wait(10), 128 + SIGKILL);
  ASSERT_EQ(record_a->Wait(120), 0) << record_a->out() << record_a->err() << sched_b->err();
  ASSERT_EQ(record_b->Wait(120), 0) << record_b->out() << record_b->err() << sched_b->err();
  for (auto& w : workers) EXPECT_EQ(w->Wait(60), 0) << w->err();
  const std::string log_b = sched_b->err();
  EXPECT_NE(log_b.find("build b1 resumed (generation 2, from "), std::string::npos) << log_b;
  EXPECT_NE(log_b.find("complete: baseline 1"), std::string::npos) << log_b;
  EXPECT_NE(log_b.find("complete: baseline 2"), std::string::npos) << log_b;
  EXPECT_EQ(log_b.find("build b1 failed"), std::string::npos) << log_b;
  EXPECT_EQ(log_b.find("build b2 failed"), std::string::npos) << log_b;
  for (auto* r : {record_a.get(), record_b.get()}) {
    EXPECT_NE(r->out().find(absl::StrCat(kTests, " tests, ", kTests - 1, " passed, 1 failed")),
              std::string::npos)
        << r->out();
    EXPECT_EQ(Count(r->err(), "] ok ") + Count(r->err(), "] FAIL "), static_cast<size_t>(kTests)) << r->err();
  }
  const std::string reference = ReferenceDump();
  for (const char* id : {"1", "2"}) {
    Spawned d = Ste({"index", "dump", "--json", "--base", id});
    EXPECT_EQ(d.exit_code, 0) << d.err;
    EXPECT_EQ(d.out, reference) << "baseline " << id;
  }
}

TEST_F(DistributedPostgres, SigtermStopsGracefullyAndFailsTheRunningBuild) {
  Spawned first = Ste({"record", "--allow-failures", "--progress", "none"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::string address = StartScheduler(url_);
  auto record = Background("record", {"record", "--allow-failures", "--scheduler", address, "--wait", "--progress", "plain"});
  auto worker = StartWorker("w", address);
  ASSERT_TRUE(WaitFor(30, [&] { return Count(record->err(), "] ok ") >= 2; })) << record->err();
  scheduler_->Signal(SIGTERM);
  EXPECT_EQ(scheduler_->Wait(30), 0) << Log();
  EXPECT_NE(Log().find("build b2 failed: the scheduler was stopped"), std::string::npos) << Log();
  EXPECT_NE(Log().find("stopped"), std::string::npos);
  EXPECT_EQ(record->Wait(60), 3) << "no baseline recorded";
  EXPECT_NE(record->err().find("failed: the scheduler was stopped"), std::string::npos) << record->err();
  worker->Wait(60);
  Spawned s = Ste({"select", "--format", "json"});
  EXPECT_NE(s.out.find("\"baseline\":{\"id\":1,"), std::string::npos) << s.out;
}

TEST_F(Distributed, TokensAreRequiredAndCheckedAndSelectMatchesTheLocalOne) {
  const std::string store = "sqlite:" + dir_ + "/sched.db";
  Configure(store);
  WriteFile(dir_ + "/token", "s3cret-token\n");
  WriteFile(dir_ + "/wrong", "s3cret-tokeN\n");
  chmod((dir_ + "/token").c_str(), 0600);  // a token others can read is refused
  chmod((dir_ + "/wrong").c_str(), 0600);
  // Without a token, anything but loopback or a unix socket is refused.
  Spawned open = Spawn({kSte, "scheduler", "--listen", "0.0.0.0:0", "--store", store}, {}, dir_);
  EXPECT_EQ(open.exit_code, 1);
  EXPECT_NE(open.err.find("without a token"), std::string::npos) << open.err;

  std::string address = StartScheduler(store, "127.0.0.1:0", {"--token-file", dir_ + "/token"});
  EXPECT_NE(scheduler_->err().find("token required"), std::string::npos);
  Spawned none = Ste({"record", "--scheduler", address});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_NE(none.err.find("no token"), std::string::npos) << none.err;
  Spawned wrong = Ste({"record", "--scheduler", address, "--token-file", dir_ + "/wrong"});
  EXPECT_EQ(wrong.exit_code, 3);
  EXPECT_NE(wrong.err.find("wrong token"), std::string::npos) << wrong.err;
  Spawned worker_without = Ste({"worker", "--scheduler", address, "--wait", "0"});
  EXPECT_EQ(worker_without.exit_code, 1);
  EXPECT_NE(worker_without.err.find("no token"), std::string::npos) << worker_without.err;
  EXPECT_GE(Count(Log(), "refused "), 3u) << Log();

  auto record = Background("record", {"record", "--allow-failures", "--scheduler", address, "--wait", "--progress",
                                      "none", "--token-file", dir_ + "/token"});
  auto worker = StartWorker("w", address, {"--token-file", dir_ + "/token"});
  ASSERT_EQ(record->Wait(120), 0) << record->err() << Log();
  EXPECT_EQ(worker->Wait(30), 0) << worker->err();

  // Selection through the scheduler: the same answer as the local store's.
  W("src/mod_3.txt", "changed\n");  // tests 3, 8, 13, 18, 23 (and 7, failed)
  Spawned local = Ste({"select", "--format", "json"});
  Spawned remote = Ste({"select", "--format", "json", "--scheduler", address, "--token-file",
                        dir_ + "/token"});
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_NE(local.out.find("\"mode\":\"subset\""), std::string::npos) << local.out;
  EXPECT_EQ(remote.out, local.out);
  // Without the token the answer is all, with the reason: never narrower.
  Spawned refused = Ste({"select", "--scheduler", address});
  EXPECT_EQ(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("mode all: the scheduler did not answer"), std::string::npos) << refused.err;
  EXPECT_EQ(testing::Lines(refused.out), static_cast<size_t>(kTests));
}

}  // namespace
}  // namespace ste
