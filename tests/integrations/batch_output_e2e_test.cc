// A batch runner's output while `ste record` runs (issue 13, item 5): a
// real pytest suite (Debian's python3-pytest, runner.kind = "pytest") of
// three files, one printing and passing, two printing and failing, in
// one batch. The runner's process tree writes one log for the batch,
// .ste/output/<build>/%batch-<n>.log; each test's entry names it; the
// failing tests' tail is that log's (shown once, the second failing test
// refers to it); JUnit gives it to the failing tests only.
#include <dirent.h>
#include <unistd.h>

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
const std::string kIntegrations = STE_INTEGRATIONS_DIR;
const std::string kPython = "/usr/bin/python3";  // Debian's, with pytest

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  return names;
}

class BatchOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    W("pytest.ini", "[pytest]\n");
    W("tests/test_ok.py", "def test_ok():\n    print(\"ok-marker\")\n");
    W("tests/test_bad.py", "def test_bad():\n    print(\"bad-marker\")\n    assert 1 == 2\n");
    W("tests/test_also_bad.py", "def test_also():\n    print(\"also-marker\")\n    assert 3 == 4\n");
    W("ste.toml", "[tests]\ninclude = [\"tests/test_*.py\"]\n[runner]\nkind = \"pytest\"\n"
                  "jobs = 1\nbatch = 10\ncommand = \"" + kPython +
                      " -m pytest -q -p ste_pytest {tests}\"\n");
    ::ste::testing::InitGitRepo(root_);
    ASSERT_EQ(::ste::testing::Git(root_, {"add", "-A"}).exit_code, 0);
    ASSERT_EQ(::ste::testing::Git(root_, {"commit", "-q", "-m", "init"}).exit_code, 0);
  }
  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {"STE_INTEGRATIONS=" + kIntegrations, "PYTHONDONTWRITEBYTECODE="}, root_);
  }
  std::string root_;
};

TEST_F(BatchOutput, TheBatchHasOneLogAndItsFailingTestsShowItsTailOnce) {
  const std::string junit = MakeTempDir() + "/junit.xml";
  Spawned r = Ste({"record", "--progress", "plain", "--junit", junit});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;  // tests failed; the baseline is stored

  // One log, for the batch; none per test.
  const std::string dir = root_ + "/.ste/output/b1";
  std::vector<std::string> entries = Entries(dir);
  ASSERT_EQ(entries.size(), 1u) << ::testing::PrintToString(entries);
  const std::string name = entries[0];
  EXPECT_EQ(name.rfind("%batch-", 0), 0u) << name;
  const std::string log = ReadFile(dir + "/" + name);
  EXPECT_NE(log.find("bad-marker"), std::string::npos) << log;     // pytest's report of the failure
  EXPECT_NE(log.find("2 failed, 1 passed"), std::string::npos) << log;

  // ste record printed none of it but the tail, once.
  const std::string printed = r.out + r.err;
  EXPECT_EQ(printed.find("ok-marker"), std::string::npos) << printed;
  EXPECT_EQ(Count(r.err, "2 failed, 1 passed"), 1u) << r.err;
  const std::string shown = ".ste/output/b1/" + name;
  EXPECT_EQ(Count(r.err, "): the last 20 lines of the batch log " + shown + " ----\n") +
                Count(r.err, "): all "),
            1u)
      << r.err;
  EXPECT_EQ(Count(r.err, "its output is in the batch log shown above (" + shown + ") ----\n"), 1u)
      << r.err;
  for (const char* test : {"tests/test_bad.py", "tests/test_also_bad.py"}) {
    EXPECT_NE(r.out.find(absl::StrCat("  failed ", test, " (exit 1), output in the batch log ", shown, "\n")),
              std::string::npos)
        << r.out;
  }

  // JUnit: the failing tests carry the batch's tail; the passing one none.
  const std::string reader = MakeTempDir() + "/read.py";
  WriteFile(reader,
            "import sys\nimport xml.etree.ElementTree as ET\n"
            "s = ET.parse(sys.argv[1]).getroot().find('testsuite')\n"
            "print(s.get('tests'), s.get('failures'), s.get('errors'))\n"
            "for c in s.findall('testcase'):\n"
            "    o = c.find('system-out')\n"
            "    print(c.get('file'), c.find('failure') is not None,\n"
            "          o is not None and '2 failed, 1 passed' in o.text)\n");
  Spawned py = Spawn({kPython, "-B", reader, junit}, {}, "/");
  ASSERT_EQ(py.exit_code, 0) << py.err << ReadFile(junit);
  EXPECT_EQ(py.out,
            "3 2 0\n"
            "tests/test_also_bad.py True True\n"
            "tests/test_bad.py True True\n"
            "tests/test_ok.py False False\n");
}

}  // namespace
}  // namespace ste
