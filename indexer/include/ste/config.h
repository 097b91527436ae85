// ste.toml: the one configuration file, at the repository root.
//
//   [tests]      include = ["tests/**/test_*.py"]   globs of test files
//                exclude = []
//                unit = "file"      what is selected: "file", or "case" (a
//                                   pytest, unittest, minitest or rspec
//                                   runner: the cases of a file whose own
//                                   part alone changed,
//                                   docs/concepts.md "Test cases"; turns
//                                   runner.case_scopes on)
//   [runner]     kind = "generic"    or a batch runner (integrations/README.md):
//                          "pytest", "unittest", "minitest", "rspec", or
//                          "batch" (any runner speaking the protocol), or
//                          "ctest" (what each does: runner_kind.h)
//                command = "python3 -m pytest -q {test}"   generic: {test}
//                          is the repo-relative test path, shell-quoted;
//                          batch kinds: {tests} is the batch's paths
//                          (optional: each kind has a default command)
//                jobs = 2            tests at a time (batch kinds: children
//                                    of the runner at a time, STE_JOBS)
//                batch = 100         batch kinds: test files per runner
//                preload = []        batch kinds: files the runner loads in
//                                    the root scope first (STE_PRELOAD)
//                case_scopes = false batch kinds: a scope per test case
//                private_tmp = true  each test (a batch: each runner) gets
//                                    an empty $TMPDIR of its own, removed
//                                    after it; what it does there is its
//                                    own output, not a dependency (false:
//                                    the inherited one, recorded as any)
//                retries = 0         a test that does not pass in a record
//                                    runs again, up to this many times (0 to
//                                    10): one that then passes is recorded
//                                    as passed and flaky, with the
//                                    dependencies of every run
//                build_dir = "build" ctest: the build tree (relative to the
//                                    root); tests.include filters test names
//                                    there (default: every test)
//                python_imports = "names"   how the imports of a test's Python
//                          processes are recorded: "names" (the default) puts
//                          integrations/python/ste_site first on PYTHONPATH,
//                          whose sitecustomize looks each module up by name
//                          (a stat per candidate: a new file selects only the
//                          tests that looked for its name there); "listing"
//                          leaves CPython's finder, which lists every sys.path
//                          directory (a new file anywhere there selects every
//                          test that imported through it). Any kind.
//   [inventory]  ignore = [".git/**", ".ste/**"]
//                tool_caches = true  ignore the caches tools write into the
//                                  tree (kToolCaches below); false: none of
//                                  them; or a list of their names, e.g.
//                                  ["python", "mypy"]: only those
//                external = true   hash files outside the repo tests read
//   [selection]  run_all = ["ste.toml", ".ci/**"]   a change here => all
//                skip_all = ["docs/**", "*.md"]     only these => none
//                mandatory = []                     always selected
//                force_tags = true   [test all] / [no filter] in a commit
//                                    message of the change => all
//                env_ignore = []     environment variables (globs over
//                                    names) whose reads are no dependency,
//                                    added to ste's list of per-run CI
//                                    variables (environment.h,
//                                    kDefaultEnvIgnore)
//                env_ignore_defaults = true   false: that list is not added
//                env_run_all = []    environment variables whose change
//                                    selects all (what shells and libc
//                                    read unseen: docs/concepts.md)
//                granularity = "auto"   a changed Python or Ruby method
//                                    selects the tests that ran it, not
//                                    every test that loaded its file, in
//                                    the processes a definition tracker
//                                    follows (docs/concepts.md,
//                                    "Definitions"), file level elsewhere;
//                                    "definition": the same, and an error
//                                    unless runner.python_imports = "names"
//                                    (Python's tracker); "file": every
//                                    change of a file selects its readers
//   [store]      url = "sqlite:.ste/ste.db"          relative to the root,
//                   or "postgresql://host/db?..."    a shared PostgreSQL
//                                     store (a libpq URI; postgres:// too)
//
// Every key is optional except tests.include and runner.command. ".git/**"
// and ".ste/**" are always ignored by the inventory, whatever `ignore`
// says (git's own files and ste's store change on every build); so are the
// tool caches tool_caches names, and `ignore` adds to all of these. Unknown
// tables or keys, wrong types, bad globs, an unknown tool cache and a
// command without {test} are errors that name the key and its line.
#ifndef STE_CONFIG_H_
#define STE_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/glob.h"
#include "ste/runner_kind.h"

namespace ste {

// The caches tools write into the tree as they run, each a glob of the
// inventory's ignore list ([inventory] tool_caches names them; several
// entries may share a name). Running the suite plainly, as developers do
// between commits, writes them; were they inventoried, the next selection
// would see them change and select every test that looked for them.
//
// An ignored path is invisible: not inventoried, not in its directory's
// listing, and dropped from what tests are recorded to depend on. So a test
// that *reads* one of these does not depend on it: each entry says what a
// read can still mean for an outcome. When that matters to a suite, leave
// the entry out (tool_caches = [the others]) and the cache is a dependency
// like any file (then a plain run that rewrites it selects its readers).
struct ToolCache {
  const char* name;  // as written in tool_caches
  const char* glob;  // glob.h; matches the cache directory itself too
};
inline constexpr ToolCache kToolCaches[] = {
    // CPython's bytecode cache (PEP 3147) and pytest's rewritten test
    // modules (*-pytest-X.Y.pyc): a __pycache__/*.pyc is used only when
    // the source beside __pycache__ exists and matches it (mtime and size,
    // or its hash), so it counts through its .py. A sourceless foo.pyc
    // (not in __pycache__) is imported as code and stays a dependency.
    {"python", "**/__pycache__/**"},
    // pytest's cacheprovider: v/cache/lastfailed, nodeids, stepwise. Every
    // run reads and writes some of them; only --lf, --ff, --nf, --sw
    // (--stepwise) and plugins using config.cache let them change what runs.
    {"pytest", "**/.pytest_cache/**"},
    // mypy's incremental cache: entries are checked against the sources'
    // hashes (and mypy's version and options) before use.
    {"mypy", "**/.mypy_cache/**"},
    // ruff's cache: results keyed by each file's content and the settings.
    {"ruff", "**/.ruff_cache/**"},
    // Hypothesis' example database (and its unicode tables): a test's
    // saved failing examples are replayed first, so a failure a plain run
    // found fails the test's next run too. Its documentation: "a cache...
    // you shouldn't rely on it for correctness".
    {"hypothesis", "**/.hypothesis/**"},
    // coverage.py's data file and its parallel-mode ones
    // (.coverage.<host>.<pid>.<random>); not .coveragerc (configuration).
    // Read by `coverage combine` / `report` and by runs that append
    // (coverage run -a, pytest --cov-append: a fail-under total then
    // includes what earlier runs measured).
    {"coverage", ".coverage"},
    {"coverage", ".coverage.*"},
    // babel-loader, eslint-webpack-plugin, terser and other build tools'
    // caches (find-cache-dir), keyed by their inputs' content and options.
    {"node", "**/node_modules/.cache/**"},
};

// What the selection guardrails read of ste.toml (rules 2b-5 of
// selection.h), compiled once.
struct SelectionRules {
  GlobSet run_all;    // a change here => all
  GlobSet skip_all;   // only changes here => none
  GlobSet mandatory;  // always selected
  // The configuration file, repo-relative ("ste.toml"): a change to it
  // selects all. "" when there is none to watch.
  std::string config_file;
  // Honour force tags ("[test all]", "[no filter]") in the commit messages
  // of the change. false: they are not read, so a history that cannot be
  // read (a shallow clone) is no reason for all either.
  bool force_tags = true;
  // Environment variables (environment.h), globs over names: a read of one
  // env_ignore names is no dependency (its default list unless
  // env_ignore_defaults = false, then what ste.toml adds); a change of one
  // env_run_all names selects all.
  GlobSet env_ignore;
  GlobSet env_run_all;
  // tests.unit = "case": a test file whose changes all fall in the own
  // parts of some of its cases is selected as those cases
  // (SelectedTest::cases, case_split.h).
  bool cases = false;
};

// runner.python_imports (see the top).
enum class PythonImports { kNames, kListing };

// A parsed ste.toml: every value typed, every glob compiled.
struct Config {
  std::string root;         // absolute directory holding ste.toml
  std::string config_path;  // absolute path of ste.toml
  GlobSet test_include;
  GlobSet test_exclude;
  RunnerKind runner_kind = RunnerKind::kGeneric;
  std::string runner_command;
  int jobs = 2;
  int runner_batch = 100;
  std::vector<std::string> runner_preload;
  bool runner_case_scopes = false;
  std::string runner_build_dir = "build";  // ctest: the CMake build tree
  bool runner_private_tmp = true;  // each test's own empty $TMPDIR
  // runner.retries: a test that does not pass in a record runs again up to
  // this many times; one that then passes is flaky (TestRecord::flaky).
  int runner_retries = 0;
  PythonImports runner_python_imports = PythonImports::kNames;
  GlobSet inventory_ignore;  // incl. .git/**, .ste/** and the tool caches
  // The kToolCaches names in effect, in kToolCaches order.
  std::vector<std::string> inventory_tool_caches;
  bool inventory_external = true;
  SelectionRules selection;
  // selection.granularity = "auto" (ste.toml's default) or "definition":
  // the Python and Ruby processes of a test record the definitions they ran
  // (integrations/python/ste_site/ste_defs.py, integrations/ruby/ste_defs.rb).
  // A Config made in code is file level unless it says.
  bool selection_definitions = false;
  std::string store_url = "sqlite:.ste/ste.db";

  // The runner command for one test: {test} replaced by the shell-quoted
  // repo-relative path (ctest: the test's name), {test_regex} by a
  // shell-quoted regex matching exactly it, {build_dir} by the
  // shell-quoted runner.build_dir.
  std::string CommandFor(std::string_view test_path) const;
  // A batch runner (see runner_kind.h)?
  bool batch_runner() const { return IsBatchRunner(runner_kind); }
  // The batch runner command: {tests} replaced by the shell-quoted paths.
  std::string CommandForBatch(const std::vector<std::string>& tests) const;
  // The SQLite file for a "sqlite:PATH" store (PATH relative to root); ""
  // for a PostgreSQL store.
  std::string SqlitePath() const;
  // runner.build_dir as an absolute path.
  std::string BuildDir() const;
};

// Parses the text of a ste.toml. `name` is used in messages; `root` is
// stored as Config::root ("" when the text comes from elsewhere, e.g. a
// scheduler answering a client's select: then no path is derived from it).
// selection.config_file is `name`'s last component. InvalidArgument on any problem, e.g.
//   "ste.toml:4:1: unknown key 'runner.comand'".
absl::StatusOr<Config> ParseConfig(std::string_view text,
                                   const std::string& name,
                                   const std::string& root);

// Reads `path` (a ste.toml) and parses it with its directory as the root.
absl::StatusOr<Config> LoadConfig(const std::string& path);

// Looks for ste.toml in `start` and its parents. NotFound (with a hint on
// how to write one) if there is none.
absl::StatusOr<std::string> FindConfig(const std::string& start);

// What a minimal ste.toml looks like, for hints and `ste --help`.
extern const char kExampleConfig[];

// `name` with the extended-regex metacharacters escaped; RegexExactly
// anchors it (^...$) to match exactly `name`.
std::string RegexEscape(std::string_view name);
std::string RegexExactly(std::string_view name);

// POSIX shell single-quoting: abc -> abc, a b -> 'a b', it's -> 'it'\''s'.
std::string ShellQuote(std::string_view s);

}  // namespace ste

#endif  // STE_CONFIG_H_
