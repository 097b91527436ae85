// Copyright: the ste authors. P4/P5: the selection index at "Stripe scale".
//
//   index_bench build --out FILE [--tests N] [--files F] [--core C]
//                     [--producers P] [--threads T] [--seed S]
//                     [--scattered K] [--shuffle-deps] [--format 1|2]
//   index_bench query --index FILE [--changed K] [--core-percent P]
//                     [--runs R] [--evict]
//
// build: generates a seeded synthetic record (N tests x F files, about
// 3e9 (test, file) pairs at the defaults), feeds it test by test through
// SelectionIndexBuilder::AddTestDependencies (dictionary-coded ids, from P
// producer threads, blocks of tests in shuffled order), writes FILE with
// WriteFile, and prints times, peak RSS and bytes on disk. Each test's ids
// come as three ascending stretches (core, pool, scattered); --shuffle-deps
// shuffles them, to measure the builder's any-order path. --format 1
// writes the old file format (whole-table checksum), to compare P5 with it.
// query: opens FILE (mmap) and unites the bitmaps of K changed files (P%
// core, default 10, the rest tail); prints the first run and the median of
// R runs, each a fresh Open + Union. --evict drops the file from the page
// cache first (posix_fadvise DONTNEED), so the first run reads from disk.
//
// The model (all knobs are flags; see README.md):
//  - tests live in directories of 20..180 tests (~1000 directories);
//  - files 0..C-1 are the shared core; each test directory skips 0..4
//    chunks of 100..600 core files (subsystems it never loads) and each
//    test drops ~0.2% more at random: every core file is read by ~90-100%
//    of tests, in long runs of test ids;
//  - files C..F-1 are the tail, in directories of 500 files. Each test
//    directory has a pool of 12 tail directories (6 near its own position:
//    locality, 6 random: shared libraries); each test reads each pool file
//    with probability 15/16, plus 170 tail files at random (--scattered).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "ste/selection_index.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Peak resident set size of this process, from /proc/self/status.
long PeakRssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

// splitmix64: tiny, fast, good enough for a workload generator.
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

struct Flags {
  std::string mode;
  std::string out;
  uint32_t tests = 100000;
  uint32_t files = 500000;
  uint32_t core = 25000;
  int producers = 2;
  int threads = 0;
  uint64_t seed = 1;
  int changed = 100;
  int core_percent = 10;
  int runs = 20;
  bool evict = false;
  bool shuffle_deps = false;
  uint32_t format = 2;  // the file format written
  uint32_t scattered = 170;  // tail files per test outside its pool
};

struct TestDir {
  uint32_t first_test;
  uint32_t end_test;
  std::vector<uint32_t> core;  // core ids this directory loads
  std::vector<uint32_t> pool;  // its tail pool, ascending
};

struct Model {
  Flags f;
  std::vector<TestDir> dirs;
  std::vector<uint32_t> dir_of_test;
  std::vector<std::string> scopes;

  static constexpr uint32_t kTailDirSize = 500;
  static constexpr int kPoolNear = 6;
  static constexpr int kPoolFar = 6;
  static constexpr uint32_t kCoreDropPerMille = 2;

  void Init() {
    Rng rng{f.seed};
    const uint32_t tail_dirs =
        std::max<uint32_t>(1, (f.files - f.core) / kTailDirSize);
    for (uint32_t t = 0; t < f.tests;) {
      TestDir d;
      d.first_test = t;
      d.end_test = std::min(f.tests, t + 20 + rng.Below(161));
      t = d.end_test;
      // Core: all of it minus a few skipped chunks.
      std::vector<bool> skip(f.core, false);
      const uint32_t chunks = rng.Below(5);
      for (uint32_t c = 0; c < chunks && f.core > 0; ++c) {
        const uint32_t start = rng.Below(f.core);
        const uint32_t len = 100 + rng.Below(501);
        for (uint32_t i = start; i < std::min(f.core, start + len); ++i) {
          skip[i] = true;
        }
      }
      for (uint32_t i = 0; i < f.core; ++i) {
        if (!skip[i]) d.core.push_back(i);
      }
      // Tail pool: near directories (by position) and random ones.
      std::vector<uint32_t> pool_dirs;
      const uint32_t here = static_cast<uint32_t>(
          uint64_t{d.first_test} * tail_dirs / std::max<uint32_t>(1, f.tests));
      for (int k = 0; k < kPoolNear; ++k) {
        pool_dirs.push_back((here + k) % tail_dirs);
      }
      for (int k = 0; k < kPoolFar; ++k)
        pool_dirs.push_back(rng.Below(tail_dirs));
      std::sort(pool_dirs.begin(), pool_dirs.end());
      pool_dirs.erase(std::unique(pool_dirs.begin(), pool_dirs.end()),
                      pool_dirs.end());
      for (uint32_t pd : pool_dirs) {
        for (uint32_t i = 0; i < kTailDirSize; ++i) {
          const uint32_t id = f.core + pd * kTailDirSize + i;
          if (id < f.files) d.pool.push_back(id);
        }
      }
      for (uint32_t i = d.first_test; i < d.end_test; ++i) {
        dir_of_test.push_back(static_cast<uint32_t>(dirs.size()));
      }
      dirs.push_back(std::move(d));
    }
    // Scopes, zero-padded so that generation order is scope order.
    char buf[64];
    scopes.reserve(f.tests);
    for (uint32_t t = 0; t < f.tests; ++t) {
      std::snprintf(buf, sizeof(buf), "//r/test/d%05u/t%07u_test.rb",
                    dir_of_test[t], t);
      scopes.emplace_back(buf);
    }
  }

  static std::string PathOf(uint32_t id, uint32_t core) {
    char buf[64];
    if (id < core) {
      std::snprintf(buf, sizeof(buf), "lib/core/c%06u.rb", id);
    } else {
      std::snprintf(buf, sizeof(buf), "lib/pkg%04u/f%07u.rb",
                    (id - core) / kTailDirSize, id);
    }
    return buf;
  }

  // The dependency set of test t into *out (unsorted across segments).
  void Generate(uint32_t t, std::vector<uint32_t>* out) const {
    const TestDir& d = dirs[dir_of_test[t]];
    Rng rng{f.seed * 0x100000001b3ULL + t};
    out->resize(d.core.size() + d.pool.size() + f.scattered);
    uint32_t* o = out->data();
    // Core: copy, dropping ~kCoreDropPerMille per mille at random.
    size_t i = 0;
    const uint32_t mean_gap = 1000 / kCoreDropPerMille;
    while (i < d.core.size()) {
      const size_t gap =
          std::min<size_t>(d.core.size() - i, rng.Below(2 * mean_gap));
      std::memcpy(o, d.core.data() + i, gap * sizeof(uint32_t));
      o += gap;
      i += gap + 1;  // the dropped one
    }
    // Pool: keep each with probability 15/16 (4 random bits per file).
    uint64_t bits = 0;
    for (size_t k = 0; k < d.pool.size(); ++k) {
      if ((k & 15) == 0) bits = rng.Next();
      *o = d.pool[k];
      o += (bits & 15) != 15;
      bits >>= 4;
    }
    // Scattered tail files.
    const uint32_t tail = f.files - f.core;
    for (uint32_t k = 0; k < f.scattered && tail > 0; ++k) {
      *o++ = f.core + rng.Below(tail);
    }
    out->resize(o - out->data());
  }
};

int Build(const Flags& flags) {
  const auto t0 = Clock::now();
  Model model;
  model.f = flags;
  model.Init();
  ste::SelectionIndexBuilder builder(
      ste::SelectionIndexBuilder::Options{flags.threads, flags.format});
  if (auto s = builder.AddTests(model.scopes); !s.ok()) {
    std::fprintf(stderr, "AddTests: %s\n", s.ToString().c_str());
    return 1;
  }
  for (uint32_t t = 0; t < flags.tests; t += 997) {  // ids follow scope order
    if (builder.test_scope(t) != model.scopes[t]) {
      std::fprintf(stderr, "test order mismatch at %u\n", t);
      return 1;
    }
  }
  for (uint32_t p = 0; p < flags.files; ++p) {
    if (builder.InternPath(Model::PathOf(p, flags.core)) != p) {
      std::fprintf(stderr, "path id mismatch at %u\n", p);
      return 1;
    }
  }
  // A few root-scope and directory-scope dependencies, as a runner would
  // record for its framework and per-directory helpers.
  for (int i = 0; i < 200; ++i) {
    (void)builder.AddScopeDependency(
        "//r", "vendor/framework/f" + std::to_string(i) + ".rb",
        ste::DepKind::kContent);
  }
  const auto t_setup = Clock::now();

  // Blocks of 500 tests, shuffled, spread over the producers.
  constexpr uint32_t kBlock = 500;
  std::vector<uint32_t> blocks((flags.tests + kBlock - 1) / kBlock);
  std::iota(blocks.begin(), blocks.end(), 0);
  Rng shuffle_rng{flags.seed ^ 0xabcdef};
  for (size_t i = blocks.size(); i > 1; --i) {
    std::swap(blocks[i - 1],
              blocks[shuffle_rng.Below(static_cast<uint32_t>(i))]);
  }
  std::atomic<size_t> next_block{0};
  std::atomic<uint64_t> pairs{0};
  std::vector<double> gen_s(flags.producers), ingest_s(flags.producers);
  std::atomic<bool> failed{false};
  std::vector<std::thread> producers;
  for (int j = 0; j < flags.producers; ++j) {
    producers.emplace_back([&, j] {
      std::vector<uint32_t> deps;
      uint64_t my_pairs = 0;
      double g = 0, in = 0;
      for (size_t b; (b = next_block.fetch_add(1)) < blocks.size();) {
        const uint32_t first = blocks[b] * kBlock;
        const uint32_t end = std::min(flags.tests, first + kBlock);
        for (uint32_t t = first; t < end; ++t) {
          const auto a = Clock::now();
          model.Generate(t, &deps);
          if (flags.shuffle_deps) {  // the builder's slow path: any order
            Rng rng{t * 0x9e3779b97f4a7c15ULL};
            for (size_t i = deps.size(); i > 1; --i) {
              std::swap(deps[i - 1], deps[rng.Below(static_cast<uint32_t>(i))]);
            }
          }
          const auto m = Clock::now();
          auto s = builder.AddTestDependencies(t, deps, ste::DepKind::kContent);
          const auto e = Clock::now();
          if (!s.ok()) failed = true;
          g += Seconds(a, m);
          in += Seconds(m, e);
          my_pairs += deps.size();
        }
      }
      gen_s[j] = g;
      ingest_s[j] = in;
      pairs += my_pairs;
    });
  }
  for (std::thread& p : producers) p.join();
  if (failed) {
    std::fprintf(stderr, "AddTestDependencies failed\n");
    return 1;
  }
  const auto t_ingested = Clock::now();
  const long rss_ingested = PeakRssKiB();
  if (auto s = builder.WriteFile(flags.out); !s.ok()) {
    std::fprintf(stderr, "WriteFile: %s\n", s.ToString().c_str());
    return 1;
  }
  const auto t_written = Clock::now();
  const long rss_peak = PeakRssKiB();

  std::ifstream in(flags.out, std::ios::binary | std::ios::ate);
  const long long bytes = static_cast<long long>(in.tellg());
  double g = 0, ing = 0;
  for (int j = 0; j < flags.producers; ++j) {
    g += gen_s[j];
    ing += ingest_s[j];
  }
  std::printf("P4 build: %u tests x %u files, %" PRIu64
              " (test, file) pairs (+200 root-scope deps), seed %" PRIu64 "\n",
              flags.tests, flags.files, pairs.load(), flags.seed);
  std::printf("  setup (model, AddTests, InternPath x%u)  %8.2f s wall\n",
              flags.files, Seconds(t0, t_setup));
  std::printf("  generate + ingest (%d producers)        %8.2f s wall\n",
              flags.producers, Seconds(t_setup, t_ingested));
  std::printf(
      "    of which generator                   %8.2f s cpu (%.2f ns/pair)\n",
      g, 1e9 * g / static_cast<double>(pairs.load()));
  std::printf(
      "    of which AddTestDependencies         %8.2f s cpu (%.2f ns/pair)\n",
      ing, 1e9 * ing / static_cast<double>(pairs.load()));
  const auto& st = builder.stats();
  std::printf("  WriteFile (transpose, optimize, write)  %8.2f s wall\n",
              Seconds(t_ingested, t_written));
  std::printf(
      "    transpose %.2f s, compact %.2f s, serialize+write %.2f s; "
      "%" PRIu64 " pairs -> %" PRIu64 " runs, %" PRIu64 " keys\n",
      st.transpose_seconds, st.compact_seconds, st.write_seconds, st.pairs,
      st.runs, st.keys);
  std::printf("  total                                   %8.2f s wall\n",
              Seconds(t0, t_written));
  std::printf("  total minus generator cpu / producers   %8.2f s\n",
              Seconds(t0, t_written) - g / flags.producers);
  std::printf("  peak RSS after ingest %.2f GiB, overall %.2f GiB (VmHWM)\n",
              rss_ingested / 1048576.0, rss_peak / 1048576.0);
  std::printf("  index file %s: %lld bytes (%.1f MiB)\n", flags.out.c_str(),
              bytes, bytes / 1048576.0);
  return 0;
}

int Query(const Flags& flags) {
  // The changed files: 10% core, 90% tail, of the build's model.
  Rng rng{flags.seed ^ 0x5eed};
  std::vector<ste::DepKey> changed;
  for (int i = 0; i < flags.changed; ++i) {
    const bool core =
        i * flags.core_percent / 100 != (i + 1) * flags.core_percent / 100;
    const uint32_t id = core ? rng.Below(flags.core)
                             : flags.core + rng.Below(flags.files - flags.core);
    changed.push_back({Model::PathOf(id, flags.core), ste::DepKind::kContent});
  }
  if (flags.evict) {
    int fd = open(flags.out.c_str(), O_RDONLY);
    if (fd >= 0) {
      fdatasync(fd);
      posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      close(fd);
    }
  }
  std::vector<double> open_ms, union_ms, total_ms;
  uint64_t cardinality = 0;
  uint32_t format_version = 0;
  for (int r = 0; r < flags.runs + 1; ++r) {
    const auto a = Clock::now();
    auto index = ste::SelectionIndex::Open(flags.out);
    const auto b = Clock::now();
    if (!index.ok()) {
      std::fprintf(stderr, "Open: %s\n", index.status().ToString().c_str());
      return 1;
    }
    auto u = (*index)->Union(changed);
    const auto c = Clock::now();
    if (!u.ok()) {
      std::fprintf(stderr, "Union: %s\n", u.status().ToString().c_str());
      return 1;
    }
    cardinality = u->cardinality();
    format_version = (*index)->format_version();
    open_ms.push_back(1e3 * Seconds(a, b));
    union_ms.push_back(1e3 * Seconds(b, c));
    total_ms.push_back(1e3 * Seconds(a, c));
  }
  auto median = [](std::vector<double> v) {
    v.erase(v.begin());  // the first run is reported on its own
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf(
      "P5 query: union of %d changed files (%d%% core, the rest tail) -> "
      "%" PRIu64 " tests selected (format version %u)\n",
      flags.changed, flags.core_percent, cardinality, format_version);
  std::printf("  first run%s: open %.2f ms + union %.2f ms = %.2f ms\n",
              flags.evict ? " (file evicted from page cache)" : "", open_ms[0],
              union_ms[0], total_ms[0]);
  std::printf(
      "  median of %d: open %.2f ms + union %.2f ms = %.2f ms "
      "(max total %.2f ms)\n",
      flags.runs, median(open_ms), median(union_ms), median(total_ms),
      *std::max_element(total_ms.begin() + 1, total_ms.end()));
  std::printf("  peak RSS %.1f MiB\n", PeakRssKiB() / 1024.0);
  return 0;
}

int Usage() {
  std::fprintf(
      stderr,
      "usage: index_bench build --out FILE [--tests N] [--files F] "
      "[--core C] [--producers P] [--threads T] [--seed S] [--scattered K] "
      "[--shuffle-deps] [--format 1|2]\n"
      "       index_bench query --index FILE [same model flags] "
      "[--changed K] [--core-percent P] [--runs R] [--evict]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  Flags f;
  f.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--out" || a == "--index") {
      f.out = value();
    } else if (a == "--tests") {
      f.tests = static_cast<uint32_t>(std::atol(value()));
    } else if (a == "--files") {
      f.files = static_cast<uint32_t>(std::atol(value()));
    } else if (a == "--core") {
      f.core = static_cast<uint32_t>(std::atol(value()));
    } else if (a == "--producers") {
      f.producers = std::max(1, std::atoi(value()));
    } else if (a == "--threads") {
      f.threads = std::atoi(value());
    } else if (a == "--seed") {
      f.seed = std::strtoull(value(), nullptr, 10);
    } else if (a == "--changed") {
      f.changed = std::atoi(value());
    } else if (a == "--runs") {
      f.runs = std::max(1, std::atoi(value()));
    } else if (a == "--core-percent") {
      f.core_percent = std::clamp(std::atoi(value()), 0, 100);
    } else if (a == "--scattered") {
      f.scattered = static_cast<uint32_t>(std::atol(value()));
    } else if (a == "--format") {
      f.format = static_cast<uint32_t>(std::atol(value()));
    } else if (a == "--shuffle-deps") {
      f.shuffle_deps = true;
    } else if (a == "--evict") {
      f.evict = true;
    } else {
      return Usage();
    }
  }
  if (f.out.empty() || f.core >= f.files) return Usage();
  if (f.mode == "build") return Build(f);
  if (f.mode == "query") return Query(f);
  return Usage();
}
