// ReduceLogs (log_reduction.h): a table of hand-made logs and the
// dependency set each gives; the private temporary directory; RepoRelative;
// symlinked directories resolved on a real tree.
#include "ste/log_reduction.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ste/log_format.h"

namespace ste {
namespace {


constexpr RecordKind kContent = RecordKind::kContent;
constexpr RecordKind kAbsent = RecordKind::kAbsent;
constexpr RecordKind kListing = RecordKind::kListing;
constexpr RecordKind kWrite = RecordKind::kWrite;
constexpr RecordKind kUnfollowed = RecordKind::kUnfollowed;

struct Record {
  std::string scope;
  RecordKind kind;
  std::string path;
};

// One process's log, from its records.
ProcessLog LogOf(const std::vector<Record>& records) {
  ProcessLog log;
  for (const Record& r : records) {
    log.records.push_back(LogRecord{r.scope, r.kind, STE_OP_OPEN, r.path, 0});
  }
  return log;
}

// What ReduceLogs gives, written as the tables below write it:
// "scope: path(kind) path(kind)" per scope, in order.
std::vector<std::string> Shown(const TestDependencies& deps) {
  std::vector<std::string> out;
  for (const ScopeDependencies& s : deps.scopes) {
    std::string line = s.scope + ":";
    for (const DepKey& k : s.deps)
      line += " " + k.path + "(" + std::string(DepKindName(k.kind)) + ")";
    out.push_back(line);
  }
  return out;
}

// Paths outside the repository used below lie in directories that do not
// exist, so resolving their directory through symlinks adds nothing (the
// machine's /lib, a symlink on merged-/usr systems, would).
struct ReduceCase {
  std::string name;
  std::vector<std::vector<Record>> logs;  // one per process
  std::vector<std::string> ignore;
  // The paths gone when the test is over (`exists` says false); every
  // other path exists.
  std::set<std::string> gone;
  absl::Status read_status;
  std::vector<std::string> want;  // as Shown() writes it
  std::vector<std::string> want_opaque_reasons;
  std::vector<std::string> want_opaque_scopes;
};

const std::string kRoot = "/repo";
const std::string kLogDir = "/nonexistent-ste/logs-1";
const std::string kA = "//r/tests/a.py";
const std::string kB = "//r/tests/b.py";

// One case per paragraph reads better than one field per line.
// clang-format off
std::vector<ReduceCase> ReduceCases() {
  return {
      {"NoLogsNoDependencies", {}, {}, {}, absl::OkStatus(), {}, {}, {}},
      {"RepoPathsBecomeRelativeOthersStayAbsolute",
       {{{kA, kContent, "/repo/src/a.py"},
         {kA, kContent, "/nonexistent-ste/lib/libx.so"},
         {kA, kAbsent, "/repo2/a.py"}}},
       {}, {}, absl::OkStatus(),
       {kA + ": /nonexistent-ste/lib/libx.so(content) /repo2/a.py(absent) src/a.py(content)"},
       {}, {}},
      {"TheRootIsDot",
       {{{kA, kListing, "/repo"}, {kA, kContent, "/repo"}}},
       {}, {}, absl::OkStatus(),
       {kA + ": .(content) .(listing)"}, {}, {}},
      {"RecordsUnderTheLogDirAreDropped",
       {{{kA, kListing, kLogDir},
         {kA, kContent, kLogDir + "/1.stelog"},
         {kA, kWrite, kLogDir + "/ste-results.tsv"},
         {kA, kUnfollowed, kLogDir + "/x"},
         {kA, kContent, kLogDir + "-2/kept"}}},
       {}, {}, absl::OkStatus(),
       {kA + ": /nonexistent-ste/logs-1-2/kept(content)"}, {}, {}},
      {"IgnoredRepoPathsAreDroppedNeverTheRootNorOutsidePaths",
       {{{kA, kContent, "/repo/build/out.o"},
         {kA, kContent, "/repo/src/a.pyc"},
         {kA, kContent, "/repo/src/a.py"},
         {kA, kListing, "/repo/build"},
         {kA, kListing, "/repo/src"},
         {kA, kContent, "/nonexistent-ste/build/x.pyc"}}},
       {"build/**", "*.pyc"}, {}, absl::OkStatus(),
       {kA + ": /nonexistent-ste/build/x.pyc(content) src(listing) src/a.py(content)"}, {}, {}},
      {"AnIgnoreOfEverythingKeepsTheRoot",
       {{{kA, kListing, "/repo"}, {kA, kContent, "/repo/a"}}},
       {"**"}, {}, absl::OkStatus(),
       {kA + ": .(listing)"}, {}, {}},
      {"WritesAreNotDependencies",
       {{{kA, kWrite, "/repo/out.txt"}, {kB, kContent, "/repo/in.txt"}}},
       {}, {}, absl::OkStatus(),
       {kB + ": in.txt(content)"}, {}, {}},
      // ste-pytest-ini (inventory.h, "Views"): a process whose pytest read
      // pyproject.toml for its table depends on that view, not on the
      // file; unless its Python code also opened the file otherwise (the
      // ste-file-read mark, never a dependency itself), or the record is
      // another process's (a shell's cat).
      {"APytestReadOfPyprojectIsItsView",
       {{{kA, kContent, "/repo/pyproject.toml"},
         {kA, kAbsent, "/repo/pyproject.toml/\x01ste-pytest-ini"},
         {kA, kContent, "/repo/src/a.py"}}},
       {}, {}, absl::OkStatus(),
       {kA + ": pyproject.toml/\x01ste-pytest-ini(content) src/a.py(content)"}, {}, {}},
      {"AnotherReadOfPyprojectKeepsTheFile",
       {{{kA, kContent, "/repo/pyproject.toml"},
         {kA, kAbsent, "/repo/pyproject.toml/\x01ste-pytest-ini"},
         {kA, kAbsent, "/repo/pyproject.toml/\x01ste-file-read"}},
        {{kB, kContent, "/repo/sub/pyproject.toml"},
         {kB, kAbsent, "/repo/sub/pyproject.toml/\x01ste-file-read"}}},
       {}, {}, absl::OkStatus(),
       {kA + ": pyproject.toml(content) pyproject.toml/\x01ste-pytest-ini(content)",
        kB + ": sub/pyproject.toml(content)"}, {}, {}},
      {"AnotherProcesssReadOfPyprojectKeepsTheFile",
       {{{kA, kContent, "/repo/pyproject.toml"},
         {kA, kAbsent, "/repo/pyproject.toml/\x01ste-pytest-ini"}},
        {{kA, kContent, "/repo/pyproject.toml"}}},
       {}, {}, absl::OkStatus(),
       {kA + ": pyproject.toml(content) pyproject.toml/\x01ste-pytest-ini(content)"}, {}, {}},
      {"AWrittenFileReadBackThatStillExistsIsADependency",
       {{{kA, kWrite, "/repo/out.txt"}, {kA, kContent, "/repo/out.txt"}}},
       {}, {}, absl::OkStatus(),
       {kA + ": out.txt(content)"}, {}, {}},
      {"AWrittenThenDeletedTempFileIsDroppedInEveryScope",
       {{{kA, kAbsent, "/repo/tmp.txt"},
         {kA, kWrite, "/repo/tmp.txt"},
         {kA, kContent, "/repo/tmp.txt"}},
        {{kB, kContent, "/repo/tmp.txt"}, {kB, kContent, "/repo/kept.txt"}}},
       {}, {"/repo/tmp.txt"}, absl::OkStatus(),
       // Its absence before the test created it still is one.
       {kA + ": tmp.txt(absent)", kB + ": kept.txt(content)"}, {}, {}},
      {"ADeletedFileTheTestDidNotWriteStaysADependency",
       {{{kA, kContent, "/repo/fixture.txt"}}},
       {}, {"/repo/fixture.txt"}, absl::OkStatus(),
       {kA + ": fixture.txt(content)"}, {}, {}},
      {"AnUnfollowedRecordMakesItsScopeOpaque",
       {{{kA, kContent, "/repo/src/a.py"}, {kA + "/test_one", kUnfollowed, "/usr/bin/static"}}},
       {}, {}, absl::OkStatus(),
       {kA + ": src/a.py(content)"},
       {"unfollowed: /usr/bin/static"}, {kA + "/test_one"}},
      {"UnreadableLogsMakeTheWholeRunOpaqueAndKeepWhatWasRead",
       {{{kA, kContent, "/repo/src/a.py"}}},
       {}, {}, absl::DataLossError("x.stelog: truncated at 4096"),
       {kA + ": src/a.py(content)"},
       {"logs unreadable: x.stelog: truncated at 4096"}, {""}},
      {"ScopesAreKeptAndSortedByTheirBytes",
       {{{kB, kContent, "/repo/b"},
         {"//r", kContent, "/repo/shared"},
         {kA + "/test_one", kContent, "/repo/one"},
         {kA + "-x", kContent, "/repo/ax"},
         {kA, kContent, "/repo/a"}}},
       {}, {}, absl::OkStatus(),
       {"//r: shared(content)", kA + ": a(content)", kA + "-x: ax(content)",
        kA + "/test_one: one(content)", kB + ": b(content)"},
       {}, {}},
      {"AKnownViewIsContentOfTheViewPathAnywhere",
       {{{kA, kAbsent, "/repo/src/\x01ste-dists"},
         {kA, kAbsent, "/repo/\x01ste-pth"},
         {kA, kAbsent, "/nonexistent-ste/site/\x01ste-entry-points:pytest11"},
         {kA, kAbsent, "/\x01ste-dists:foo"},
         {kA, kContent, "/repo/lib/\x01ste-dists"}}},  // a reserved file that exists
       {}, {}, absl::OkStatus(),
       {kA + ": \x01ste-pth(content) /\x01ste-dists:foo(content) "
             "/nonexistent-ste/site/\x01ste-entry-points:pytest11(content) "
             "lib/\x01ste-dists(content) src/\x01ste-dists(content)"},
       {}, {}},
      {"AnUnknownViewIsTheListingOfItsDirectory",
       {{{kA, kAbsent, "/repo/src/\x01ste-distz"},
         {kA, kAbsent, "/repo/\x01"},
         {kA, kAbsent, "/nonexistent-ste/site/\x01ste-dists:"},
         {kA, kListing, "/repo/data/\x01dir"}}},  // a real directory so named, listed
       {}, {}, absl::OkStatus(),
       {kA + ": .(listing) /nonexistent-ste/site(listing) data/\x01dir(listing) src(listing)"},
       {}, {}},
      {"IgnoreAppliesToAViewsDirectory",
       {{{kA, kAbsent, "/repo/build/lib/\x01ste-dists"},
         {kA, kAbsent, "/repo/build/\x01ste-bogus"},
         {kA, kAbsent, "/repo/\x01ste-dists"},
         {kA, kAbsent, "/repo/src/x.dist-info.pth/\x01ste-pth"}}},
       {"build/**", "build", "*.pth"}, {}, absl::OkStatus(),
       {kA + ": \x01ste-dists(content)"}, {}, {}},
      {"DuplicatesAcrossRecordsAndLogsCountOnce",
       {{{kA, kContent, "/repo/z"}, {kA, kContent, "/repo/a"}, {kA, kContent, "/repo/z"}},
        {{kA, kContent, "/repo/z"}, {kA, kAbsent, "/repo/z"}, {kA, kListing, "/repo/a"}}},
       {}, {}, absl::OkStatus(),
       {kA + ": a(content) a(listing) z(content) z(absent)"}, {}, {}},
  };
}
// clang-format on

void PrintTo(const ReduceCase& c, std::ostream* os) { *os << c.name; }

class ReduceLogsTable : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(ReduceLogsTable, GivesTheDependencySet) {
  const ReduceCase& c = GetParam();
  std::vector<ProcessLog> logs;
  for (const auto& records : c.logs) logs.push_back(LogOf(records));
  PathPolicy policy;
  policy.root = kRoot;
  auto ignore = GlobSet::Compile(c.ignore);
  ASSERT_TRUE(ignore.ok()) << ignore.status();
  policy.ignore = *std::move(ignore);
  policy.log_dir = kLogDir;
  policy.exists = [&](const std::string& abs) {
    return c.gone.count(abs) == 0;
  };
  TestDependencies deps = ReduceLogs(logs, c.read_status, policy);
  EXPECT_EQ(Shown(deps), c.want);
  EXPECT_EQ(deps.opaque, !c.want_opaque_reasons.empty());
  EXPECT_EQ(deps.opaque_reasons, c.want_opaque_reasons);
  EXPECT_EQ(deps.opaque_scopes, c.want_opaque_scopes);
}

INSTANTIATE_TEST_SUITE_P(Cases, ReduceLogsTable,
                         ::testing::ValuesIn(ReduceCases()),
                         [](const ::testing::TestParamInfo<ReduceCase>& info) {
                           return info.param.name;
                         });

TEST(ReduceLogsPrivateTmp, DropsWhatTheTestDidInItsOwnTmpButNotAnUnfollowedProgram) {
  const std::string tmp = "/nonexistent-tmp/ste-tmp-1";
  std::vector<ProcessLog> logs = {LogOf({
      {kA, kListing, tmp},
      {kA, kContent, tmp + "/pytest-of-root/pytest-3"},
      {kA, kAbsent, tmp + "/x.lock"},
      {kA, kUnfollowed, tmp + "/a-static-helper"},
      {kA, kContent, "/nonexistent-tmp/shared.json"},
      {kA, kContent, "/repo/src/a.py"},
  })};
  PathPolicy policy;
  policy.root = kRoot;
  policy.log_dir = kLogDir;
  policy.private_tmp = tmp;
  policy.exists = [](const std::string&) { return true; };
  TestDependencies deps = ReduceLogs(logs, absl::OkStatus(), policy);
  EXPECT_EQ(Shown(deps), std::vector<std::string>{
                             kA + ": /nonexistent-tmp/shared.json(content) src/a.py(content)"});
  EXPECT_TRUE(deps.opaque) << "an untraceable program stays opaque wherever it lies";
  policy.private_tmp.clear();
  deps = ReduceLogs(logs, absl::OkStatus(), policy);
  EXPECT_EQ(deps.scopes.size(), 1u);
  EXPECT_EQ(deps.scopes[0].deps.size(), 5u) << "without a private tmp, every record counts";
}

TEST(RepoRelative, MakesRepoPathsRelativeAndLeavesOthers) {
  const std::vector<std::pair<std::pair<std::string, std::string>, std::string>>
      cases = {
          {{"/repo", "/repo"}, "."},
          {{"/repo", "/repo/a/b"}, "a/b"},
          {{"/repo", "/repo2/a"}, "/repo2/a"},
          {{"/repo", "/"}, "/"},
          {{"/repo", "/rep"}, "/rep"},
          {{"/", "/"}, "."},
          {{"/", "/a/b"}, "a/b"},
      };
  for (const auto& [in, want] : cases) {
    EXPECT_EQ(RepoRelative(in.first, in.second), want)
        << in.first << " " << in.second;
  }
}

// A real directory tree: ReduceLogs resolves directories with realpath.
//   <tmp>/repo/real/f.txt
//   <tmp>/repo/link -> real           (a symlinked directory in the repo)
//   <tmp>/repo/file_link -> real/f.txt (a symlinked file: left alone)
//   <tmp>/repo/ext -> <tmp>/outside    (a symlinked directory leaving it)
class ReduceLogsSymlinks : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ste-recorder-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    char* real = realpath(tmpl, nullptr);
    ASSERT_NE(real, nullptr);
    tmp_ = real;
    free(real);
    root_ = tmp_ + "/repo";
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir((root_ + "/real").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((tmp_ + "/outside").c_str(), 0755), 0);
    std::ofstream(root_ + "/real/f.txt") << "f\n";
    ASSERT_EQ(symlink("real", (root_ + "/link").c_str()), 0);
    ASSERT_EQ(symlink("real/f.txt", (root_ + "/file_link").c_str()), 0);
    ASSERT_EQ(symlink((tmp_ + "/outside").c_str(), (root_ + "/ext").c_str()),
              0);
  }
  void TearDown() override {
    for (const char* p :
         {"/repo/real/f.txt", "/repo/link", "/repo/file_link", "/repo/ext"}) {
      unlink((tmp_ + p).c_str());
    }
    for (const char* p : {"/repo/real", "/repo", "/outside", ""})
      rmdir((tmp_ + p).c_str());
  }

  TestDependencies Reduce(const std::vector<Record>& records,
                          const std::vector<std::string>& ignore = {},
                          const std::set<std::string>& gone = {}) {
    PathPolicy policy;
    policy.root = root_;
    policy.ignore = *GlobSet::Compile(ignore);
    policy.log_dir = tmp_ + "/logs";
    policy.exists = [gone](const std::string& abs) {
      return gone.count(abs) == 0;
    };
    return ReduceLogs({LogOf(records)}, absl::OkStatus(), policy);
  }

  std::string tmp_, root_;
};

TEST_F(ReduceLogsSymlinks,
       APathThroughASymlinkedDirectoryIsAlsoRecordedUnderItsRealOne) {
  EXPECT_EQ(Shown(Reduce({{kA, kContent, root_ + "/link/f.txt"}})),
            std::vector<std::string>{
                kA + ": link/f.txt(content) real/f.txt(content)"});
  EXPECT_EQ(Shown(Reduce({{kA, kAbsent, root_ + "/ext/g.txt"}})),
            std::vector<std::string>{
                kA + ": " + tmp_ + "/outside/g.txt(absent) ext/g.txt(absent)"});
}

TEST_F(ReduceLogsSymlinks, AViewThroughASymlinkedDirectoryIsAlsoRecordedForItsRealOne) {
  EXPECT_EQ(Shown(Reduce({{kA, kAbsent, root_ + "/link/\x01ste-dists"}})),
            std::vector<std::string>{kA + ": link/\x01ste-dists(content) real/\x01ste-dists(content)"});
  EXPECT_EQ(Shown(Reduce({{kA, kAbsent, root_ + "/ext/\x01ste-pth"}})),
            std::vector<std::string>{kA + ": " + tmp_ + "/outside/\x01ste-pth(content) ext/\x01ste-pth(content)"});
  EXPECT_EQ(Shown(Reduce({{kA, kAbsent, root_ + "/link/\x01ste-nope"}})),
            std::vector<std::string>{kA + ": link(listing) real(listing)"});
}

TEST_F(ReduceLogsSymlinks, ASymlinkedFileIsLeftAlone) {
  EXPECT_EQ(Shown(Reduce({{kA, kContent, root_ + "/file_link"}})),
            std::vector<std::string>{kA + ": file_link(content)"});
}

TEST_F(ReduceLogsSymlinks, TheRealPathIsIgnoredByTheSameGlobs) {
  EXPECT_EQ(Shown(Reduce({{kA, kContent, root_ + "/link/f.txt"}}, {"real/**"})),
            std::vector<std::string>{kA + ": link/f.txt(content)"});
}

TEST_F(ReduceLogsSymlinks,
       ATempFileWrittenThroughASymlinkedDirectoryIsDroppedUnderBothPaths) {
  const std::string tmp_file = root_ + "/link/tmp.txt";
  EXPECT_EQ(Shown(Reduce({{kA, kWrite, tmp_file}, {kA, kContent, tmp_file}}, {},
                         {tmp_file})),
            std::vector<std::string>{});
}

}  // namespace
}  // namespace ste

namespace ste {
namespace {

TEST(MergeDependencies, EveryRunsDependenciesOpacityAndDefinitionSets) {
  TestDependencies a, b;
  a.scopes = {{"//r/t.sh", {{"lib/a.sh", DepKind::kContent}, {"x", DepKind::kAbsent}}}};
  a.definition_files["//r/t.sh"] = {"m.py"};
  a.case_order = {"first"};
  b.scopes = {{"//r", {{"/bin/sh", DepKind::kContent}}},
              {"//r/t.sh", {{"lib/a.sh", DepKind::kContent}, {"lib/b.sh", DepKind::kContent}}}};
  b.opaque = true;
  b.opaque_reasons = {"unfollowed: /static"};
  b.opaque_scopes = {"//r/t.sh"};
  b.definition_files["//r/t.sh"] = {"n.py", "m.py"};
  b.untracked_scopes = {"//r/t.sh"};
  b.case_order = {"second"};
  MergeDependencies(&a, b);
  ASSERT_EQ(a.scopes.size(), 2u);
  EXPECT_EQ(a.scopes[0].scope, "//r");
  EXPECT_EQ(a.scopes[1].deps, (std::vector<DepKey>{{"lib/a.sh", DepKind::kContent},
                                                   {"lib/b.sh", DepKind::kContent},
                                                   {"x", DepKind::kAbsent}}));
  EXPECT_TRUE(a.opaque);
  EXPECT_EQ(a.opaque_reasons, std::vector<std::string>{"unfollowed: /static"});
  EXPECT_EQ(a.opaque_scopes, std::vector<std::string>{"//r/t.sh"});
  EXPECT_EQ(a.definition_files["//r/t.sh"], (std::vector<std::string>{"m.py", "n.py"}));
  EXPECT_EQ(a.untracked_scopes.count("//r/t.sh"), 1u);
  EXPECT_EQ(a.case_order, std::vector<std::string>{"first"}) << "the order stays the first run's";
}

}  // namespace
}  // namespace ste
