// Where a command's time goes: named phases of wall time, printed by a
// command's --timings (as `ninja -d stats`). Off unless EnableTimings() was
// called; then each ScopedPhase adds its wall time to its name's total and
// count (a phase entered twice, e.g. one per git process, is one line).
// Phases may nest: each line is that phase's own total, so nested lines
// overlap the line they are inside and do not add up to the whole.
//
//   ScopedPhase phase("tree walk");     // in any module, any thread
//   ...
//   if (TimingsEnabled()) std::fputs(TimingsReport("ste select").c_str(), stderr);
//
// Thread-safe. The cost when off is one relaxed atomic load per phase.
#ifndef STE_TIMINGS_H_
#define STE_TIMINGS_H_

#include <chrono>
#include <string>

namespace ste {

void EnableTimings();
bool TimingsEnabled();

// "<prefix>: timings: ..." lines, one per phase in the order first
// entered: total milliseconds, count, name; then the process's own CPU
// before main() (the dynamic loader and static initialisers, from
// getrusage at EnableTimings), the whole wall time since EnableTimings,
// and the CPU time of the process and of its waited-for children.
std::string TimingsReport(const std::string& prefix);

class ScopedPhase {
 public:
  explicit ScopedPhase(std::string name);
  ~ScopedPhase();
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  std::string name_;  // empty: timings are off
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ste

#endif  // STE_TIMINGS_H_
