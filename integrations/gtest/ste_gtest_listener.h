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
// test's scope (`ste log dump` shows them); selection stays per CTest test.
// With gtest_discover_tests each case is a CTest test already.
#ifndef STE_GTEST_LISTENER_H_
#define STE_GTEST_LISTENER_H_

#include <dlfcn.h>

#include <string>

#include "gtest/gtest.h"

namespace ste_gtest {

class ScopeListener : public ::testing::EmptyTestEventListener {
 public:
  ScopeListener()
      : push_(reinterpret_cast<int (*)(const char*)>(dlsym(RTLD_DEFAULT, "ste_scope_push"))),
        pop_(reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "ste_scope_pop"))) {}

  void OnTestStart(const ::testing::TestInfo& info) override {
    if (push_ == nullptr || pop_ == nullptr) return;
    std::string name = std::string(info.test_suite_name()) + "." + info.name();
    // A scope name must not hold "//" nor start or end with '/'.
    for (size_t i = 0; (i = name.find("//", i)) != std::string::npos;) name.erase(i, 1);
    while (!name.empty() && name.front() == '/') name.erase(0, 1);
    while (!name.empty() && name.back() == '/') name.pop_back();
    pushed_ = !name.empty() && push_(name.c_str()) == 0;
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    if (pushed_) pop_();
    pushed_ = false;
  }

 private:
  int (*push_)(const char*);
  int (*pop_)();
  bool pushed_ = false;
};

inline void InstallScopeListener() {
  ::testing::UnitTest::GetInstance()->listeners().Append(new ScopeListener);
}

}  // namespace ste_gtest

#endif  // STE_GTEST_LISTENER_H_
