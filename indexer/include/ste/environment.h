// Environment variables as dependencies (docs/concepts.md, "Environment
// variables").
//
// A process of a test that reads a variable — getenv or secure_getenv in any
// program (C, C++, Ruby's ENV[], Node's process.env, Python's own start-up),
// os.environ / os.getenv in Python (the startup hook, ste_names.py) — records
// a stat of "/\x01ste-env:<escaped name>", which never exists (an `absent`
// record). ReduceLogs turns it into a `content` dependency on that view path
// of "/" (inventory.h, "Views"), unless selection.env_ignore names it. The
// view's entry holds XXH3-128 of the variable's name and value (never the
// value), or kMissing when it is unset, in the environment the inventory is
// computed in: ste record's (a worker's, for the tests it ran), and at
// select time ste select's own, or the file `--env-file` names. A changed
// value is then a changed view, which selects the tests that read it.
//
// The escaped name: every byte as is, except '%' -> "%25" and '/' -> "%2F"
// (a view's name holds no '/'). A name is non-empty and holds no '=' or NUL.
//
// Not seen, and written down in docs/concepts.md: what a program reads from
// `environ` itself (shells copy their environment at start-up; `env`), what
// glibc reads inside itself (setlocale's LANG and LC_*, tzset's TZ), the
// dynamic loader's LD_* variables, a Python process's reads before ste's
// startup hook ran (site.py's own), and STE_* variables (ste's, never
// recorded). selection.env_run_all covers those: a change of one of its
// variables selects every test.
#ifndef STE_ENVIRONMENT_H_
#define STE_ENVIRONMENT_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/glob.h"

namespace ste {

// The view name of variable `name` ("ste-env:" and the escaped name), and
// the view path "/\x01ste-env:<escaped>".
std::string EnvViewName(std::string_view name);
std::string EnvViewPath(std::string_view name);
// The variable a view name's part after "ste-env:" names; nullopt for a
// malformed escape, an empty name, or one holding '=' or a NUL byte.
std::optional<std::string> UnescapeEnvName(std::string_view escaped);
// True iff `path` is an environment view path ("/\x01ste-env:...").
bool IsEnvViewPath(std::string_view path);

// A set of variables and their values: the process's own, or a file's.
class Environment {
 public:
  Environment() = default;  // no variable set

  // This process's environment (environ) as it is now. An entry without
  // '=' is skipped; for a name set twice, the first (as getenv).
  static Environment OfProcess();

  // The `--env-file` format, either of:
  //   - `env -0`'s output: NAME=VALUE entries, each ended by a NUL byte
  //     (chosen when the bytes hold a NUL);
  //   - lines NAME=VALUE, split at the first '=', ended by '\n' (the last
  //     may lack it); a line that is empty or starts with '#' is skipped.
  //     Values are bytes as written: no quotes, no escapes, no expansion,
  //     a '\r' before the '\n' is part of the value.
  // Every variable not named is unset. InvalidArgument naming `name` and the
  // line (or entry) for an entry without '=', an empty name, or a name
  // given twice.
  static absl::StatusOr<Environment> Parse(std::string_view bytes, std::string_view name);
  // Parse of the file's bytes; an unreadable file is InvalidArgument naming
  // it and why.
  static absl::StatusOr<Environment> ReadFile(const std::string& path);

  // The value of `name`, or nullopt when it is unset.
  std::optional<std::string_view> Get(std::string_view name) const;
  // The names set, sorted.
  std::vector<std::string> Names() const;
  void Set(std::string name, std::string value) { values_[std::move(name)] = std::move(value); }

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

// The view paths of the variables set in `env` that `env_run_all` names
// (selection.env_run_all), sorted: what a record adds to its inventory and a
// select to what it compares, so that one set, unset or changed since the
// baseline selects all.
std::vector<std::string> EnvRunAllViews(const GlobSet& env_run_all, const Environment& env);

// selection.env_ignore's default (added to what ste.toml lists unless
// selection.env_ignore_defaults = false): the variables CI systems set
// differently on every run (run and job ids, commit SHAs, refs, timestamps,
// tokens, per-run paths) and the shell's bookkeeping (PWD, OLDPWD, SHLVL, _).
// Globs (glob.h) over names.
extern const std::vector<std::string> kDefaultEnvIgnore;

}  // namespace ste

#endif  // STE_ENVIRONMENT_H_
