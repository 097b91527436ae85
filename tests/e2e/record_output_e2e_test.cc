// What `ste record` does with the tests' own output (issue 13, item 5), on
// a real git repository with real shell tests:
//   tests/test_pass.sh      prints to both streams, says whether its
//                           stdin and stdout are terminals, lists the
//                           root and all of .ste, passes
//   tests/test_fail.sh      30 lines on stdout, one on stderr, exit 3
//   "tests/test odd\x01\xff name.sh"  a space, a control byte and a byte
//                           that is not UTF-8 in its name; prints, passes
// Each test's output goes to its own log; nothing of it reaches
// `ste record`'s stdout or stderr except the failing test's tail (plain:
// after its line; bar, on a real terminal made by script(1): after the
// bar; none: only the log's path in the summary); --junit writes JUnit XML
// that Python's ElementTree (and xmllint) read back; --output-dir moves
// the logs. Distributed: `ste scheduler` and `ste worker` processes on a
// unix socket; the worker keeps the logs and the failing tail arrives at
// `ste record --scheduler --wait`.
#include <signal.h>
#include <unistd.h>

#include <memory>
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
const std::string kPython = "/usr/bin/python3";  // Debian's
const std::string kOdd = "tests/test odd\x01\xff name.sh";
const std::string kOddLog = "tests/test odd%01%FF name.sh.log";

// Reads a JUnit file back with ElementTree: one line for the suite, two
// per testcase (its attributes and outcome; its <system-out>, as ascii()).
constexpr char kJUnitReader[] = R"(import sys
import xml.etree.ElementTree as ET

suites = ET.parse(sys.argv[1]).getroot()
assert suites.tag == "testsuites", suites.tag
s = suites.find("testsuite")
print("suite", s.get("name"), s.get("tests"), s.get("failures"), s.get("errors"),
      float(s.get("time")) >= 0)
for c in s.findall("testcase"):
    f, e, o = c.find("failure"), c.find("error"), c.find("system-out")
    print("case", ascii(c.get("classname")), ascii(c.get("name")), ascii(c.get("file")),
          float(c.get("time")) >= 0, "failure=" + (f.get("message") if f is not None else "-"),
          "error=" + ("yes" if e is not None else "-"))
    print("out", ascii(o.text if o is not None else None))
)";

std::string FailLines(int from, int to) {
  std::string out;
  for (int i = from; i <= to; i++) absl::StrAppend(&out, "fail-out-", i, "\n");
  return out;
}

// Python's ascii() of `text` (printable ASCII and \n only).
std::string PyAscii(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out + "'";
}

const std::string kPassOutput = "pass-stdout-marker\npass-stderr-marker\nstdout-is-not-a-terminal\n";
const std::string kFailOutput = FailLines(1, 30) + "fail-err-marker\n";
const std::string kFailTail = FailLines(12, 30) + "fail-err-marker\n";  // the last 20 lines

class RecordOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    W("tests/test_pass.sh",
      "echo pass-stdout-marker\necho pass-stderr-marker >&2\n"
      "[ -t 1 ] || echo stdout-is-not-a-terminal\n[ -t 0 ] && echo stdin-is-a-terminal\n"
      "ls -a . > /dev/null\nls -aR .ste > /dev/null 2>&1\nexit 0\n");
    W("tests/test_fail.sh",
      "i=1\nwhile [ $i -le 30 ]; do echo fail-out-$i; i=$((i + 1)); done\n"
      "echo fail-err-marker >&2\nexit 3\n");
    W(kOdd, "echo odd-marker\n");
    W("ste.toml", "[tests]\ninclude = [\"tests/*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
    ::ste::testing::InitGitRepo(root_);
    ASSERT_EQ(::ste::testing::Git(root_, {"add", "-A"}).exit_code, 0);
    ASSERT_EQ(::ste::testing::Git(root_, {"commit", "-q", "-m", "init"}).exit_code, 0);
  }

  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  Spawned Ste(std::vector<std::string> args, const std::string& cwd = "") {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, cwd.empty() ? root_ : cwd);
  }
  bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

  // What no test's output may leave in what `ste record` printed.
  void ExpectNoTestOutputBut(const std::string& printed, const std::string& tail) {
    for (const char* marker : {"pass-stdout-marker", "pass-stderr-marker", "odd-marker",
                               "stdout-is-not-a-terminal"}) {
      EXPECT_EQ(printed.find(marker), std::string::npos) << marker << " in:\n" << printed;
    }
    std::string rest = printed;
    if (!tail.empty()) {
      const size_t at = rest.find(tail);
      ASSERT_NE(at, std::string::npos) << "no tail in:\n" << printed;
      rest.erase(at, tail.size());
    }
    EXPECT_EQ(rest.find("fail-out-"), std::string::npos) << rest;
    EXPECT_EQ(rest.find("fail-err-marker"), std::string::npos) << rest;
  }

  void ExpectLogs(const std::string& dir) {
    EXPECT_EQ(ReadFile(dir + "/tests/test_pass.sh.log"), kPassOutput);
    EXPECT_EQ(ReadFile(dir + "/tests/test_fail.sh.log"), kFailOutput);
    EXPECT_EQ(ReadFile(dir + "/" + kOddLog), "odd-marker\n");
  }

  // The JUnit file as kJUnitReader prints it; xmllint (when installed)
  // must accept it too.
  std::string ReadJUnit(const std::string& path) {
    const std::string reader = MakeTempDir() + "/read_junit.py";
    WriteFile(reader, kJUnitReader);
    Spawned py = Spawn({kPython, "-B", reader, path}, {}, "/");
    EXPECT_EQ(py.exit_code, 0) << py.err << ReadFile(path);
    if (access("/usr/bin/xmllint", X_OK) == 0) {
      Spawned lint = Spawn({"/usr/bin/xmllint", "--noout", path}, {}, "/");
      EXPECT_EQ(lint.exit_code, 0) << lint.err;
    }
    return py.out;
  }

  std::string ExpectedJUnit(bool passing_output) {
    const std::string odd = "'tests/test odd\\ufffd\\ufffd name.sh'";
    return absl::StrCat(
        "suite ste record 3 1 0 True\n",
        "case 'tests' 'test odd\\ufffd\\ufffd name.sh' ", odd, " True failure=- error=-\n",
        "out ", passing_output ? PyAscii("odd-marker\n") : "None", "\n",
        "case 'tests' 'test_fail.sh' 'tests/test_fail.sh' True failure=exit code 3 error=-\n",
        "out ", PyAscii(kFailTail), "\n",
        "case 'tests' 'test_pass.sh' 'tests/test_pass.sh' True failure=- error=-\n",
        "out ", passing_output ? PyAscii(kPassOutput) : "None", "\n");
  }

  std::string root_;
};

TEST_F(RecordOutput, PlainCapturesEachTestAndPrintsOnlyTheFailingTailAfterItsLine) {
  const std::string junit = MakeTempDir() + "/junit.xml";
  Spawned r = Ste({"record", "--progress", "plain", "-j", "2", "--junit", junit});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  ExpectLogs(root_ + "/.ste/output/b1");

  const std::string block =
      "---- FAIL tests/test_fail.sh (exit 3): the last 20 lines of "
      ".ste/output/b1/tests/test_fail.sh.log ----\n" +
      kFailTail + "---- end of tests/test_fail.sh ----\n";
  ExpectNoTestOutputBut(r.out + r.err, block);
  // Right after the test's own line.
  const size_t line = r.err.find(" FAIL  tests/test_fail.sh (");
  ASSERT_NE(line, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n', line) + 1, r.err.find(block)) << r.err;
  EXPECT_NE(r.out.find("  failed tests/test_fail.sh (exit 3), output in "
                       ".ste/output/b1/tests/test_fail.sh.log\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ste record: each test's output in .ste/output/b1/\n"), std::string::npos) << r.out;

  EXPECT_EQ(ReadJUnit(junit), ExpectedJUnit(true));
  EXPECT_EQ(ReadFile(junit).find("\x01"), std::string::npos);

  // The logs are not dependencies (the test listed them), nor changes:
  // nothing new is selected.
  Spawned deps = Ste({"deps", "tests/test_pass.sh"});
  ASSERT_EQ(deps.exit_code, 0) << deps.err;
  EXPECT_NE(deps.out.find("listing\t.\n"), std::string::npos) << deps.out;
  EXPECT_EQ(deps.out.find(".ste"), std::string::npos) << deps.out;
  Spawned s = Ste({"select"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out, "tests/test_fail.sh\n") << s.err;  // failed in the baseline, nothing else
}

TEST_F(RecordOutput, NonePrintsTheSummaryWithTheFailingLogsPathOnly) {
  Spawned r = Ste({"record", "--progress", "none"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  ExpectLogs(root_ + "/.ste/output/b1");
  ExpectNoTestOutputBut(r.out + r.err, "");
  EXPECT_EQ(r.err, "") << r.err;
  EXPECT_NE(r.out.find("  failed tests/test_fail.sh (exit 3), output in "
                       ".ste/output/b1/tests/test_fail.sh.log\n"),
            std::string::npos)
      << r.out;
  // A second record writes beside the first.
  r = Ste({"record", "--progress", "none"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  ExpectLogs(root_ + "/.ste/output/b2");
  ExpectLogs(root_ + "/.ste/output/b1");
}

TEST_F(RecordOutput, OutputDirTakesTheLogsAndJUnitIsReplacedWhole) {
  const std::string out = MakeTempDir();
  const std::string junit = out + "/report.xml";
  WriteFile(junit, "an older report\n");
  // From a subdirectory, with an --output-dir to normalise.
  Spawned r = Ste({"record", "--progress", "none", "--output-dir", out + "/logs/../logs/", "--junit",
                   junit},
                  root_ + "/tests");
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  ExpectLogs(out + "/logs");
  EXPECT_FALSE(Exists(root_ + "/.ste/output")) << "the default directory was made too";
  EXPECT_NE(r.out.find("output in " + out + "/logs/tests/test_fail.sh.log\n"), std::string::npos) << r.out;
  EXPECT_EQ(ReadJUnit(junit), ExpectedJUnit(true));

  // Inside the repository and not ignored: a warning says what to do.
  r = Ste({"record", "--progress", "none", "--output-dir", "test-logs"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  ExpectLogs(root_ + "/test-logs");
  EXPECT_NE(r.err.find("warning: the output directory " + root_ + "/test-logs is inside the repository"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("add \"test-logs/**\" to [inventory] ignore"), std::string::npos) << r.err;

  // Bad usage is found before anything runs.
  r = Ste({"record", "--junit", root_ + "/no/such/dir/j.xml"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--junit FILE: cannot write in"), std::string::npos) << r.err;
  r = Ste({"record", "--scheduler", "unix:/nonexistent", "--output-dir", out});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST_F(RecordOutput, OnATerminalTheBarStaysOneLineAndTheTailComesAfterIt) {
  if (access("/usr/bin/script", X_OK) != 0) GTEST_SKIP() << "no script(1) to make a terminal";
  // script(1) runs the record on a pseudo-terminal of 60 columns: stderr
  // and stdin are that terminal, so --progress auto is the bar.
  Spawned r = Spawn({"/usr/bin/script", "-qec",
                     "stty cols 60 rows 20 && exec '" + kSte + "' record -j 1", "/dev/null"},
                    {}, root_);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  std::string tty = r.out;  // the terminal's output: "\r\n" line ends
  for (size_t at; (at = tty.find("\r\n")) != std::string::npos;) tty.replace(at, 2, "\n");

  // The test's stdin is the terminal as it was; its stdout is its log.
  EXPECT_EQ(ReadFile(root_ + "/.ste/output/b1/tests/test_pass.sh.log"),
            kPassOutput + "stdin-is-a-terminal\n");
  const size_t bar = tty.find("\r\033[K");
  ASSERT_NE(bar, std::string::npos) << tty;
  const size_t bar_end = tty.find('\n', bar);
  ASSERT_NE(bar_end, std::string::npos) << tty;
  // Only the bar, redrawn, on one line cut to the width, until it is done.
  const std::string line = tty.substr(bar, bar_end - bar);
  size_t redraws = 0;
  for (size_t at = 0; at < line.size();) {
    ASSERT_EQ(line.compare(at, 4, "\r\033[K"), 0) << ::testing::PrintToString(line);
    size_t next = line.find("\r\033[K", at + 4);
    const std::string drawn = line.substr(at + 4, next == std::string::npos ? std::string::npos : next - at - 4);
    EXPECT_EQ(drawn.rfind("[", 0), 0u) << drawn;
    EXPECT_LE(drawn.size(), 59u) << drawn;
    redraws++;
    at = next == std::string::npos ? line.size() : next;
  }
  EXPECT_EQ(redraws, 3u) << ::testing::PrintToString(line);
  EXPECT_NE(line.find("3/3"), std::string::npos) << line;
  // Then the failing test's tail, then the summary.
  const std::string block =
      "---- FAIL tests/test_fail.sh (exit 3): the last 20 lines of "
      ".ste/output/b1/tests/test_fail.sh.log ----\n" +
      kFailTail + "---- end of tests/test_fail.sh ----\n";
  EXPECT_EQ(tty.find(block), bar_end + 1) << tty;
  ExpectNoTestOutputBut(tty, block);
  EXPECT_NE(tty.find("ste record: baseline 1", bar_end), std::string::npos) << tty;
}

// `ste scheduler` and a `ste worker` (in the same checkout) on a unix
// socket: the logs stay with the worker, the failing tail comes to the
// record client with the result.
TEST_F(RecordOutput, DistributedTheWorkerKeepsTheLogsAndSendsTheFailingTail) {
  const std::string dir = MakeTempDir();
  ::ste::testing::SchedulerProcess server(kSte, "sqlite:" + dir + "/s.db", dir);
  ::ste::testing::Process& scheduler = server.process();
  const std::string address = server.address();
  ASSERT_FALSE(address.empty()) << scheduler.err();

  ::ste::testing::Process worker({kSte, "worker", "--scheduler", address, "-j", "2", "--name", "w-test"},
                                 {}, root_, dir + "/worker.out", dir + "/worker.err");
  const std::string junit = dir + "/junit.xml";
  Spawned r = Ste({"record", "--scheduler", address, "--wait", "--progress", "plain", "--junit", junit});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err << scheduler.err() << worker.err();
  EXPECT_EQ(worker.Wait(60), 0) << worker.err();

  const std::string log = root_ + "/.ste/output/b1/tests/test_fail.sh.log";
  ExpectLogs(root_ + "/.ste/output/b1");
  // The worker as the scheduler knows it: its --name and where it called from.
  const std::string where = log + " on worker w-test (unix:";
  const std::string header = "---- FAIL tests/test_fail.sh (exit 3): the last 20 lines of " + where;
  const size_t at = r.err.find(header);
  ASSERT_NE(at, std::string::npos) << r.err;
  const size_t body = r.err.find(") ----\n", at);
  ASSERT_NE(body, std::string::npos) << r.err;
  const std::string tail = kFailTail + "---- end of tests/test_fail.sh ----\n";
  EXPECT_EQ(r.err.compare(body + 7, tail.size(), tail), 0) << r.err;
  ExpectNoTestOutputBut(r.out + r.err, tail);
  EXPECT_NE(r.out.find("  failed tests/test_fail.sh (exit 3), output in " + where), std::string::npos)
      << r.out;
  // The worker prints no test's output either, and names the failing log.
  ExpectNoTestOutputBut(worker.err() + worker.out(), "");
  EXPECT_NE(worker.err().find("ran tests/test_fail.sh: failed in"), std::string::npos) << worker.err();
  EXPECT_NE(worker.err().find(", output in " + log), std::string::npos) << worker.err();
  // JUnit: the failing tail came over the wire; passing tests' output
  // stayed on the worker.
  EXPECT_EQ(ReadJUnit(junit), ExpectedJUnit(false));
  scheduler.Signal(SIGTERM);
  EXPECT_EQ(scheduler.Wait(60), 0) << scheduler.err();
}

}  // namespace
}  // namespace ste
