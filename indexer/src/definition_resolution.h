// Definition resolution (internal to log_reduction.cc): what the
// definition tracker (definitions.h) said in each process of a run, and
// how ReduceLogs turns it into definition dependencies. Pure: reads files
// only through the DefinitionCache of the policy.
#ifndef STE_DEFINITION_RESOLUTION_H_
#define STE_DEFINITION_RESOLUTION_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ste/dependency.h"
#include "ste/log_reduction.h"

namespace ste {

// What the definition tracker said in one process.
struct ProcessCode {
  bool begin = false;  // an account was opened
  bool end = false;    // ... and the last one was closed (records come in order)
  std::vector<std::string> scopes;  // where it recorded anything, in order of first use
  // scope -> abs file -> first lines of the code objects that ran
  std::map<std::string, std::map<std::string, std::set<uint32_t>>> lines;
  std::set<std::string> data;  // abs files read as data
  std::map<std::string, std::set<std::string>> data_in;  // scope -> those read there
  bool v2 = false;  // its tracker makes the records below
  // scope -> abs file -> the lines of the classes and units whose docstring was used
  std::map<std::string, std::map<std::string, std::set<uint32_t>>> docs;
  // scope -> abs files whose docstrings it watched, loaded there
  std::map<std::string, std::set<std::string>> docs_tracked;
  // scope -> abs file -> the top-level names of it that code named
  std::map<std::string, std::map<std::string, std::set<std::string>>> names;
  std::map<std::string, std::set<std::string>> namespaces;  // scope -> abs files
  bool v3 = false;  // its tracker makes the two records below
  // scope -> abs file -> names looked up on its module and not found
  std::map<std::string, std::map<std::string, std::set<std::string>>> absent;
  std::map<std::string, std::set<std::string>> stars;  // scope -> abs files star-imported
  // scope -> abs file -> lines shown as frames' places (a warning's, a log record's)
  std::map<std::string, std::map<std::string, std::set<uint32_t>>> shown_lines;
  std::set<std::string> positions;   // scopes where frames' lines were read
  std::set<std::string> code_lines;  // scopes where code objects' lines were read
  std::string slow;  // why it tracked with the slow fallback tracer ("": it did not)
  bool refs_tracked = false;  // its tracker makes the ref records below
  std::map<std::string, std::set<std::string>> refs;  // scope -> last names code named ("*": any)

  // Takes `r` if it is one of the tracker's records (a marker, code ran,
  // a file read as data, the slow tracer's note): true, and it is no
  // dependency itself.
  bool Take(const LogRecord& r);
  // Take's part for "/\x01ste-defs-slow:<pid>:<why>" (sets `slow`).
  bool TakeSlowTracker(const LogRecord& r);
  // Notes that the process recorded something in `scope`.
  void Touch(const std::string& scope);
};

// Which processes (indexes into the ProcessCode vector) recorded each repo
// file's content in each scope: scope -> repo-relative path -> processes.
using ContentRecorders = std::map<std::string, std::map<std::string, std::set<size_t>>>;

// Definition granularity (definitions.h, docs/concepts.md "Definitions"):
// in each scope, the content dependency on a repo file F becomes F's
// module-level view when every process that recorded it there was tracked
// from start to end, ran code of F, and did not read F as data; the code
// each process ran becomes dependencies on the definitions holding it (and
// on F's module-level code), in the scope it ran in. A tracked process
// that did not end its account taints the scopes it recorded in (a forked
// child: those past the one it was forked in): their tests fall back to
// file level (ApplyDefinitionFallback). A file read as data is a content
// dependency of the scope it was read in. A whole account's record of a
// file it did not run nor read as data is an existence check (a stat): F's
// module view stands for it there.
// The finer parts (definitions.h, "Views"): a unit's place where the scope
// read frames' lines (the units that ran there or in an enclosing scope) or code objects' lines
// (every unit of the files it loaded, here or in an enclosing scope); a
// docstring where it was used; a constant where code named it, or all of a
// file's where its namespace was used by string. A process whose tracker
// does not say (no `v2` marker) depends on the places of the units it ran
// and on every docstring and constant of their files; a v2 process, on all
// docstrings of a file no process watched where it loaded it, in the
// scope or an enclosing one (a forked child runs what its parent loaded).
// Which names a file binds ("F/\x01ste-names"): where its namespace was
// read by string or star-imported, and, for a process whose tracker does
// not make the absent and star records (no `v3` marker), for every file
// it ran code of; a name looked up and not found: "F/\x01ste-absent:<n>".
// Requires: policy.definitions != nullptr.
void ResolveDefinitions(const std::vector<ProcessCode>& code, const ContentRecorders& content_by,
                        const PathPolicy& policy, std::map<std::string, std::set<DepKey>>* by_scope,
                        TestDependencies* out);

// out->slow_trackers: how many of the processes tracked with the slow
// fallback tracer, by why.
void CountSlowTrackers(const std::vector<ProcessCode>& code, TestDependencies* out);

}  // namespace ste

#endif  // STE_DEFINITION_RESOLUTION_H_
