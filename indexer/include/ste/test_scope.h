// A test's scope: the name its records carry (the runner API's scope
// stack, interceptor/include/ste/scope.h) and the index keys its
// dependencies by. A test file or CTest name T has the scope "//r/" + T;
// "//r" alone is the root scope (what ran outside any test).
#ifndef STE_TEST_SCOPE_H_
#define STE_TEST_SCOPE_H_

#include <string>
#include <string_view>

namespace ste {

inline constexpr std::string_view kRootScope = "//r";
inline constexpr std::string_view kTestScopePrefix = "//r/";

// "//r/" + test.
inline std::string ScopeOfTest(std::string_view test) {
  std::string scope(kTestScopePrefix);
  scope.append(test);
  return scope;
}

// Is `scope` a test's scope ("//r/" and a name)?
inline bool IsTestScope(std::string_view scope) {
  return scope.size() > kTestScopePrefix.size() &&
         scope.substr(0, kTestScopePrefix.size()) == kTestScopePrefix;
}

// The test of a test scope (IsTestScope); "" for any other scope.
inline std::string_view TestOfScope(std::string_view scope) {
  return IsTestScope(scope) ? scope.substr(kTestScopePrefix.size()) : std::string_view();
}

}  // namespace ste

#endif  // STE_TEST_SCOPE_H_
