#include "ste/config.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ste {
namespace {

constexpr char kFull[] = R"(
[tests]
include = ["tests/**/test_*.py"]
exclude = ["tests/slow/**"]
[runner]
command = "python3 -m pytest -q {test}"
jobs = 4
[inventory]
ignore = [".git/**", "build/**"]
external = false
[selection]
run_all = ["ste.toml", ".ci/**"]
skip_all = ["docs/**", "*.md"]
mandatory = ["tests/test_smoke.py"]
[store]
url = "sqlite:.ste/ste.db"
)";

TEST(Config, ParsesEveryKey) {
  auto c = ParseConfig(kFull, "ste.toml", "/repo");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->root, "/repo");
  EXPECT_EQ(c->test_include.patterns(), std::vector<std::string>{"tests/**/test_*.py"});
  EXPECT_EQ(c->test_exclude.patterns(), std::vector<std::string>{"tests/slow/**"});
  EXPECT_EQ(c->jobs, 4);
  EXPECT_FALSE(c->inventory_external);
  std::vector<std::string> ignored = {".git/**", ".ste/**"};
  for (const ToolCache& cache : kToolCaches) ignored.push_back(cache.glob);
  ignored.push_back("build/**");
  EXPECT_EQ(c->inventory_ignore.patterns(), ignored);
  EXPECT_EQ(c->selection.mandatory.patterns(), std::vector<std::string>{"tests/test_smoke.py"});
  EXPECT_EQ(c->SqlitePath(), "/repo/.ste/ste.db");
  EXPECT_EQ(c->CommandFor("tests/test_a.py"), "python3 -m pytest -q tests/test_a.py");
  EXPECT_EQ(c->CommandFor("tests/it's here.py"),
            "python3 -m pytest -q 'tests/it'\\''s here.py'");
}

// Found by tests/fuzz/config: table headers whose key starts with a
// character no key starts with reached an assert() in toml++ 3.3.0 (an
// abort in a build without NDEBUG, such as the sanitizer tree's).
TEST(Config, TableHeaderWithoutAKeyIsAnError) {
  for (const char* text : {"[`runner]\n", "[[[1]]]\n", "[[=\n", "[ {a]\n"}) {
    absl::StatusOr<Config> c = ParseConfig(text, "ste.toml", "/r");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(std::string(c.status().message()).find("ste.toml:1:"), std::string::npos) << text;
  }
}

// Found by tests/fuzz/config: toml++ 3.3.0 reached __builtin_unreachable
// asking whether a non-ASCII character that is no whitespace ("\xc2\xa7",
// U+00A7) is whitespace, here after a line-ending backslash (UBSan in the
// sanitizer tree; undefined behaviour in every build).
TEST(Config, NonAsciiWhereWhitespaceMayStandIsNoWhitespace) {
  absl::StatusOr<Config> c = ParseConfig(
      "[tests]\ninclude = [\"t/*\"]\n[runner]\ncommand = \"\"\"\\\n\xc2\xa7 sh {test}\"\"\"\n",
      "ste.toml", "/r");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->runner_command, "\xc2\xa7 sh {test}");
  absl::StatusOr<Config> bad = ParseConfig("\xc2\xa1 = 1\n", "ste.toml", "/r");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Config, DefaultsAlwaysIgnoreGitAndSte) {
  auto c = ParseConfig("[tests]\ninclude=[\"t/*.sh\"]\n[runner]\ncommand=\"sh {test}\"\n"
                       "[inventory]\nignore=[]\ntool_caches=false\n",
                       "ste.toml", "/r");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->inventory_ignore.patterns(), (std::vector<std::string>{".git/**", ".ste/**"}));
  EXPECT_TRUE(c->inventory_tool_caches.empty());
  EXPECT_EQ(c->jobs, 2);
  EXPECT_TRUE(c->inventory_external);
  EXPECT_EQ(c->runner_python_imports, PythonImports::kNames);
}

TEST(Config, PythonImportsAreNamesOrListing) {
  for (const auto& [value, want] : {std::pair{"names", PythonImports::kNames},
                                    std::pair{"listing", PythonImports::kListing}}) {
    auto c = ParseConfig(absl::StrCat("[tests]\ninclude=[\"t/*.py\"]\n[runner]\nkind=\"pytest\"\n",
                                      "python_imports=\"", value, "\"\n"),
                         "ste.toml", "/r");
    ASSERT_TRUE(c.ok()) << value << ": " << c.status();
    EXPECT_EQ(c->runner_python_imports, want) << value;
  }
  auto bad = ParseConfig("[tests]\ninclude=[\"t/*.py\"]\n[runner]\ncommand=\"x {test}\"\n"
                         "python_imports=\"stat\"\n",
                         "ste.toml", "/r");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message())
                .find("ste.toml:5:16: 'runner.python_imports' must be \"names\" or \"listing\", "
                      "not 'stat'"),
            std::string::npos)
      << bad.status();
}

// granularity: "auto" by default (definitions where a tracker runs);
// "definition" asks for Python's tracker, which "listing" does not start.
TEST(Config, GranularityIsAutoFileOrDefinition) {
  auto parse = [](const std::string& imports, const std::string& granularity) {
    std::string toml = "[tests]\ninclude=[\"t/*.py\"]\n[runner]\nkind=\"pytest\"\n";
    if (!imports.empty()) toml += "python_imports=\"" + imports + "\"\n";
    if (!granularity.empty()) toml += "[selection]\ngranularity=\"" + granularity + "\"\n";
    return ParseConfig(toml, "ste.toml", "/r");
  };
  for (const auto& [imports, granularity, definitions] :
       {std::tuple{"", "", true}, std::tuple{"", "auto", true}, std::tuple{"", "definition", true},
        std::tuple{"", "file", false}, std::tuple{"listing", "", true}, std::tuple{"listing", "file", false}}) {
    auto c = parse(imports, granularity);
    ASSERT_TRUE(c.ok()) << imports << "/" << granularity << ": " << c.status();
    EXPECT_EQ(c->selection_definitions, definitions) << imports << "/" << granularity;
  }
  auto listing = parse("listing", "definition");
  ASSERT_FALSE(listing.ok());
  EXPECT_NE(std::string(listing.status().message()).find("needs 'runner.python_imports' = \"names\""),
            std::string::npos)
      << listing.status();
  auto bad = parse("", "method");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message())
                .find("ste.toml:6:13: 'selection.granularity' must be \"auto\", \"file\" or \"definition\", "
                      "not 'method'"),
            std::string::npos)
      << bad.status();
}

// tests.unit: "file" (the default) or "case", which needs a runner that
// pushes case scopes and can be handed cases, and turns case scopes on.
TEST(Config, TestUnitIsFileOrCaseWithARunnerThatRunsCases) {
  auto config = [](const std::string& unit, const std::string& kind) {
    return ParseConfig(absl::StrCat("[tests]\ninclude=[\"t/*.py\"]\n",
                                    unit.empty() ? "" : "unit=\"" + unit + "\"\n", "[runner]\nkind=\"", kind,
                                    "\"\ncommand=\"x {tests}\"\n"),
                       "ste.toml", "/r");
  };
  for (const char* kind : {"pytest", "unittest", "minitest", "rspec", "ctest"}) {
    auto c = config("case", kind);
    ASSERT_TRUE(c.ok()) << kind << ": " << c.status();
    EXPECT_TRUE(c->selection.cases) << kind;
    EXPECT_TRUE(c->runner_case_scopes) << kind;
    auto f = config("file", kind);
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_FALSE(f->selection.cases);
    auto d = config("", kind);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_FALSE(d->selection.cases);
    EXPECT_FALSE(d->runner_case_scopes);
  }
  for (const char* kind : {"batch"}) {
    auto c = config("case", kind);
    ASSERT_FALSE(c.ok()) << kind;
    EXPECT_NE(std::string(c.status().message())
                  .find(absl::StrCat("ste.toml:3:6: 'tests.unit' = \"case\" needs a runner that can run cases: "
                                     "'runner.kind' \"pytest\", \"unittest\", \"minitest\", \"rspec\" or "
                                     "\"ctest\", not '",
                                     kind, "'")),
              std::string::npos)
        << c.status();
  }
  auto generic = ParseConfig("[tests]\ninclude=[\"t/*.py\"]\nunit=\"case\"\n[runner]\ncommand=\"x {test}\"\n",
                             "ste.toml", "/r");
  EXPECT_FALSE(generic.ok());
  auto bad = config("test", "pytest");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message())
                .find("ste.toml:3:6: 'tests.unit' must be \"file\" or \"case\", not 'test'"),
            std::string::npos)
      << bad.status();
  EXPECT_FALSE(
      ParseConfig("[tests]\ninclude=[\"t/*.py\"]\nunit=1\n[runner]\nkind=\"pytest\"\n", "ste.toml", "/r").ok());
}

TEST(Config, AcceptsAPostgresqlStore) {
  for (const char* url : {"postgresql:///ste?host=/run/postgresql",
                          "postgres://ci@db.example.com:5432/ste"}) {
    auto c = ParseConfig(std::string("[tests]\ninclude=[\"t/*.sh\"]\n[runner]\ncommand=\"sh "
                                     "{test}\"\n[store]\nurl=\"") +
                             url + "\"\n",
                         "ste.toml", "/r");
    ASSERT_TRUE(c.ok()) << url << ": " << c.status();
    EXPECT_EQ(c->store_url, url);
    EXPECT_EQ(c->SqlitePath(), "");
  }
}

// A config with this [inventory] table.
absl::StatusOr<Config> WithInventory(const std::string& inventory) {
  return ParseConfig("[tests]\ninclude=[\"t/*.py\"]\n[runner]\ncommand=\"x {test}\"\n"
                     "[inventory]\n" + inventory,
                     "ste.toml", "/r");
}

// Issue 11: the caches tools write into the tree are ignored by default,
// exactly them: a compiled .pyc counts through its source, a sourceless
// one is code; configuration files beside the caches stay.
TEST(Config, ToolCachesAreIgnoredByDefaultAndOnlyThem) {
  auto c = WithInventory("ignore = [\"build/**\", \"**/__pycache__/**\"]\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->inventory_tool_caches,
            (std::vector<std::string>{"python", "pytest", "mypy", "ruff", "hypothesis", "coverage",
                                      "node"}));
  const GlobSet& ignore = c->inventory_ignore;
  for (const char* cache :
       {"__pycache__", "src/pkg/__pycache__", "src/pkg/__pycache__/mod.cpython-311.pyc",
        "tests/__pycache__/test_a.cpython-311-pytest-7.2.1.pyc", ".pytest_cache",
        ".pytest_cache/v/cache/lastfailed", "sub/.pytest_cache/v/cache/nodeids", ".mypy_cache",
        ".mypy_cache/3.11/pkg/mod.meta.json", ".ruff_cache/0.1.0/123", ".hypothesis/examples/ab/cd",
        ".coverage", "sub/.coverage", ".coverage.host.1234.XyZ", "node_modules/.cache",
        "node_modules/.cache/babel-loader/x.json", "web/node_modules/.cache/terser/1",
        "build/x.o"}) {
    EXPECT_TRUE(ignore.Matches(cache)) << cache;
  }
  for (const char* input :
       {"src/pkg/mod.py", "src/pkg/legacy.pyc", "legacy.pyc", "pycache/x.pyc", ".coveragerc",
        "coverage.py", ".pytest.ini", "pytest.ini", "mypy.ini", "ruff.toml", "node_modules",
        "node_modules/left-pad/index.js", "node_modules/.bin/tsc", "tests/test_hypothesis.py"}) {
    EXPECT_FALSE(ignore.Matches(input)) << input;
  }
  // The user's own glob that is also a default is there once.
  std::vector<std::string> patterns = ignore.patterns();
  EXPECT_EQ(std::count(patterns.begin(), patterns.end(), "**/__pycache__/**"), 1);
  EXPECT_EQ(patterns.back(), "build/**");
}

TEST(Config, ToolCachesCanBeTurnedOffOrTrimmed) {
  auto off = WithInventory("tool_caches = false\nignore = [\"build/**\"]\n");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->inventory_ignore.patterns(),
            (std::vector<std::string>{".git/**", ".ste/**", "build/**"}));
  EXPECT_FALSE(off->inventory_ignore.Matches(".pytest_cache/v/cache/lastfailed"));
  auto on = WithInventory("tool_caches = true\n");
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_TRUE(on->inventory_ignore.Matches(".pytest_cache/v/cache/lastfailed"));
  // A suite whose runner.command uses --lf keeps lastfailed a dependency.
  auto trimmed = WithInventory("tool_caches = [\"coverage\", \"python\"]\n");
  ASSERT_TRUE(trimmed.ok()) << trimmed.status();
  EXPECT_EQ(trimmed->inventory_tool_caches, (std::vector<std::string>{"python", "coverage"}));
  EXPECT_EQ(trimmed->inventory_ignore.patterns(),
            (std::vector<std::string>{".git/**", ".ste/**", "**/__pycache__/**", ".coverage",
                                      ".coverage.*"}));
  EXPECT_FALSE(trimmed->inventory_ignore.Matches(".pytest_cache/v/cache/lastfailed"));
  auto none = WithInventory("tool_caches = []\n");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->inventory_tool_caches.empty());
}

struct BadCase {
  const char* text;
  const char* message;  // expected substring, incl. the line
};

TEST(Config, ErrorsNameTheKeyAndTheLine) {
  const BadCase cases[] = {
      {"[tests]\ninclude=[\"a\"]\n[runner]\ncomand=\"x {test}\"\n",
       "ste.toml:4:1: unknown key 'runner.comand'"},
      {"[tests]\ninclude=[\"a\"]\n[runner]\ncommand=\"x\"\n",
       "ste.toml:4:9: 'runner.command' must contain {test}"},
      {"[tests]\ninclude=\"a\"\n[runner]\ncommand=\"x {test}\"\n",
       "ste.toml:2:9: 'tests.include' must be an array"},
      {"[tests]\ninclude=[\"a\"]\n[runner]\ncommand=\"x {test}\"\njobs=\"2\"\n",
       "ste.toml:5:6: 'runner.jobs' must be an integer"},
      {"[tests]\ninclude=[\"a\"]\n[runner]\ncommand=\"x {test}\"\njobs=0\n",
       "ste.toml:5:6: 'runner.jobs' must be between 1 and 1024"},
      {"[tests]\ninclude=[\"a[\"]\n[runner]\ncommand=\"x {test}\"\n",
       "ste.toml:2:10: 'tests.include': bad glob 'a['"},
      {"[tests]\ninclude=[\"a\"]\n[runnr]\n", "ste.toml:3:2: unknown table 'runnr'"},
      {"[tests]\ninclude=[\"a\"]\n", "ste.toml: missing key 'runner.command'"},
      {"[tests\n", "ste.toml:1:"},
      {"[tests]\ninclude=[\"a\"]\n[runner]\ncommand=\"x {test}\"\n[store]\nurl=\"mysql://x\"\n",
       "ste.toml:6:5: 'store.url' must be sqlite:PATH or postgresql://"},
      {"[tests]\ninclude=[\"a\"]\n[runner]\ncommand=\"x {test}\"\n[store]\nurl=\"sqlite:\"\n",
       "ste.toml:6:5: 'store.url' must be sqlite:PATH"},
      {"[tests]\ninclude=[\"a\"]\n[runner]\ncommand=\"x {test}\"\n[store]\nurl=\"postgresql:x\"\n",
       "ste.toml:6:5: 'store.url' must be sqlite:PATH or postgresql://"},
      {"[tests]\ninclude=[\"a\"]\n[runner]\ncommand=\"x {test}\"\n[inventory]\n"
       "tool_caches=[\"pytest\", \"tox\"]\n",
       "ste.toml:6:24: 'inventory.tool_caches': unknown name 'tox' (known: python, pytest, mypy, "
       "ruff, hypothesis, coverage, node)"},
      {"[tests]\ninclude=[\"a\"]\n[runner]\ncommand=\"x {test}\"\n[inventory]\n"
       "tool_caches=\"pytest\"\n",
       "ste.toml:6:13: 'inventory.tool_caches' must be true, false or an array of names"},
      {"[tests]\ninclude=[\"a\"]\n[runner]\ncommand=\"x {test}\"\n[inventory]\n"
       "tool_caches=[1]\n",
       "ste.toml:6:14: 'inventory.tool_caches': names are strings"},
  };
  for (const BadCase& bad : cases) {
    auto c = ParseConfig(bad.text, "ste.toml", "/r");
    ASSERT_FALSE(c.ok()) << bad.text;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(c.status().message()).find(bad.message), std::string::npos)
        << "got: " << c.status().message() << "\nwant: " << bad.message;
  }
}

TEST(Config, ShellQuote) {
  EXPECT_EQ(ShellQuote("tests/a_b-1.py"), "tests/a_b-1.py");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("$(rm -rf /)"), "'$(rm -rf /)'");
  EXPECT_EQ(ShellQuote(""), "''");
}

}  // namespace
}  // namespace ste
