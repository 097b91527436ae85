// Copyright: the ste authors. How the report stream fuzz target's input
// holds a sequence of Report messages (proto/ste/v1/scheduler.proto,
// ReportMessage), and the seed maker writes them: each message as a
// 4-byte little-endian length, then that many bytes of its wire encoding.
// A last frame shorter than its length is dropped (as a stream cut off).
#ifndef STE_TESTS_FUZZ_REPORT_STREAM_H_
#define STE_TESTS_FUZZ_REPORT_STREAM_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ste::fuzz {

inline std::vector<std::string_view> SplitFrames(std::string_view bytes) {
  std::vector<std::string_view> frames;
  while (bytes.size() >= 4) {
    uint32_t n = 0;
    for (int i = 3; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[i]);
    bytes.remove_prefix(4);
    if (n > bytes.size()) break;
    frames.push_back(bytes.substr(0, n));
    bytes.remove_prefix(n);
  }
  return frames;
}

inline void AppendFrame(std::string_view message, std::string* out) {
  uint32_t n = static_cast<uint32_t>(message.size());
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out->append(message);
}

}  // namespace ste::fuzz

#endif  // STE_TESTS_FUZZ_REPORT_STREAM_H_
