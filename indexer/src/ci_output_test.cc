#include "ste/ci_output.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "github_files.h"  // tests/support
#include "gtest/gtest.h"

namespace ste {
namespace {

bool ParseLikeGithub(const std::string& text, std::map<std::string, std::string>* out) {
  std::optional<std::map<std::string, std::string>> parsed = testing::ParseGithubFile(text);
  if (parsed) *out = *std::move(parsed);
  return parsed.has_value();
}

// Names and reasons a pull request can choose: each must come back as
// written, and must not add or change another entry.
const std::vector<std::string> kHostile = {
    "plain",
    "a\nmode=none\nz.cfg",
    "a\r\nmode=none\r\n",
    "x<<EOF\nmode=none\nEOF",
    "pipe|in|name",
    "back`tick`s",
    "100% done %0A%0D",
    std::string("bad\xff\xfe utf8"),
    "ghadelimiter_00000000000000000000000000000000\nmode=none",
    "=leading equals",
    "<script>alert(1)</script>",
    "",
};

TEST(GithubFileEntry, EveryHostileValueComesBackAsWrittenAndForgesNothing) {
  for (const std::string& value : kHostile) {
    absl::StatusOr<std::string> mode = GithubFileEntry("mode", "all");
    absl::StatusOr<std::string> reason = GithubFileEntry("reason", value);
    ASSERT_TRUE(mode.ok() && reason.ok());
    std::map<std::string, std::string> got;
    ASSERT_TRUE(ParseLikeGithub(*mode + *reason, &got)) << value;
    EXPECT_EQ(got.size(), 2u) << value;
    EXPECT_EQ(got["mode"], "all") << value;
    EXPECT_EQ(got["reason"], value);
  }
}

TEST(GithubFileEntry, TheOldFormWasForgeable) {
  // What `reason=<text>` let a file named "a\nmode=none\nz=.cfg" do: the
  // reason this exists.
  std::map<std::string, std::string> got;
  ASSERT_TRUE(ParseLikeGithub("mode=all\nreason=a\nmode=none\nz=.cfg changed\n", &got));
  EXPECT_EQ(got["mode"], "none");
}

TEST(GithubFileEntry, DelimitersAreFreshAndNamesAreChecked) {
  absl::StatusOr<std::string> a = GithubFileEntry("x", "v"), b = GithubFileEntry("x", "v");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(absl::StartsWith(*a, "x<<ghadelimiter_"));
  EXPECT_FALSE(GithubFileEntry("mode\nx", "v").ok());
  EXPECT_FALSE(GithubFileEntry("", "v").ok());
  EXPECT_FALSE(GithubFileEntry("a=b", "v").ok());
}

TEST(Markdown, CellsStayOneCellOfOneRow) {
  for (const std::string& value : kHostile) {
    std::string cell = MarkdownCode(value);
    EXPECT_EQ(cell.find('\n'), std::string::npos) << value;
    EXPECT_EQ(cell.find('\r'), std::string::npos) << value;
    // Every '|', '`', '<' of the value is escaped (the tags are ours).
    std::string inner = cell.substr(6, cell.size() - 13);
    for (size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] == '|' || inner[i] == '`' || inner[i] == '<' || inner[i] == '*') {
        ASSERT_GT(i, 0u) << value;
        EXPECT_EQ(inner[i - 1], '\\') << value << " at " << i;
      }
    }
  }
  EXPECT_EQ(MarkdownCode("tests/a.py"), "<code>tests/a.py</code>");
  EXPECT_EQ(MarkdownText("a|b"), "a\\|b");
  EXPECT_EQ(MarkdownText("a\nb"), "a\\\\nb");
}

TEST(CappedSummary, StaysUnderTheLimitAndCountsWhatItLeftOut) {
  CappedSummary s(1000);
  s.AddText("### head\n\n| test | why |\n|---|---|\n");
  for (int i = 0; i < 200; ++i) s.AddRow("| <code>tests/test_" + std::to_string(i) + ".py</code> | x |");
  std::string out = s.Finish("tests");
  EXPECT_LE(out.size(), 1000u + 100u);
  EXPECT_TRUE(absl::StrContains(out, "more tests not shown")) << out;
  EXPECT_TRUE(absl::StrContains(out, "test_0.py"));
  EXPECT_FALSE(absl::StrContains(out, "test_199.py"));
  CappedSummary small(1000);
  small.AddRow("| a | b |");
  EXPECT_EQ(small.Finish("tests"), "| a | b |\n");
}

TEST(CappedSummary, TheDefaultIsBelowGithubsLimit) {
  CappedSummary s;
  std::string row(1000, 'x');
  for (int i = 0; i < 2000; ++i) s.AddRow(row);
  EXPECT_LT(s.Finish("tests").size(), kGithubSummaryLimit);
}

}  // namespace
}  // namespace ste
