#include "ste/repo_path.h"

#include <unistd.h>

#include <climits>
#include <string>

#include "gtest/gtest.h"

namespace ste {
namespace {

TEST(RepoPath, OneRuleForEveryKindOfPath) {
  struct Row {
    std::string path;
    bool dependency;  // ValidateDependencyPath
    bool test;        // ValidateTestPath
  };
  const Row rows[] = {
      {".", true, false},
      {"/", true, false},
      {"a", true, true},
      {"a/b.py", true, true},
      {"/usr/lib/x.so", true, false},
      {"..", false, false},
      {"../etc/passwd", false, false},
      {"a/../b", false, false},
      {"a/./b", false, false},
      {"a//b", false, false},
      {"a/", false, false},
      {"/a/", false, false},
      {"/a/../b", false, false},
      {"//a", false, false},
      {"", false, false},
      {std::string("a\0b", 3), false, false},
      {std::string(kMaxRepoPathBytes, 'a'), true, true},
      {std::string(kMaxRepoPathBytes + 1, 'a'), false, false},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(ValidateDependencyPath(r.path).ok(), r.dependency) << r.path.substr(0, 20);
    EXPECT_EQ(ValidateTestPath(r.path).ok(), r.test) << r.path.substr(0, 20);
    if (r.path.find('\0') == std::string::npos && r.path.size() <= kMaxRepoPathBytes) {
      EXPECT_EQ(IsCleanPath(r.path), r.dependency) << r.path.substr(0, 20);
    }
  }
  EXPECT_TRUE(IsNormalizedAbsolute("/"));
  EXPECT_FALSE(IsNormalizedAbsolute("a"));
  EXPECT_FALSE(IsCleanRelative("."));
  EXPECT_FALSE(IsCleanRelative("/a"));
}

TEST(RepoPath, TheMessageSaysWhatIsWrongAndNamesThePathEscaped) {
  EXPECT_NE(ValidateDependencyPath("a/../b").message().find("could escape the repo"),
            std::string::npos);
  EXPECT_NE(ValidateDependencyPath("/a/./b").message().find("not normalised"), std::string::npos);
  EXPECT_NE(ValidateDependencyPath(std::string("a\0b", 3)).message().find("NUL"),
            std::string::npos);
  EXPECT_NE(ValidateTestPath("/a").message().find("repo-relative"), std::string::npos);
  EXPECT_NE(ValidateDependencyPath("a/\n/..").message().find("\\n"), std::string::npos);
}

TEST(RepoPath, MakeNormalAbsoluteFoldsDotsLexically) {
  EXPECT_EQ(MakeNormalAbsolute("/a/./b/../c"), "/a/c");
  EXPECT_EQ(MakeNormalAbsolute("/.."), "/");
  EXPECT_EQ(MakeNormalAbsolute("/"), "/");
  EXPECT_EQ(MakeNormalAbsolute("//a//b/"), "/a/b");
  EXPECT_EQ(MakeNormalAbsolute("/a/b/../../.."), "/");
}

TEST(RepoPath, AbsoluteNormalPathStartsFromTheCurrentDirectory) {
  char cwd[PATH_MAX];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  EXPECT_EQ(*AbsoluteNormalPath("/x/./y/.."), "/x");
  EXPECT_EQ(*AbsoluteNormalPath("a/../b"), MakeNormalAbsolute(std::string(cwd) + "/b"));
  EXPECT_EQ(*AbsoluteNormalPath("."), MakeNormalAbsolute(cwd));
}

}  // namespace
}  // namespace ste
