// Copyright: the ste authors. `ste record` and `ste select` with
// [store] url = "postgresql://..." in ste.toml: the real binary, a real git
// repository, a real PostgreSQL server (tests/support/pg_test_server.h).
// The selection logic itself is tested on SQLite in tests/e2e; this shows
// the PostgreSQL store carries it: baselines written by one command are
// found by another, blobs come back through the local cache, and a store
// that fails (damaged bytes, no server) widens the selection to all.
//
// The fixture repo has two shell tests:
//   tests/test_a.sh  sources lib/a.sh
//   tests/test_b.sh  sources lib/b.sh
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "gtest/gtest.h"
#include "pg_conn.h"
#include "pg_test_server.h"
#include "store_test_util.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::PgTestServer;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);

class PostgresE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PgTestServer*> server = PgTestServer::Shared();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *server;
    absl::StatusOr<std::string> url = server_->CreateDatabase();
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
    root_ = MakeTempDir();
    W("lib/a.sh", "a() { echo A; }\n");
    W("lib/b.sh", "b() { echo B; }\n");
    W("tests/test_a.sh", ". lib/a.sh\n[ \"$(a)\" = A ]\n");
    W("tests/test_b.sh", ". lib/b.sh\n[ \"$(b)\" = B ]\n");
    WriteConfig(url_);
    ::ste::testing::InitGitRepo(root_);
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "init"});
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  void W(const std::string& rel, const std::string& content) {
    WriteFile(root_ + "/" + rel, content);
  }
  void WriteConfig(const std::string& store_url) {
    W("ste.toml",
      "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh "
      "{test}\"\n[store]\nurl = \"" +
          store_url + "\"\n");
  }
  void Git(const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(root_, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, root_);
  }
  // The mode `ste select --explain` reports on stderr ("mode X: ...").
  static std::string ModeOf(const Spawned& s) {
    size_t at = s.err.find("mode ");
    if (at == std::string::npos) return "";
    return s.err.substr(at + 5, s.err.find(':', at) - at - 5);
  }
  std::vector<std::string> CachedFiles() {
    return testing_util::FileNames(root_ + "/.ste/pgcache");
  }

  PgTestServer* server_ = nullptr;
  std::string url_;
  std::string root_;
};

TEST_F(PostgresE2eTest, RecordThenSelectThroughThePostgresqlStore) {
  Spawned record = Ste({"record", "--progress", "none"});
  ASSERT_EQ(record.exit_code, 0) << record.out << record.err;
  // The baseline is on the server, not in a local SQLite file.
  EXPECT_NE(access((root_ + "/.ste/ste.db").c_str(), F_OK), 0);
  {
    absl::StatusOr<std::unique_ptr<PgConn>> raw = PgConn::Connect(url_, 10);
    ASSERT_TRUE(raw.ok()) << raw.status();
    absl::StatusOr<PgResult> rows = (*raw)->Exec(
        "SELECT state, (SELECT count(*) FROM ste.results), (SELECT count(*) "
        "FROM ste.blob_contents) FROM ste.baselines");
    ASSERT_TRUE(rows.ok()) << rows.status();
    ASSERT_EQ(rows->rows(), 1);
    EXPECT_EQ(rows->Text(0, 0), "1");  // complete
    EXPECT_EQ(rows->Text(0, 1), "2");  // two tests' results
    EXPECT_EQ(rows->Text(0, 2), "2");  // index and inventory
  }

  Spawned none = Ste({"select", "--explain"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(ModeOf(none), "none") << none.err << none.out;
  EXPECT_EQ(CachedFiles().size(), 2u);  // fetched for the select

  W("lib/a.sh", "a() { echo A; }\n# edited\n");
  Spawned subset = Ste({"select", "--explain"});
  EXPECT_EQ(subset.exit_code, 0) << subset.err;
  EXPECT_EQ(ModeOf(subset), "subset") << subset.err << subset.out;
  EXPECT_NE(subset.out.find("tests/test_a.sh"), std::string::npos)
      << subset.out;
  EXPECT_EQ(subset.out.find("tests/test_b.sh"), std::string::npos)
      << subset.out;
  EXPECT_NE(subset.out.find("<- lib/a.sh (content modified)"),
            std::string::npos)
      << subset.out;

  // Without the local copies: fetched again, same answer.
  std::error_code ec;
  std::filesystem::remove_all(root_ + "/.ste/pgcache", ec);
  Spawned again = Ste({"select", "--explain"});
  EXPECT_EQ(ModeOf(again), "subset") << again.err;
  EXPECT_EQ(again.out, subset.out);
  EXPECT_EQ(CachedFiles().size(), 2u);

  // The server's copy of the index damaged, no local copy: all, and why.
  {
    absl::StatusOr<std::unique_ptr<PgConn>> raw = PgConn::Connect(url_, 10);
    ASSERT_TRUE(raw.ok()) << raw.status();
    ASSERT_TRUE((*raw)
                    ->Exec("UPDATE ste.blob_contents SET bytes = "
                           "set_byte(bytes, 40, get_byte(bytes, 40) # 1) "
                           "WHERE name = 'index'")
                    .ok());
  }
  std::filesystem::remove_all(root_ + "/.ste/pgcache", ec);
  Spawned damaged = Ste({"select", "--explain"});
  EXPECT_EQ(ModeOf(damaged), "all") << damaged.err;
  EXPECT_NE(damaged.err.find("XXH3-128"), std::string::npos) << damaged.err;
  EXPECT_NE(damaged.out.find("tests/test_b.sh"), std::string::npos);
}

TEST_F(PostgresE2eTest, AServerThatDoesNotAnswerSelectsAll) {
  WriteConfig("postgresql:///ste?host=" + root_ + "/no-server-here");
  Spawned s = Ste({"select", "--explain"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(ModeOf(s), "all") << s.err;
  EXPECT_NE(s.err.find("store unusable"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("no-server-here"), std::string::npos) << s.err;
  Spawned record = Ste({"record", "--progress", "none"});
  EXPECT_NE(record.exit_code, 0);
  EXPECT_NE(record.err.find("cannot connect"), std::string::npos) << record.err;
}

}  // namespace
}  // namespace ste
