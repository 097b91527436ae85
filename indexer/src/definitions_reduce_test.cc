// ReduceLogs at definition granularity (log_reduction.h, definitions.h):
// when a repo file's content dependency becomes its definition views, and
// every way it stays file level. Real files (the fingerprinter reads them),
// logs made by hand.
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ste/definitions.h"
#include "ste/log_reduction.h"

namespace ste {
namespace {

const std::string kScript = std::string(STE_SOURCE_DIR) + "/integrations/python/ste_fingerprint.py";
const std::string kA = "//r/tests/a.py";
const std::string kB = "//r/tests/b.py";

class ReduceDefinitions : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/ste-reduce-defs-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    root_ = dir;
    std::ofstream(root_ + "/geo.py") << "def area(w, h):\n    return w * h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n";
    std::ofstream(root_ + "/doc.py") << "\"\"\"Module.\"\"\"\nTAX = 20\nNAME = 'x'\n\n\nclass Shop:\n    \"\"\"A shop.\"\"\"\n\n"
                                        "    def price(self, n):\n        \"\"\"The price.\"\"\"\n        return n * TAX\n";
    std::ofstream(root_ + "/bad.py") << "def (\n";
  }
  void TearDown() override {
    unlink((root_ + "/geo.py").c_str());
    unlink((root_ + "/bad.py").c_str());
    unlink((root_ + "/doc.py").c_str());
    rmdir(root_.c_str());
  }

  // Records of one process: (scope, kind, path); "begin"/"end" for the markers.
  ProcessLog Process(const std::vector<std::tuple<std::string, RecordKind, std::string>>& records, int pid) {
    ProcessLog log;
    log.pid = pid;
    for (const auto& [scope, kind, what] : records) {
      std::string path = what == "begin" ? std::string(kDefsBeginPrefix) + std::to_string(pid)
                         : what == "end" ? std::string(kDefsEndPrefix) + std::to_string(pid)
                         : what == "v2"  ? std::string(kDefsV2Prefix) + std::to_string(pid)
                         : what == "positions" ? std::string(kPositionsPrefix) + std::to_string(pid) + "." + scope
                         : what == "code-lines" ? std::string(kCodeLinesPrefix) + std::to_string(pid) + "." + scope
                                         : what;
      log.records.push_back(LogRecord{scope, kind, 3, path, 0});
      // Today's tracker says both: v2 and v3 (the absent and star records).
      if (what == "v2") {
        log.records.push_back(LogRecord{scope, kind, 3, std::string(kDefsV3Prefix) + std::to_string(pid), 0});
      }
    }
    return log;
  }
  std::string Code(const std::string& file, int line) {
    return root_ + "/" + file + "/" + std::string(kCodeRecordPrefix) + std::to_string(line);
  }
  // One of the tracker's per-file records: "<root>/<file>/<last>".
  std::string Rec(const std::string& file, std::string_view last) { return root_ + "/" + file + "/" + std::string(last); }
  TestDependencies Reduce(const std::vector<ProcessLog>& logs, bool definitions = true) {
    PathPolicy policy;
    policy.root = root_;
    policy.log_dir = "/nonexistent-ste/logs";
    policy.exists = [](const std::string&) { return true; };
    policy.definitions = definitions ? &cache_ : nullptr;
    return ReduceLogs(logs, absl::OkStatus(), policy);
  }
  // "path(kind)" of `scope`.
  static std::set<std::string> Deps(const TestDependencies& d, const std::string& scope) {
    std::set<std::string> out;
    for (const ScopeDependencies& s : d.scopes) {
      if (s.scope != scope) continue;
      for (const DepKey& k : s.deps) {
        std::string p = k.path;
        for (char& c : p) {
          if (c == '\x01') c = '@';
        }
        out.insert(p + "(" + std::string(DepKindName(k.kind)) + ")");
      }
    }
    return out;
  }

  std::string root_;
  DefinitionCache cache_{Fingerprinter({{".py", {"/usr/bin/python3", "-I", "-S", "-B", kScript}}})};
};

constexpr RecordKind kC = RecordKind::kContent;
constexpr RecordKind kN = RecordKind::kAbsent;

TEST_F(ReduceDefinitions, AWholeAccountTurnsTheFileIntoWhatRan) {
  TestDependencies d = Reduce({Process({{kA, kN, "begin"},
                                        {kA, kN, "v2"},
                                        {kA, kC, root_ + "/geo.py"},
                                        {kA, kN, Code("geo.py", 0)},
                                        {kA, kN, Code("geo.py", 1)},
                                        {kA, kN, "end"}},
                                       10)});
  EXPECT_EQ(Deps(d, kA), (std::set<std::string>{"geo.py/@ste-def(content)", "geo.py/@ste-def:area(content)"}));
  EXPECT_TRUE(d.untracked_scopes.empty());
}

// A tracker that does not say what it watches (no v2 marker): the places
// of the units it ran, every docstring and constant of their files.
TEST_F(ReduceDefinitions, ATrackerThatDoesNotSayDependsOnEveryPartOfWhatItRan) {
  TestDependencies d = Reduce({Process({{kA, kN, "begin"},
                                        {kA, kC, root_ + "/doc.py"},
                                        {kA, kN, Code("doc.py", 0)},
                                        {kA, kN, Code("doc.py", 9)},
                                        {kA, kN, "end"}},
                                       10)});
  EXPECT_EQ(Deps(d, kA), (std::set<std::string>{
                             "doc.py/@ste-def(content)", "doc.py/@ste-def:Shop.price(content)",
                             "doc.py/@ste-at:Shop.price(content)", "doc.py/@ste-doc:<module>(content)",
                             "doc.py/@ste-doc:Shop(content)", "doc.py/@ste-doc:Shop.price(content)",
                             "doc.py/@ste-const:TAX(content)", "doc.py/@ste-const:NAME(content)",
                             "doc.py/@ste-names(content)"}))
      << "without v3 (the absent and star records): which names each file binds";
}

// A v2 tracker: a docstring where it was used (the file's docstrings
// watched), a constant where code named it, a place where lines were read.
TEST_F(ReduceDefinitions, DocstringsConstantsAndPlacesWhereTheTrackerSawThemUsed) {
  auto run = [&](std::vector<std::tuple<std::string, RecordKind, std::string>> extra) {
    std::vector<std::tuple<std::string, RecordKind, std::string>> records = {
        {kA, kN, "begin"}, {kA, kN, "v2"}, {kA, kC, root_ + "/doc.py"}, {kA, kN, Code("doc.py", 0)},
        {kA, kN, Code("doc.py", 9)}};
    records.insert(records.end(), extra.begin(), extra.end());
    records.push_back({kA, kN, "end"});
    return Deps(Reduce({Process(records, 10)}), kA);
  };
  const std::set<std::string> base = {"doc.py/@ste-def(content)", "doc.py/@ste-def:Shop.price(content)"};
  auto with = [&](std::set<std::string> more) {
    more.insert(base.begin(), base.end());
    return more;
  };
  const std::string tracked(kDocsTrackedRecordName);
  EXPECT_EQ(run({{kA, kN, Rec("doc.py", tracked)}}), base);
  EXPECT_EQ(run({}), with({"doc.py/@ste-doc:<module>(content)", "doc.py/@ste-doc:Shop(content)",
                           "doc.py/@ste-doc:Shop.price(content)"}))
      << "docstrings not watched: all of them";
  EXPECT_EQ(run({{kA, kN, Rec("doc.py", tracked)}, {kA, kN, Rec("doc.py", std::string(kDocRecordPrefix) + "6")},
                 {kA, kN, Rec("doc.py", std::string(kDocRecordPrefix) + "0")},
                 {kA, kN, Rec("doc.py", std::string(kDocRecordPrefix) + "3")}}),
            with({"doc.py/@ste-doc:Shop(content)", "doc.py/@ste-doc:<module>(content)"}))
      << "line 3 holds no docstring: nothing";
  EXPECT_EQ(run({{kA, kN, Rec("doc.py", tracked)}, {kA, kN, Rec("doc.py", std::string(kNameRecordPrefix) + "TAX")},
                 {kA, kN, Rec("doc.py", std::string(kNameRecordPrefix) + "Shop")}}),
            with({"doc.py/@ste-const:TAX(content)"}))
      << "Shop is no constant: its binding is module-level code";
  EXPECT_EQ(run({{kA, kN, Rec("doc.py", tracked)}, {kA, kN, Rec("doc.py", kNamespaceRecordName)}}),
            with({"doc.py/@ste-const:TAX(content)", "doc.py/@ste-const:NAME(content)", "doc.py/@ste-names(content)"}));
  EXPECT_EQ(run({{kA, kN, Rec("doc.py", tracked)}, {kA, kN, Rec("doc.py", kStarRecordName)}}),
            with({"doc.py/@ste-names(content)"}))
      << "import * copied the names: which names there are, not their values";
  EXPECT_EQ(run({{kA, kN, Rec("doc.py", tracked)}, {kA, kN, Rec("doc.py", std::string(kAbsentRecordPrefix) + "RATE")},
                 {kA, kN, Rec("bad.py", std::string(kAbsentRecordPrefix) + "RATE")}}),
            with({"doc.py/@ste-absent:RATE(content)"}))
      << "a name looked up and not found; bad.py does not parse (its records are its content)";
  EXPECT_EQ(run({{kA, kN, Rec("doc.py", tracked)}, {kA, kN, "positions"}}), with({"doc.py/@ste-at:Shop.price(content)"}));
  EXPECT_EQ(run({{kA, kN, Rec("doc.py", tracked)}, {kA, kN, "code-lines"}}), with({"doc.py/@ste-at:Shop.price(content)"}));
}

// A forked child runs what its parent loaded: the parent watched the
// file's docstrings in the enclosing scope, which is enough; a process
// that loaded the file where no one watched it depends on all of them.
TEST_F(ReduceDefinitions, DocstringsWatchedWhereTheFileWasLoadedHereOrAbove) {
  auto child_deps = [&](const std::string& watched_in) {
    return Deps(Reduce({
                    Process({{"//r", kN, "begin"}, {"//r", kN, "v2"}, {"//r", kC, root_ + "/doc.py"},
                             {"//r", kN, Code("doc.py", 0)}, {watched_in, kN, Rec("doc.py", kDocsTrackedRecordName)},
                             {"//r", kN, "end"}},
                            10),
                    Process({{"//r", kN, "begin"}, {"//r", kN, "v2"}, {kA, kN, Code("doc.py", 9)}, {kA, kN, "end"}}, 11),
                }),
                kA);
  };
  EXPECT_EQ(child_deps("//r").count("doc.py/@ste-doc:Shop.price(content)"), 0u);
  EXPECT_EQ(child_deps(kB).count("doc.py/@ste-doc:Shop.price(content)"), 1u) << "watched in another test's scope";
}

// Places: frames' lines concern the units that ran in the scope; code
// objects' lines every unit of the files loaded here or in an enclosing
// scope (a function's first line is there without running it).
TEST_F(ReduceDefinitions, LinesOfFramesAreWhatRanLinesOfCodeObjectsAreEveryUnitLoaded) {
  auto all = [&](const std::string& reader) {
    return Reduce({
        Process({{"//r", kN, "begin"}, {"//r", kN, "v2"}, {"//r", kC, root_ + "/geo.py"}, {"//r", kN, Code("geo.py", 0)},
                 {"//r", kN, Rec("geo.py", kDocsTrackedRecordName)}, {"//r", kN, "end"}},
                10),
        Process({{"//r", kN, "begin"}, {"//r", kN, "v2"}, {kA, kN, Code("geo.py", 5)}, {kA, kN, reader}, {kA, kN, "end"}},
                11),
    });
  };
  std::set<std::string> frames = Deps(all("positions"), kA);
  EXPECT_EQ(frames.count("geo.py/@ste-at:perimeter(content)"), 1u);
  EXPECT_EQ(frames.count("geo.py/@ste-at:area(content)"), 0u) << "area did not run";
  // A unit that ran in the enclosing scope (as the parent loaded) is
  // recorded there once: its frames may be read here too.
  TestDependencies parent_ran = Reduce({
      Process({{"//r", kN, "begin"}, {"//r", kN, "v2"}, {"//r", kC, root_ + "/geo.py"}, {"//r", kN, Code("geo.py", 0)},
               {"//r", kN, Code("geo.py", 1)}, {"//r", kN, Rec("geo.py", kDocsTrackedRecordName)}, {"//r", kN, "end"}},
              10),
      Process({{"//r", kN, "begin"}, {"//r", kN, "v2"}, {kA, kN, Code("geo.py", 5)}, {kA, kN, "positions"}, {kA, kN, "end"}},
              11),
  });
  EXPECT_EQ(Deps(parent_ran, kA).count("geo.py/@ste-at:area(content)"), 1u);
  EXPECT_EQ(Deps(parent_ran, "//r").count("geo.py/@ste-at:area(content)"), 0u) << "the parent read no lines";
  std::set<std::string> code = Deps(all("code-lines"), kA);
  EXPECT_EQ(code.count("geo.py/@ste-at:perimeter(content)"), 1u);
  EXPECT_EQ(code.count("geo.py/@ste-at:area(content)"), 1u) << "loaded in the enclosing scope";
}

// A line shown as a frame's place (a warning's location, a log record's
// caller): the place of the unit holding it, not of every unit that ran; a
// line outside every unit, the file's bytes (no view holds module-level
// lines).
TEST_F(ReduceDefinitions, ALineShownIsThePlaceOfItsUnitOnly) {
  auto shown = [&](int line) {
    return Deps(Reduce({Process({{kA, kN, "begin"},
                                 {kA, kN, "v2"},
                                 {kA, kC, root_ + "/geo.py"},
                                 {kA, kN, Code("geo.py", 0)},
                                 {kA, kN, Code("geo.py", 1)},
                                 {kA, kN, Code("geo.py", 5)},
                                 {kA, kN, Rec("geo.py", std::string(kLineRecordPrefix) + std::to_string(line))},
                                 {kA, kN, "end"}},
                                10)}),
                kA);
  };
  std::set<std::string> in_area = shown(2);
  EXPECT_EQ(in_area.count("geo.py/@ste-at:area(content)"), 1u);
  EXPECT_EQ(in_area.count("geo.py/@ste-at:perimeter(content)"), 0u) << "perimeter ran; its lines were not shown";
  EXPECT_EQ(in_area.count("geo.py(content)"), 0u);
  std::set<std::string> module_level = shown(4);
  EXPECT_EQ(module_level.count("geo.py(content)"), 1u);
  EXPECT_EQ(module_level.count("geo.py/@ste-at:area(content)"), 0u);
  // In a file that is no dependency's (outside the root): nothing.
  TestDependencies outside = Reduce({Process(
      {{kA, kN, "begin"}, {kA, kN, "v2"}, {kA, kN, "/elsewhere/x.py/" + std::string(kLineRecordPrefix) + "3"}, {kA, kN, "end"}},
      10)});
  for (const std::string& dep : Deps(outside, kA)) EXPECT_EQ(dep.find("x.py"), std::string::npos) << dep;
}

TEST_F(ReduceDefinitions, NoCacheMeansFileLevelAndTheTrackersRecordsDropped) {
  TestDependencies d = Reduce({Process({{kA, kN, "begin"},
                                        {kA, kC, root_ + "/geo.py"},
                                        {kA, kN, Code("geo.py", 1)},
                                        {kA, kN, "end"}},
                                       10)},
                              false);
  EXPECT_EQ(Deps(d, kA), (std::set<std::string>{"geo.py(content)"}));
}

TEST_F(ReduceDefinitions, AnAccountThatNeverEndedStaysFileLevelAndTaintsItsScope) {
  TestDependencies d = Reduce({Process({{kA, kN, "begin"},
                                        {kA, kC, root_ + "/geo.py"},
                                        {kA, kN, Code("geo.py", 1)}},
                                       10)});
  EXPECT_EQ(Deps(d, kA).count("geo.py(content)"), 1u);
  EXPECT_EQ(d.untracked_scopes, std::set<std::string>{kA});
}

TEST_F(ReduceDefinitions, AnAccountOpenedAgainAfterItsEndIsNotWhole) {
  // finish() before an exec that failed, then tracked again, then killed.
  ProcessLog log = Process({{kA, kN, "begin"}, {kA, kC, root_ + "/geo.py"}, {kA, kN, Code("geo.py", 1)}, {kA, kN, "end"}}, 10);
  log.records.push_back(LogRecord{kA, kN, 3, std::string(kDefsBeginPrefix) + "10.r1", 0});
  TestDependencies d = Reduce({log});
  EXPECT_EQ(Deps(d, kA).count("geo.py(content)"), 1u);
  EXPECT_EQ(d.untracked_scopes, std::set<std::string>{kA});
}

TEST_F(ReduceDefinitions, ReadAsDataOrRecordedByAnUntrackedProcessStaysFileLevel) {
  TestDependencies data = Reduce({Process({{kA, kN, "begin"},
                                           {kA, kC, root_ + "/geo.py"},
                                           {kA, kN, Code("geo.py", 1)},
                                           {kA, kN, root_ + "/geo.py/" + std::string(kDataRecordName)},
                                           {kA, kN, "end"}},
                                          10)});
  EXPECT_EQ(Deps(data, kA).count("geo.py(content)"), 1u);
  TestDependencies cat = Reduce({Process({{kA, kN, "begin"},
                                          {kA, kC, root_ + "/geo.py"},
                                          {kA, kN, Code("geo.py", 1)},
                                          {kA, kN, "end"}},
                                         10),
                                 Process({{kA, kC, root_ + "/geo.py"}}, 11)});  // `cat geo.py`
  EXPECT_EQ(Deps(cat, kA).count("geo.py(content)"), 1u);
  // Recorded without running any of its code by an account that never
  // ended: what it did with the file is not known.
  TestDependencies stat = Reduce({Process({{kA, kN, "begin"}, {kA, kC, root_ + "/geo.py"}}, 10)});
  EXPECT_EQ(Deps(stat, kA), std::set<std::string>{"geo.py(content)"});
}

// A forking runner: the parent stats geo.py (pytest's package lookup) and
// loads it; a child stats it again and runs none of it. A check is the
// module view, in the scope it was made in; a read as data, or a record by
// an untracked process (`test -f`, `cat`), stays file level.
TEST_F(ReduceDefinitions, AnExistenceCheckIsTheModuleView) {
  const std::set<std::string> module = {"geo.py/@ste-def(content)"};
  auto parent = [&](const std::string& loads_in) {
    return Process({{"//r", kN, "begin"}, {"//r", kN, "v2"}, {"//r", kC, root_ + "/geo.py"},
                    {loads_in, kC, root_ + "/geo.py"}, {loads_in, kN, Code("geo.py", 0)}, {"//r", kN, "end"}},
                   10);
  };
  auto child = [&](std::vector<std::tuple<std::string, RecordKind, std::string>> more) {
    std::vector<std::tuple<std::string, RecordKind, std::string>> records = {
        {"//r", kN, "begin"}, {"//r", kN, "v2"}, {kA, kC, root_ + "/geo.py"}};
    records.insert(records.end(), more.begin(), more.end());
    records.push_back({kA, kN, "end"});
    return Process(records, 11);
  };
  TestDependencies checked = Reduce({parent("//r"), child({})});
  EXPECT_EQ(Deps(checked, kA), module);
  EXPECT_EQ(Deps(checked, "//r"), module);
  // Back to file level when the child's test falls back (a killed sibling).
  EXPECT_EQ(checked.definition_files.at(kA), std::vector<std::string>{"geo.py"});
  TestDependencies elsewhere = Reduce({parent(kB), child({})});
  EXPECT_EQ(Deps(elsewhere, "//r"), module) << "the parent's check before it loaded geo.py in a test's scope";
  EXPECT_EQ(Deps(elsewhere, kA), module);
  EXPECT_EQ(Deps(Reduce({parent("//r"), child({{kA, kN, Rec("geo.py", kDataRecordName)}})}), kA),
            std::set<std::string>{"geo.py(content)"})
      << "read as data";
  EXPECT_EQ(Deps(Reduce({parent("//r"), Process({{kA, kC, root_ + "/geo.py"}}, 12)}), kA),
            std::set<std::string>{"geo.py(content)"})
      << "an untracked process";
}

TEST_F(ReduceDefinitions, AFileThatDoesNotParseStaysFileLevel) {
  TestDependencies d = Reduce({Process({{kA, kN, "begin"},
                                        {kA, kC, root_ + "/bad.py"},
                                        {kA, kN, Code("bad.py", 0)},
                                        {kA, kN, "end"}},
                                       10)});
  EXPECT_EQ(Deps(d, kA), std::set<std::string>{"bad.py(content)"});
}

// A batch: the parent imports in the shared scope; test a's child ran
// perimeter and ended its account, test b's child ran area and was killed.
TEST_F(ReduceDefinitions, InABatchOnlyTheTestWhoseChildDidNotEndFallsBack) {
  TestDependencies all = Reduce({
      Process({{"//r", kN, "begin"}, {"//r", kN, "v2"}, {"//r", kC, root_ + "/geo.py"}, {"//r", kN, Code("geo.py", 0)}, {"//r", kN, "end"}},
              10),
      Process({{"//r", kN, "begin"}, {"//r", kN, "v2"}, {kA, kN, Code("geo.py", 5)}, {kA, kN, "end"}}, 11),
      Process({{"//r", kN, "begin"}, {kB, kN, Code("geo.py", 1)}}, 12),
  });
  EXPECT_EQ(Deps(all, "//r"), std::set<std::string>{"geo.py/@ste-def(content)"});
  EXPECT_EQ(Deps(all, kA).count("geo.py/@ste-def:perimeter(content)"), 1u);
  EXPECT_EQ(all.untracked_scopes, std::set<std::string>{kB}) << "not the shared scope it was forked in";
  for (const std::string& test : {std::string("tests/a.py"), std::string("tests/b.py")}) {
    TestDependencies deps;
    for (const ScopeDependencies& s : all.scopes) {
      if (s.scope == "//r" || s.scope == ScopeOfTest(test)) deps.scopes.push_back(s);
    }
    ApplyDefinitionFallback(all, test, &deps);
    bool file_level = false;
    for (const ScopeDependencies& s : deps.scopes) {
      for (const DepKey& k : s.deps) file_level = file_level || (k.path == "geo.py" && k.kind == DepKind::kContent);
    }
    EXPECT_EQ(file_level, test == "tests/b.py") << test;
  }
}

TEST_F(ReduceDefinitions, TheSlowTracersNoteIsCountedAndNoDependency) {
  const std::string slow = std::string(kDefsSlowPrefix) + "11:STE_DEFS_TRACER=profile";
  for (bool definitions : {true, false}) {
    SCOPED_TRACE(definitions);
    TestDependencies d = Reduce({Process({{kA, kN, "begin"},
                                          {kA, kN, "v2"},
                                          {kA, kC, root_ + "/geo.py"},
                                          {kA, kN, Code("geo.py", 1)},
                                          {kA, kN, "end"}},
                                         10),
                                 Process({{kA, kN, "begin"},
                                          {kA, kN, "v2"},
                                          {kA, kN, slow},
                                          {kA, kC, root_ + "/geo.py"},
                                          {kA, kN, Code("geo.py", 1)},
                                          {kA, kN, "end"}},
                                         11)},
                                definitions);
    const std::set<std::string> expected =
        definitions ? std::set<std::string>{"geo.py/@ste-def(content)", "geo.py/@ste-def:area(content)"}
                    : std::set<std::string>{"geo.py(content)"};
    EXPECT_EQ(Deps(d, kA), expected);
    EXPECT_EQ(d.slow_trackers, (std::map<std::string, size_t>{{"STE_DEFS_TRACER=profile", 1}}));
  }
}

}  // namespace
}  // namespace ste
