#include "ste/ci_output.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ste/json.h"

namespace ste {
namespace {

bool ValidName(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

absl::StatusOr<std::string> RandomDelimiter() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("getrandom: ", std::strerror(errno)));
    }
    got += static_cast<size_t>(n);
  }
  return absl::StrCat("ghadelimiter_",
                      HexBytes(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes)));
}

// CommonMark: any ASCII punctuation may be backslash-escaped, and then
// stands for itself. These are the ones that can mean something inside a
// table cell (emphasis, links, code spans, HTML, entities, the cell's
// pipe, strikethrough); '/', '.', ':' and the like are left readable.
bool IsMarkdownSpecial(char c) {
  switch (c) {
    case '!': case '#': case '$': case '&': case '(': case ')': case '*': case '+':
    case '<': case '>': case '[': case '\\': case ']': case '^': case '_': case '`':
    case '{': case '|': case '}': case '~':
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string GithubFileEntryWith(absl::string_view name, absl::string_view value,
                                absl::string_view delimiter) {
  return absl::StrCat(name, "<<", delimiter, "\n", value, "\n", delimiter, "\n");
}

absl::StatusOr<std::string> GithubFileEntry(absl::string_view name, absl::string_view value) {
  if (!ValidName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad output name '", EscapeForText(std::string_view(name.data(), name.size())), "'"));
  }
  // 128 random bits: a value holding the delimiter is all but impossible;
  // draw again if it happens rather than reason about where it sits.
  for (int attempt = 0; attempt < 8; ++attempt) {
    absl::StatusOr<std::string> delimiter = RandomDelimiter();
    if (!delimiter.ok()) return delimiter.status();
    if (!absl::StrContains(value, *delimiter)) return GithubFileEntryWith(name, value, *delimiter);
  }
  return absl::InternalError("no delimiter absent from the value in 8 draws");
}

std::string MarkdownText(absl::string_view text) {
  const std::string one_line = EscapeForText(std::string_view(text.data(), text.size()));
  std::string out;
  out.reserve(one_line.size() + one_line.size() / 4);
  for (char c : one_line) {
    if (IsMarkdownSpecial(c)) out += '\\';
    out += c;
  }
  return out;
}

std::string MarkdownCode(absl::string_view text) {
  return absl::StrCat("<code>", MarkdownText(text), "</code>");
}

void CappedSummary::AddText(absl::string_view text) {
  if (text_.size() + text.size() <= limit_) {
    absl::StrAppend(&text_, text);
    return;
  }
  const size_t room = limit_ > text_.size() ? limit_ - text_.size() : 0;
  // Cut at a line's start would be nicer; a cut mid-line is still text.
  absl::StrAppend(&text_, text.substr(0, room), "\n");
}

void CappedSummary::AddRow(absl::string_view row) {
  if (left_out_ > 0 || text_.size() + row.size() + 1 > limit_) {
    left_out_++;
    return;
  }
  absl::StrAppend(&text_, row, "\n");
}

std::string CappedSummary::Finish(absl::string_view what) const {
  if (left_out_ == 0) return text_;
  return absl::StrCat(text_, "\n… and ", left_out_, " more ", what,
                      " not shown (the summary is capped at ", limit_ / 1024, " KiB)\n");
}

}  // namespace ste
