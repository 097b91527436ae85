#include "ste/timings.h"

#include <sys/resource.h>

#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"

namespace ste {
namespace {

struct PhaseTotal {
  std::string name;
  double ms = 0;
  int count = 0;
};

struct TimingsState {
  std::mutex mu;
  std::vector<PhaseTotal> phases;  // in the order first entered
  std::chrono::steady_clock::time_point enabled_at;
  double cpu_before_ms = 0;  // the process's CPU at EnableTimings
};

std::atomic<bool> g_enabled{false};

TimingsState& State() {
  static TimingsState* state = new TimingsState;  // never destroyed: phases may end at exit
  return *state;
}

double Ms(const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; }

double CpuMs(int who) {
  rusage u{};
  getrusage(who, &u);
  return Ms(u.ru_utime) + Ms(u.ru_stime);
}

}  // namespace

void EnableTimings() {
  TimingsState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  s.enabled_at = std::chrono::steady_clock::now();
  s.cpu_before_ms = CpuMs(RUSAGE_SELF);
  g_enabled.store(true, std::memory_order_relaxed);
}

bool TimingsEnabled() { return g_enabled.load(std::memory_order_relaxed); }

ScopedPhase::ScopedPhase(std::string name) {
  if (!TimingsEnabled()) return;
  name_ = std::move(name);
  start_ = std::chrono::steady_clock::now();
}

ScopedPhase::~ScopedPhase() {
  if (name_.empty()) return;
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  TimingsState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  for (PhaseTotal& p : s.phases) {
    if (p.name == name_) {
      p.ms += ms;
      p.count++;
      return;
    }
  }
  s.phases.push_back({name_, ms, 1});
}

std::string TimingsReport(const std::string& prefix) {
  if (!TimingsEnabled()) return "";
  TimingsState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  std::string out;
  for (const PhaseTotal& p : s.phases) {
    out += absl::StrFormat("%s: timings: %9.2f ms %5d× %s\n", prefix, p.ms, p.count, p.name);
  }
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                                s.enabled_at)
                          .count();
  out += absl::StrFormat("%s: timings: %9.2f ms CPU before the flags were read (loader, static initialisers)\n",
                         prefix, s.cpu_before_ms);
  out += absl::StrFormat("%s: timings: %9.2f ms wall after the flags were read\n", prefix, wall);
  out += absl::StrFormat("%s: timings: %9.2f ms CPU of ste, %.2f ms CPU of the programs it ran\n",
                         prefix, CpuMs(RUSAGE_SELF), CpuMs(RUSAGE_CHILDREN));
  return out;
}

}  // namespace ste
