// Copyright: the ste authors. `ste report` at scale: writes a synthetic
// store for bench/report/run.sh to make a page of.
//
//   report_store DIR [--tests N] [--builds B] [--audits A] [--deps D]
//
// DIR gets ste.toml (store sqlite:.ste/ste.db) and a store holding one
// complete baseline of N tests `t/test_<i>.py` (default 100,000), each
// depending on its own file, D of 5,000 modules (seeded, with a few
// modules that most tests share) and 40 root-scope paths; 1% opaque with
// a reason, 0.5% flaky, 100 writers; then B selections (default 5,000)
// and A audits (default 200) in the history. Prints what it wrote.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ste/baseline_loader.h"
#include "ste/baseline_store.h"
#include "ste/inventory.h"
#include "ste/selection_index.h"

namespace {

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "report_store: %s\n", std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: report_store DIR [--tests N] [--builds B] [--audits A] [--deps D]\n");
    return 2;
  }
  const std::string dir = argv[1];
  uint32_t tests = 100000, builds = 5000, audits = 200, deps = 30;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string f = argv[i];
    const uint32_t v = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
    if (f == "--tests") tests = v;
    else if (f == "--builds") builds = v;
    else if (f == "--audits") audits = v;
    else if (f == "--deps") deps = v;
  }
  const auto start = std::chrono::steady_clock::now();
  std::filesystem::create_directories(dir + "/.ste");
  std::ofstream(dir + "/ste.toml") << "[tests]\ninclude = [\"t/test_*.py\"]\n[runner]\ncommand = \"true {test}\"\n"
                                      "[store]\nurl = \"sqlite:.ste/ste.db\"\n";
  std::mt19937_64 random(1);
  auto Next = [&random](uint64_t*) { return random(); };
  uint64_t seed = 1;
  ste::SelectionIndexBuilder builder;
  std::vector<std::string> scopes;
  for (uint32_t t = 0; t < tests; t++) scopes.push_back(absl::StrFormat("//r/t/test_%06u.py", t));
  if (absl::Status s = builder.AddTests(scopes); !s.ok()) return Fail(s);
  for (int r = 0; r < 40; r++) {
    if (absl::Status s = builder.AddScopeDependency("//r", absl::StrCat("/usr/lib/python3.11/mod", r, ".py"),
                                                    ste::DepKind::kContent);
        !s.ok())
      return Fail(s);
  }
  std::vector<uint32_t> modules;
  for (int m = 0; m < 5000; m++) modules.push_back(builder.InternPath(absl::StrFormat("src/pkg%02d/mod%04d.py", m % 50, m)));
  std::vector<ste::TestResult> results;
  std::map<std::string, std::vector<std::string>> opaque, writes;
  std::vector<std::string> flaky;
  for (uint32_t t = 0; t < tests; t++) {
    const std::string test = scopes[t].substr(4);
    std::vector<uint32_t> ids = {builder.InternPath(test)};
    for (uint32_t d = 0; d < deps; d++) {
      // Skewed: low module numbers are shared by many tests.
      const uint64_t r = Next(&seed) % 5000;
      ids.push_back(modules[(r * r) / 5000]);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (absl::Status s = builder.AddTestDependencies(t, ids, ste::DepKind::kContent); !s.ok()) return Fail(s);
    ste::TestResult res;
    res.test = test;
    res.seconds = 0.05 + static_cast<double>(Next(&seed) % 10000) / 1000.0;
    if (t % 100 == 7) {
      res.opaque = true;
      if (absl::Status s = builder.SetOpaque(t); !s.ok()) return Fail(s);
      opaque[test] = {"unfollowed: /usr/local/bin/static-tool"};
    }
    if (t % 200 == 3) flaky.push_back(test);
    if (t % 1000 == 5) writes[test] = {absl::StrFormat("src/pkg%02d/mod%04d.py", 0, 0)};
    results.push_back(std::move(res));
  }
  absl::StatusOr<std::string> index = builder.Finish();
  if (!index.ok()) return Fail(index.status());
  absl::StatusOr<ste::Inventory> inventory = ste::Inventory::FromEntries({}, 0);
  if (!inventory.ok()) return Fail(inventory.status());
  absl::StatusOr<std::unique_ptr<ste::Store>> store = ste::Store::Open("sqlite:.ste/ste.db", dir);
  if (!store.ok()) return Fail(store.status());
  ste::Store& st = **store;
  absl::StatusOr<int64_t> id = st.Begin("0123456789abcdef0123456789abcdef01234567", 1);
  if (!id.ok()) return Fail(id.status());
  for (absl::Status s : {st.PutBlob(*id, "index", *index), st.PutBlob(*id, "inventory", inventory->Serialize()),
                         st.PutBlob(*id, ste::kOpaqueBlob, ste::EncodeWrites(opaque)),
                         st.PutBlob(*id, ste::kFlakyBlob, ste::EncodeTestNames(flaky)),
                         st.PutBlob(*id, ste::kWritesBlob, ste::EncodeWrites(writes)), st.PutResults(*id, results),
                         st.Complete(*id)}) {
    if (!s.ok()) return Fail(s);
  }
  for (uint32_t b = 0; b < builds; b++) {
    ste::SelectionEntry e;
    e.baseline = *id;
    e.commit = absl::StrFormat("%040x", b);
    const uint64_t r = Next(&seed) % 100;
    e.mode = r < 8 ? "all" : r < 12 ? "none" : "subset";
    e.tests = tests;
    e.selected = e.mode == "all" ? tests : e.mode == "none" ? 0 : static_cast<int64_t>(Next(&seed) % (tests / 10));
    e.changed = static_cast<int64_t>(Next(&seed) % 40);
    e.reason = absl::StrCat(e.selected, " of ", tests, " tests are affected");
    e.skipped_seconds = static_cast<double>(tests - e.selected) * 5;
    e.seconds = 0.3;
    e.origin = "select";
    if (absl::StatusOr<int64_t> a = st.AppendSelection(e); !a.ok()) return Fail(a.status());
  }
  for (uint32_t a = 0; a < audits; a++) {
    ste::AuditEntry e;
    e.baseline = *id;
    e.kind = a % 2 ? "audit" : "observe";
    e.left_out = 50000;
    e.ran = a % 2 ? 100 : 50000;
    if (a % 50 == 0) e.flaky = {results[a].test};
    if (absl::StatusOr<int64_t> x = st.AppendAudit(e); !x.ok()) return Fail(x.status());
  }
  std::printf("report_store: %s: %u tests (index %zu bytes), %u builds, %u audits in %.1f s\n", dir.c_str(), tests,
              index->size(), builds, audits,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}
