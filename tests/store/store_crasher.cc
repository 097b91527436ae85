// Copyright: the ste authors. store_crasher STORE STEP [DELAY_MS]
//
// Opens the store STORE (an SQLite file path, or a postgresql:// URL),
// records baseline 1 (mri 1) completely, starts baseline 2 (mri 2) and
// kills itself with SIGKILL at STEP:
//
//   after-begin             Begin() returned
//   blob-half-written       (SQLite) inside PutBlob("index", 50 MB): half
//                           the bytes are in the temp file (fault hook)
//   blob-renamed            (SQLite) inside PutBlob: the file is durable
//                           under its final name, its row is not inserted
//   blob-before-commit      (PostgreSQL) inside PutBlob: the rows and the
//                           50 MB are sent, COMMIT is not (fault hook)
//   blob-thread             a thread raises SIGKILL DELAY_MS after PutBlob
//                           of the 50 MB index starts, wherever PutBlob is
//                           then (hashing, writing or sending, fsync,
//                           commit); the last hook point passed is printed
//   after-put-blob          both blobs and the results are stored, before
//                           Complete()
//   complete-before-commit  inside Complete(): its UPDATE ran, COMMIT did
//                           not (hook)
//   after-complete          Complete() returned
//   none                    no kill: exits 0 after completing baseline 2
//
// Exits 3 (with a message) on any store error, so a test can tell a real
// failure from the expected SIGKILL.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "crash_data.h"
#include "postgres_store.h"
#include "sqlite_store.h"

namespace {

std::string g_step;
std::atomic<const char*> g_last_point{"none"};
std::atomic<bool> g_armed{false};  // kills only once baseline 2 is begun

void Die() {
  fprintf(stderr, "store_crasher: SIGKILL at %s (last store point: %s)\n",
          g_step.c_str(), g_last_point.load());
  raise(SIGKILL);
}

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) {
    fprintf(stderr, "store_crasher: %s: %s\n", what,
            std::string(status.ToString()).c_str());
    exit(3);
  }
}

void KillAt(const char* step) {
  if (g_armed && g_step == step) Die();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: store_crasher STORE STEP [DELAY_MS]\n");
    return 2;
  }
  g_step = argv[2];
  const int delay_ms = argc > 3 ? atoi(argv[3]) : 0;
  namespace cd = ste::crash_data;

  auto hook = [](const char* point) {
    g_last_point = point;
    KillAt(point);
  };
  const std::string where = argv[1];
  absl::StatusOr<std::unique_ptr<ste::Store>> store;
  if (absl::StartsWith(where, "postgresql://")) {
    ste::PostgresStoreOptions options;
    options.fault_hook = hook;
    // Never written: the crasher asks for no blob path.
    const std::string cache =
        (std::filesystem::temp_directory_path() / "ste-store-crasher-cache")
            .string();
    store = ste::OpenPostgresStore(where, cache, options);
  } else {
    ste::SqliteStoreOptions options;
    options.fault_hook = hook;
    store = ste::OpenSqliteStore(where, options);
  }
  Check(store.status(), "open");
  ste::Store& s = **store;

  // Baseline 1, complete.
  auto first = s.Begin(cd::Commit(1), 1);
  Check(first.status(), "begin 1");
  Check(s.PutBlob(*first, "index", cd::Index(1)), "index 1");
  Check(s.PutBlob(*first, "inventory", cd::Inventory(1)), "inventory 1");
  Check(s.PutResults(*first, cd::Results(1)), "results 1");
  Check(s.Complete(*first), "complete 1");

  // Baseline 2, killed somewhere.
  const std::string index = cd::Index(2);
  const std::string inventory = cd::Inventory(2);
  auto second = s.Begin(cd::Commit(2), 2);
  Check(second.status(), "begin 2");
  g_armed = true;
  KillAt("after-begin");
  Check(s.PutResults(*second, cd::Results(2)), "results 2");
  if (g_step == "blob-thread") {
    std::thread([delay_ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      Die();
    }).detach();
  }
  g_last_point = "PutBlob started";
  Check(s.PutBlob(*second, "index", index), "index 2");
  if (g_step == "blob-thread") {
    g_last_point = "PutBlob returned";
    for (;;) pause();  // the thread's kill lands after PutBlob, then
  }
  Check(s.PutBlob(*second, "inventory", inventory), "inventory 2");
  KillAt("after-put-blob");
  Check(s.Complete(*second), "complete 2");
  KillAt("after-complete");
  return 0;
}
