// Copyright: the ste authors. Helpers for the store tests (and the crash
// test in tests/store/): temp directories, files, deterministic bytes.
#ifndef STE_SCHEDULER_STORE_TEST_UTIL_H_
#define STE_SCHEDULER_STORE_TEST_UTIL_H_

#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ste/baseline_store.h"

namespace ste {
namespace testing_util {

// An mri above every recorded one: LatestCompleted(kAnyMri) is the latest.
inline constexpr int64_t kAnyMri = std::numeric_limits<int64_t>::max();

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

// Begin + both blobs + Complete on `store`; returns the id. The index blob
// holds `index`, or "index of <commit>" when empty.
inline int64_t MakeCompleteBaseline(Store& store, const std::string& commit,
                                    int64_t mri, const std::string& index = "") {
  absl::StatusOr<int64_t> id = store.Begin(commit, mri);
  EXPECT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(store.PutBlob(*id, "index", index.empty() ? "index of " + commit : index).ok());
  EXPECT_TRUE(store.PutBlob(*id, "inventory", "inv of " + commit).ok());
  absl::Status done = store.Complete(*id);
  EXPECT_TRUE(done.ok()) << done;
  return *id;
}

// The id LatestCompleted(max_mri) returns, or -1 for none.
inline int64_t LatestCompletedId(Store& store, int64_t max_mri) {
  absl::StatusOr<std::optional<BaselineInfo>> latest = store.LatestCompleted(max_mri);
  EXPECT_TRUE(latest.ok()) << latest.status();
  return latest.ok() && latest->has_value() ? (*latest)->id : -1;
}

// The local file BlobPath returns, or "" (with a test failure).
inline std::string BlobFileOf(Store& store, int64_t baseline, const std::string& name) {
  absl::StatusOr<std::string> path = store.BlobPath(baseline, name);
  EXPECT_TRUE(path.ok()) << path.status();
  return path.ok() ? *path : "";
}

}  // namespace testing_util
}  // namespace ste

#endif  // STE_SCHEDULER_STORE_TEST_UTIL_H_
