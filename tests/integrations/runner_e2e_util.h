// What the runner e2e tests (python_e2e_test.cc, ruby_e2e_test.cc) read
// back: the $STE_RESULTS lines a runner wrote, and `ste log dump` output.
#ifndef STE_TESTS_INTEGRATIONS_RUNNER_E2E_UTIL_H_
#define STE_TESTS_INTEGRATIONS_RUNNER_E2E_UTIL_H_

#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ste::testing {

// The first n-1 tab-separated fields of `line`, then the rest.
inline std::vector<std::string> SplitTabs(const std::string& line, size_t n) {
  std::vector<std::string> f;
  size_t at = 0;
  for (size_t tab; f.size() + 1 < n && (tab = line.find('\t', at)) != std::string::npos;
       at = tab + 1) {
    f.push_back(line.substr(at, tab - at));
  }
  f.push_back(line.substr(at));
  return f;
}

// A file's outcome in $STE_RESULTS and its exit code.
struct Result {
  std::string outcome;
  int exit_code = -1;
  bool operator==(const Result& o) const {
    return outcome == o.outcome && exit_code == o.exit_code;
  }
};
inline void PrintTo(const Result& r, std::ostream* os) { *os << r.outcome << "/" << r.exit_code; }

// "outcome\texit\tseconds\tpath" lines, by path; a bad line or a path
// given twice is a test failure.
inline std::map<std::string, Result> ParseResults(const std::string& text) {
  std::map<std::string, Result> results;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = SplitTabs(line, 4);
    if (f.size() != 4) {
      ADD_FAILURE() << "bad result line: " << line;
      continue;
    }
    EXPECT_EQ(results.count(f[3]), 0u) << "two lines for " << f[3];
    results[f[3]] = Result{f[0], std::stoi(f[1])};
  }
  return results;
}

// One record of `ste log dump`: pid, ppid, scope, kind, op, path (tabs).
struct LogRecord {
  std::string scope, kind, path;
};

inline std::vector<LogRecord> ParseLogDump(const std::string& out) {
  std::vector<LogRecord> records;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = SplitTabs(line, 6);
    if (f.size() == 6) records.push_back({f[2], f[3], f[5]});
  }
  return records;
}

// The scopes in which the absolute path `path` was recorded as content.
inline std::set<std::string> ContentScopesOf(const std::vector<LogRecord>& records,
                                             const std::string& path) {
  std::set<std::string> scopes;
  for (const LogRecord& r : records) {
    if (r.path == path && r.kind == "content") scopes.insert(r.scope);
  }
  return scopes;
}

}  // namespace ste::testing

#endif  // STE_TESTS_INTEGRATIONS_RUNNER_E2E_UTIL_H_
