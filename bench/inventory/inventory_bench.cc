// Copyright: the ste authors. P6 / P7: the inventory against hashdeep and
// `git status`. Not a test (minutes, a 1.5 GB tree); run.sh drives it and
// README.md records the figures.
//
//   inventory_bench gen DIR FILES SEED
//       Writes a seeded tree of FILES files under DIR (sizes: see kSizes).
//   inventory_bench scan --root DIR [--threads N] [--previous FILE]
//                        [--write FILE] [--ignore GLOB]...
//       One inventory, as `ste inventory` will do it: read the previous
//       inventory (the stat cache) if given, scan, write if asked. Prints one
//       line of timings and counters.
//   inventory_bench compare RUNS LABEL_A CMD_A LABEL_B CMD_B
//       Runs each command (through /bin/sh -c "exec …") once untimed, then
//       RUNS times alternating A and B; prints the medians of wall time and
//       of CPU time (user + system, from wait4) and the ratios B/A.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ste/inventory.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Log-uniform in [lo, hi).
uint64_t LogUniform(uint64_t* rng, double lo, double hi) {
  double u = static_cast<double>(SplitMix(rng) >> 11) / 9007199254740992.0;
  return static_cast<uint64_t>(lo * std::pow(hi / lo, u));
}

// File size classes: share of files, log-uniform range. Mean ≈ 7.6 KiB, so
// 200k files ≈ 1.5 GB.
struct SizeClass {
  double share;
  double lo, hi;
};
constexpr SizeClass kSizes[] = {
    {0.109, 64, 1024},              // tiny: __init__.py, configs
    {0.850, 1024, 20 * 1024},       // most sources
    {0.040, 20 * 1024, 64 * 1024},  // big sources, fixtures
    {0.001, 64 * 1024, 2 << 20},    // data files, vendored blobs
};

const char* const kExtensions[] = {"py",  "rb",   "c",  "h",  "js",
                                   "txt", "json", "md", "cc", "yml"};

int Generate(const std::string& root, uint64_t files, uint64_t seed) {
  uint64_t rng = seed;
  // Directories: a random recursive tree skewed toward shallow parents,
  // about 20 files per directory.
  const uint64_t dir_count = std::max<uint64_t>(1, files / 20);
  std::vector<std::string> dirs = {root};
  if (mkdir(root.c_str(), 0755) != 0 && errno != EEXIST) {
    perror(root.c_str());
    return 1;
  }
  for (uint64_t i = 1; i < dir_count; ++i) {
    uint64_t a = SplitMix(&rng) % i, b = SplitMix(&rng) % i;
    uint64_t parent = a * b / i;
    std::string path = dirs[parent] + "/d" + std::to_string(i);
    if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      perror(path.c_str());
      return 1;
    }
    dirs.push_back(std::move(path));
  }
  std::vector<char> buf(2 << 20);
  uint64_t total = 0;
  for (uint64_t f = 0; f < files; ++f) {
    double pick =
        static_cast<double>(SplitMix(&rng) >> 11) / 9007199254740992.0;
    const SizeClass* cls = &kSizes[0];
    for (const SizeClass& c : kSizes) {
      cls = &c;
      if (pick < c.share) break;
      pick -= c.share;
    }
    uint64_t size = LogUniform(&rng, cls->lo, cls->hi);
    const std::string& dir = dirs[SplitMix(&rng) % dirs.size()];
    std::string path =
        dir + "/f" + std::to_string(f) + "." + kExtensions[SplitMix(&rng) % 10];
    uint64_t fill = SplitMix(&rng);
    for (uint64_t i = 0; i < size; i += 8) {
      uint64_t v = SplitMix(&fill);
      std::memcpy(buf.data() + i, &v, std::min<uint64_t>(8, size - i));
    }
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, buf.data(), size) != static_cast<ssize_t>(size)) {
      perror(path.c_str());
      return 1;
    }
    close(fd);
    total += size;
  }
  std::printf("generated %s: %" PRIu64 " files, %" PRIu64
              " directories, %.2f GB\n",
              root.c_str(), files, dir_count, total / 1e9);
  return 0;
}

int Scan(int argc, char** argv) {
  ste::ScanOptions options;
  options.threads = 2;
  std::string previous_path, write_path;
  std::vector<std::string> ignore;
  for (int i = 0; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--root") {
      options.root = argv[i + 1];
    } else if (flag == "--threads") {
      options.threads = std::atoi(argv[i + 1]);
    } else if (flag == "--previous") {
      previous_path = argv[i + 1];
    } else if (flag == "--write") {
      write_path = argv[i + 1];
    } else if (flag == "--ignore") {
      ignore.push_back(argv[i + 1]);
    } else {
      std::fprintf(stderr, "scan: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  absl::StatusOr<ste::GlobSet> globs = ste::GlobSet::Compile(ignore);
  if (!globs.ok()) {
    std::fprintf(stderr, "%s\n", globs.status().ToString().c_str());
    return 2;
  }
  options.ignore = *std::move(globs);
  const Clock::time_point t0 = Clock::now();
  ste::Inventory previous;
  if (!previous_path.empty()) {
    absl::StatusOr<ste::Inventory> read =
        ste::Inventory::ReadFile(previous_path);
    if (!read.ok()) {
      std::fprintf(stderr, "%s\n", read.status().ToString().c_str());
      return 1;
    }
    previous = *std::move(read);
  }
  const Clock::time_point t1 = Clock::now();
  absl::StatusOr<ste::Inventory> inv = ste::Inventory::Scan(
      options, previous_path.empty() ? nullptr : &previous);
  if (!inv.ok()) {
    std::fprintf(stderr, "%s\n", inv.status().ToString().c_str());
    return 1;
  }
  const Clock::time_point t2 = Clock::now();
  if (!write_path.empty()) {
    absl::Status status = inv->WriteFile(write_path);
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      return 1;
    }
  }
  const Clock::time_point t3 = Clock::now();
  const ste::ScanStats& s = inv->stats();
  std::printf("entries=%" PRIu64 " dirs=%" PRIu64 " hashed=%" PRIu64
              " reused=%" PRIu64 " bytes=%.2fGB retries=%" PRIu64
              " | load=%.3fs scan=%.3fs (walk=%.3f hash=%.3f finish=%.3f) "
              "write=%.3fs\n",
              s.entries, s.directories, s.files_hashed, s.files_reused,
              s.bytes_hashed / 1e9, s.retries, Seconds(t1 - t0),
              Seconds(t2 - t1), s.walk_ns / 1e9, s.hash_ns / 1e9,
              s.finish_ns / 1e9, Seconds(t3 - t2));
  if (getenv("STE_BENCH_FREE_AT_EXIT") == nullptr) {
    // A command-line tool has no reason to free a few hundred thousand
    // strings one by one just before exiting (git does not either): leave
    // without running destructors. STE_BENCH_FREE_AT_EXIT=1 measures the
    // difference.
    std::fflush(stdout);
    std::_Exit(0);
  }
  return 0;
}

struct Timing {
  double wall = -1;  // seconds; -1 if the command failed
  double cpu = 0;    // user + system seconds of the command (and children)
};

// Runs `cmd` through /bin/sh with stdout to /dev/null.
Timing TimeCommand(const std::string& cmd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  std::string script = "exec " + cmd;
  const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
  const Clock::time_point start = Clock::now();
  pid_t pid;
  Timing timing;
  if (posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char**>(argv),
                  environ) != 0) {
    return timing;
  }
  int status = 0;
  struct rusage usage;
  wait4(pid, &status, 0, &usage);
  const double seconds = Seconds(Clock::now() - start);
  posix_spawn_file_actions_destroy(&actions);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "command failed (status %d): %s\n", status,
                 cmd.c_str());
    return timing;
  }
  timing.wall = seconds;
  timing.cpu = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
               usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
  return timing;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int Compare(int runs, const std::string& label_a, const std::string& cmd_a,
            const std::string& label_b, const std::string& cmd_b) {
  // One untimed run each: both see the same (warm) page cache.
  if (TimeCommand(cmd_a).wall < 0 || TimeCommand(cmd_b).wall < 0) return 1;
  std::vector<double> wall_a, wall_b, cpu_a, cpu_b;
  for (int i = 0; i < runs; ++i) {
    Timing a = TimeCommand(cmd_a);
    Timing b = TimeCommand(cmd_b);
    if (a.wall < 0 || b.wall < 0) return 1;
    wall_a.push_back(a.wall);
    wall_b.push_back(b.wall);
    cpu_a.push_back(a.cpu);
    cpu_b.push_back(b.cpu);
  }
  auto print = [](const std::string& label, const std::vector<double>& wall,
                  const std::vector<double>& cpu) {
    std::printf(
        "  %-26s wall median %.3f s (min %.3f, max %.3f)  cpu median %.3f s"
        "  [%zu runs]\n",
        label.c_str(), Median(wall),
        *std::min_element(wall.begin(), wall.end()),
        *std::max_element(wall.begin(), wall.end()), Median(cpu), wall.size());
  };
  print(label_a, wall_a, cpu_a);
  print(label_b, wall_b, cpu_b);
  const double wa = Median(wall_a), wb = Median(wall_b);
  std::printf("  wall: %s / %s = %.2fx;  cpu: %.2fx\n", label_b.c_str(),
              label_a.c_str(), wb / wa, Median(cpu_b) / Median(cpu_a));
  return 0;
}

int Usage() {
  std::fprintf(stderr,
               "usage: inventory_bench gen DIR FILES SEED\n"
               "       inventory_bench scan --root DIR [--threads N] "
               "[--previous FILE] [--write FILE] [--ignore GLOB]...\n"
               "       inventory_bench compare RUNS LABEL_A CMD_A LABEL_B "
               "CMD_B\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  std::string cmd = argv[1];
  if (cmd == "gen" && argc == 5) {
    return Generate(argv[2], std::strtoull(argv[3], nullptr, 10),
                    std::strtoull(argv[4], nullptr, 10));
  }
  if (cmd == "scan") return Scan(argc - 2, argv + 2);
  if (cmd == "compare" && argc == 7) {
    return Compare(std::atoi(argv[2]), argv[3], argv[4], argv[5], argv[6]);
  }
  return Usage();
}
