#include "ste/junit_report.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ste {
namespace {

FinishedTest Finished(const std::string& path, TestOutcome outcome, int exit_code = 0) {
  FinishedTest t;
  t.test = path;
  t.outcome = outcome;
  t.exit_code = exit_code;
  t.seconds = 0.25;
  return t;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

TEST(XmlEscaped, EscapesMarkupAndReplacesWhatXmlCannotHold) {
  EXPECT_EQ(XmlEscaped("a<b>&c\"'", false), "a&lt;b&gt;&amp;c\"'");
  EXPECT_EQ(XmlEscaped("a<b>&c\"'", true), "a&lt;b&gt;&amp;c&quot;&apos;");
  EXPECT_EQ(XmlEscaped("t\tn\nr\r", false), "t\tn\nr&#13;");
  EXPECT_EQ(XmlEscaped("t\tn\nr\r", true), "t&#9;n&#10;r&#13;");
  EXPECT_EQ(XmlEscaped(std::string("nul\0bel\x07" "del\x7F", 12), false),
            "nul\xEF\xBF\xBD" "bel\xEF\xBF\xBD" "del\xEF\xBF\xBD");
  EXPECT_EQ(XmlEscaped("bad\xFF\xC3", false), "bad\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(XmlEscaped("\xEF\xBF\xBE\xEF\xBF\xBF", false), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(XmlEscaped("\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80", false),
            "\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80");  // é 日 😀 kept
}

TEST(XmlEscaped, LeavesOutTerminalColours) {
  EXPECT_EQ(XmlEscaped("\x1B[31mred\x1B[0m \x1B[1;32mgreen\x1B[m", false), "red green");
  EXPECT_EQ(XmlEscaped("\x1B" "c", false), "\xEF\xBF\xBD" "c");  // not a CSI: replaced
  EXPECT_EQ(XmlEscaped("\x1B[", false), "\xEF\xBF\xBD[");           // unfinished
}

TEST(JUnitXml, CountsAndOneTestcasePerTest) {
  std::vector<FinishedTest> tests = {Finished("tests/unit/a.sh", TestOutcome::kPassed),
                                     Finished("tests/b.sh", TestOutcome::kFailed, 3),
                                     Finished("top.sh", TestOutcome::kError, 2)};
  tests[1].output_tail = "boom <here>\n";
  tests[1].output_log = "/r/.ste/output/b1/tests/b.sh.log";
  tests[2].detail = "the pytest runner gave no result for it";
  JUnitOptions o;
  o.seconds = 1.5;
  const std::string xml = JUnitXml(tests, o);
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u) << xml;
  EXPECT_NE(xml.find("<testsuite name=\"ste record\" tests=\"3\" failures=\"1\" errors=\"1\" "
                     "skipped=\"0\" time=\"1.500\">"),
            std::string::npos)
      << xml;
  EXPECT_EQ(Count(xml, "<testcase "), 3u);
  EXPECT_NE(xml.find("<testcase classname=\"tests.unit\" name=\"a.sh\" file=\"tests/unit/a.sh\" "
                     "time=\"0.250\"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("classname=\"(root)\" name=\"top.sh\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"exit code 3\" type=\"exit code\">exit code 3; the whole "
                     "output: /r/.ste/output/b1/tests/b.sh.log</failure>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<system-out>boom &lt;here&gt;\n</system-out>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error message=\"the pytest runner gave no result for it\" type=\"error\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("</testsuite>\n</testsuites>\n"), std::string::npos);
}

TEST(JUnitXml, ReadsLocalLogsOnlyWhenAskedAndNotABatchsForItsPassingTests) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/ste-junit-test-XXXXXX");
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::ofstream(dir + "/a.log") << "printed by a\n";
  std::ofstream(dir + "/batch.log") << "the batch's output\n";
  std::vector<FinishedTest> tests = {Finished("a.sh", TestOutcome::kPassed),
                                     Finished("p1.py", TestOutcome::kPassed),
                                     Finished("p2.py", TestOutcome::kFailed, 1)};
  tests[0].output_log = dir + "/a.log";
  tests[0].worker_name = "host:1";
  for (int i : {1, 2}) {
    tests[i].output_log = dir + "/batch.log";
    tests[i].output_shared = true;
  }
  JUnitOptions o;
  std::string remote = JUnitXml(tests, o);
  EXPECT_EQ(remote.find("<system-out>"), std::string::npos) << remote;
  o.read_local_logs = true;
  o.show_path = [](const std::string& p) { return "shown:" + p.substr(p.rfind('/') + 1); };
  std::string local = JUnitXml(tests, o);
  EXPECT_EQ(Count(local, "<system-out>printed by a\n</system-out>"), 1u) << local;
  EXPECT_EQ(Count(local, "<system-out>the batch's output\n</system-out>"), 1u) << local;  // p2 only
  EXPECT_NE(local.find("(its batch's log): shown:batch.log"), std::string::npos) << local;
  std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
}  // namespace ste
