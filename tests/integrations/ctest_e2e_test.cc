// runner.kind = "ctest" end to end: a real small CMake project (shared
// libraries, a data-reading test, a failing test, a GoogleTest binary with
// the scope listener of integrations/gtest/), configured and built with
// the real cmake, recorded with `ste record`, then changed and rebuilt.
//
//   alpha        test_alpha, linked with libalpha.so
//   beta         test_beta, linked with libbeta.so
//   data reader  test_data reading data/input.txt
//   fails        test_data reading data/missing.txt (exit 1)
//   gt           a GoogleTest binary (two cases) with ScopeListener
#include <unistd.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::ReadFile;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);
const std::string kIntegrations = STE_INTEGRATIONS_DIR;


class CTestRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    W("CMakeLists.txt", absl::StrCat(R"(cmake_minimum_required(VERSION 3.20)
project(mini CXX)
enable_testing()
find_package(GTest REQUIRED)
add_library(alpha SHARED alpha.cc)
add_library(beta SHARED beta.cc)
add_executable(test_alpha test_alpha.cc)
target_link_libraries(test_alpha alpha)
add_executable(test_beta test_beta.cc)
target_link_libraries(test_beta beta)
add_executable(test_data test_data.cc)
add_executable(gt gt.cc)
target_include_directories(gt PRIVATE )", kIntegrations, R"(/gtest)
target_link_libraries(gt GTest::gtest)
target_compile_definitions(gt PRIVATE DATA_DIR="${CMAKE_SOURCE_DIR}/data")
add_test(NAME alpha COMMAND test_alpha)
add_test(NAME beta COMMAND test_beta)
add_test(NAME "data reader" COMMAND test_data ${CMAKE_SOURCE_DIR}/data/input.txt)
add_test(NAME fails COMMAND test_data ${CMAKE_SOURCE_DIR}/data/missing.txt)
add_test(NAME gt COMMAND gt)
)"));
    W("alpha.cc", "int alpha() { return 1; }\n");
    W("beta.cc", "int beta() { return 2; }\n");
    W("test_alpha.cc", "int alpha();\nint main() { return alpha() == 1 ? 0 : 1; }\n");
    W("test_beta.cc", "int beta();\nint main() { return beta() == 2 ? 0 : 1; }\n");
    W("test_data.cc",
      "#include <fstream>\nint main(int, char** argv) { std::ifstream in(argv[1]); return in ? 0 : 1; }\n");
    W("gt.cc", R"(#include <fstream>
#include "gtest/gtest.h"
#include "ste_gtest_listener.h"
TEST(Files, ReadsOne) { std::ifstream in(DATA_DIR "/case_one.txt"); EXPECT_TRUE(in.good()); }
TEST(Files, ReadsTwo) { std::ifstream in(DATA_DIR "/case_two.txt"); EXPECT_TRUE(in.good()); }
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ste_gtest::InstallScopeListener();
  return RUN_ALL_TESTS();
}
)");
    W("data/input.txt", "1\n");
    W("data/case_one.txt", "1\n");
    W("data/case_two.txt", "2\n");
    W("ste.toml", "[runner]\nkind = \"ctest\"\nbuild_dir = \"build\"\njobs = 2\n");
    W(".gitignore", "");
    Build();
    ::ste::testing::InitGitRepo(root_);
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "init"});
  }

  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  void Git(const std::vector<std::string>& args) {
    Spawned s = ::ste::testing::Git(root_, args);
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  void Build() {
    Spawned c = Spawn({"cmake", "-S", root_, "-B", root_ + "/build", "-DCMAKE_BUILD_TYPE=Release"});
    ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
    Spawned b = Spawn({"cmake", "--build", root_ + "/build", "-j", "2"});
    ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  }
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, root_);
  }
  std::set<std::string> Selected(std::string* err = nullptr) {
    Spawned s = Ste({"select"});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    if (err) *err = s.err;
    return ::ste::testing::SelectedTests(s.out);
  }

  std::string root_;
};

TEST_F(CTestRepo, RecordsEachCTestTestAndSelectsByWhatItLoadedAndRead) {
  // Outcomes as plain ctest gives them.
  Spawned plain = Spawn({"ctest", "--test-dir", root_ + "/build"});
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_NE(plain.out.find("80% tests passed, 1 tests failed out of 5"), std::string::npos) << plain.out;

  Spawned r = Ste({"record", "--progress", "plain"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;  // ctest's own: a test failed
  EXPECT_NE(r.out.find("5 tests, 4 passed, 1 failed"), std::string::npos) << r.out;
  // The executable and the shared library it loads are dependencies.
  Spawned deps = Ste({"deps", "alpha"});
  EXPECT_NE(deps.out.find("build/test_alpha"), std::string::npos) << deps.out;
  EXPECT_NE(deps.out.find("build/libalpha.so"), std::string::npos) << deps.out;
  std::string err;
  EXPECT_EQ(Selected(&err), std::set<std::string>{"fails"}) << err << "(failed in the baseline)";

  // A data file: the test that reads it.
  W("data/input.txt", "2\n");
  EXPECT_EQ(Selected(&err), (std::set<std::string>{"data reader", "fails"})) << err;
  W("data/input.txt", "1\n");
  // A source change, rebuilt: the test whose library changed.
  W("alpha.cc", "int alpha() { return 1; }\nint alpha_v2() { return 2; }\n");
  Build();
  EXPECT_EQ(Selected(&err), (std::set<std::string>{"alpha", "fails"})) << err;
  // A file one GoogleTest case read: the CTest test holding it.
  W("data/case_two.txt", "22\n");
  EXPECT_EQ(Selected(&err), (std::set<std::string>{"alpha", "fails", "gt"})) << err;

  // The runner format: one -R regex ctest takes back, and runs only those.
  Spawned runner = Ste({"select", "--format", "runner"});
  EXPECT_EQ(runner.out, "-R '^(alpha|fails|gt)$'\n") << runner.err;
  Spawned rerun = Spawn({"ctest", "--test-dir", root_ + "/build", "-R", "^(alpha|fails|gt)$"});
  EXPECT_NE(rerun.out.find("out of 3"), std::string::npos) << rerun.out;
}

TEST_F(CTestRepo, GoogleTestCasesGetNestedScopes) {
  std::string logs = MakeTempDir();
  Spawned run = Ste({"run", "--scope", "//r/gt", "--log-dir", logs, "--", root_ + "/build/gt"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Spawned dump = Ste({"log", "dump", logs});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  bool one = false, two = false;
  std::istringstream in(dump.out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("data/case_one.txt") != std::string::npos) {
      one = line.find("//r/gt/Files.ReadsOne") != std::string::npos;
    }
    if (line.find("data/case_two.txt") != std::string::npos) {
      two = line.find("//r/gt/Files.ReadsTwo") != std::string::npos;
    }
  }
  EXPECT_TRUE(one && two) << dump.out;
}

// tests.unit = "case": a GoogleTest case owns the files it read, so a
// change to one selects that case and the cases that ran after it (they
// may see what it left in memory), handed back as a GTEST_FILTER beside
// ctest's -R; a shuffled run (GTEST_SHUFFLE) pushes no case scope: the
// binary is selected whole.
TEST_F(CTestRepo, GoogleTestCasesAreSelectedByWhatEachRead) {
  W("ste.toml",
    "[tests]\ninclude = [\"gt\", \"alpha\"]\nunit = \"case\"\n"
    "[runner]\nkind = \"ctest\"\nbuild_dir = \"build\"\njobs = 2\n");
  Git({"commit", "-q", "-am", "cases"});
  Spawned r = Ste({"record", "--progress", "none"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("2 tests, 2 passed"), std::string::npos) << r.out;
  std::string err;
  W("data/case_two.txt", "22\n");
  EXPECT_EQ(Selected(&err), std::set<std::string>{"gt::Files.ReadsTwo"}) << err;
  EXPECT_NE(err.find("1 test files selected: 0 whole, 1 as 1 cases"), std::string::npos) << err;
  EXPECT_EQ(Ste({"select", "--format", "runner"}).out, "-R '^(gt)$'\n");
  Spawned filter = Ste({"select", "--format", "gtest-filter"});
  ASSERT_EQ(filter.exit_code, 0) << filter.err;
  EXPECT_EQ(filter.out, "Files.ReadsTwo\n");
  // The GitHub format gives it as the gtest_filter output.
  const std::string outputs = MakeTempDir() + "/github_output";
  Spawned github = Spawn({kSte, "select", "--format", "github", "--tests-file", outputs + ".tests"},
                         {"GITHUB_OUTPUT=" + outputs}, root_);
  ASSERT_EQ(github.exit_code, 0) << github.err;
  const std::string written = ReadFile(outputs);
  const size_t entry = written.find("gtest_filter<<");
  ASSERT_NE(entry, std::string::npos) << written;
  EXPECT_NE(written.find("\nFiles.ReadsTwo\n", entry), std::string::npos) << written;
  // The runner takes them back: only that case runs.
  Spawned rerun = Spawn({"ctest", "--test-dir", root_ + "/build", "-V", "-R", "^(gt)$"},
                        {"GTEST_FILTER=Files.ReadsTwo"});
  EXPECT_EQ(rerun.exit_code, 0) << rerun.out;
  EXPECT_NE(rerun.out.find("[ RUN      ] Files.ReadsTwo"), std::string::npos) << rerun.out;
  EXPECT_EQ(rerun.out.find("Files.ReadsOne"), std::string::npos) << rerun.out;
  W("data/case_two.txt", "2\n");
  // ReadsOne ran first: ReadsTwo may see what it left.
  W("data/case_one.txt", "11\n");
  EXPECT_EQ(Selected(&err), (std::set<std::string>{"gt::Files.ReadsOne", "gt::Files.ReadsTwo"})) << err;
  EXPECT_EQ(Ste({"select", "--format", "gtest-filter"}).out, "Files.ReadsOne:Files.ReadsTwo\n");
  // A test selected whole (alpha: its library changed) makes the filter
  // every case.
  W("data/case_one.txt", "1\n");
  W("alpha.cc", "int alpha() { return 1; }\nint alpha_v2() { return 2; }\n");
  Build();
  W("data/case_two.txt", "22\n");
  EXPECT_EQ(Selected(&err), (std::set<std::string>{"alpha", "gt::Files.ReadsTwo"})) << err;
  EXPECT_EQ(Ste({"select", "--format", "gtest-filter"}).out, "*\n");
  W("data/case_two.txt", "2\n");

  // Shuffled, the next run's order may differ: no case scope, gt whole.
  Spawned shuffled = Spawn({kSte, "record", "--progress", "none"}, {"GTEST_SHUFFLE=1"}, root_);
  ASSERT_EQ(shuffled.exit_code, 0) << shuffled.out << shuffled.err;
  W("data/case_two.txt", "22\n");
  Spawned s = Spawn({kSte, "select"}, {"GTEST_SHUFFLE=1"}, root_);
  EXPECT_EQ(::ste::testing::SelectedTests(s.out), std::set<std::string>{"gt"}) << s.err;
}

TEST_F(CTestRepo, NoBuildTreeMeansNoTestListAndExit3) {
  Spawned rm = Spawn({"rm", "-rf", root_ + "/build"});
  ASSERT_EQ(rm.exit_code, 0);
  Spawned s = Ste({"select"});
  EXPECT_EQ(s.exit_code, 3) << s.out << s.err;
  EXPECT_NE(s.err.find("cannot list the CTest tests"), std::string::npos) << s.err;
  Spawned r = Ste({"record"});
  EXPECT_EQ(r.exit_code, 3) << "no baseline could be recorded";
}

}  // namespace
}  // namespace ste
