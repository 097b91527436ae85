// A GoogleTest listener that gives each test case a scope of its own when
// the binary runs under ste: "<the process's scope>/<Suite>.<Case>" while
// the case runs (the C API of libste_preload.so, interceptor/include/ste/
// scope.h, resolved at run time: without ste it does nothing).
//
// In the test binary's main():
//
//   #include "ste_gtest_listener.h"   // integrations/gtest/
//   int main(int argc, char** argv) {
//     ::testing::InitGoogleTest(&argc, argv);
//     ste_gtest::InstallScopeListener();
//     return RUN_ALL_TESTS();
//   }
//
// Recorded with runner.kind = "ctest", a binary registered as one CTest
// test then has its cases' dependencies recorded as nested scopes of that
// test's scope (`ste log dump` shows them). With `[tests] unit = "case"`
// ste selects cases too (docs/concepts.md, "Test cases"): a case owns the
// files it read; after each push the listener stats the marker
// "/\x01ste-defs-scope:<pid>.<n>" (n counts its pushes: the order the
// cases ran in), and `ste select --format gtest-filter` hands the cases
// back as a GTEST_FILTER. With --gtest_shuffle (or GTEST_SHUFFLE) the
// next run's order may differ: no case scope is pushed, and the binary is
// selected whole. With gtest_discover_tests each case is a CTest test
// already.
//
// The case's name becomes a scope name by the rule every runner here
// follows (integrations/README.md, "Case scope names"): CaseScopeName.
#ifndef STE_GTEST_LISTENER_H_
#define STE_GTEST_LISTENER_H_

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace ste_gtest {

// `name` (any bytes) as a scope name (integrations/README.md, "Case scope
// names"): '%', '/', bytes 0x00-0x1F and 0x7F percent-encoded ("%2F"); ""
// becomes "%"; an encoded name over 512 bytes becomes its first (at most)
// 494 bytes, not cut inside an escape or a UTF-8 sequence, + "%~" + the
// FNV-1a 64 hash of `name` in 16 hex digits. The result is never empty,
// holds no '/' nor NUL, is at most 512 bytes, and differs for different
// names (but for a 64-bit hash collision between two long ones).
inline std::string CaseScopeName(const std::string& name) {
  constexpr size_t kMaxBytes = 512, kPrefixBytes = kMaxBytes - 18;
  static const char kHex[] = "0123456789ABCDEF";
  if (name.empty()) return "%";
  std::string out;
  for (unsigned char c : name) {
    if (c < 0x20 || c == '%' || c == '/' || c == 0x7F) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (out.size() <= kMaxBytes) return out;
  size_t cut = kPrefixBytes;
  auto inside = [&](size_t k) {
    return (static_cast<unsigned char>(out[k]) & 0xC0) == 0x80 ||
           out[k - 1] == '%' || (k >= 2 && out[k - 2] == '%');
  };
  while (cut > 0 && inside(cut)) cut--;
  uint64_t hash = 0xcbf29ce484222325u;  // FNV-1a 64
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001b3u;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(hash));
  return out.substr(0, cut) + "%~" + hex;
}

class ScopeListener : public ::testing::EmptyTestEventListener {
 public:
  ScopeListener()
      : push_(reinterpret_cast<int (*)(const char*)>(dlsym(RTLD_DEFAULT, "ste_scope_push"))),
        pop_(reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "ste_scope_pop"))) {}

  void OnTestStart(const ::testing::TestInfo& info) override {
    if (push_ == nullptr || pop_ == nullptr || Shuffled()) return;
    std::string name =
        CaseScopeName(std::string(info.test_suite_name()) + "." + info.name());
    pushed_ = push_(name.c_str()) == 0;
    if (!pushed_) return;
    // The order this case ran in, as a path that never exists (recorded
    // as `absent` in the case's scope).
    char marker[64];
    std::snprintf(marker, sizeof marker, "/\x01ste-defs-scope:%ld.%llu", static_cast<long>(getpid()),
                  static_cast<unsigned long long>(++pushes_));
    struct stat st;
    (void)stat(marker, &st);
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    if (pushed_) pop_();
    pushed_ = false;
  }

 private:
  static bool Shuffled() {
#ifdef GTEST_FLAG_GET
    return GTEST_FLAG_GET(shuffle);
#else
    return ::testing::GTEST_FLAG(shuffle);
#endif
  }

  int (*push_)(const char*);
  int (*pop_)();
  bool pushed_ = false;
  uint64_t pushes_ = 0;
};

inline void InstallScopeListener() {
  ::testing::UnitTest::GetInstance()->listeners().Append(new ScopeListener);
}

}  // namespace ste_gtest

#endif  // STE_GTEST_LISTENER_H_
