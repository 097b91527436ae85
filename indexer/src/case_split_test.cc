// Test cases as a unit of selection (case_split.h): which keys can be a
// case's own, a test's split into its cases' own parts and its shared part,
// the run order ReduceLogs reads from the tracker's `scope` markers, the
// case scope name read back, the index's case section (round trip, run
// order, corruption) and Select narrowing a file to its cases.
#include "ste/case_split.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "selection_index_format.h"
#include "ste/selection.h"
#include "ste/selection_index.h"

namespace ste {
namespace {

namespace fmt = index_format;

const std::string kFile = "//r/tests/test_t.py";

DepKey Content(const std::string& path) { return DepKey{path, DepKind::kContent}; }

TEST(CaseSplit, OnlyDefinitionViewsCanBeACasesOwn) {
  EXPECT_TRUE(IsCaseOwnKind(Content("lib/h.py/\x01ste-def:f")));
  EXPECT_TRUE(IsCaseOwnKind(Content("lib/h.py/\x01ste-def:K.m")));
  EXPECT_TRUE(IsCaseOwnKind(Content("lib/h.py/\x01ste-at:f")));
  EXPECT_FALSE(IsCaseOwnKind(Content("lib/h.py/\x01ste-def")));  // module-level code
  EXPECT_FALSE(IsCaseOwnKind(Content("lib/h.py")));
  EXPECT_FALSE(IsCaseOwnKind(Content("lib/h.py/\x01ste-doc:f")));
  EXPECT_FALSE(IsCaseOwnKind(DepKey{"lib/h.py/\x01ste-def:f", DepKind::kAbsent}));
  EXPECT_FALSE(IsCaseOwnKind(DepKey{"lib/h.py/\x01ste-def:f", DepKind::kListing}));
}

TEST(CaseSplit, CaseOfScopeNameReversesTheNameRule) {
  EXPECT_EQ(CaseOfScopeName("test_a"), "test_a");
  EXPECT_EQ(CaseOfScopeName("TestK::test_b"), "TestK::test_b");
  EXPECT_EQ(CaseOfScopeName("test_p[a%2Fb]"), "test_p[a/b]");
  EXPECT_EQ(CaseOfScopeName("100%25"), "100%");
  for (const char* bad : {"", "%", "%~0123456789abcdef", "a%2", "a%zz", "a%2f"}) {
    EXPECT_EQ(CaseOfScopeName(bad), std::nullopt) << bad;
  }
}

ScopeDependencies Scope(const std::string& scope, std::vector<std::string> paths) {
  ScopeDependencies s{scope, {}};
  for (const std::string& p : paths) s.deps.push_back(Content(p));
  std::sort(s.deps.begin(), s.deps.end());
  return s;
}

// The file: module view h.py/ste-def in its scope; case A ran f (and read
// h.py's content), B ran g and a deeper scope read lib/y; C recorded
// nothing; the root scope holds lib/x.
TestDependencies Suite() {
  TestDependencies d;
  d.scopes = {Scope("//r", {"lib/x"}), Scope(kFile, {"lib/h.py/\x01ste-def"}),
              Scope(kFile + "/A", {"lib/h.py/\x01ste-def:f", "lib/h.py"}),
              Scope(kFile + "/B", {"lib/h.py/\x01ste-def:g"}), Scope(kFile + "/B/sub", {"lib/y"})};
  d.scope_entries = {{kFile, {7, 1}}, {kFile + "/A", {7, 3}}, {kFile + "/B", {7, 2}}, {kFile + "/C", {7, 5}}};
  return d;
}

std::vector<std::string> Shown(const TestDependencies& d) {
  std::vector<std::string> out;
  for (const ScopeDependencies& s : d.scopes) {
    std::string line = s.scope + ":";
    for (const DepKey& k : s.deps) line += " " + k.path;
    out.push_back(line);
  }
  return out;
}

TEST(CaseSplit, ACaseKeepsItsDefinitionViewsAndTheRestGoesToTheFile) {
  const TestDependencies all = Suite();
  TestDependencies d = Suite();
  SplitCaseScopes(all, "tests/test_t.py", &d);
  EXPECT_EQ(Shown(d), (std::vector<std::string>{
                          "//r: lib/x",
                          kFile + ": lib/h.py lib/h.py/\x01ste-def lib/y",
                          kFile + "/A: lib/h.py/\x01ste-def:f",
                          kFile + "/B: lib/h.py/\x01ste-def:g",
                      }));
  // By the order they were entered (n), not by name; C, which recorded
  // nothing, too.
  EXPECT_EQ(d.case_order, (std::vector<std::string>{"B", "A", "C"}));
}

// ctest (reads_own): a GoogleTest case also owns the plain files it read
// (lib/h.py in A here; data in a deeper scope still goes to the file),
// never a view nor an absent or listing key, and nothing the file's scope
// read too.
TEST(CaseSplit, WithReadsOwnACaseAlsoOwnsTheFilesItRead) {
  TestDependencies all = Suite();
  all.scopes[2].deps.push_back(DepKey{"data/gone", DepKind::kAbsent});
  all.scopes[2].deps.push_back(DepKey{"data", DepKind::kListing});
  all.scopes[3].deps.push_back(Content("lib/x"));  // the root scope's too: shared
  all.scopes[3].deps.push_back(Content("lib/h.py/\x01ste-doc:g"));
  for (ScopeDependencies& s : all.scopes) std::sort(s.deps.begin(), s.deps.end());
  TestDependencies d = all;
  SplitCaseScopes(all, "tests/test_t.py", &d, /*reads_own=*/true);
  std::vector<std::string> shown = Shown(d);
  EXPECT_EQ(shown[2], kFile + "/A: lib/h.py lib/h.py/\x01ste-def:f");
  EXPECT_EQ(shown[3], kFile + "/B: lib/h.py/\x01ste-def:g lib/x");
  EXPECT_EQ(shown[1], kFile + ": data data/gone lib/h.py/\x01ste-def lib/h.py/\x01ste-doc:g lib/y");
  // (lib/x in B is shared with the root scope: FeedCases keeps it out of
  // B's own part; SplitCaseScopes only sorts keys by kind and scope.)
  TestDependencies without = all;
  SplitCaseScopes(all, "tests/test_t.py", &without);
  EXPECT_EQ(Shown(without)[2], kFile + "/A: lib/h.py/\x01ste-def:f");
}

TEST(CaseSplit, AnUnsplitScopeOwnsNothing) {
  TestDependencies all = Suite();
  all.unsplit_scopes.insert(kFile + "/B");
  TestDependencies d = Suite();
  SplitCaseScopes(all, "tests/test_t.py", &d);
  EXPECT_EQ(Shown(d), (std::vector<std::string>{
                          "//r: lib/x",
                          kFile + ": lib/h.py lib/h.py/\x01ste-def lib/h.py/\x01ste-def:g lib/y",
                          kFile + "/A: lib/h.py/\x01ste-def:f",
                      }));
  EXPECT_EQ(d.case_order, (std::vector<std::string>{"B", "A", "C"}));
}

TEST(CaseSplit, NoRunOrderWithoutOneProcessEnteringEveryCase) {
  struct Row {
    const char* name;
    std::string scope;
    std::pair<uint32_t, uint64_t> entry;  // (pid, n); pid 0 with scope "": erase A's
  };
  for (const Row& row : {Row{"a second process", kFile + "/C", {8, 5}},
                         Row{"two processes in one scope", kFile + "/A", {0, 0}},
                         Row{"a case without a marker", kFile + "/A", {0, 1}}}) {
    SCOPED_TRACE(row.name);
    TestDependencies all = Suite();
    if (row.entry == std::make_pair(0u, uint64_t{1})) {
      all.scope_entries.erase(row.scope);
    } else {
      all.scope_entries[row.scope] = row.entry;
    }
    TestDependencies d = Suite();
    SplitCaseScopes(all, "tests/test_t.py", &d);
    EXPECT_TRUE(d.case_order.empty());
  }
}

TEST(CaseSplit, ReduceLogsReadsTheRunOrderFromTheScopeMarkers) {
  auto marker = [](const std::string& scope, const std::string& id) {
    return LogRecord{scope, RecordKind::kAbsent, 0, "/\x01ste-defs-scope:" + id, 0};
  };
  ProcessLog child;
  child.records = {marker(kFile, "42.1"), marker(kFile + "/B", "42.2"), marker(kFile + "/A", "42.3"),
                   marker(kFile + "/B", "42.4")};  // B entered again (a wider fixture set up)
  ProcessLog other;
  other.records = {marker(kFile + "/C", "43.1"), marker(kFile + "/C", "43.2"), marker(kFile + "/D", "bad")};
  ProcessLog third;
  third.records = {marker(kFile + "/C", "44.1")};
  PathPolicy policy;
  policy.root = "/repo";
  policy.log_dir = "/nonexistent-ste/logs";
  const TestDependencies d = ReduceLogs({child, other, third}, absl::OkStatus(), policy);
  using Entries = std::map<std::string, std::pair<uint32_t, uint64_t>>;
  EXPECT_EQ(d.scope_entries, (Entries{{kFile, {42, 1}},
                                      {kFile + "/A", {42, 3}},
                                      {kFile + "/B", {42, 2}},
                                      {kFile + "/C", {0, 0}},  // two pids
                                      {kFile + "/D", {0, 0}}}));  // malformed
  EXPECT_TRUE(d.scopes.empty());  // markers are never dependencies
}

// ---- the index's case section --------------------------------------------

// test_t.py: shared key lib/h.py/ste-def; cases "z" (run 0, owns f),
// "a" (run 1, owns g), "m" (run 2, owns nothing). test_u.py: g, no cases.
std::string CasesImage(const std::string& third_name = "m") {
  SelectionIndexBuilder b;
  EXPECT_TRUE(b.AddTests({kFile, "//r/tests/test_u.py"}).ok());
  const uint32_t t = *b.FindTest(kFile), u = *b.FindTest("//r/tests/test_u.py");
  const uint32_t f = b.InternPath("lib/h.py/\x01ste-def:f"), g = b.InternPath("lib/h.py/\x01ste-def:g");
  const uint32_t module = b.InternPath("lib/h.py/\x01ste-def");
  const uint32_t nobody = b.InternPath("lib/nobody.py/\x01ste-def:n");
  const std::vector<uint32_t> t_keys = {f, g, module};
  EXPECT_TRUE(b.AddTestDependencies(t, t_keys, DepKind::kContent).ok());
  EXPECT_TRUE(b.AddTestDependencies(u, std::vector<uint32_t>{g}, DepKind::kContent).ok());
  EXPECT_TRUE(b.AddCase(t, "a", 1, std::vector<uint32_t>{g}, DepKind::kContent).ok());
  EXPECT_TRUE(b.AddCase(t, third_name, 2, {}, DepKind::kContent).ok());
  EXPECT_TRUE(b.AddCase(t, "z", 0, std::vector<uint32_t>{f, nobody}, DepKind::kContent).ok());
  EXPECT_TRUE(b.AddCase(t, "z", 0, std::vector<uint32_t>{f}, DepKind::kContent).ok());  // adds up
  absl::Status twice = b.AddCase(t, "y", 0, {}, DepKind::kContent);
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument) << twice;
  absl::StatusOr<std::string> image = b.Finish();
  EXPECT_TRUE(image.ok()) << image.status();
  return image.value_or("");
}

TEST(CaseSection, RoundTripsInRunOrder) {
  auto index = SelectionIndex::FromBytes(CasesImage());
  ASSERT_TRUE(index.ok()) << index.status();
  const SelectionIndex& x = **index;
  ASSERT_EQ(x.case_count(), 3u);
  const uint32_t t = *x.FindTest(kFile);
  std::vector<std::string> names;
  for (uint32_t c = 0; c < 3; c++) {
    EXPECT_EQ(x.case_test(c), t);
    names.emplace_back(x.case_name(c));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"z", "a", "m"}));
  EXPECT_EQ(x.CasesOf(Content("lib/h.py/\x01ste-def:f")).value(), std::vector<uint32_t>{0});
  EXPECT_EQ(x.CasesOf(Content("lib/h.py/\x01ste-def:g")).value(), std::vector<uint32_t>{1});
  EXPECT_TRUE(x.CasesOf(Content("lib/h.py/\x01ste-def")).value().empty());
  EXPECT_TRUE(x.CasesOf(Content("lib/nobody.py/\x01ste-def:n")).value().empty());  // no test has it
  EXPECT_TRUE(x.CasesOf(Content("lib/absent")).value().empty());
}

TEST(CaseSection, AnIndexWithoutCasesHasNone) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({kFile}).ok());
  ASSERT_TRUE(b.AddTestDependency(0, "lib/h.py", DepKind::kContent).ok());
  auto index = SelectionIndex::FromBytes(b.Finish().value());
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ((*index)->case_count(), 0u);
  EXPECT_TRUE((*index)->CasesOf(Content("lib/h.py")).value().empty());
}

// The header checksum again, after an edit (selection_index.h).
void Reseal(std::string* image) {
  const bool v1 = fmt::DecodeU32(image->data() + fmt::kOffVersion) == 1;
  const size_t checksum_at = v1 ? fmt::kOffChecksum : fmt::kOff2Checksum;
  const uint64_t tables =
      fmt::DecodeU64(image->data() + (v1 ? fmt::kOffTestTableOffset : fmt::kOff2TestTableOffset));
  const uint64_t seed = XXH3_64bits(image->data(), checksum_at);
  fmt::EncodeU64(image->data() + checksum_at,
                 XXH3_64bits_withSeed(image->data() + tables, image->size() - tables, seed));
}

TEST(CaseSection, ACorruptOrTruncatedSectionIsRejected) {
  const std::string good = CasesImage();
  ASSERT_TRUE(SelectionIndex::FromBytes(good).ok());
  const uint64_t footer = good.size() - fmt::kCaseFooterSize;
  const uint64_t at = fmt::DecodeU64(good.data() + footer);
  struct Row {
    const char* name;
    std::function<void(std::string*)> edit;
    bool reseal;
  };
  const std::vector<Row> rows = {
      {"a byte flipped, no reseal", [&](std::string* s) { (*s)[at + 20] ^= 1; }, false},
      {"cut short", [](std::string* s) { s->resize(s->size() - 5); }, false},
      {"footer points before the strings",
       [&](std::string* s) { fmt::EncodeU64(s->data() + footer, 8); }, true},
      {"footer size wrong", [&](std::string* s) { fmt::EncodeU64(s->data() + footer + 8, 17); }, true},
      {"too many cases", [&](std::string* s) { fmt::EncodeU64(s->data() + at, 1000); }, true},
      {"too many own entries", [&](std::string* s) { fmt::EncodeU64(s->data() + at + 8, 1u << 30); }, true},
      {"a case of no test", [&](std::string* s) { fmt::EncodeU32(s->data() + at + 16, 9); }, true},
      {"an empty name", [&](std::string* s) { fmt::EncodeU32(s->data() + at + 16 + 4, 0); }, true},
      {"a name past the end",
       [&](std::string* s) { fmt::EncodeU64(s->data() + at + 16 + 8, 1000); }, true},
      {"tests out of order",
       // case 0 of test 1, then cases of test 0
       [&](std::string* s) { fmt::EncodeU32(s->data() + at + 16, 1); }, true},
      {"an own entry of no key",
       [&](std::string* s) { fmt::EncodeU32(s->data() + at + 16 + 3 * fmt::kCaseEntrySize, 99); }, true},
      {"an own entry of no case",
       [&](std::string* s) { fmt::EncodeU32(s->data() + at + 16 + 3 * fmt::kCaseEntrySize + 4, 7); }, true},
      {"the flag off", [](std::string* s) { fmt::EncodeU64(s->data() + fmt::kOffFlags, 0); }, true},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    std::string bad = good;
    row.edit(&bad);
    if (row.reseal) Reseal(&bad);
    auto index = SelectionIndex::FromBytes(bad);
    if (std::string(row.name) == "the flag off") {
      // Then the section's bytes end the outside and view paths (format
      // version 2), which no longer add up.
      EXPECT_THAT(std::string(index.status().message()), ::testing::HasSubstr("outside paths end"));
      continue;
    }
    EXPECT_FALSE(index.ok());
  }
}

// ---- Select narrows a file to its cases ----------------------------------

InventoryChange Modified(const std::string& p) {
  return InventoryChange{p, ChangeKind::kModified, FileType::kRegular, FileType::kRegular};
}

struct NarrowRow {
  const char* name;
  std::vector<std::string> changed;
  std::vector<std::string> want;  // SelectedNames-like: file or file::case
};

std::vector<std::string> Picked(const Selection& s) {
  std::vector<std::string> out;
  for (const SelectedTest& t : s.tests) {
    if (t.cases.empty()) out.push_back(t.test);
    for (const std::string& c : t.cases) out.push_back(t.test + "::" + c);
  }
  return out;
}

TEST(NarrowToCases, ACaseAndTheCasesAfterItOrTheWholeFile) {
  const std::string image = CasesImage();
  auto index = SelectionIndex::FromBytes(image);
  ASSERT_TRUE(index.ok()) << index.status();
  SelectionRules rules;
  rules.cases = true;
  const std::vector<NarrowRow> rows = {
      {"the first case's own: it and every later one",
       {"lib/h.py/\x01ste-def:f"},
       {"tests/test_t.py::z", "tests/test_t.py::a", "tests/test_t.py::m"}},
      {"a later case's own: it and the ones after it",
       {"lib/h.py/\x01ste-def:g"},
       {"tests/test_t.py::a", "tests/test_t.py::m", "tests/test_u.py"}},
      {"two cases' own: from the earliest", {"lib/h.py/\x01ste-def:f", "lib/h.py/\x01ste-def:g"},
       {"tests/test_t.py::z", "tests/test_t.py::a", "tests/test_t.py::m", "tests/test_u.py"}},
      {"the shared part: the whole file", {"lib/h.py/\x01ste-def"}, {"tests/test_t.py"}},
      {"own and shared: the whole file", {"lib/h.py/\x01ste-def", "lib/h.py/\x01ste-def:g"},
       {"tests/test_t.py", "tests/test_u.py"}},
  };
  for (const NarrowRow& row : rows) {
    SCOPED_TRACE(row.name);
    std::vector<InventoryChange> changes;
    for (const std::string& p : row.changed) changes.push_back(Modified(p));
    std::sort(changes.begin(), changes.end(),
              [](const InventoryChange& a, const InventoryChange& b) { return a.path < b.path; });
    Selection s =
        Select(rules, SelectionInputs{**index, {}, changes, {"tests/test_t.py", "tests/test_u.py"}, ""});
    EXPECT_EQ(Picked(s), row.want);
  }
  // Without tests.unit = "case": files.
  Selection whole = Select(SelectionRules{},
                           SelectionInputs{**index, {}, {Modified("lib/h.py/\x01ste-def:g")},
                                           {"tests/test_t.py", "tests/test_u.py"}, ""});
  EXPECT_EQ(Picked(whole), (std::vector<std::string>{"tests/test_t.py", "tests/test_u.py"}));
  EXPECT_EQ(whole.mode, SelectionMode::kAll);
  // A case whose name cannot be read back (the long form): the whole file.
  auto unreadable = SelectionIndex::FromBytes(CasesImage("%~0123456789abcdef"));
  ASSERT_TRUE(unreadable.ok()) << unreadable.status();
  Selection s = Select(rules, SelectionInputs{**unreadable, {}, {Modified("lib/h.py/\x01ste-def:g")},
                                              {"tests/test_t.py", "tests/test_u.py"}, ""});
  EXPECT_EQ(Picked(s), (std::vector<std::string>{"tests/test_t.py", "tests/test_u.py"}));
  // A failed test is a rule: whole.
  Selection failed = Select(rules, SelectionInputs{**index,
                                                   {"tests/test_t.py"},
                                                   {Modified("lib/h.py/\x01ste-def:g")},
                                                   {"tests/test_t.py", "tests/test_u.py"},
                                                   ""});
  EXPECT_EQ(Picked(failed), (std::vector<std::string>{"tests/test_t.py", "tests/test_u.py"}));
}

}  // namespace
}  // namespace ste
