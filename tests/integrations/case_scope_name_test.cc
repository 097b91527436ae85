// One rule turns a test case's name into a scope name (integrations/
// README.md, "Case scope names"), written three times: the Python runners'
// case_scope_name, the Ruby runner's ScopeApi.case_name and the GoogleTest
// listener's CaseScopeName. Each is fed the names of case_scope_names.tsv
// and must give the table's scope names, byte for byte; and the real
// interceptor must accept every one of them beneath the longest test path
// the README promises.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "ste_gtest_listener.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::ReadFile;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);
// The table and the helpers printing what the Python and Ruby code make of
// its names (print_case_scope_names.{py,rb}).
const std::string kHelpers = CASE_SCOPE_NAMES_DIR;
const std::string kTable = kHelpers + "/case_scope_names.tsv";
constexpr size_t kMaxCaseScopeBytes = 512;
// The longest test path beneath which every case scope name fits:
// "//r/" + path + "/" + 512 bytes is STE_SCOPE_MAX_LEN (4096).
constexpr size_t kLongestTestPath = 3579;

struct Row {
  int line = 0;
  std::string name;   // decoded
  std::string scope;  // decoded
};

// Decodes one field of the table (its header says how); false when `text`
// is not well formed.
bool DecodeField(absl::string_view text, std::string* out) {
  out->clear();
  for (size_t i = 0; i < text.size(); i++) {
    if (text[i] != '\\') {
      out->push_back(text[i]);
      continue;
    }
    if (++i == text.size()) return false;
    switch (text[i]) {
      case '\\':
        out->push_back('\\');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'x': {
        int byte = 0;
        if (i + 2 >= text.size() || !absl::ascii_isxdigit(text[i + 1]) ||
            !absl::ascii_isxdigit(text[i + 2]) ||
            !absl::SimpleHexAtoi(text.substr(i + 1, 2), &byte)) {
          return false;
        }
        out->push_back(static_cast<char>(byte));
        i += 2;
        break;
      }
      case '{': {
        size_t star = text.find('*', i);
        size_t close = text.find('}', i);
        int count = 0;
        std::string unit;
        if (star == absl::string_view::npos ||
            close == absl::string_view::npos || close < star ||
            !absl::SimpleAtoi(text.substr(i + 1, star - i - 1), &count) ||
            count < 0 ||
            !DecodeField(text.substr(star + 1, close - star - 1), &unit)) {
          return false;
        }
        for (int k = 0; k < count; k++) out->append(unit);
        i = close;
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

// The rows of the table; a malformed line fails the calling test.
std::vector<Row> LoadTable() {
  std::vector<Row> rows;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(ReadFile(kTable), '\n')) {
    line_number++;
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, '\t');
    Row row;
    row.line = line_number;
    bool ok = fields.size() == 2 && DecodeField(fields[0], &row.name) &&
              DecodeField(fields[1], &row.scope);
    EXPECT_TRUE(ok) << kTable << ":" << line_number << ": malformed line";
    if (ok) rows.push_back(std::move(row));
  }
  return rows;
}

// A name shortened for messages.
std::string Shown(const std::string& bytes) {
  std::string shown = absl::CHexEscape(bytes.substr(0, 60));
  if (bytes.size() > 60)
    absl::StrAppend(&shown, "... (", bytes.size(), " bytes)");
  return "\"" + shown + "\"";
}

// Writes the table's names, one per line in hex, to a temporary file.
std::string WriteNamesFile(const std::vector<Row>& rows) {
  std::string text;
  for (const Row& row : rows)
    absl::StrAppend(&text, absl::BytesToHexString(row.name), "\n");
  std::string path = MakeTempDir() + "/names.hex";
  WriteFile(path, text);
  return path;
}

// Runs a helper that prints a line per name and checks each line against
// the table's scope name.
void ExpectHelperGivesTheTable(const std::vector<std::string>& argv,
                               const std::vector<Row>& rows) {
  Spawned run = Spawn(argv, {"PYTHONDONTWRITEBYTECODE=1"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> lines = absl::StrSplit(run.out, '\n');
  ASSERT_EQ(lines.size(), rows.size() + 1) << run.out << run.err;
  for (size_t i = 0; i < rows.size(); i++) {
    EXPECT_EQ(absl::HexStringToBytes(lines[i]), rows[i].scope)
        << kTable << ":" << rows[i].line << ": name " << Shown(rows[i].name);
  }
}

TEST(CaseScopeNameTable, HoldsOddNamesAndOnlyDistinctValidScopeNames) {
  std::vector<Row> rows = LoadTable();
  ASSERT_GE(rows.size(), 50u);
  std::set<std::string> names, scopes;
  size_t longest = 0;
  for (const Row& row : rows) {
    names.insert(row.name);
    scopes.insert(row.scope);
    longest = std::max(longest, row.name.size());
    const std::string& s = row.scope;
    EXPECT_TRUE(!s.empty() && s.size() <= kMaxCaseScopeBytes &&
                s.find('/') == std::string::npos &&
                s.find('\0') == std::string::npos)
        << kTable << ":" << row.line << ": " << Shown(s);
  }
  EXPECT_EQ(names.size(), rows.size()) << "a name is in the table twice";
  EXPECT_EQ(scopes.size(), rows.size()) << "two names give one scope name";
  EXPECT_TRUE(names.count("") && names.count(std::string(1, '\0')) &&
              names.count("a//b"));
  EXPECT_GE(longest, 5000u);
}

TEST(CaseScopeName, TheGoogleTestListenerGivesTheTablesScopeNames) {
  for (const Row& row : LoadTable()) {
    EXPECT_EQ(ste_gtest::CaseScopeName(row.name), row.scope)
        << kTable << ":" << row.line << ": name " << Shown(row.name);
  }
}

TEST(CaseScopeName, ThePythonRunnersGiveTheTablesScopeNames) {
  std::vector<Row> rows = LoadTable();
  ExpectHelperGivesTheTable(
      {"/usr/bin/python3", kHelpers + "/print_case_scope_names.py",
       WriteNamesFile(rows)},
      rows);
}

TEST(CaseScopeName, TheRubyRunnerGivesTheTablesScopeNames) {
  std::vector<Row> rows = LoadTable();
  ExpectHelperGivesTheTable(
      {"ruby", kHelpers + "/print_case_scope_names.rb", WriteNamesFile(rows)},
      rows);
}

// The scope of a test file whose path is `bytes` long: "//r/d/d/.../ffff".
std::string TestScopeOfPathLength(size_t bytes) {
  std::string path;
  while (path.size() + 3 < bytes) path += "d/";
  path.append(bytes - path.size(), 'f');
  return "//r/" + path;
}

// Pushes every scope name of the table with the Python runners' SteScopes
// under `ste run --scope test_scope`; the push results, one per row.
std::vector<std::string> PushResults(const std::string& test_scope,
                                     const std::vector<Row>& rows) {
  std::string names = WriteNamesFile(rows);
  Spawned run =
      Spawn({kSte, "run", "--scope", test_scope, "--log-dir",
             MakeTempDir() + "/logs", "--", "/usr/bin/python3",
             kHelpers + "/print_case_scope_names.py", "--push", names},
            {"PYTHONDONTWRITEBYTECODE=1"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> results;
  for (absl::string_view line :
       absl::StrSplit(run.out, '\n', absl::SkipEmpty())) {
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    results.push_back(fields.size() == 2 ? fields[1]
                                         : "malformed: " + std::string(line));
  }
  EXPECT_EQ(results.size(), rows.size()) << run.out << run.err;
  return results;
}

TEST(CaseScopeName,
     TheInterceptorAcceptsEveryScopeNameBeneathTheLongestTestPath) {
  std::vector<Row> rows = LoadTable();
  std::vector<std::string> results =
      PushResults(TestScopeOfPathLength(kLongestTestPath), rows);
  for (size_t i = 0; i < std::min(rows.size(), results.size()); i++) {
    EXPECT_EQ(results[i], "ok")
        << kTable << ":" << rows[i].line << ": " << Shown(rows[i].scope);
  }
  // One byte longer and the longest names no longer fit: the bound is tight.
  results = PushResults(TestScopeOfPathLength(kLongestTestPath + 1), rows);
  for (size_t i = 0; i < std::min(rows.size(), results.size()); i++) {
    EXPECT_EQ(results[i] == "ok", rows[i].scope.size() < kMaxCaseScopeBytes)
        << kTable << ":" << rows[i].line << ": " << Shown(rows[i].scope) << ": "
        << results[i];
  }
}

}  // namespace
}  // namespace ste
