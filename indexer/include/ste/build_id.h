// A record build's id: "b" + the id of the baseline it writes ("b12").
// Workers ask for it (`ste worker --build`), clients watch it, and each
// build's test logs go to <output dir>/<build id>/ (`ste baseline gc`
// removes those of baselines that are gone). Formatted and parsed here only.
#ifndef STE_BUILD_ID_H_
#define STE_BUILD_ID_H_

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ste {

inline std::string BuildIdOf(int64_t baseline) { return "b" + std::to_string(baseline); }

// The baseline of build id `id`: "b" and a positive decimal number without
// a sign or leading zero; nullopt for anything else.
inline std::optional<int64_t> BaselineOfBuildId(std::string_view id) {
  if (id.size() < 2 || id[0] != 'b' || id[1] < '1' || id[1] > '9') return std::nullopt;
  int64_t baseline = 0;
  const char* end = id.data() + id.size();
  auto [ptr, ec] = std::from_chars(id.data() + 1, end, baseline);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return baseline;
}

}  // namespace ste

#endif  // STE_BUILD_ID_H_
