// Copyright: the ste authors. store_crasher DB STEP [DELAY_MS]
//
// Opens the SQLite store DB, records baseline 1 (mri 1) completely, starts
// baseline 2 (mri 2) and kills itself with SIGKILL at STEP:
//
//   after-begin             Begin() returned
//   blob-half-written       inside PutBlob("index", 50 MB): half the bytes
//                           are in the temp file (store's fault hook)
//   blob-renamed            inside PutBlob: the file is durable under its
//                           final name, its row is not inserted (hook)
//   blob-thread             a thread raises SIGKILL DELAY_MS after PutBlob
//                           of the 50 MB index starts, wherever PutBlob is
//                           then (hashing, writing, fsync, SQLite commit);
//                           the last hook point passed is printed
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
#include <string>
#include <thread>

#include "crash_data.h"
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
    fprintf(stderr, "usage: store_crasher DB STEP [DELAY_MS]\n");
    return 2;
  }
  g_step = argv[2];
  const int delay_ms = argc > 3 ? atoi(argv[3]) : 0;
  namespace cd = ste::crash_data;

  ste::SqliteStoreOptions options;
  options.fault_hook = [](const char* point) {
    g_last_point = point;
    KillAt(point);
  };
  auto store = ste::OpenSqliteStore(argv[1], options);
  Check(store.status(), "open");
  ste::BaselineStore& s = **store;

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
