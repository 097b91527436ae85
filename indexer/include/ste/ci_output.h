// Text for a CI's files, safe whatever the values hold. A selection's
// reason and its test names come from the change under test (a path is
// the pull request's to choose), and they are written into files the CI
// then *parses*: GitHub's $GITHUB_OUTPUT decides what runs next, its step
// summary is Markdown. Nothing a value holds may end its line, start a
// second entry, or break out of a table cell.
#ifndef STE_CI_OUTPUT_H_
#define STE_CI_OUTPUT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ste {

// One entry of $GITHUB_OUTPUT or $GITHUB_ENV in GitHub's multi-line form:
//
//   NAME<<ghadelimiter_<32 hex>\n
//   VALUE\n
//   ghadelimiter_<32 hex>\n
//
// The delimiter is drawn afresh from the kernel's random source for each
// entry, so a value cannot name it in advance; a value that nonetheless
// holds it as a line (or in which it appears at all) gets another one.
// The runner reads the value back byte for byte (it ends at the first line
// equal to the delimiter). `name` must be [A-Za-z0-9_-]+ (ours, never the
// change's); InvalidArgument otherwise, Internal when no random bytes can
// be read.
absl::StatusOr<std::string> GithubFileEntry(absl::string_view name, absl::string_view value);

// The same with `delimiter` given: for tests, and for the check above.
// The delimiter must not occur in `value`.
std::string GithubFileEntryWith(absl::string_view name, absl::string_view value,
                                absl::string_view delimiter);

// `text` as the content of one Markdown table cell, shown as code: every
// byte that could end the cell or the row, or start emphasis, a link, a
// code span, HTML or an entity, is escaped. Control bytes and invalid
// UTF-8 appear as \xNN escapes (EscapeForText); '|', '`', '<', '>', '&',
// '*', '_', '[', ']' and the like are backslash-escaped (CommonMark: an
// escaped punctuation character stands for itself); the whole is wrapped in
// <code>…</code> (a code span with a backtick in it cannot be written
// portably). Never contains a newline.
std::string MarkdownCode(absl::string_view text);

// The same for prose in a cell or a list item (no <code>).
std::string MarkdownText(absl::string_view text);

// GitHub refuses a step summary over 1 MiB (1,048,576 bytes) for a step,
// and shows none of it then.
inline constexpr size_t kGithubSummaryLimit = 1024 * 1024;

// Builds a summary from a head, table rows and a tail, keeping it under
// `limit` bytes: rows that do not fit are left out and counted in a last
// line ("… and N more tests not shown (the summary is capped at X KiB)").
class CappedSummary {
 public:
  explicit CappedSummary(size_t limit = kGithubSummaryLimit - 64 * 1024) : limit_(limit) {}
  // Text that must be there (headings, the reason): cut when too long.
  void AddText(absl::string_view text);
  // One line of a table or list; left out (and counted) once over the cap.
  void AddRow(absl::string_view row);
  // The summary, with the count of rows left out, if any, named `what`
  // ("tests").
  std::string Finish(absl::string_view what) const;

 private:
  size_t limit_;
  std::string text_;
  size_t left_out_ = 0;
};

}  // namespace ste

#endif  // STE_CI_OUTPUT_H_
