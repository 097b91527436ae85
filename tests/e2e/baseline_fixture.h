// The repository and helpers the `ste baseline` end-to-end tests share
// (baseline_e2e_test.cc: export/import/list; baseline_gc_e2e_test.cc: gc).
//
// The repository has three shell tests:
//   tests/test_a.sh  sources lib/a.sh
//   tests/test_b.sh  sources lib/b.sh
//   tests/test_c.sh  reads nothing
// and NOTES.txt, which no test reads (commits change it to move HEAD on).
#ifndef STE_TESTS_E2E_BASELINE_FIXTURE_H_
#define STE_TESTS_E2E_BASELINE_FIXTURE_H_

#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "test_support.h"

namespace ste::e2e {

using ::ste::testing::MakeTempDir;
using ::ste::testing::Process;
using ::ste::testing::ReadFile;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

inline const std::string kSte = ste::testing::SteBinary(STE_BINARY);

// Polls `done` every 20 ms for up to `seconds` (a bound, not a bet: the
// condition is what is waited for).
inline bool WaitFor(double seconds, const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// Every file under `dir` with its bytes (relative names), "-wal"/"-shm"
// files of an open SQLite database left out when `skip_wal`.
inline std::map<std::string, std::string> Files(const std::string& dir, bool skip_wal = false) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory()) continue;
    std::string rel = std::filesystem::relative(it->path(), dir).string();
    if (skip_wal && (rel.size() > 4 && (rel.substr(rel.size() - 4) == "-wal" ||
                                        rel.substr(rel.size() - 4) == "-shm"))) {
      continue;
    }
    files[rel] = ReadFile(it->path().string());
  }
  return files;
}

inline std::vector<std::string> Names(const std::map<std::string, std::string>& files) {
  std::vector<std::string> names;
  for (const auto& [name, bytes] : files) names.push_back(name);
  return names;
}

// Every row of an SQLite store's tables, one string per row, sorted:
// "<table>|col|col|...". Read with the SQLite library, not through ste.
inline std::vector<std::string> Rows(const std::string& db_path) {
  std::vector<std::string> rows;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << db_path;
    sqlite3_close(db);
    return rows;
  }
  for (const char* table : {"meta", "baselines", "results", "blobs"}) {
    sqlite3_stmt* stmt = nullptr;
    const std::string sql = std::string("SELECT * FROM ") + table;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
      continue;
    }
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      std::string row = table;
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        const unsigned char* text = sqlite3_column_text(stmt, c);
        row += "|" + std::string(text ? reinterpret_cast<const char*>(text) : "NULL");
      }
      rows.push_back(row);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  std::sort(rows.begin(), rows.end());
  return rows;
}

// The rows of one table only ("baselines|...").
inline std::vector<std::string> RowsOf(const std::vector<std::string>& rows, const std::string& table) {
  std::vector<std::string> out;
  for (const std::string& r : rows) {
    if (r.compare(0, table.size() + 1, table + "|") == 0) out.push_back(r);
  }
  return out;
}

// The text between `"key":` and the next `stop` in a JSON document (the
// outputs compared here are ste's own, one object on one line).
inline std::string JsonPart(const std::string& json, const std::string& key, const std::string& stop) {
  size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return "";
  size_t end = json.find(stop, at);
  return json.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// The object of baseline `id` in `ste baseline list --format json`.
inline std::string BaselineObject(const std::string& json, int id) {
  size_t at = json.find("{\"id\":" + std::to_string(id) + ",");
  if (at == std::string::npos) return "";
  return json.substr(at, json.find('}', at) + 1 - at);
}

inline bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

class BaselineRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    origin_ = dir_ + "/origin";
    W(origin_, "lib/a.sh", "a() { echo A; }\n");
    W(origin_, "lib/b.sh", "b() { echo B; }\n");
    W(origin_, "tests/test_a.sh", ". lib/a.sh\n[ \"$(a)\" = A ]\n");
    W(origin_, "tests/test_b.sh", ". lib/b.sh\n[ \"$(b)\" = B ]\n");
    W(origin_, "tests/test_c.sh", "true\n");
    W(origin_, "NOTES.txt", "0\n");
    W(origin_, "ste.toml", Config());
    ::ste::testing::InitGitRepo(origin_);
    Git(origin_, {"add", "-A"});
    Git(origin_, {"commit", "-q", "-m", "init"});
    Git(origin_, {"branch", "-M", "main"});
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // ste.toml; a test may add a [store] (before SetUp commits: override).
  virtual std::string Config() {
    return "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n";
  }

  static void W(const std::string& root, const std::string& rel, const std::string& content) {
    WriteFile(root + "/" + rel, content);
  }
  static void Git(const std::string& dir, const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(dir, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  static std::string Head(const std::string& dir) {
    return ::ste::testing::Git(dir, {"rev-parse", "HEAD"}).out.substr(0, 40);
  }
  static Spawned Ste(const std::string& dir, std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, dir);
  }
  // A commit that moves HEAD on without touching what tests read.
  void Commit(const std::string& note) {
    W(origin_, "NOTES.txt", note + "\n");
    Git(origin_, {"commit", "-q", "-a", "-m", "notes: " + note});
  }
  void Record(const std::string& dir) {
    Spawned r = Ste(dir, {"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  // A depth-1 clone of `branch`, with no store.
  std::string ShallowClone(const std::string& branch, const std::string& name = "clone") {
    std::string clone = dir_ + "/" + name;
    Spawned c = Spawn({"git", "clone", "-q", "--depth", "1", "--branch", branch,
                       "file://" + origin_, clone},
                      {}, "/");
    EXPECT_EQ(c.exit_code, 0) << c.err;
    return clone;
  }

  // `ste scheduler` on a unix socket over `store`, ready (its port file
  // written); a real process of this test, stopped by its pid.
  std::string StartScheduler(const std::string& name, const std::string& store) {
    const std::string port_file = dir_ + "/" + name + ".port";
    const std::string address = "unix:" + dir_ + "/" + name + ".sock";
    schedulers_[name] = std::make_unique<Process>(
        std::vector<std::string>{kSte, "scheduler", "--listen", address, "--store", store,
                                 "--port-file", port_file},
        std::vector<std::string>{}, dir_, dir_ + "/" + name + ".out", dir_ + "/" + name + ".err");
    Process& p = *schedulers_[name];
    EXPECT_TRUE(WaitFor(30, [&] { return !ReadFile(port_file).empty() || !p.running(); }))
        << p.err();
    EXPECT_TRUE(p.running()) << p.err();
    return address;
  }
  // Starts a record build on scheduler `name` without waiting for it: the
  // scheduler's store object begins the baseline and holds it.
  void StartBuild(const std::string& name, const std::string& address) {
    Spawned r = Ste(origin_, {"record", "--scheduler", address, "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.out << r.err;
  }
  Process& Scheduler(const std::string& name) { return *schedulers_.at(name); }

  std::string dir_, origin_;
  std::map<std::string, std::unique_ptr<Process>> schedulers_;
};

}  // namespace ste::e2e

#endif  // STE_TESTS_E2E_BASELINE_FIXTURE_H_
