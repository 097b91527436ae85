// End-to-end: `--format` on every command that prints data (cli/invocation.h,
// cli/output_format.h), on a real recorded repository. JSON is parsed by
// Python's json module, not searched: `why` and `deps` print JSON; `--json`
// is `--format json` byte for byte; every JSON output carries
// "version": 1; a bad --format is exit 2 naming the allowed values.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);

class CliFormat : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    WriteFile(root_ + "/lib/a.sh", "a() { echo A; }\n");
    WriteFile(root_ + "/lib/b.sh", "b() { echo B; }\n");
    WriteFile(root_ + "/tests/test_a.sh", ". lib/a.sh\n[ \"$(a)\" = A ]\n");
    WriteFile(root_ + "/tests/test_b.sh",
              ". lib/b.sh\n[ \"$(b)\" = B ] || exit 1\n[ -f config/local.env ] && . "
              "config/local.env\nexit 0\n");
    WriteFile(root_ + "/ste.toml",
              "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
    ::ste::testing::InitGitRepo(root_);
    ASSERT_EQ(::ste::testing::Git(root_, {"add", "-A"}).exit_code, 0);
    ASSERT_EQ(::ste::testing::Git(root_, {"commit", "-q", "-m", "init"}).exit_code, 0);
    Spawned r = Ste({"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, root_);
  }

  // Parses `json` (one document, or with `lines` one per line) with Python
  // and prints `expr` of it (`d`: the document, or the list of lines').
  std::string Py(const std::string& json, const std::string& expr, bool lines = false) {
    const std::string file = MakeTempDir() + "/out.json";
    WriteFile(file, json);
    const std::string load = lines ? "d = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]"
                                   : "d = json.load(open(sys.argv[1]))";
    Spawned py = Spawn({"/usr/bin/python3", "-c",
                        "import json, sys\n" + load + "\nprint(" + expr + ")", file});
    EXPECT_EQ(py.exit_code, 0) << py.err << "\n" << json;
    return py.out;
  }

  std::string root_;
};

TEST_F(CliFormat, WhyPrintsJson) {
  Spawned text = Ste({"why", "lib/a.sh"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out, "content\ttests/test_a.sh\n");
  Spawned json = Ste({"why", "--format", "json", "lib/a.sh"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(Py(json.out, "d['version'], d['path'], [(t['test'], t['kind']) for t in d['tests']]"),
            "1 lib/a.sh [('tests/test_a.sh', 'content')]\n");
  // An absent file a test looked for.
  Spawned absent = Ste({"why", "--format=json", "config/local.env"});
  ASSERT_EQ(absent.exit_code, 0) << absent.err;
  EXPECT_EQ(Py(absent.out, "[(t['test'], t['kind']) for t in d['tests']]"),
            "[('tests/test_b.sh', 'absent')]\n");
  // No test depends on it: an empty list, still exit 0.
  Spawned none = Ste({"why", "--format", "json", "ste.toml"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(Py(none.out, "d['tests']"), "[]\n");
}

TEST_F(CliFormat, DepsPrintsJson) {
  Spawned json = Ste({"deps", "--format", "json", "tests/test_b.sh"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(Py(json.out, "d['version'], d['test'], d['baseline'], d['opaque']"),
            "1 tests/test_b.sh 1 False\n");
  EXPECT_EQ(Py(json.out, "('content', 'lib/b.sh') in [(x['kind'], x['path']) for x in d['deps']]"),
            "True\n");
  EXPECT_EQ(Py(json.out, "('absent', 'config/local.env') in [(x['kind'], x['path']) for x in "
                         "d['deps']]"),
            "True\n");
  // The text and the json name the same dependencies.
  Spawned text = Ste({"deps", "tests/test_b.sh"});
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_EQ(Py(json.out, "''.join(x['kind'] + '\\t' + x['path'] + '\\n' for x in d['deps'])"),
            text.out + "\n");
  EXPECT_EQ(Ste({"deps", "--format", "json", "tests/nope.sh"}).exit_code, 1);
}

TEST_F(CliFormat, JsonIsAnAliasOfFormatJsonAndEveryJsonHasAVersion) {
  WriteFile(root_ + "/lib/a.sh", "a() { echo A; }\n# changed\n");
  struct Case {
    std::vector<std::string> args;  // without the format
    bool lines;                     // one JSON object per line
  };
  const Case cases[] = {
      {{"select"}, false},
      {{"why", "lib/a.sh"}, false},
      {{"deps", "tests/test_a.sh"}, false},
      {{"baseline", "list"}, false},
      {{"index", "dump"}, true},
      {{"inventory"}, true},
      {{"inventory", "--diff", "baseline"}, true},
  };
  for (const Case& c : cases) {
    const std::string name = c.args[0] + (c.args.size() > 1 ? " " + c.args[1] : "");
    SCOPED_TRACE(name);
    std::vector<std::string> format = c.args, alias = c.args;
    format.insert(format.end(), {"--format", "json"});
    alias.push_back("--json");
    Spawned a = Ste(format);
    Spawned b = Ste(alias);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    if (name != "baseline list") {
      EXPECT_EQ(a.out, b.out);
    } else {  // the same but for the ages, in seconds
      const std::string ageless =
          "[{k: v for k, v in x.items() if k != 'age_seconds'} for x in d['baselines']]";
      EXPECT_EQ(Py(a.out, ageless), Py(b.out, ageless));
    }
    ASSERT_FALSE(a.out.empty());
    const std::string versions =
        c.lines ? Py(a.out, "(sorted(set(x['version'] for x in d)), len(d) > 0)", true)
                : Py(a.out, "[d['version']]");
    EXPECT_TRUE(absl::StartsWith(versions, c.lines ? "([1]" : "[1]")) << versions;
    if (c.lines) {
      EXPECT_EQ(versions, "([1], True)\n");
    }
  }
  // ste log dump: the records of a traced run.
  const std::string logs = MakeTempDir();
  ASSERT_EQ(Ste({"run", "--log-dir", logs, "--", "/bin/cat", root_ + "/lib/a.sh"}).exit_code, 0);
  Spawned a = Ste({"log", "dump", "--format", "json", logs});
  Spawned b = Ste({"log", "dump", "--json", logs});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(Py(a.out, "(sorted(set(x['version'] for x in d)), len(d) > 0)", true), "([1], True)\n");
  // --json and another --format contradict each other.
  Spawned both = Ste({"why", "--json", "--format", "text", "lib/a.sh"});
  EXPECT_EQ(both.exit_code, 2);
  // --json with --format json is fine.
  EXPECT_EQ(Ste({"why", "--json", "--format", "json", "lib/a.sh"}).exit_code, 0);
}

TEST_F(CliFormat, ABadFormatIsExit2NamingTheAllowedValues) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"why", "--format", "xml", "lib/a.sh"}, "ste why: --format is text or json, not 'xml'"},
      {{"deps", "--format", "yaml", "tests/test_a.sh"}, "ste deps: --format is text or json, not 'yaml'"},
      {{"select", "--format", "xml"},
       "ste select: --format is text, json, github, runner, matrix or gtest-filter, not 'xml'"},
      {{"index", "dump", "--format", "text"}, "ste index dump: --format is json, not 'text'"},
      {{"inventory", "--format", "csv"}, "ste inventory: --format is text or json, not 'csv'"},
      {{"baseline", "list", "--format", "xml"},
       "ste baseline list: --format is text or json, not 'xml'"},
      {{"log", "dump", "--format", "github", "/nonexistent"},
       "ste log dump: --format is text or json, not 'github'"},
      {{"select", "--format", "gtest-filter"},
       "ste select: --format gtest-filter is for runner.kind = \"ctest\" (GoogleTest cases)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0]);
    Spawned s = Ste(c.args);
    EXPECT_EQ(s.exit_code, 2) << s.err;
    EXPECT_TRUE(absl::StrContains(s.err, c.message)) << s.err;
    EXPECT_EQ(s.out, "");
  }
}

TEST_F(CliFormat, HelpNamesFormatAndJson) {
  for (std::vector<std::string> cmd :
       {std::vector<std::string>{"select"}, {"why"}, {"deps"}, {"inventory"}, {"index", "dump"},
        {"baseline", "list"}, {"log", "dump"}}) {
    SCOPED_TRACE(cmd[0]);
    cmd.push_back("--help");
    Spawned help = Ste(cmd);
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_TRUE(absl::StrContains(help.out, "--format ")) << help.out;
    EXPECT_TRUE(absl::StrContains(help.out, "--json ")) << help.out;
    EXPECT_TRUE(absl::StrContains(help.out, "the same as --format json")) << help.out;
  }
}

}  // namespace
}  // namespace ste
