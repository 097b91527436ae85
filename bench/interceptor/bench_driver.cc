// bench_driver — runs command variants interleaved and prints, for each,
// the median and minimum wall time and the ratio against a baseline
// variant measured in the same run (docs/concepts.md, "Practices").
//
// Usage:
//   bench_driver [--rounds N] [--warmup N] [--title TEXT] [--raw]
//                [--cleanup end|run] VARIANT...
//   VARIANT := --variant NAME [--vs BASE] [--target RATIO] [--log-root DIR]
//              -- ARGV... ::
//
// Each round runs every variant once; the starting variant rotates from
// round to round so no variant always runs right after the same other one.
// Warm-up rounds run the same way and are discarded. A variant without
// --vs is a baseline (ratio 1.00); --vs names an earlier or later variant;
// --target prints "ok" or "MISS" for ratio-of-medians <= RATIO.
//
// An argument containing "{logdir}" has it replaced, for every single run,
// by a fresh directory under the variant's --log-root (default $TMPDIR,
// else /tmp); after the run the driver counts the files in it (shown as
// "logs": proof the interceptor was active, and how many processes it saw).
// With --cleanup end (the default) every such directory is removed once all
// rounds are done, never between measured runs: on ext4 without a journal
// (this machine's /) creating a file skips inodes deleted in the last
// dirty_expire seconds (ext4 recently_deleted()), so deleting thousands of
// logs between runs makes the next run's log creation scan past them and
// charges the tracer for the benchmark's own clean-up. --cleanup run
// removes each directory right after its run (less disk; shows the effect).
//
// The child's stdout goes to /dev/null, stderr is inherited. A run that
// exits non-zero or is killed stops the benchmark with exit status 1.
// Times: wall clock (CLOCK_MONOTONIC) from fork to reaping; "cpu" is
// user+sys of the child and every descendant it waited for (wait4).
#include <fcntl.h>
#include <ftw.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Variant {
  std::string name;
  std::string vs;        // baseline variant name; empty: this is a baseline
  double target = 0;     // 0: no target
  std::string log_root;  // where {logdir} directories go; empty: default
  std::vector<std::string> argv;
  std::vector<double> wall;  // seconds, measured rounds only
  std::vector<double> cpu;
  long logs = -1;  // files in {logdir} after the last run; -1: no logdir
  long long log_bytes = 0;
};

struct Sample {
  double wall = 0;
  double cpu = 0;
  long logs = -1;
  long long log_bytes = 0;
};

[[noreturn]] void Usage(const char* message) {
  std::fprintf(stderr,
               "bench_driver: %s\n"
               "usage: bench_driver [--rounds N] [--warmup N] [--title TEXT] "
               "[--raw] [--cleanup end|run]\n"
               "         --variant NAME [--vs BASE] [--target RATIO] "
               "[--log-root DIR] -- ARGV... :: ...\n",
               message);
  std::exit(2);
}

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) +
         static_cast<double>(tv.tv_usec) * 1e-6;
}

// Counters filled by the nftw callbacks (nftw takes no user pointer).
long g_files = 0;
long long g_bytes = 0;

int CountEntry(const char*, const struct stat* st, int type, struct FTW*) {
  if (type == FTW_F) {
    g_files++;
    g_bytes += static_cast<long long>(st->st_blocks) * 512;  // on disk
  }
  return 0;
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  if (remove(path) != 0) {
    std::fprintf(stderr, "bench_driver: cannot remove %s: %s\n", path,
                 std::strerror(errno));
  }
  return 0;
}

std::string MakeLogDir(const std::string& root) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      (root.empty() ? std::string(tmp && *tmp ? tmp : "/tmp") : root) +
      "/ste-bench-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "bench_driver: mkdtemp %s: %s\n", pattern.c_str(),
                 std::strerror(errno));
    std::exit(1);
  }
  return pattern;
}

void RemoveTree(const std::string& dir) {
  nftw(dir.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

// Log directories waiting for --cleanup end, and their bytes on disk.
std::vector<std::string> g_kept_dirs;
long long g_kept_bytes = 0;
bool g_cleanup_each_run = false;

Sample RunOnce(const Variant& v) {
  std::string log_dir;
  std::vector<std::string> args = v.argv;
  for (std::string& a : args) {
    size_t at;
    while ((at = a.find("{logdir}")) != std::string::npos) {
      if (log_dir.empty()) log_dir = MakeLogDir(v.log_root);
      a.replace(at, 8, log_dir);
    }
  }
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);

  std::fflush(stdout);
  double start = Now();
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("bench_driver: fork");
    std::exit(1);
  }
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 1);
    execvp(cargs[0], cargs.data());
    std::fprintf(stderr, "bench_driver: exec %s: %s\n", cargs[0],
                 std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  while (wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) {
      std::perror("bench_driver: wait4");
      std::exit(1);
    }
  }
  Sample s;
  s.wall = Now() - start;
  s.cpu = Seconds(ru.ru_utime) + Seconds(ru.ru_stime);

  if (!log_dir.empty()) {
    g_files = 0;
    g_bytes = 0;
    nftw(log_dir.c_str(), CountEntry, 16, FTW_PHYS);
    s.logs = g_files;
    s.log_bytes = g_bytes;
    if (g_cleanup_each_run) {
      RemoveTree(log_dir);
    } else {
      g_kept_dirs.push_back(log_dir);
      g_kept_bytes += g_bytes;
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr,
                 "bench_driver: variant '%s' failed (%s %d): ", v.name.c_str(),
                 WIFEXITED(status) ? "exit status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    for (const std::string& a : v.argv) std::fprintf(stderr, "%s ", a.c_str());
    std::fprintf(stderr, "\n");
    for (const std::string& dir : g_kept_dirs) RemoveTree(dir);
    std::exit(1);
  }
  return s;
}

double Median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

double Min(const std::vector<double>& xs) {
  return *std::min_element(xs.begin(), xs.end());
}

int ParseCount(const char* flag, const char* value, int lowest) {
  char* end = nullptr;
  long n = std::strtol(value, &end, 10);
  if (*value == '\0' || *end != '\0' || n < lowest || n > 1000) {
    Usage((std::string("bad value for ") + flag + ": " + value).c_str());
  }
  return static_cast<int>(n);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  int warmup = 1;
  bool raw = false;
  std::string title;
  std::vector<Variant> variants;

  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc)
        Usage((std::string(argv[i]) + " needs a value").c_str());
      return argv[++i];
    };
    if (a == "--rounds") {
      rounds = ParseCount("--rounds", value(), 1);
    } else if (a == "--warmup") {
      warmup = ParseCount("--warmup", value(), 0);
    } else if (a == "--title") {
      title = value();
    } else if (a == "--cleanup") {
      std::string when = value();
      if (when != "end" && when != "run") Usage("--cleanup takes end or run");
      g_cleanup_each_run = (when == "run");
    } else if (a == "--raw") {
      raw = true;
    } else if (a == "--variant") {
      Variant v;
      v.name = value();
      for (i++; i < argc && std::strcmp(argv[i], "--") != 0; i++) {
        std::string opt = argv[i];
        if (opt == "--vs") {
          v.vs = value();
        } else if (opt == "--target") {
          v.target = std::atof(value());
          if (v.target <= 0) Usage("--target needs a positive ratio");
        } else if (opt == "--log-root") {
          v.log_root = value();
        } else {
          Usage(("unknown variant option " + opt).c_str());
        }
      }
      if (i >= argc)
        Usage(
            ("variant " + v.name + ": missing -- before its command").c_str());
      for (i++; i < argc && std::strcmp(argv[i], "::") != 0; i++)
        v.argv.push_back(argv[i]);
      if (i >= argc)
        Usage(("variant " + v.name + ": command not ended by ::").c_str());
      if (v.argv.empty())
        Usage(("variant " + v.name + ": empty command").c_str());
      variants.push_back(v);
    } else {
      Usage(("unknown argument " + a).c_str());
    }
  }
  if (variants.empty()) Usage("no --variant given");
  for (Variant& v : variants) {
    if (v.vs.empty()) continue;
    bool found = false;
    for (const Variant& b : variants) found |= (b.name == v.vs);
    if (!found)
      Usage(("variant " + v.name + ": no variant named " + v.vs).c_str());
  }

  if (!title.empty()) std::printf("== %s\n", title.c_str());
  std::printf(
      "   %d warm-up round(s) discarded, %d measured rounds, variants "
      "interleaved;"
      " log dirs removed %s\n",
      warmup, rounds, g_cleanup_each_run ? "after each run" : "at the end");
  size_t n = variants.size();
  for (int r = 0; r < warmup + rounds; r++) {
    for (size_t k = 0; k < n; k++) {
      Variant& v = variants[(k + static_cast<size_t>(r)) % n];
      Sample s = RunOnce(v);
      if (r < warmup) continue;
      v.wall.push_back(s.wall);
      v.cpu.push_back(s.cpu);
      v.logs = s.logs;
      v.log_bytes = s.log_bytes;
      if (raw) {
        std::printf("   round %d %-16s wall %.4f s cpu %.4f s\n",
                    r - warmup + 1, v.name.c_str(), s.wall, s.cpu);
      }
    }
  }

  std::printf("   %-20s %-14s %9s %9s %8s %8s %9s %8s %7s  %s\n", "variant",
              "vs", "median s", "min s", "x med", "x min", "cpu med s", "x cpu",
              "logs", "target");
  for (const Variant& v : variants) {
    const Variant* base = &v;
    for (const Variant& b : variants) {
      if (!v.vs.empty() && b.name == v.vs) base = &b;
    }
    double med = Median(v.wall), mn = Min(v.wall), cpu = Median(v.cpu);
    double rmed = med / Median(base->wall), rmin = mn / Min(base->wall);
    double rcpu = cpu / Median(base->cpu);
    std::string logs = v.logs < 0 ? "-" : std::to_string(v.logs);
    std::string verdict;
    if (v.target > 0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s (<= %.2fx)",
                    rmed <= v.target ? "ok" : "MISS", v.target);
      verdict = buf;
    }
    std::printf(
        "   %-20s %-14s %9.4f %9.4f %7.2fx %7.2fx %9.4f %7.2fx %7s  %s\n",
        v.name.c_str(), v.vs.empty() ? "(baseline)" : v.vs.c_str(), med, mn,
        rmed, rmin, cpu, rcpu, logs.c_str(), verdict.c_str());
  }
  if (!g_kept_dirs.empty()) {
    std::printf("   (%zu log dirs, %.0f MB on disk, removed now)\n",
                g_kept_dirs.size(), static_cast<double>(g_kept_bytes) / 1e6);
    for (const std::string& dir : g_kept_dirs) RemoveTree(dir);
  }
  std::fflush(stdout);
  return 0;
}
