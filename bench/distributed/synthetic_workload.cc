#include "synthetic_workload.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "absl/strings/str_cat.h"

namespace ste::bench {
namespace {

// splitmix64, as in bench/index.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint32_t Below(uint32_t n) {
    return static_cast<uint32_t>((Next() >> 32) * n >> 32);
  }
};

constexpr uint32_t kFilesPerPackage = 100;
constexpr uint32_t kCorePackages = 10;

std::string TestName(uint32_t t) {
  char name[32];
  std::snprintf(name, sizeof name, "t/test_%05u.py", t + 1);
  return name;
}

// One test's record (see synthetic_workload.h). `mark` has one byte per
// file, all zero on entry and on return.
TestRecord MakeRecord(const WorkloadModel& f, uint32_t t,
                      const std::vector<std::string>& files,
                      std::vector<uint8_t>& mark) {
  const uint32_t packages =
      (f.universe + kFilesPerPackage - 1) / kFilesPerPackage;
  Rng rng{f.seed * 0x100000001b3ULL + t};
  const uint32_t n = f.min_deps + rng.Below(f.max_deps - f.min_deps + 1);
  std::vector<uint32_t> chosen;
  std::vector<uint32_t> touched;  // packages
  std::vector<uint8_t> pkg_seen(packages, 0);
  auto add = [&](uint32_t i) {
    if (mark[i]) return;
    mark[i] = 1;
    chosen.push_back(i);
    const uint32_t p = i / kFilesPerPackage;
    if (!pkg_seen[p]) {
      pkg_seen[p] = 1;
      touched.push_back(p);
    }
  };
  auto count = [&] { return chosen.size() + 2 * touched.size(); };
  const uint32_t scattered = n / 20;
  const uint32_t core = std::min(f.universe, kCorePackages * kFilesPerPackage);
  for (uint32_t i = 0; i < core; ++i) {
    if (rng.Below(1000) >= 50) add(i);
  }
  const uint32_t first = std::min(kCorePackages, packages - 1);
  const uint32_t home =
      first + static_cast<uint32_t>(uint64_t{t} * (packages - first) / f.tests);
  for (uint32_t k = 0; count() + scattered < n && k < 4 * packages; ++k) {
    uint32_t p;
    if (k % 2 == 0) {  // neighbours: home, home+1, home-1, home+2, ...
      const int64_t step = static_cast<int64_t>(k / 2 + 1) / 2;
      const int64_t q = (k / 2) % 2 ? home - step : home + step;
      p = static_cast<uint32_t>(((q % packages) + packages) % packages);
    } else {
      p = rng.Below(packages);
    }
    for (uint32_t m = 0; m < kFilesPerPackage && count() + scattered < n; ++m) {
      const uint32_t i = p * kFilesPerPackage + m;
      if (i < f.universe && rng.Below(10) != 0) add(i);
    }
  }
  for (uint32_t tries = 0; count() < n && tries < 20 * n; ++tries) {
    add(rng.Below(f.universe));
  }
  TestRecord r;
  r.test = TestName(t);
  r.seconds = 0.5 + rng.Below(1000) / 100.0;
  ScopeDependencies scope;
  scope.scope = ScopeOfTest(r.test);
  scope.deps.reserve(count());
  for (uint32_t i : chosen) {
    scope.deps.push_back({files[i], DepKind::kContent});
    mark[i] = 0;
  }
  for (uint32_t p : touched) {
    scope.deps.push_back({absl::StrCat("src/pkg_", p), DepKind::kListing});
    scope.deps.push_back(
        {absl::StrCat("src/pkg_", p, "/_native.so"), DepKind::kAbsent});
  }
  std::sort(scope.deps.begin(), scope.deps.end());
  r.deps.scopes.push_back(std::move(scope));
  return r;
}

}  // namespace

Workload GenerateWorkload(const WorkloadModel& f) {
  std::vector<std::string> files(f.universe);
  for (uint32_t i = 0; i < f.universe; ++i) {
    files[i] = absl::StrCat("src/pkg_", i / kFilesPerPackage, "/mod_",
                            i % kFilesPerPackage, ".py");
  }
  Workload w;
  w.records.resize(f.tests);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < threads; ++k) {
    pool.emplace_back([&, k] {
      std::vector<uint8_t> mark(f.universe, 0);
      for (uint32_t t = k; t < f.tests; t += threads) {
        w.records[t] = MakeRecord(f, t, files, mark);
      }
    });
  }
  for (std::thread& t : pool) t.join();
  w.deps.resize(f.tests);
  for (uint32_t t = 0; t < f.tests; ++t) {
    w.index_of[w.records[t].test] = t;
    for (const DepKey& k : w.records[t].deps.scopes[0].deps) {
      w.by_kind[static_cast<int>(k.kind)]++;
      w.deps[t]++;
    }
    w.total += w.deps[t];
  }
  return w;
}

}  // namespace ste::bench
