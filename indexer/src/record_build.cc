#include "ste/record_build.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ste/selection.h"
#include "ste/selection_index.h"
#include "ste/status_macros.h"

namespace ste {
namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool InScope(const std::string& scope, const std::string& test_scope) {
  return scope == test_scope ||
         (scope.size() > test_scope.size() &&
          scope.compare(0, test_scope.size(), test_scope) == 0 &&
          scope[test_scope.size()] == '/');
}

// Feeds one test's dependency set to the builder.
absl::Status Feed(SelectionIndexBuilder& builder, uint32_t test_id,
                  const TestRecord& record) {
  const std::string own = TestScope(record.test);
  for (const ScopeDependencies& s : record.deps.scopes) {
    if (InScope(s.scope, own)) {
      // Beneath the test (a test case's scope) rolls up to the test.
      std::vector<uint32_t> ids[kDepKindCount + 1];
      for (const DepKey& k : s.deps) {
        ids[static_cast<int>(k.kind)].push_back(builder.InternPath(k.path));
      }
      for (int kind = 1; kind <= kDepKindCount; kind++) {
        if (ids[kind].empty()) continue;
        STE_RETURN_IF_ERROR(builder.AddTestDependencies(test_id, ids[kind],
                                                        static_cast<DepKind>(kind)));
      }
    } else {
      for (const DepKey& k : s.deps) {
        STE_RETURN_IF_ERROR(builder.AddScopeDependency(s.scope, k.path, k.kind));
      }
    }
  }
  if (record.deps.opaque) STE_RETURN_IF_ERROR(builder.SetOpaque(test_id));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RecordBuildOutput> RunRecordBuild(const Config& config,
                                                 const RecordBuildOptions& options) {
  RecordBuildOutput out;
  const int jobs = std::max(1, options.jobs > 0 ? options.jobs : config.jobs);
  auto phase = [&](const char* name) {
    if (options.phase) options.phase(name);
  };

  // 1. The inventory, before anything runs.
  phase("inventory");
  auto start = std::chrono::steady_clock::now();
  STE_ASSIGN_OR_RETURN(GlobSet ignore, GlobSet::Compile(config.inventory_ignore));
  ScanOptions scan;
  scan.root = config.root;
  scan.ignore = ignore;
  scan.threads = jobs;
  STE_ASSIGN_OR_RETURN(Inventory repo, Inventory::Scan(scan, options.previous_inventory));
  out.inventory_seconds = Since(start);

  // 2. The tests.
  std::vector<std::string> tests = DiscoverTests(config, repo);
  if (tests.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no test file matches tests.include in ", config.config_path));
  }
  std::vector<std::string> scopes;
  for (const std::string& t : tests) scopes.push_back(TestScope(t));
  SelectionIndexBuilder builder;
  STE_RETURN_IF_ERROR(builder.AddTests(scopes));

  // 3. Run them, longest first, feeding the builder as results arrive.
  phase("tests");
  start = std::chrono::steady_clock::now();
  std::vector<std::string> order = tests;
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    auto da = options.previous_seconds.find(a), db = options.previous_seconds.find(b);
    double sa = da == options.previous_seconds.end() ? 1e9 : da->second;  // new: first
    double sb = db == options.previous_seconds.end() ? 1e9 : db->second;
    return sa > sb;
  });
  RunOneTestOptions run;
  run.preload_library = options.preload_library;
  run.scratch_dir = options.scratch_dir;
  std::atomic<size_t> next{0};
  std::mutex mu;  // guards out.tests, feed_status, progress
  absl::Status feed_status;
  std::vector<std::thread> workers;
  for (int w = 0; w < jobs; w++) {
    workers.emplace_back([&] {
      for (;;) {
        size_t i = next.fetch_add(1);
        if (i >= order.size()) return;
        TestRecord record = RunOneTest(config, order[i], run);
        std::optional<uint32_t> id = builder.FindTest(TestScope(record.test));
        absl::Status fed = id ? Feed(builder, *id, record)
                              : absl::InternalError("test vanished: " + record.test);
        std::lock_guard<std::mutex> lock(mu);
        if (!fed.ok() && feed_status.ok()) feed_status = fed;
        out.tests.push_back(std::move(record));
        if (options.progress) {
          options.progress(RecordProgress{out.tests.size(), order.size(), &out.tests.back()});
        }
      }
    });
  }
  for (std::thread& t : workers) t.join();
  out.tests_seconds = Since(start);
  STE_RETURN_IF_ERROR(feed_status);
  std::sort(out.tests.begin(), out.tests.end(),
            [](const TestRecord& a, const TestRecord& b) { return a.test < b.test; });

  // 4. Files outside the repo that the tests read.
  std::vector<InventoryEntry> entries = repo.entries();
  if (config.inventory_external) {
    phase("external files");
    std::set<std::string> external;
    for (const TestRecord& r : out.tests) {
      for (const ScopeDependencies& s : r.deps.scopes) {
        for (const DepKey& k : s.deps) {
          if (k.path[0] == '/') external.insert(k.path);
        }
      }
    }
    if (!external.empty()) {
      std::string empty_root = options.scratch_dir + "/external-XXXXXX";
      if (mkdtemp(empty_root.data()) == nullptr) {
        return absl::InternalError("cannot create a scratch directory");
      }
      ScanOptions ext;
      ext.root = empty_root;
      ext.external_paths.assign(external.begin(), external.end());
      ext.threads = jobs;
      absl::StatusOr<Inventory> outside = Inventory::Scan(ext, options.previous_inventory);
      rmdir(empty_root.c_str());
      if (!outside.ok()) return outside.status();
      for (const InventoryEntry& e : outside->entries()) {
        if (e.path[0] == '/') entries.push_back(e);
      }
    }
  }
  STE_ASSIGN_OR_RETURN(out.inventory,
                       Inventory::FromEntries(std::move(entries), repo.taken_at_ns()));

  // 5. The index.
  phase("index");
  start = std::chrono::steady_clock::now();
  STE_ASSIGN_OR_RETURN(out.index, builder.Finish());
  out.index_seconds = Since(start);
  return out;
}

}  // namespace ste
