// Copyright: the ste authors. Helpers shared by the inventory tests: a
// temporary directory tree and expected-hash builders. Header-only (every
// indexer/src/*.cc that is not a *_test.cc goes into the library).
#ifndef STE_INDEXER_SRC_INVENTORY_TEST_UTIL_H_
#define STE_INDEXER_SRC_INVENTORY_TEST_UTIL_H_

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ste/inventory.h"

namespace ste {
namespace test {

// Deterministic content of `size` bytes.
inline std::string Pattern(size_t size, size_t seed) {
  std::string out(size, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    out[i] = static_cast<char>(x);
  }
  return out;
}

// The names-hash of a directory holding `names`.
inline XXH128_hash_t NamesHash(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::string buf;
  for (const std::string& n : names) buf.append(n).push_back('\0');
  return XXH3_128bits(buf.data(), buf.size());
}

// A fresh directory under $TMPDIR (or /tmp), removed with its content.
class TempTree {
 public:
  TempTree() {
    const char* base = getenv("TMPDIR");
    std::string tmpl =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
        "/ste_inventory_test_XXXXXX";
    char* dir = mkdtemp(tmpl.data());
    EXPECT_NE(dir, nullptr) << tmpl;
    // The scan wants a normalized absolute root.
    root_ = std::filesystem::weakly_canonical(tmpl).string();
  }
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::string& root() const { return root_; }
  std::string Abs(const std::string& rel) const { return root_ + "/" + rel; }

  // Writes (creating parent directories) `rel` with `content`.
  void Write(const std::string& rel, const std::string& content) {
    std::filesystem::path p(Abs(rel));
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << content;
    ASSERT_TRUE(out.good()) << rel;
  }
  void MkDir(const std::string& rel) {
    std::filesystem::create_directories(Abs(rel));
  }
  void Remove(const std::string& rel) {
    ASSERT_EQ(unlink(Abs(rel).c_str()), 0) << rel;
  }
  void Rename(const std::string& from, const std::string& to) {
    ASSERT_EQ(rename(Abs(from).c_str(), Abs(to).c_str()), 0) << from;
  }
  void Symlink(const std::string& target, const std::string& rel) {
    std::filesystem::create_directories(
        std::filesystem::path(Abs(rel)).parent_path());
    ASSERT_EQ(symlink(target.c_str(), Abs(rel).c_str()), 0) << rel;
  }
  void SetMtime(const std::string& rel, int64_t mtime_ns) {
    struct timespec times[2];
    times[0].tv_sec = mtime_ns / 1000000000;
    times[0].tv_nsec = mtime_ns % 1000000000;
    times[1] = times[0];
    ASSERT_EQ(utimensat(AT_FDCWD, Abs(rel).c_str(), times, AT_SYMLINK_NOFOLLOW),
              0)
        << rel;
  }

  ScanOptions Options(GlobSet ignore = GlobSet()) const {
    ScanOptions options;
    options.root = root_;
    options.ignore = std::move(ignore);
    options.threads = 2;
    return options;
  }
  absl::StatusOr<Inventory> Scan(GlobSet ignore = GlobSet(),
                                 const Inventory* previous = nullptr) const {
    return Inventory::Scan(Options(std::move(ignore)), previous);
  }

 private:
  std::string root_;
};

}  // namespace test
}  // namespace ste

#endif  // STE_INDEXER_SRC_INVENTORY_TEST_UTIL_H_
