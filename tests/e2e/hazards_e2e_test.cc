// `ste hazards` end to end (indexer's ste/hazards.h): a suite made to have
// an order dependence. One test leaves a file behind that another reads
// and a third lists the directory of; what a test writes in its own
// temporary directory, or removes, or writes under inventory.ignore, is no
// hazard.
#include <cstdio>
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

TEST(Hazards, AWriteAnotherTestReadsIsAnOrderDependence) {
  const std::string root = MakeTempDir();
  auto w = [&](const std::string& rel, const std::string& content) { WriteFile(root + "/" + rel, content); };
  w("data/seed.txt", "seed\n");
  w("tests/test_writer.sh", "echo state > data/shared.txt\n");
  w("tests/test_reader.sh", "[ -f data/shared.txt ] && cat data/shared.txt\nexit 0\n");
  w("tests/test_lister.sh", "ls data > /dev/null\n");
  w("tests/test_tidy.sh",
    "echo x > \"$TMPDIR/own\"\necho y > data/scratch.txt\nrm data/scratch.txt\necho z > cache/out.txt\n");
  w("cache/.keep", "");
  w("tests/test_other.sh", "cat data/seed.txt > /dev/null\n");
  w("ste.toml",
    "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\njobs = 1\n"
    "[inventory]\nignore = [\"cache/**\"]\n");
  ::ste::testing::InitGitRepo(root);
  ASSERT_EQ(::ste::testing::Git(root, {"add", "-A"}).exit_code, 0);
  ASSERT_EQ(::ste::testing::Git(root, {"commit", "-qm", "init"}).exit_code, 0);
  Spawned r = Spawn({kSte, "record", "--progress", "none"}, {}, root);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  Spawned h = Spawn({kSte, "hazards"}, {}, root);
  ASSERT_EQ(h.exit_code, 0) << h.err;
  // The reader read it or looked for it, by the order they ran in.
  const bool read = h.out.find("tests/test_writer.sh writes data/shared.txt, which tests/test_reader.sh reads\n") !=
                    std::string::npos;
  const bool looked = h.out.find("tests/test_writer.sh writes data/shared.txt, which tests/test_reader.sh looks "
                                 "for\n") != std::string::npos;
  EXPECT_TRUE(read || looked) << h.out;
  EXPECT_NE(h.out.find("tests/test_writer.sh writes data/shared.txt, which tests/test_lister.sh lists the "
                       "directory of\n"),
            std::string::npos)
      << h.out;
  EXPECT_EQ(h.out.find("test_tidy"), std::string::npos) << "own tmp, removed and ignored files: " << h.out;
  EXPECT_EQ(h.out.find("test_other"), std::string::npos) << h.out;
  EXPECT_NE(h.err.find("ste hazards: 2 in baseline 1 (1 tests left files behind)"), std::string::npos) << h.err;

  Spawned json = Spawn({kSte, "hazards", "--json"}, {}, root);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("{\"writer\":\"tests/test_writer.sh\",\"path\":\"data/shared.txt\",\"reader\":"
                          "\"tests/test_lister.sh\",\"kind\":\"listing\"}"),
            std::string::npos)
      << json.out;
  EXPECT_NE(json.out.find("\"version\":1}"), std::string::npos) << json.out;

  // The writes travel with the baseline file (format version 2): imported
  // elsewhere, the report still finds the hazards.
  const std::string elsewhere = MakeTempDir();
  Spawned exported = Spawn({kSte, "baseline", "export", "-o", elsewhere + "/b.steb"}, {}, root);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const std::string store = "sqlite:" + elsewhere + "/ste.db";
  Spawned imported = Spawn({kSte, "baseline", "import", "--store", store, elsewhere + "/b.steb"}, {}, root);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  Spawned report = Spawn({kSte, "report", "--store", store, "-o", "-"}, {}, root);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const size_t hazards = report.out.find("id=\"hazards\"");
  ASSERT_NE(hazards, std::string::npos);
  EXPECT_NE(report.out.find("<p class=\"sub\">2 pairs:", hazards), std::string::npos)
      << report.out.substr(hazards, 2000);
}

// The next record keeps such a pair on one worker, in the order the
// baseline saw it: with four jobs, whichever order the first record ran
// the writer and the reader in, every later record runs them in it (the
// reader reads what the writer left, or looks for it before it exists),
// so the recorded dependency, and the hazard, stay the same.
TEST(Hazards, TheNextRecordRunsAPairInTheOrderItWasRecorded) {
  const std::string root = MakeTempDir();
  auto w = [&](const std::string& rel, const std::string& content) { WriteFile(root + "/" + rel, content); };
  w("data/seed.txt", "seed\n");
  w("tests/test_writer.sh", "sleep 0.2\necho state > data/shared.txt\n");
  w("tests/test_reader.sh", "[ -f data/shared.txt ] && cat data/shared.txt\nexit 0\n");
  for (int i = 0; i < 6; i++) w("tests/test_f" + std::to_string(i) + ".sh", "sleep 0.1\n");
  w("ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\njobs = 4\n");
  ::ste::testing::InitGitRepo(root);
  ASSERT_EQ(::ste::testing::Git(root, {"add", "-A"}).exit_code, 0);
  ASSERT_EQ(::ste::testing::Git(root, {"commit", "-qm", "init"}).exit_code, 0);
  std::string first;
  for (int run = 0; run < 4; run++) {
    std::remove((root + "/data/shared.txt").c_str());
    Spawned r = Spawn({kSte, "record", "--progress", "none"}, {}, root);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    Spawned h = Spawn({kSte, "hazards"}, {}, root);
    ASSERT_EQ(h.exit_code, 0) << h.err;
    ASSERT_NE(h.out.find("tests/test_writer.sh writes data/shared.txt, which tests/test_reader.sh "),
              std::string::npos)
        << h.out;
    if (run == 0) {
      first = h.out;
    } else {
      EXPECT_EQ(h.out, first) << "record " << run + 1;
    }
  }
}

}  // namespace
}  // namespace ste
