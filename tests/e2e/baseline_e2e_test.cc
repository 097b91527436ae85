// `ste baseline export|import|list` with the real binary on real git
// repositories: an export imported into a fresh store in a depth-1 clone
// selects what the original store selects; every kind of damaged file is
// refused, saying what is wrong, with the store's files and rows unchanged
// (and no store created where there was none); importing twice is a no-op;
// list in both formats. gc: baseline_gc_e2e_test.cc.
#include <set>
#include <string>
#include <vector>

#include "baseline_fixture.h"
#include "gtest/gtest.h"

namespace ste::e2e {
namespace {

uint64_t Le(const std::string& bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

// `ste select --format json` output with the baseline's id blanked.
std::string WithoutBaselineId(std::string json) {
  const std::string key = "\"baseline\":{\"id\":";
  size_t at = json.find(key);
  if (at == std::string::npos) return json;
  at += key.size();
  size_t end = json.find(',', at);
  return json.replace(at, end - at, "_");
}

class BaselineFiles : public BaselineRepo {
 protected:
  // Records the origin at `main`, then again one commit later; a branch
  // `feature` that changes lib/b.sh; the export of the latest baseline.
  void RecordTwiceAndBranch() {
    Record(origin_);
    Commit("1");
    Record(origin_);
    recorded_ = Head(origin_);
    Git(origin_, {"checkout", "-q", "-b", "feature"});
    W(origin_, "lib/b.sh", "b() { echo B; }  # changed\n");
    Git(origin_, {"commit", "-q", "-a", "-m", "feature: touch b"});
  }
  std::string Export(const std::string& name = "base.ste") {
    std::string file = dir_ + "/" + name;
    Spawned e = Ste(origin_, {"baseline", "export", "-o", file});
    EXPECT_EQ(e.exit_code, 0) << e.out << e.err;
    return file;
  }
  std::string recorded_;
};

TEST_F(BaselineFiles, AnExportImportedInADepthOneCloneSelectsWhatTheOriginalSelects) {
  RecordTwiceAndBranch();
  Spawned original = Ste(origin_, {"select", "--format", "json"});
  ASSERT_EQ(original.exit_code, 0) << original.err;
  ASSERT_NE(original.out.find("\"mode\":\"subset\""), std::string::npos) << original.out;
  ASSERT_NE(original.out.find("\"tests\":[{\"test\":\"tests/test_b.sh\""), std::string::npos)
      << original.out;

  const std::string file = Export();
  std::string clone = ShallowClone("feature");
  ASSERT_FALSE(std::filesystem::exists(clone + "/.ste"));
  Spawned imported = Ste(clone, {"baseline", "import", file});
  ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
  EXPECT_EQ(imported.out, "ste baseline import: " + file + " imported as baseline 1 (commit " +
                              recorded_.substr(0, 12) + ", mri 2, 3 tests)\n");

  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, std::vector<std::string>{"--base-commit", recorded_}}) {
    std::vector<std::string> args = {"select", "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    Spawned copy = Ste(clone, args);
    ASSERT_EQ(copy.exit_code, 0) << copy.err;
    // Everything but the baseline's id (2 there, 1 here) is the same.
    EXPECT_EQ(WithoutBaselineId(copy.out), WithoutBaselineId(original.out));
    EXPECT_NE(copy.out.find("\"baseline\":{\"id\":1,\"mri\":2,\"commit\":\"" + recorded_ + "\"}"),
              std::string::npos)
        << copy.out;
  }
}

struct Damage {
  std::string name;
  std::string bytes;   // the file's content ("" with directory: a directory)
  bool directory = false;
  std::string message;  // what stderr must say, after "refused: <file>"
};

std::vector<Damage> DamagedCopies(const std::string& good, const std::string& foreign) {
  std::vector<Damage> d;
  auto flipped = [&](size_t at) {
    std::string b = good;
    b[at] ^= 0x01;
    return b;
  };
  const char* names[] = {"meta", "index", "inventory", "results"};
  d.push_back({"empty", "", false, " is empty, not an ste baseline file"});
  d.push_back({"directory", "", true, " is a directory, not an ste baseline file"});
  d.push_back({"foreign", foreign, false,
               " is not an ste baseline file (it does not start with \"STEBASE\": it starts with "
               "\"STEINV\\x00\\x00\")"});
  std::string magic = good;
  magic[0] = 'X';
  d.push_back({"magic", magic, false, " is not an ste baseline file"});
  std::string version = good;
  version[8] = 3;
  d.push_back({"version", version, false,
               " is an ste baseline file of format version 3; this ste reads versions 1 to 2"});
  d.push_back({"truncated-header", good.substr(0, 30), false,
               ": truncated: 30 bytes, shorter than its header and section table"});
  const size_t index_at = Le(good, 64 + 32 + 8, 8);
  const size_t mid_index = index_at + Le(good, 64 + 32 + 16, 8) / 2;
  d.push_back({"truncated-index", good.substr(0, mid_index), false,
               ": truncated: " + std::to_string(mid_index) + " bytes, its header says " +
                   std::to_string(good.size())});
  d.push_back({"truncated-end", good.substr(0, good.size() - 1), false,
               ": truncated: " + std::to_string(good.size() - 1) + " bytes, its header says " +
                   std::to_string(good.size())});
  d.push_back({"trailing", good + "garbage", false, ": 7 trailing bytes after its end"});
  d.push_back({"flip-header", flipped(33), false,
               ": the header or section table is damaged (checksum mismatch)"});
  d.push_back({"flip-table", flipped(64 + 32 + 16), false,
               ": the header or section table is damaged (checksum mismatch)"});
  for (int i = 0; i < 4; ++i) {
    const size_t at = Le(good, 64 + 32 * i + 8, 8), size = Le(good, 64 + 32 * i + 16, 8);
    d.push_back({std::string("flip-") + names[i], flipped(at + size / 2), false,
                 std::string(": the ") + names[i] + " section is damaged (checksum mismatch)"});
  }
  d.push_back({"flip-checksum", flipped(good.size() - 1), false,
               ": the file checksum does not match (the file is damaged)"});
  return d;
}

TEST_F(BaselineFiles, DamagedFilesAreRefusedSayingWhatIsWrongAndTheStoreIsUnchanged) {
  RecordTwiceAndBranch();
  const std::string good = ReadFile(Export());
  Spawned inv = Ste(origin_, {"inventory", "-o", dir_ + "/inventory.bin"});
  ASSERT_EQ(inv.exit_code, 0) << inv.err;
  const std::vector<Damage> damages = DamagedCopies(good, ReadFile(dir_ + "/inventory.bin"));
  ASSERT_EQ(damages.size(), 16u);

  // A clone whose store holds the good import, and one with no store yet.
  std::string with_store = ShallowClone("feature", "with_store");
  Spawned first = Ste(with_store, {"baseline", "import", dir_ + "/base.ste"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::string without = ShallowClone("feature", "without");
  const std::map<std::string, std::string> files = Files(with_store + "/.ste");
  const std::vector<std::string> rows = Rows(with_store + "/.ste/ste.db");
  ASSERT_EQ(RowsOf(rows, "baselines").size(), 1u);
  ASSERT_EQ(RowsOf(rows, "results").size(), 3u);

  for (const Damage& d : damages) {
    SCOPED_TRACE(d.name);
    const std::string file = dir_ + "/bad-" + d.name + ".ste";
    if (d.directory) {
      std::filesystem::create_directory(file);
    } else {
      WriteFile(file, d.bytes);
    }
    for (const std::string& clone : {with_store, without}) {
      Spawned r = Ste(clone, {"baseline", "import", file});
      EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
      EXPECT_EQ(r.out, "");
      const std::string prefix = "ste baseline import: refused: " + file + d.message;
      EXPECT_EQ(r.err.compare(0, prefix.size(), prefix), 0) << r.err;
      EXPECT_EQ(r.err.back(), '\n');
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
          << r.err;
    }
    EXPECT_EQ(Files(with_store + "/.ste"), files);
    EXPECT_EQ(Rows(with_store + "/.ste/ste.db"), rows);
    EXPECT_FALSE(std::filesystem::exists(without + "/.ste"));
  }
  // And the store still selects as before.
  Spawned s = Ste(with_store, {"select"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out, "tests/test_b.sh\n");
}

TEST_F(BaselineFiles, ImportingTheSameFileTwiceIsANoOpThatSaysSo) {
  RecordTwiceAndBranch();
  const std::string file = Export();
  std::string clone = ShallowClone("feature");
  Spawned first = Ste(clone, {"baseline", "import", file});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::map<std::string, std::string> files = Files(clone + "/.ste");
  const std::vector<std::string> rows = Rows(clone + "/.ste/ste.db");
  Spawned second = Ste(clone, {"baseline", "import", file});
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "ste baseline import: " + file + " is already in the store as baseline 1 (commit " +
                            recorded_.substr(0, 12) + ", mri 2, 3 tests): nothing imported\n");
  EXPECT_EQ(Files(clone + "/.ste"), files);
  EXPECT_EQ(Rows(clone + "/.ste/ste.db"), rows);
  // Into the store it came from: the same baseline is there already.
  Spawned home = Ste(origin_, {"baseline", "import", file});
  EXPECT_EQ(home.exit_code, 0) << home.err;
  EXPECT_NE(home.out.find("is already in the store as baseline 2"), std::string::npos) << home.out;
}

TEST_F(BaselineFiles, ListShowsEveryBaselineInTextAndJson) {
  Record(origin_);
  Commit("1");
  Record(origin_);
  const std::string commit = Head(origin_);
  const std::string store = "sqlite:" + origin_ + "/.ste/ste.db";
  // A build its scheduler gave up when stopped (failed), one it still holds.
  StartBuild("s1", StartScheduler("s1", store));
  Scheduler("s1").Signal(SIGTERM);
  ASSERT_EQ(Scheduler("s1").Wait(60), 0) << Scheduler("s1").err();
  StartBuild("s2", StartScheduler("s2", store));

  Spawned json = Ste(origin_, {"baseline", "list", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const std::string& j = json.out;
  auto object = [&](int id) { return BaselineObject(j, id); };
  EXPECT_EQ(j.substr(0, 20), "{\"baselines\":[{\"id\":");
  EXPECT_LT(j.find("\"id\":4,"), j.find("\"id\":3,"));
  EXPECT_LT(j.find("\"id\":3,"), j.find("\"id\":2,"));
  EXPECT_LT(j.find("\"id\":2,"), j.find("\"id\":1,"));
  EXPECT_NE(object(4).find("\"state\":\"building\",\"tests\":0,\"bytes\":0,"), std::string::npos) << j;
  EXPECT_NE(object(4).find("\"writer_alive\":true,\"failure\":\"\""), std::string::npos) << j;
  EXPECT_NE(object(3).find("\"state\":\"failed\""), std::string::npos) << j;
  EXPECT_NE(object(3).find("\"writer_alive\":null,\"failure\":\"the scheduler was stopped (signal 15)"),
            std::string::npos)
      << j;
  EXPECT_NE(object(2).find("\"mri\":2,\"commit\":\"" + commit + "\",\"state\":\"complete\",\"tests\":3,"),
            std::string::npos)
      << j;
  EXPECT_EQ(object(2).find("\"bytes\":0,"), std::string::npos) << j;
  EXPECT_NE(object(1).find("\"state\":\"complete\",\"tests\":3,"), std::string::npos) << j;

  Spawned text = Ste(origin_, {"baseline", "list"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.out.size();) {
    size_t nl = text.out.find('\n', at);
    lines.push_back(text.out.substr(at, nl - at));
    at = nl + 1;
  }
  ASSERT_EQ(lines.size(), 5u) << text.out;
  EXPECT_EQ(lines[0], "    ID      MRI  COMMIT        STATE     TESTS       SIZE   AGE");
  EXPECT_TRUE(StartsWith(lines[1], "     4        2  " + commit.substr(0, 12) + "  building      0        0 B"))
      << lines[1];
  EXPECT_NE(lines[1].find("  writer alive"), std::string::npos) << lines[1];
  EXPECT_TRUE(StartsWith(lines[2], "     3        2  " + commit.substr(0, 12) + "  failed  ")) << lines[2];
  EXPECT_NE(lines[2].find("  the scheduler was stopped (signal 15)"), std::string::npos) << lines[2];
  EXPECT_TRUE(StartsWith(lines[3], "     2        2  " + commit.substr(0, 12) + "  complete      3"))
      << lines[3];
  EXPECT_NE(lines[3].find(" KiB "), std::string::npos) << lines[3];
  EXPECT_TRUE(StartsWith(lines[4], "     1        1  ")) << lines[4];
  EXPECT_EQ(text.err, "ste baseline list: 4 baselines\n");

  Scheduler("s2").Signal(SIGTERM);
  EXPECT_EQ(Scheduler("s2").Wait(60), 0) << Scheduler("s2").err();
}

TEST_F(BaselineFiles, EverySubcommandHasHelpAndRefusesBadUsage) {
  for (const char* sub : {"export", "import", "list", "gc"}) {
    Spawned h = Ste(origin_, {"baseline", sub, "--help"});
    EXPECT_EQ(h.exit_code, 0) << sub;
    EXPECT_EQ(h.out.find(std::string("Usage: ste baseline ") + sub), 0u) << h.out;
    EXPECT_NE(h.out.find("Exit status:"), std::string::npos) << h.out;
  }
  Spawned top = Ste(origin_, {"baseline", "--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("ste baseline gc --keep N"), std::string::npos) << top.out;
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"baseline"}, {"baseline", "frobnicate"}, {"baseline", "export"},
        {"baseline", "export", "zero", "-o", "f"}, {"baseline", "import"},
        {"baseline", "list", "--format", "xml"}, {"baseline", "gc"}, {"baseline", "gc", "--keep", "0"},
        {"baseline", "gc", "--keep", "1", "--abandoned-after", "soon"}}) {
    Spawned r = Ste(origin_, bad);
    EXPECT_EQ(r.exit_code, 2) << bad.back() << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(origin_ + "/.ste")) << "bad usage opened the store";
  Spawned none = Ste(origin_, {"baseline", "export", "-o", dir_ + "/x.ste"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err, "ste baseline export: no completed baseline in the store (run 'ste record')\n");
}

}  // namespace
}  // namespace ste::e2e
