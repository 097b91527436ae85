#include "ste/test_output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ste/config.h"

namespace ste {
namespace {

TEST(OutputLogName, KeepsOrdinaryPathsAndAddsLog) {
  EXPECT_EQ(OutputLogName("tests/test_a.sh"), "tests/test_a.sh.log");
  EXPECT_EQ(OutputLogName("tests/test a.sh"), "tests/test a.sh.log");
  EXPECT_EQ(OutputLogName("t/\xC3\xA9t\xC3\xA9.py"), "t/\xC3\xA9t\xC3\xA9.py.log");  // UTF-8 kept
  EXPECT_EQ(OutputLogName("unit_tests"), "unit_tests.log");  // a CTest name
}

TEST(OutputLogName, EscapesOddBytesAndPercent) {
  EXPECT_EQ(OutputLogName("t/50%"), "t/50%25.log");
  EXPECT_EQ(OutputLogName("t/a\tb\nc"), "t/a%09b%0Ac.log");
  EXPECT_EQ(OutputLogName("t/\x7F"), "t/%7F.log");
  EXPECT_EQ(OutputLogName("t/x\xFFy"), "t/x%FFy.log");      // not UTF-8
  EXPECT_EQ(OutputLogName("t/\xC3"), "t/%C3.log");          // a cut sequence
  EXPECT_EQ(OutputLogName("t/\xED\xA0\x80"), "t/%ED%A0%80.log");  // a surrogate
}

TEST(OutputLogName, NothingClimbsOutOfTheDirectory) {
  EXPECT_EQ(OutputLogName(".."), "%2E%2E.log");
  EXPECT_EQ(OutputLogName("../../etc/passwd"), "%2E%2E/%2E%2E/etc/passwd.log");
  EXPECT_EQ(OutputLogName("a/./b"), "a/%2E/b.log");
  EXPECT_EQ(OutputLogName("/abs"), "%/abs.log");
  EXPECT_EQ(OutputLogName("a//b"), "a/%/b.log");
  EXPECT_EQ(OutputLogName("a/"), "a/%.log");
}

TEST(OutputLogName, ADirectoryNeverMeetsALogFile) {
  // The log of "t/a" is the file t/a.log; the directory of "t/a.log/b" is
  // not t/a.log/.
  EXPECT_EQ(OutputLogName("t/a"), "t/a.log");
  EXPECT_EQ(OutputLogName("t/a.log/b"), "t/a%2Elog/b.log");
  EXPECT_EQ(OutputLogName("t/a.log"), "t/a.log.log");
}

TEST(OutputLogName, LongComponentsAreCutWithAHash) {
  const std::string long_a(300, 'a');
  const std::string name = OutputLogName("t/" + long_a);
  ASSERT_EQ(name.substr(0, 2), "t/");
  const std::string last = name.substr(2);
  EXPECT_LE(last.size(), 255u);
  EXPECT_EQ(last.substr(0, 180), std::string(180, 'a'));
  EXPECT_EQ(last.substr(180, 2), "%~");
  EXPECT_NE(OutputLogName("t/" + long_a), OutputLogName("t/" + long_a + "b"));
  // Never cut inside an escape or a character.
  std::string escapes;
  for (int i = 0; i < 100; i++) escapes += "\t";  // %09 each: 300 bytes escaped
  const std::string cut = OutputLogName(escapes);
  const size_t hash = cut.find("%~");
  ASSERT_NE(hash, std::string::npos);
  EXPECT_EQ(hash % 3, 0u) << cut;
  std::string accents;
  for (int i = 0; i < 120; i++) accents += "\xC3\xA9";  // 240 bytes
  const std::string cut_utf8 = OutputLogName(accents);
  EXPECT_EQ(cut_utf8.find("%~") % 2, 0u) << cut_utf8;
}

TEST(OutputLogName, DifferentTestsGetDifferentNames) {
  const char* tests[] = {"a", "a.log", "a/b", "a.log/b", "a%2Elog/b", "%", "%25", "",
                         ".", "..", "a b", "a\tb", "a%09b", "x/\xFF", "x/%FF"};
  std::set<std::string> names;
  for (const char* t : tests) names.insert(OutputLogName(t));
  EXPECT_EQ(names.size(), std::size(tests));
  EXPECT_EQ(names.count(BatchLogName(1)), 0u);
  EXPECT_EQ(BatchLogName(17), "%batch-17.log");
}

class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    dir_ = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/ste-output-test-XXXXXX");
    ASSERT_NE(mkdtemp(dir_.data()), nullptr);
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Write(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::string dir_;
};

TEST_F(OutputFiles, MakeDirectoriesMakesTheMissingOnesAndAcceptsExisting) {
  ASSERT_TRUE(MakeDirectories(dir_ + "/a/b/c").ok());
  struct stat st;
  EXPECT_EQ(stat((dir_ + "/a/b/c").c_str(), &st), 0);
  EXPECT_TRUE(MakeDirectories(dir_ + "/a/b/c").ok());
  Write("file", "x");
  absl::Status under_file = MakeDirectories(dir_ + "/file/sub");
  EXPECT_FALSE(under_file.ok());
  EXPECT_NE(under_file.message().find("/file"), std::string::npos) << under_file;
  EXPECT_FALSE(MakeDirectories(dir_ + "/file").ok());
}

TEST_F(OutputFiles, TheTailIsTheLastLines) {
  std::string text;
  for (int i = 1; i <= 30; i++) absl::StrAppend(&text, "line ", i, "\n");
  absl::StatusOr<OutputTail> tail = ReadOutputTail(Write("log", text));
  ASSERT_TRUE(tail.ok()) << tail.status();
  std::string want;
  for (int i = 11; i <= 30; i++) absl::StrAppend(&want, "line ", i, "\n");
  EXPECT_EQ(tail->text, want);
  EXPECT_EQ(tail->file_bytes, text.size());

  tail = ReadOutputTail(Write("short", "a\nb"));  // no last newline: b counts
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->text, "a\nb");
  tail = ReadOutputTail(Write("short", "a\nb"), 1);
  EXPECT_EQ(tail->text, "b");
  tail = ReadOutputTail(Write("empty", ""));
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->text, "");
  EXPECT_EQ(tail->file_bytes, 0u);
}

TEST_F(OutputFiles, TheTailIsBoundedInBytesAndStartsOnALine) {
  std::string text = std::string(100, 'x') + "\n" + std::string(50, 'y') + "\n" + "zz\n";
  absl::StatusOr<OutputTail> tail = ReadOutputTail(Write("log", text), 20, 40);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->text, "zz\n");  // the cut y line is left out
  EXPECT_EQ(tail->file_bytes, text.size());
  // One long line: its last bytes.
  tail = ReadOutputTail(Write("one", std::string(100, 'q') + "\n"), 20, 10);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->text, std::string(9, 'q') + "\n");
  // The default bound.
  tail = ReadOutputTail(Write("big", std::string(100000, 'b')));
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->text.size(), kOutputTailBytes);
}

TEST_F(OutputFiles, AMissingLogIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(ReadOutputTail(dir_ + "/none").status()));
}

TEST(OutputDirWarning, OnlyForADirectoryTheInventorySees) {
  absl::StatusOr<Config> config = ParseConfig(
      "[tests]\ninclude = [\"t/*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n"
      "[inventory]\nignore = [\"build/**\", \"logs\"]\n",
      "ste.toml", "/repo");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(OutputDirWarning(*config, "/elsewhere/out"), "");
  EXPECT_EQ(OutputDirWarning(*config, "/repo/.ste/output/b1"), "");
  EXPECT_EQ(OutputDirWarning(*config, "/repo/build/logs"), "");
  EXPECT_EQ(OutputDirWarning(*config, "/repo/x/logs"), "");
  EXPECT_EQ(OutputDirWarning(*config, "/repo/x/logs/deeper"), "");
  EXPECT_EQ(OutputDirWarning(*config, "/repository-next-door"), "");
  const std::string warning = OutputDirWarning(*config, "/repo/test-output");
  EXPECT_NE(warning.find("\"test-output/**\""), std::string::npos) << warning;
  EXPECT_NE(OutputDirWarning(*config, "/repo"), "");
}

}  // namespace
}  // namespace ste
