// Copyright: the ste authors. Helpers for the store tests (and the crash
// test in tests/store/): temp directories, files, deterministic bytes.
#ifndef STE_SCHEDULER_STORE_TEST_UTIL_H_
#define STE_SCHEDULER_STORE_TEST_UTIL_H_

#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ste {
namespace testing_util {

// A fresh directory under $TMPDIR (or /tmp), removed with its content.
class ScopedTempDir {
 public:
  ScopedTempDir() {
    const char* base = getenv("TMPDIR");
    std::string tmpl =
        std::string(base && *base ? base : "/tmp") + "/ste_store_test.XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) != nullptr) path_ = buf.data();
  }
  ~ScopedTempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void WriteWholeFile(const std::string& path, absl::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// `size` bytes that depend on `seed` (a cheap xorshift stream).
inline std::string PatternBytes(absl::string_view seed, size_t size) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (char c : seed)
    x = (x ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    bytes[i] = static_cast<char>(x);
  }
  return bytes;
}

// Every regular file name in `dir` (not recursive), sorted.
inline std::vector<std::string> FileNames(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace testing_util
}  // namespace ste

#endif  // STE_SCHEDULER_STORE_TEST_UTIL_H_
