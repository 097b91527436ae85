// Table tests of the output formats (output_format.h): each format of each
// document from typed values, byte for byte.
#include "output_format.h"

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ste::cli {
namespace {

TEST(OutputFormat, ParsesTheAllowedNamesAndNamesThemOnError) {
  const std::vector<OutputFormat> all = {OutputFormat::kText,   OutputFormat::kJson,
                                         OutputFormat::kGithub, OutputFormat::kMatrix,
                                         OutputFormat::kRunner, OutputFormat::kJunit};
  for (OutputFormat f : all) {
    absl::StatusOr<OutputFormat> parsed = ParseOutputFormat(OutputFormatName(f), all);
    ASSERT_TRUE(parsed.ok()) << OutputFormatName(f);
    EXPECT_EQ(*parsed, f);
  }
  struct Case {
    std::string value;
    std::vector<OutputFormat> allowed;
    std::string error;
  };
  const Case cases[] = {
      {"xml", {OutputFormat::kText, OutputFormat::kJson}, "--format is text or json, not 'xml'"},
      {"github", {OutputFormat::kText, OutputFormat::kJson}, "--format is text or json, not 'github'"},
      {"", {OutputFormat::kJson}, "--format is json, not ''"},
      {"JSON",
       {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kGithub},
       "--format is text, json or github, not 'JSON'"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<OutputFormat> parsed = ParseOutputFormat(c.value, c.allowed);
    ASSERT_FALSE(parsed.ok()) << c.value;
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status()));
    EXPECT_EQ(parsed.status().message(), c.error);
  }
}

TEST(JsonWriter, CommasNestingAndValues) {
  struct Case {
    std::string (*write)();
    std::string want;
  };
  const Case cases[] = {
      {[] { return JsonWriter().BeginObject().EndObject().Take(); }, "{}"},
      {[] { return JsonWriter().BeginArray().Int(1).Int(-2).Null().Bool(false).EndArray().Take(); },
       "[1,-2,null,false]"},
      {[] {
         JsonWriter j;
         j.BeginObject().VersionMember().Key("a").BeginArray().BeginObject().EndObject();
         j.BeginArray().EndArray().EndArray().Key("b").Seconds(1.23456).EndObject();
         return j.Take();
       },
       R"({"version":1,"a":[{},[]],"b":1.235})"},
      {[] { return JsonWriter().BeginObject().Key("q\"").String("a\nb").EndObject().Take(); },
       R"({"q\"":"a\nb"})"},
      // Not UTF-8: replaced, and the bytes kept in hex beside it.
      {[] { return JsonWriter().BeginObject().PathMember("path", "a\xff").EndObject().Take(); },
       "{\"path\":\"a\xEF\xBF\xBD\",\"path_hex\":\"61ff\"}"},
  };
  for (const Case& c : cases) EXPECT_EQ(c.write(), c.want);
}

TEST(AddVersionToJsonLines, EveryObjectLineGetsItLast) {
  const std::pair<std::string, std::string> cases[] = {
      {"", ""},
      {"{\"a\":1}\n", "{\"a\":1,\"version\":1}\n"},
      {"{\"a\":\"}\"}\n{\"b\":[]}\n", "{\"a\":\"}\",\"version\":1}\n{\"b\":[],\"version\":1}\n"},
      {"{\"a\":1}", "{\"a\":1,\"version\":1}"},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(AddVersionToJsonLines(in), want) << in;
}

Selection TwoTests() {
  Selection s;
  s.mode = SelectionMode::kSubset;
  s.reason = "2 of 4 tests are affected";
  InventoryChange c;
  c.path = "lib/a.sh";
  c.change = ChangeKind::kModified;
  c.type = FileType::kRegular;
  s.changed.push_back(c);
  SelectedTest a;
  a.test = "tests/test_a.sh";
  a.reasons.push_back(SelectionReason::Dependency("lib/a.sh", DepKind::kContent, ChangeKind::kModified));
  a.seconds = 0.25;
  SelectedTest b;
  b.test = "tests/test b.sh";
  b.reasons.push_back(SelectionReason::Rule(SelectionRule::kFailedInBaseline));
  b.more_reasons = 2;
  s.tests = {a, b};
  return s;
}

TEST(SelectionFormats, TextJsonRunner) {
  const Selection s = TwoTests();
  BaselineInfo info;
  info.id = 3;
  info.mri = 7;
  info.commit = "abc";
  EXPECT_EQ(SelectionJson(s, info),
            R"({"mode":"subset","reason":"2 of 4 tests are affected",)"
            R"("baseline":{"id":3,"mri":7,"commit":"abc"},)"
            R"("changed":[{"path":"lib/a.sh","change":"modified","type":"regular"}],)"
            R"("tests":[{"test":"tests/test_a.sh","reasons":[{"path":"lib/a.sh","kind":"content",)"
            R"("change":"modified"}],"more_reasons":0,"seconds":0.250},)"
            R"({"test":"tests/test b.sh","reasons":[{"path":"","kind":"","change":"failed in baseline"}],)"
            R"("more_reasons":2}],"wide":[],"version":1})"
            "\n");
  EXPECT_EQ(SelectionJson(Selection{}, std::nullopt),
            R"({"mode":"all","reason":"","baseline":null,"changed":[],"tests":[],"wide":[],"version":1})"
            "\n");
  EXPECT_EQ(SelectionText(s, false, false), "tests/test_a.sh\ntests/test b.sh\n");
  EXPECT_EQ(SelectionText(s, true, false),
            "tests/test_a.sh\n  <- lib/a.sh (content modified)\n"
            "tests/test b.sh\n  <- failed in baseline\n  <- and 2 more\n");
  EXPECT_EQ(SelectionText(s, true, true), std::string("tests/test_a.sh\0tests/test b.sh\0", 32));
  EXPECT_EQ(RunnerLine(s, RunnerKind::kGeneric), "tests/test_a.sh 'tests/test b.sh'\n");
  EXPECT_EQ(RunnerLine(Selection{}, RunnerKind::kGeneric), "");
}

TEST(SelectionFormats, MatrixHasNoVersionKey) {
  // Every top-level key of a strategy.matrix is a dimension: only include.
  const std::vector<Shard> shards = {{1, {"t/a", "t/b"}, 2.5}, {2, {"t/c"}, 1}};
  EXPECT_EQ(MatrixJson(shards, RunnerKind::kGeneric),
            R"({"include":[{"shard":1,"of":2,"count":2,"seconds":2.500,"tests":["t/a","t/b"],)"
            R"("args":"t/a t/b"},{"shard":2,"of":2,"count":1,"seconds":1.000,"tests":["t/c"],)"
            R"("args":"t/c"}]})");
  EXPECT_EQ(MatrixJson({}, RunnerKind::kGeneric), R"({"include":[]})");
}

TEST(SelectionFormats, GithubOutputsAndSummary) {
  const Selection s = TwoTests();
  absl::StatusOr<std::string> entries = GithubOutputEntries(s, "/t/tests.txt", "");
  ASSERT_TRUE(entries.ok());
  for (const char* name : {"mode<<", "reason<<", "tests_file<<"}) {
    EXPECT_NE(entries->find(name), std::string::npos) << name << "\n" << *entries;
  }
  EXPECT_EQ(entries->find("matrix<<"), std::string::npos);
  EXPECT_NE(GithubOutputEntries(s, "f", "{}")->find("matrix<<"), std::string::npos);
  const std::string md = GithubSummary(s);
  EXPECT_NE(md.find("### ste select: subset"), std::string::npos) << md;
  EXPECT_NE(md.find("| <code>tests/test\\_a.sh</code> | lib/a.sh \\(content modified\\) |"),
            std::string::npos)
      << md;
}

// tests.unit = "case": a file narrowed to cases is handed as
// <file>::<case>, in the cases' order, by every format; a matrix keeps a
// file's cases in one shard.
TEST(SelectionFormats, CasesAreHandedAsFileAndCase) {
  Selection s = TwoTests();
  s.tests[0].cases = {"test_z", "TestK::test_a"};
  EXPECT_EQ(SelectedNames(s.tests[0]),
            (std::vector<std::string>{"tests/test_a.sh::test_z", "tests/test_a.sh::TestK::test_a"}));
  EXPECT_EQ(SelectedNames(s.tests[1]), std::vector<std::string>{"tests/test b.sh"});
  EXPECT_EQ(CaseCountLine(s), "2 test files selected: 1 whole, 1 as 2 cases\n");
  EXPECT_EQ(CaseCountLine(TwoTests()), "");
  EXPECT_EQ(SelectionText(s, false, false),
            "tests/test_a.sh::test_z\ntests/test_a.sh::TestK::test_a\ntests/test b.sh\n");
  EXPECT_EQ(SelectionText(s, true, false),
            "tests/test_a.sh::test_z\ntests/test_a.sh::TestK::test_a\n"
            "  <- (2 cases of tests/test_a.sh: every change below is in code only they ran, or that one ran "
            "before them; the rest of the file is unchanged)\n"
            "  <- lib/a.sh (content modified)\n"
            "tests/test b.sh\n  <- failed in baseline\n  <- and 2 more\n");
  EXPECT_EQ(SelectionText(s, false, true),
            std::string("tests/test_a.sh::test_z\0tests/test_a.sh::TestK::test_a\0tests/test b.sh\0", 71));
  EXPECT_EQ(RunnerLine(s, RunnerKind::kPytest),
            "tests/test_a.sh::test_z tests/test_a.sh::TestK::test_a 'tests/test b.sh'\n");
  EXPECT_NE(SelectionJson(s, std::nullopt)
                .find(R"({"test":"tests/test_a.sh","cases":["test_z","TestK::test_a"],"reasons":)"),
            std::string::npos)
      << SelectionJson(s, std::nullopt);
  const std::vector<Shard> files = SelectionShards(s, 2);
  ASSERT_EQ(files.size(), 2u);
  const std::vector<Shard> named = ShardsOfNames(files, s, RunnerKind::kPytest);
  std::set<std::vector<std::string>> tests;
  for (const Shard& sh : named) tests.insert(sh.tests);
  EXPECT_EQ(tests, (std::set<std::vector<std::string>>{
                       {"tests/test_a.sh::test_z", "tests/test_a.sh::TestK::test_a"}, {"tests/test b.sh"}}));
  const std::string matrix = MatrixJson(named, RunnerKind::kPytest);
  EXPECT_NE(matrix.find(R"("count":2,)"), std::string::npos) << matrix;
  EXPECT_NE(matrix.find(R"("tests":["tests/test_a.sh::test_z","tests/test_a.sh::TestK::test_a"],)"
                        R"("args":"tests/test_a.sh::test_z tests/test_a.sh::TestK::test_a"})"),
            std::string::npos)
      << matrix;
  absl::StatusOr<std::string> entries = GithubOutputEntries(s, "/t/tests.txt", matrix);
  ASSERT_TRUE(entries.ok());
  EXPECT_NE(entries->find("tests/test_a.sh::TestK::test_a"), std::string::npos) << *entries;
}

// ctest: the runner line and a matrix's args name the CTest tests whole
// (-R); their GoogleTest cases go by GTEST_FILTER: the cases when every
// selected test was narrowed to cases, otherwise every case ("*"), and
// "*" too for a name the filter would read as a pattern.
TEST(SelectionFormats, CTestCasesGoByAGoogleTestFilter) {
  Selection s;
  s.tests.resize(2);
  s.tests[0].test = "gt one";
  s.tests[0].cases = {"Files.ReadsTwo", "P/Files.Param/0"};
  s.tests[1].test = "gt_two";
  s.tests[1].cases = {"Other.Case", "Files.ReadsTwo"};
  EXPECT_EQ(RunnerLine(s, RunnerKind::kCTest), "-R '^(gt one|gt_two)$'\n");
  EXPECT_EQ(GtestFilter(s), "Files.ReadsTwo:P/Files.Param/0:Other.Case\n");
  const std::vector<Shard> named = ShardsOfNames(SelectionShards(s, 1), s, RunnerKind::kCTest);
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].tests, (std::vector<std::string>{"gt one", "gt_two"}));
  absl::StatusOr<std::string> entries = GithubOutputEntries(s, "/t/tests.txt", "", "Files.ReadsTwo:Other.Case");
  ASSERT_TRUE(entries.ok());
  EXPECT_NE(entries->find("gtest_filter<<"), std::string::npos) << *entries;
  EXPECT_NE(entries->find("\nFiles.ReadsTwo:Other.Case\n"), std::string::npos) << *entries;
  EXPECT_EQ(GithubOutputEntries(s, "/t/tests.txt", "")->find("gtest_filter"), std::string::npos);
  s.tests[1].cases = {"Odd.Na*me"};
  EXPECT_EQ(GtestFilter(s), "*\n");
  s.tests[1].cases = {"-Neg.Case"};
  EXPECT_EQ(GtestFilter(s), "*\n");
  s.tests[1].cases.clear();  // selected whole
  EXPECT_EQ(GtestFilter(s), "*\n");
  EXPECT_EQ(GtestFilter(Selection{}), "");
}

TEST(WhyAndDeps, TextAndJson) {
  const std::vector<Dependent> why = {
      {"tests/test_a.sh", "content", "", ""},
      {"tests/t\tab.py", "view", "ste-dists", "the *.dist-info names"},
  };
  EXPECT_EQ(WhyText(why),
            "content\ttests/test_a.sh\nview ste-dists\ttests/t\\tab.py\t(the *.dist-info names)\n");
  EXPECT_EQ(WhyJson("lib", why),
            R"({"path":"lib","tests":[{"test":"tests/test_a.sh","kind":"content"},)"
            R"({"test":"tests/t\tab.py","kind":"view","view":"ste-dists",)"
            R"("description":"the *.dist-info names"}],"version":1})"
            "\n");
  EXPECT_EQ(WhyJson("x", {}), "{\"path\":\"x\",\"tests\":[],\"version\":1}\n");

  TestDependencies deps;
  deps.test = "tests/test_b.sh";
  deps.baseline = 2;
  deps.deps = {{"lib/b.sh", DepKind::kContent}, {"config/local.env", DepKind::kAbsent}};
  EXPECT_EQ(DepsText(deps), "content\tlib/b.sh\nabsent\tconfig/local.env\n");
  EXPECT_EQ(DepsJson(deps),
            R"({"test":"tests/test_b.sh","baseline":2,"opaque":false,"deps":[{"path":"lib/b.sh",)"
            R"("kind":"content"},{"path":"config/local.env","kind":"absent"}],"version":1})"
            "\n");
  deps.opaque = true;
  deps.deps.clear();
  EXPECT_EQ(DepsText(deps), "opaque\t(it ran something ste could not trace)\n");
}

TEST(BaselineList, Json) {
  BaselineSummary building;
  building.info.id = 2;
  building.info.mri = 5;
  building.info.state = BaselineState::kBuilding;
  building.info.created_unix = 100;
  building.writer_alive = true;
  BaselineSummary failed;
  failed.info.id = 1;
  failed.info.mri = 4;
  failed.info.commit = "c1";
  failed.info.state = BaselineState::kFailed;
  failed.info.created_unix = 200;  // after now: age 0
  failed.info.failure = "boom";
  failed.tests = 3;
  failed.blob_bytes = 10;
  EXPECT_EQ(BaselineListJson({building, failed}, 150),
            R"({"baselines":[{"id":2,"mri":5,"commit":"","state":"building","tests":0,)"
            R"("bytes":0,"created_unix":100,"completed_unix":0,"age_seconds":50,"writer_alive":true,)"
            R"("failure":""},{"id":1,"mri":4,"commit":"c1","state":"failed","tests":3,"bytes":10,)"
            R"("created_unix":200,"completed_unix":0,"age_seconds":0,"writer_alive":null,"failure":"boom"}],"version":1})"
            "\n");
  EXPECT_EQ(BaselineListJson({}, 0), "{\"baselines\":[],\"version\":1}\n");
}

TEST(JUnit, TheReportOfTheScheduler) {
  FinishedTest t;
  t.test = "tests/unit/test_a.py";
  t.outcome = TestOutcome::kPassed;
  const std::string xml = JUnitReport({t}, JUnitOptions{});
  EXPECT_EQ(xml, JUnitXml({t}, JUnitOptions{}));
  EXPECT_NE(xml.find("<testcase classname=\"tests.unit\" name=\"test_a.py\""), std::string::npos)
      << xml;
}

TEST(SlowTrackerNote, SaysHowManyAndWhyOnce) {
  EXPECT_EQ(SlowTrackerNote(0, {}), "");
  EXPECT_EQ(SlowTrackerNote(1, {{"python-3.9-no-compiled-tracer", 1}}),
            "1 Python process of 1 test tracked definitions with the slower fallback tracer: "
            "python-3.9-no-compiled-tracer (1) (docs/concepts.md, \"Definitions\")");
  EXPECT_EQ(SlowTrackerNote(2, {{"STE_DEFS_TRACER=profile", 3}, {"python-3.10-no-compiled-tracer", 1}}),
            "4 Python processes of 2 tests tracked definitions with the slower fallback tracer: "
            "STE_DEFS_TRACER=profile (3), python-3.10-no-compiled-tracer (1) (docs/concepts.md, "
            "\"Definitions\")");
}

}  // namespace
}  // namespace ste::cli
