// Copyright: the ste authors.
#include "ste/glob.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ste {
namespace {

using ::testing::HasSubstr;

struct MatchCase {
  const char* pattern;
  const char* path;
  bool match;
};

TEST(GlobMatchTest, Table) {
  const MatchCase cases[] = {
      // Literals.
      {"a/b.txt", "a/b.txt", true},
      {"a/b.txt", "a/b.txt2", false},
      {"a/b.txt", "x/a/b.txt", false},
      // '*' stays within one segment.
      {"src/*.cc", "src/a.cc", true},
      {"src/*.cc", "src/.cc", true},
      {"src/*.cc", "src/x/a.cc", false},
      {"src/*", "src/a", true},
      {"src/*", "src/a/b", false},
      {"*/b", "a/b", true},
      {"a*b*c", "abc", true},  // no '/': basename rule
      {"a*b*c", "axxbyyc", true},
      {"a*b*c", "axxbyy", false},
      {"*.py", ".hidden.py", true},  // '*' matches a leading dot
      // '?' is one byte, never '/'.
      {"a?c", "abc", true},
      {"a?c", "ac", false},
      {"a?c", "abbc", false},
      {"x/a?c", "x/a/c", false},
      // Classes.
      {"[abc].txt", "b.txt", true},
      {"[abc].txt", "d.txt", false},
      {"[a-c]x", "bx", true},
      {"[a-c]x", "dx", false},
      {"[!a-c]x", "dx", true},
      {"[!a-c]x", "ax", false},
      {"[^a]x", "bx", true},
      {"[]]x", "]x", true},
      {"[!]]x", "]x", false},
      {"[a-]x", "-x", true},
      {"[-a]x", "-x", true},
      {"[\\]]x", "]x", true},
      // Escapes.
      {"\\*.md", "*.md", true},
      {"\\*.md", "a.md", false},
      {"a\\?", "a?", true},
      {"a\\?", "ab", false},
      // '**' as a whole segment.
      {"tests/**/test_*.py", "tests/test_a.py", true},
      {"tests/**/test_*.py", "tests/x/test_a.py", true},
      {"tests/**/test_*.py", "tests/x/y/test_a.py", true},
      {"tests/**/test_*.py", "tests/x/y/a.py", false},
      {"tests/**/test_*.py", "other/tests/test_a.py", false},
      {"**/test_*.py", "test_a.py", true},
      {"**/test_*.py", "a/b/test_a.py", true},
      {"a/**/b/**/c", "a/b/c", true},
      {"a/**/b/**/c", "a/x/b/y/z/c", true},
      {"a/**/b/**/c", "a/x/y/z/c", false},
      {"a/**/**/b", "a/b", true},
      {".git/**", ".git", true},  // the directory itself
      {".git/**", ".git/HEAD", true},
      {".git/**", ".git/objects/ab/cdef", true},
      {".git/**", ".gitignore", false},
      {".git/**", "x/.git/HEAD", false},
      {"**", "a", true},
      {"**", "a/b/c", true},
      {"a**b", "axxb", true},  // not a whole segment: two '*'
      {"x/a**b", "x/a/b", false},
      // No '/': the last segment at any depth.
      {"*.md", "README.md", true},
      {"*.md", "docs/a/b.md", true},
      {"*.md", "docs/a.md/x", false},
      {"build", "x/build", true},
      {"build", "x/build/out.o", false},
      {"Makefile", "Makefile", true},
      // A '/' anchors at the start.
      {"docs/*.md", "docs/a.md", true},
      {"docs/*.md", "x/docs/a.md", false},
      {"**/docs/*.md", "x/docs/a.md", true},
      // Absolute paths (external files).
      {"/usr/lib/**", "/usr/lib/x/y.so", true},
      {"/usr/lib/**", "usr/lib/x/y.so", false},
      {"**/*.so", "/usr/lib/x/y.so", true},
      {"*.so", "/usr/lib/x/y.so", true},
      // The quick-reject shortcuts must agree with the full matcher.
      {"*.md", "a.mdx", false},
      {"*.md", "md", false},
      {"*.md", ".md", true},
      {"*.tar.gz", "x/y.tar.gz", true},
      {"*.tar.gz", "x/y.gz", false},
      {".git/**", ".gitx/a", false},
      {".git", "a/.git", true},
      {".git", "a/.github", false},
      {"src/*.c", "src", false},
      {"src/*.c", "srcx/a.c", false},
      {"/usr/**", "/usr", true},
      {"/usr/**", "usr", false},
      // Root path and bytes that are not ASCII.
      {".", ".", true},
      {"caf?", "caf\xc3", true},  // '?' is one byte, not one character
      {"caf??", "caf\xc3\xa9", true},
      // Malformed patterns match nothing.
      {"[abc", "a", false},
      {"a/", "a", false},
      {"", "", false},
  };
  for (const MatchCase& c : cases) {
    EXPECT_EQ(GlobMatch(c.pattern, c.path), c.match)
        << "pattern \"" << c.pattern << "\" path \"" << c.path << "\"";
  }
}

TEST(GlobCompileTest, RejectsMalformedPatterns) {
  struct BadCase {
    const char* pattern;
    const char* message;
  };
  const BadCase cases[] = {
      {"", "empty pattern"},       {"[abc", "unclosed '['"},
      {"a/[b/c]", "unclosed '['"}, {"[]", "unclosed '['"},
      {"[!]", "unclosed '['"},     {"ab\\", "escapes nothing"},
      {"a//b", "empty segment"},   {"build/", "trailing '/'"},
  };
  for (const BadCase& c : cases) {
    absl::Status status = ValidateGlob(c.pattern);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.pattern;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.message))
        << c.pattern;
  }
}

TEST(GlobCompileTest, AcceptsWellFormedPatterns) {
  for (const char* p : {"*", "**", "a/**", "/abs/x", "[]x]", "[a-z0-9_]*",
                        "\\[", "x/**/y/*.z"}) {
    EXPECT_TRUE(ValidateGlob(p).ok()) << p << ": " << ValidateGlob(p);
  }
}

TEST(GlobSetTest, MatchesAnyAndReportsFirst) {
  absl::StatusOr<GlobSet> set =
      GlobSet::Compile({".git/**", "*.md", "docs/**", "ste.toml"});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->size(), 4u);
  EXPECT_TRUE(set->Matches(".git/config"));
  EXPECT_EQ(set->FirstMatch("docs/a.md"), 1);  // "*.md" comes first
  EXPECT_EQ(set->FirstMatch("docs/a.png"), 2);
  EXPECT_EQ(set->FirstMatch("ste.toml"), 3);
  EXPECT_EQ(set->FirstMatch("src/ste.toml"), 3);  // basename rule
  EXPECT_EQ(set->FirstMatch("src/main.cc"), -1);
  EXPECT_FALSE(set->Matches("src/main.cc"));
}

// The walk's matcher agrees with Matches on every path the walk asks about
// (no ancestor matched), over every path of up to four segments of a small
// alphabet, and skips the "P/**" patterns only where Matches says no.
TEST(GlobSetTest, MatchesBelowUnmatchedAgreesWithMatchesWhereTheWalkAsks) {
  absl::StatusOr<GlobSet> set = GlobSet::Compile(
      {".git/**", "**/__pycache__/**", "**/.hypothesis/**", "build/out/**", "a/**/cache/**",
       "*.pyc", "docs/*.md", "**/x[0-9]/**", "b"});
  ASSERT_TRUE(set.ok()) << set.status();
  const std::vector<std::string> names = {".git", "__pycache__", ".hypothesis", "build", "out",
                                          "a",    "cache",       "x1",          "b",     "m.pyc",
                                          "docs", "r.md"};
  std::vector<std::string> paths, frontier = {""};
  for (int depth = 0; depth < 4; depth++) {
    std::vector<std::string> next;
    for (const std::string& parent : frontier) {
      for (const std::string& name : names) {
        std::string path = parent.empty() ? name : parent + "/" + name;
        paths.push_back(path);
        if (!set->Matches(path)) next.push_back(path);  // the walk descends only here
      }
    }
    frontier = std::move(next);
  }
  size_t asked = 0, matched = 0;
  for (const std::string& path : paths) {
    bool ancestors_unmatched = true;
    for (size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      if (set->Matches(path.substr(0, slash))) ancestors_unmatched = false;
    }
    if (!ancestors_unmatched) continue;
    asked++;
    EXPECT_EQ(set->MatchesBelowUnmatched(path), set->Matches(path)) << path;
    if (set->Matches(path)) matched++;
  }
  EXPECT_GT(asked, 1000u);
  EXPECT_GT(matched, 100u);
  EXPECT_TRUE(set->MatchesBelowUnmatched("src/__pycache__"));
  EXPECT_TRUE(set->MatchesBelowUnmatched("a/b/cache"));
  EXPECT_FALSE(set->MatchesBelowUnmatched("src/__pycache__x"));
}

TEST(GlobSetTest, EmptySetMatchesNothing) {
  GlobSet set;
  EXPECT_TRUE(set.empty());
  EXPECT_FALSE(set.Matches("a"));
  absl::StatusOr<GlobSet> compiled = GlobSet::Compile({});
  ASSERT_TRUE(compiled.ok());
  EXPECT_FALSE(compiled->Matches("a"));
}

TEST(GlobSetTest, MalformedPatternIsAnErrorNamingIt) {
  absl::StatusOr<GlobSet> set = GlobSet::Compile({"*.md", "src/[oops"});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(set.status().message()), HasSubstr("pattern 1"));
  EXPECT_THAT(std::string(set.status().message()), HasSubstr("src/[oops"));
}

TEST(GlobTest, CompiledGlobKeepsItsPattern) {
  absl::StatusOr<Glob> glob = Glob::Compile("tests/**/*_test.rb");
  ASSERT_TRUE(glob.ok());
  EXPECT_EQ(glob->pattern(), "tests/**/*_test.rb");
  EXPECT_TRUE(glob->Matches("tests/a/b_test.rb"));
  EXPECT_FALSE(glob->Matches("tests/a/b_test.py"));
}

// A pathological pattern must stay fast (no exponential backtracking).
TEST(GlobTest, NoExponentialBacktracking) {
  std::string path(200, 'a');
  std::string pattern;
  for (int i = 0; i < 30; ++i) pattern += "*a";
  pattern += "b";
  EXPECT_FALSE(GlobMatch(pattern, path));
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "a/";
  deep += "c";
  std::string deep_pattern;
  for (int i = 0; i < 30; ++i) deep_pattern += "**/a/";
  deep_pattern += "b";
  EXPECT_FALSE(GlobMatch(deep_pattern, deep));
}

}  // namespace
}  // namespace ste
