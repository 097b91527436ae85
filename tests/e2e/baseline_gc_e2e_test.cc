// `ste baseline gc` with the real binary on a real repository and real
// schedulers: 3 complete baselines, one failed (its scheduler stopped), one
// abandoned (its scheduler SIGKILLed), one still being written (its
// scheduler alive); every file and row left after `gc --keep 2` compared
// with the list expected here. gc while another process runs `ste select`
// in a loop: every select succeeds with a valid selection. And the
// PostgreSQL store: export, gc, import back, select in a depth-1 clone.
#include <set>
#include <string>
#include <vector>

#include "baseline_fixture.h"
#include "gtest/gtest.h"
#include "pg_test_server.h"

namespace ste::e2e {
namespace {

// The value of column `n` (0-based) of an SQLite row "table|c0|c1|...".
std::string Column(const std::string& row, int n) {
  size_t at = row.find('|') + 1;
  for (int i = 0; i < n; ++i) at = row.find('|', at) + 1;
  return row.substr(at, row.find('|', at) - at);
}

class BaselineGc : public BaselineRepo {};

TEST_F(BaselineGc, KeepTwoLeavesTheNewestTwoCompleteAndTheBuildStillBeingWritten) {
  Record(origin_);  // 1
  Commit("1");
  Record(origin_);  // 2
  Commit("2");
  Record(origin_);  // 3
  const std::string store = "sqlite:" + origin_ + "/.ste/ste.db";
  StartBuild("stopped", StartScheduler("stopped", store));  // 4: failed
  Scheduler("stopped").Signal(SIGTERM);
  ASSERT_EQ(Scheduler("stopped").Wait(60), 0) << Scheduler("stopped").err();
  StartBuild("killed", StartScheduler("killed", store));  // 5: abandoned
  Scheduler("killed").Signal(SIGKILL);
  ASSERT_EQ(Scheduler("killed").Wait(60), 128 + SIGKILL);
  StartBuild("alive", StartScheduler("alive", store));  // 6: being written

  const std::vector<std::string> before = Rows(origin_ + "/.ste/ste.db");
  std::vector<std::string> states;
  for (const std::string& b : RowsOf(before, "baselines")) {
    states.push_back(Column(b, 0) + ":" + Column(b, 3));
  }
  ASSERT_EQ(states, (std::vector<std::string>{"1:1", "2:1", "3:1", "4:2", "5:0", "6:0"}));
  Spawned list = Ste(origin_, {"baseline", "list", "--format", "json"});
  ASSERT_NE(list.out.find("\"id\":6,\"mri\":3"), std::string::npos) << list.out;
  EXPECT_NE(BaselineObject(list.out, 6).find("\"writer_alive\":true"), std::string::npos)
      << list.out;
  EXPECT_NE(BaselineObject(list.out, 5).find("\"writer_alive\":false"), std::string::npos)
      << list.out;

  // The default threshold keeps the abandoned build: it is minutes old.
  Spawned gc = Ste(origin_, {"baseline", "gc", "--keep", "2"});
  ASSERT_EQ(gc.exit_code, 0) << gc.out << gc.err;
  EXPECT_NE(gc.out.find("kept          baseline 6 (building, mri 3): building: its writer is alive"),
            std::string::npos)
      << gc.out;
  EXPECT_NE(gc.out.find("kept          baseline 5 (building, mri 3): building, nothing holds its "
                        "writer lock, but only"),
            std::string::npos)
      << gc.out;
  EXPECT_NE(gc.out.find("removed       baseline 4 (failed, mri 3): failed: the scheduler was stopped"),
            std::string::npos)
      << gc.out;
  EXPECT_NE(gc.out.find("kept          baseline 3 (complete, mri 3): the newest complete baseline"),
            std::string::npos)
      << gc.out;
  EXPECT_NE(gc.out.find("kept          baseline 2 (complete, mri 2): complete, one of the newest 2"),
            std::string::npos)
      << gc.out;
  EXPECT_NE(gc.out.find("removed       baseline 1 (complete, mri 1): complete, older than the newest 2"),
            std::string::npos)
      << gc.out;
  gc = Ste(origin_, {"baseline", "gc", "--keep", "2", "--abandoned-after", "0s"});
  ASSERT_EQ(gc.exit_code, 0) << gc.out << gc.err;
  EXPECT_NE(gc.out.find("removed       baseline 5 (building, mri 3): abandoned: building for"),
            std::string::npos)
      << gc.out;
  EXPECT_NE(gc.out.find("kept          baseline 6"), std::string::npos) << gc.out;

  // Every row left is one of baselines 2, 3 and 6 exactly as it was.
  std::vector<std::string> expected_rows;
  std::vector<std::string> expected_files = {"ste.db", "writers/6.lock"};
  for (const std::string& row : before) {
    const std::string table = row.substr(0, row.find('|'));
    const std::string id = Column(row, 0);
    if (table == "meta" || ((table == "baselines" || table == "results" || table == "blobs") &&
                            (id == "2" || id == "3" || id == "6"))) {
      expected_rows.push_back(row);
    }
    if (table == "blobs" && (id == "2" || id == "3")) {
      expected_files.push_back("blobs/" + Column(row, 2));
      // Hash stamps: of 2, which the record of 3 read as its stat cache
      // (3 was only read by the remote records, which keep no store).
      if (id == "2") expected_files.push_back("verified/" + Column(row, 2));
    }
  }
  // The test logs of the record builds of the baselines kept (1's went
  // with it; 4 to 6 were recorded through schedulers, whose logs are the
  // workers').
  for (const char* id : {"2", "3"}) {
    for (const char* t : {"a", "b", "c"}) {
      expected_files.push_back(std::string("output/b") + id + "/tests/test_" + t + ".sh.log");
    }
  }
  std::sort(expected_files.begin(), expected_files.end());
  ASSERT_EQ(expected_rows.size(), 2u + 3u + 2u * 3u + 2u * 2u);  // meta, baselines, results, blobs
  EXPECT_EQ(Rows(origin_ + "/.ste/ste.db"), expected_rows);
  EXPECT_EQ(Names(Files(origin_ + "/.ste", /*skip_wal=*/true)), expected_files);

  // The build being written goes on, and the kept baselines serve.
  Spawned s = Ste(origin_, {"select", "--format", "json"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("\"baseline\":{\"id\":3,"), std::string::npos) << s.out;
  Scheduler("alive").Signal(SIGTERM);
  EXPECT_EQ(Scheduler("alive").Wait(60), 0) << Scheduler("alive").err();
}

// Another process runs `ste select` in a loop, on the newest baseline (kept)
// and on the oldest, while gc removes six baselines, and then ten times the
// oldest is imported back (from its export) and removed again by gc. Each
// select must exit 0 with a valid selection: the newest always the subset;
// the oldest the subset from it when it finds it, else from the newest (the
// base commit's fallback, saying so), or all only having lost the race
// every time it looked (it was removed while loading): never a crash,
// never a damaged-store error.
TEST_F(BaselineGc, SelectsRunningDuringGcAllSucceedWithAValidSelection) {
  Record(origin_);
  const std::string oldest = Head(origin_);
  const std::string file = dir_ + "/oldest.ste";
  Spawned e = Ste(origin_, {"baseline", "export", "1", "-o", file});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  for (int i = 1; i <= 7; ++i) {
    Commit(std::to_string(i));
    Record(origin_);
  }
  W(origin_, "lib/b.sh", "b() { echo B; }  # changed\n");
  const std::string out = dir_ + "/selects";
  std::filesystem::create_directory(out);
  const std::string stop = dir_ + "/stop";
  W(dir_, "loop.sh",
    "i=0\n"
    "while :; do\n"
    "  i=$((i+1))\n"
    "  \"$STE\" select --format json > \"$OUT/new.$i.json\" 2> \"$OUT/new.$i.err\"; echo $? > "
    "\"$OUT/new.$i.rc\"\n"
    "  \"$STE\" select --format json --base-commit \"$OLDEST\" > \"$OUT/old.$i.json\" 2> "
    "\"$OUT/old.$i.err\"; echo $? > \"$OUT/old.$i.rc\"\n"
    "  [ -e \"$STOP\" ] && break\n"
    "done\n"
    "echo $i > \"$OUT/count\"\n");
  Process loop({"sh", dir_ + "/loop.sh"},
               {"STE=" + kSte, "OUT=" + out, "OLDEST=" + oldest, "STOP=" + stop}, origin_,
               dir_ + "/loop.out", dir_ + "/loop.err");
  auto done = [&] {
    int n = 0;
    while (std::filesystem::exists(out + "/old." + std::to_string(n + 1) + ".rc")) ++n;
    return n;
  };
  ASSERT_TRUE(WaitFor(120, [&] { return done() >= 3 || !loop.running(); })) << loop.err();
  const int before_gc = done();
  Spawned gc = Ste(origin_, {"baseline", "gc", "--keep", "2"});
  ASSERT_EQ(gc.exit_code, 0) << gc.out << gc.err;
  EXPECT_NE(gc.err.find("removed 6 baselines"), std::string::npos) << gc.err;
  for (int round = 0; round < 10; ++round) {
    Spawned back = Ste(origin_, {"baseline", "import", file});
    ASSERT_EQ(back.exit_code, 0) << back.err;
    ASSERT_NE(back.out.find(" imported as baseline " + std::to_string(9 + round) + " "),
              std::string::npos)
        << back.out;
    gc = Ste(origin_, {"baseline", "gc", "--keep", "2"});
    ASSERT_EQ(gc.exit_code, 0) << gc.out << gc.err;
    ASSERT_NE(gc.err.find("removed 1 baselines"), std::string::npos) << gc.err;
  }
  const int after_gc = done();
  ASSERT_TRUE(WaitFor(120, [&] { return done() >= after_gc + 3 || !loop.running(); })) << loop.err();
  WriteFile(stop, "");
  ASSERT_EQ(loop.Wait(120), 0) << loop.err();
  const int n = std::stoi(ReadFile(out + "/count"));
  ASSERT_GE(n, after_gc + 3);

  // The "old" selects name the oldest baseline's commit: before the gc it
  // is used; once it is gone, the newest one is (--base-commit falls back,
  // saying so), never an error.
  int old_exact = 0, old_fallback = 0;
  for (int i = 1; i <= n; ++i) {
    SCOPED_TRACE("select pair " + std::to_string(i));
    const std::string p = out + "/";
    const std::string i_ = std::to_string(i);
    EXPECT_EQ(ReadFile(p + "new." + i_ + ".rc"), "0\n") << ReadFile(p + "new." + i_ + ".err");
    EXPECT_EQ(ReadFile(p + "old." + i_ + ".rc"), "0\n") << ReadFile(p + "old." + i_ + ".err");
    const std::string now = ReadFile(p + "new." + i_ + ".json");
    EXPECT_EQ(now.find("{\"mode\":\"subset\",\"reason\":\"1 of 3 tests are affected\",\"baseline\":{\"id\":8,"),
              0u)
        << now;
    EXPECT_NE(now.find("\"tests\":[{\"test\":\"tests/test_b.sh\""), std::string::npos) << now;
    const std::string old = ReadFile(p + "old." + i_ + ".json");
    if (old.find(",\"mri\":1,\"commit\":\"" + oldest + "\"}") != std::string::npos) {
      ++old_exact;
      EXPECT_EQ(old.find("{\"mode\":\"subset\","), 0u) << old;
      EXPECT_NE(old.find("\"tests\":[{\"test\":\"tests/test_b.sh\""), std::string::npos) << old;
      EXPECT_LE(i, after_gc + 1) << "the oldest baseline served after the last gc";
    } else if (old.find("{\"mode\":\"subset\",") == 0) {
      ++old_fallback;
      EXPECT_NE(old.find("the base commit " + oldest.substr(0, 12) + " has no baseline yet"), std::string::npos)
          << old;
      EXPECT_NE(old.find("\"tests\":[{\"test\":\"tests/test_b.sh\""), std::string::npos) << old;
    } else {
      // Lost the race with the removals kLoadAttempts times: all, saying so.
      EXPECT_EQ(old.find("{\"mode\":\"all\",\"reason\":\"no usable baseline: "), 0u) << old;
      EXPECT_NE(old.find("removed (ste baseline gc) while it was being loaded"), std::string::npos) << old;
      EXPECT_NE(old.find("tests/test_a.sh"), std::string::npos) << old;  // all: every test
    }
    for (const std::string& err : {ReadFile(p + "new." + i_ + ".err"), ReadFile(p + "old." + i_ + ".err")}) {
      EXPECT_EQ(err.find("damaged"), std::string::npos) << err;
      EXPECT_EQ(err.find("unreadable"), std::string::npos) << err;
    }
  }
  RecordProperty("select_pairs", n);
  RecordProperty("select_pairs_during_gc", after_gc - before_gc);
  EXPECT_GE(old_exact, 3);     // the first three pairs ran before any gc
  EXPECT_GE(old_fallback, 3);  // the last three after the last one
}

// PostgreSQL: the store of ste.toml is a database on the test server.
class BaselinePostgres : public BaselineRepo {
 protected:
  void SetUp() override {
    absl::StatusOr<::ste::testing::PgTestServer*> server = ::ste::testing::PgTestServer::Shared();
    ASSERT_TRUE(server.ok()) << server.status();
    absl::StatusOr<std::string> url = (*server)->CreateDatabase();
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
    BaselineRepo::SetUp();
  }
  std::string Config() override {
    return BaselineRepo::Config() + "[store]\nurl = \"" + url_ + "\"\n";
  }
  std::string url_;
};

TEST_F(BaselinePostgres, ExportGcImportBackAndSelectInADepthOneCloneOnPostgres) {
  Record(origin_);  // 1
  const std::string first = Head(origin_);
  Git(origin_, {"checkout", "-q", "-b", "feature"});
  W(origin_, "lib/b.sh", "b() { echo B; }  # changed\n");
  Git(origin_, {"commit", "-q", "-a", "-m", "feature: touch b"});
  Spawned original = Ste(origin_, {"select", "--format", "json", "--base-commit", first});
  ASSERT_EQ(original.exit_code, 0) << original.err;
  ASSERT_NE(original.out.find("\"tests\":[{\"test\":\"tests/test_b.sh\""), std::string::npos)
      << original.out;
  Git(origin_, {"checkout", "-q", "main"});
  const std::string file = dir_ + "/first.ste";
  Spawned e = Ste(origin_, {"baseline", "export", "1", "-o", file});
  ASSERT_EQ(e.exit_code, 0) << e.out << e.err;
  Commit("1");
  Record(origin_);  // 2
  ASSERT_TRUE(std::filesystem::exists(origin_ + "/.ste/pgcache"));

  Spawned gc = Ste(origin_, {"baseline", "gc", "--keep", "1"});
  ASSERT_EQ(gc.exit_code, 0) << gc.out << gc.err;
  EXPECT_NE(gc.out.find("removed       baseline 1 (complete, mri 1)"), std::string::npos) << gc.out;
  for (const auto& [name, bytes] : Files(origin_ + "/.ste")) {
    if (name.rfind("output/", 0) == 0) {  // the test logs: baseline 2's only
      EXPECT_EQ(name.rfind("output/b2/", 0), 0u) << "test logs of baseline 1 are left: " << name;
      continue;
    }
    EXPECT_NE(name.find("-"), std::string::npos) << name;
    EXPECT_NE(name.substr(name.find('/') + 1, 2), "1-") << "a copy of baseline 1 is left: " << name;
  }
  Spawned list = Ste(origin_, {"baseline", "list", "--format", "json"});
  EXPECT_EQ(list.out.find("{\"baselines\":[{\"id\":2,\"mri\":2,"), 0u) << list.out;
  EXPECT_EQ(list.out.find("\"id\":1,"), std::string::npos) << list.out;

  Spawned imported = Ste(origin_, {"baseline", "import", file});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("imported as baseline 3 (commit " + first.substr(0, 12) + ", mri 1, 3 tests)"),
            std::string::npos)
      << imported.out;

  // A depth-1 clone shares the database; its cache starts empty.
  std::string clone = ShallowClone("feature");
  Spawned copy = Ste(clone, {"select", "--format", "json", "--base-commit", first});
  ASSERT_EQ(copy.exit_code, 0) << copy.err;
  EXPECT_EQ(JsonPart(copy.out, "tests", "],\"wide\""), JsonPart(original.out, "tests", "],\"wide\""));
  EXPECT_EQ(JsonPart(copy.out, "mode", ","), "\"mode\":\"subset\"");
  EXPECT_NE(copy.out.find("\"baseline\":{\"id\":3,\"mri\":1,\"commit\":\"" + first + "\"}"),
            std::string::npos)
      << copy.out;
  Spawned again = Ste(clone, {"baseline", "import", file});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("is already in the store as baseline 3"), std::string::npos) << again.out;
}

}  // namespace
}  // namespace ste::e2e
