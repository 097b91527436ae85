#include "ste/junit_report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ste/json.h"
#include "ste/test_output.h"

namespace ste {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// The length of a terminal control sequence (CSI: ESC '[' parameters and
// intermediates, then a final byte 0x40-0x7E) starting at s[i], or 0.
size_t CsiLength(std::string_view s, size_t i) {
  if (s[i] != '\x1B' || i + 1 >= s.size() || s[i + 1] != '[') return 0;
  for (size_t k = i + 2; k < s.size(); k++) {
    const unsigned char c = static_cast<unsigned char>(s[k]);
    if (c >= 0x40 && c <= 0x7E) return k + 1 - i;
    if (c < 0x20 || c > 0x3F) return 0;  // not a parameter or intermediate byte
  }
  return 0;
}

std::string Seconds(double s) { return absl::StrFormat("%.3f", s < 0 ? 0.0 : s); }

}  // namespace

std::string XmlEscaped(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size();) {
    if (size_t csi = CsiLength(text, i)) {
      i += csi;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += kReplacement;
      i++;
      continue;
    }
    if (n > 1) {
      const std::string_view seq = text.substr(i, n);
      // U+FFFE and U+FFFF (EF BF BE, EF BF BF) are not XML characters.
      out += seq == "\xEF\xBF\xBE" || seq == "\xEF\xBF\xBF" ? std::string_view(kReplacement) : seq;
      i += n;
      continue;
    }
    i++;
    switch (c) {
      case '&': out += "&amp;"; continue;
      case '<': out += "&lt;"; continue;
      case '>': out += "&gt;"; continue;
      case '"': out += attribute ? "&quot;" : "\""; continue;
      case '\'': out += attribute ? "&apos;" : "'"; continue;
      case '\r': out += "&#13;"; continue;  // a raw one would be read as '\n'
      case '\t': out += attribute ? "&#9;" : "\t"; continue;
      case '\n': out += attribute ? "&#10;" : "\n"; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7F) {
      out += kReplacement;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

std::string JUnitXml(const std::vector<FinishedTest>& tests, const JUnitOptions& o) {
  size_t failures = 0, errors = 0;
  for (const FinishedTest& t : tests) {
    failures += t.outcome == TestOutcome::kFailed;
    errors += t.outcome == TestOutcome::kError;
  }
  auto attr = [](std::string_view v) { return XmlEscaped(v, true); };
  auto show = [&](const std::string& path) { return o.show_path ? o.show_path(path) : path; };
  const std::string counts = absl::StrCat("tests=\"", tests.size(), "\" failures=\"", failures,
                                          "\" errors=\"", errors, "\"");
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(&xml, "<testsuites name=\"", attr(o.suite_name), "\" ", counts, " time=\"",
                  Seconds(o.seconds), "\">\n");
  absl::StrAppend(&xml, "  <testsuite name=\"", attr(o.suite_name), "\" ", counts,
                  " skipped=\"0\" time=\"", Seconds(o.seconds), "\">\n");
  for (const FinishedTest& t : tests) {
    const size_t slash = t.test.rfind('/');
    std::string classname = "(root)";
    std::string name = t.test;
    if (slash != std::string::npos) {
      classname = t.test.substr(0, slash);
      for (char& c : classname) c = c == '/' ? '.' : c;
      name = t.test.substr(slash + 1);
    }
    absl::StrAppend(&xml, "    <testcase classname=\"", attr(classname), "\" name=\"", attr(name),
                    "\" file=\"", attr(t.test), "\" time=\"", Seconds(t.seconds), "\"");
    std::string where;
    if (!t.output_log.empty()) {
      where = absl::StrCat("; the whole output", t.output_shared ? " (its batch's log)" : "", ": ",
                           show(t.output_log),
                           t.worker_name.empty() || o.read_local_logs
                               ? ""
                               : absl::StrCat(" on worker ", t.worker_name));
    }
    std::string body;
    if (t.outcome == TestOutcome::kFailed) {
      const std::string what = absl::StrCat("exit code ", t.exit_code);
      absl::StrAppend(&body, "      <failure message=\"", attr(what), "\" type=\"exit code\">",
                      XmlEscaped(what + where, false), "</failure>\n");
    } else if (t.outcome == TestOutcome::kError) {
      const std::string what = t.detail.empty() ? "could not run" : t.detail;
      absl::StrAppend(&body, "      <error message=\"", attr(what), "\" type=\"error\">",
                      XmlEscaped(absl::StrCat(what, " (exit code ", t.exit_code, ")", where), false),
                      "</error>\n");
    }
    std::string tail = t.output_tail;
    const bool shared_pass = t.output_shared && t.outcome == TestOutcome::kPassed;
    if (tail.empty() && o.read_local_logs && !t.output_log.empty() && !shared_pass) {
      absl::StatusOr<OutputTail> read = ReadOutputTail(t.output_log);
      if (read.ok()) tail = read->text;
    }
    if (!tail.empty()) {
      absl::StrAppend(&body, "      <system-out>", XmlEscaped(tail, false), "</system-out>\n");
    }
    absl::StrAppend(&xml, body.empty() ? "/>\n" : absl::StrCat(">\n", body, "    </testcase>\n"));
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

}  // namespace ste
