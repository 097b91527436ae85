// $GITHUB_OUTPUT / $GITHUB_ENV read back the way the GitHub runner reads
// them (actions/runner, src/Runner.Worker/FileCommandManager.cs): line by
// line, NAME=VALUE or NAME<<DELIMITER by whichever of "=" and "<<" comes
// first; a heredoc's value is every line up to the first one equal to the
// delimiter; the last value of a name wins. Header-only: the unit tests
// (indexer) and the e2e tests share it.
#ifndef STE_TESTS_SUPPORT_GITHUB_FILES_H_
#define STE_TESTS_SUPPORT_GITHUB_FILES_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ste::testing {

// nullopt where the runner fails the step (an empty name or delimiter, a
// line with neither form, a heredoc without its closing line).
inline std::optional<std::map<std::string, std::string>> ParseGithubFile(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  // "\r\n" ends a line too: a line's text is without it, a heredoc's value
  // keeps the bytes between its first line and its last line's end.
  auto text_of = [](const std::string& raw) {
    return !raw.empty() && raw.back() == '\r' ? raw.substr(0, raw.size() - 1) : raw;
  };
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string line = text_of(lines[i]);
    if (line.empty()) continue;
    const size_t eq = line.find('='), here = line.find("<<");
    if (eq != std::string::npos && (here == std::string::npos || eq < here)) {
      if (eq == 0) return std::nullopt;
      out[line.substr(0, eq)] = line.substr(eq + 1);
      continue;
    }
    if (here == std::string::npos) return std::nullopt;
    const std::string name = line.substr(0, here), delimiter = line.substr(here + 2);
    if (name.empty() || delimiter.empty()) return std::nullopt;
    std::string value;
    bool ended = false;
    size_t last = i;
    for (size_t j = i + 1; j < lines.size(); ++j) {
      if (text_of(lines[j]) == delimiter) {
        ended = true;
        i = j;
        break;
      }
      if (j > i + 1) value += "\n";
      value += lines[j];
      last = j;
    }
    if (!ended) return std::nullopt;
    // The last line's own "\r" belonged to its "\r\n", not to the value.
    if (last > i && !lines[last].empty() && lines[last].back() == '\r') value.pop_back();
    out[name] = value;
  }
  return out;
}

}  // namespace ste::testing

#endif  // STE_TESTS_SUPPORT_GITHUB_FILES_H_
