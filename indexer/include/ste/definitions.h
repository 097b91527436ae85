// Definition-level dependencies (docs/concepts.md, "Definitions"): a test
// that ran one function of a Python or Ruby file depends on that function
// and on the file's module-level code, not on every byte of the file.
//
// Records (made by integrations/python/ste_site/ste_defs.py in a test's
// Python processes and integrations/ruby/ste_defs.rb in its Ruby ones, as
// stats of paths that never exist):
//   "<abs file>/\x01ste-code:<line>"  a code object of <file> starting at
//                                     <line> ran
//   "<abs file>/\x01ste-data"         <file> was read as data
//   "<abs file>/\x01ste-doc:<line>"   the docstring of <file>'s class or
//                                     unit starting at <line> (0: the
//                                     module's) was used
//   "<abs file>/\x01ste-docs-tracked" <file>'s docstrings are watched in
//                                     this process (without it, code of
//                                     <file> that ran depends on all of
//                                     its docstrings)
//   "<abs file>/\x01ste-name:<name>"  code that ran names <name>, which
//                                     <file> binds at its top level (Ruby:
//                                     in a class or module body too,
//                                     "Rack::Mime::MIME_TYPES"; and, format
//                                     10, a method <file> defines, "area":
//                                     the parameters of each unit of that
//                                     method name, RubyMethodName)
//   "<abs file>/\x01ste-namespace"    <file>'s namespace was used by string
//                                     (dir, vars, __dict__; Ruby: the
//                                     tracker's doubt): all of its
//                                     constants, and which names it binds
//   "<abs file>/\x01ste-absent:<name>" <name> was looked up on <file>'s
//                                     module and not found (`hasattr`,
//                                     `getattr(m, n, d)`, `from m import n`
//                                     in a try), or code that ran imported
//                                     it (`from m import n`, found): whether
//                                     <file> binds it
//   "<abs file>/\x01ste-star"         `from <file's module> import *` copied
//                                     its namespace (no `__all__`): which
//                                     names it binds
//   "/\x01ste-defs-begin:<pid>"       the process is tracked from here on
//                                     (at its start, after a fork, after a
//                                     scope push)
//   "/\x01ste-defs-end:<pid>"         all it ran is accounted for (until a
//                                     later `begin`: an exec that failed)
//   "/\x01ste-defs-v2:<pid>"          the process's tracker makes the doc,
//                                     name and positions records (without
//                                     it: every docstring, constant and
//                                     place of what it ran)
//   "/\x01ste-defs-v3:<pid>"          the process's tracker makes the absent
//                                     and star records (without it: which
//                                     names each file it ran binds)
//   "/\x01ste-positions:<pid>.<n>"    code that ran in this scope read line
//                                     numbers of frames (tracebacks,
//                                     warnings, log records): the units
//                                     that ran there are dependencies with
//                                     their place
//   "<abs file>/\x01ste-line:<line>" a line of <file> was read as a
//                                     frame's place (a warning's location,
//                                     a log record's caller, a frame of a
//                                     traceback or of a stack listed):
//                                     the unit holding the line is a
//                                     dependency with its place; a line
//                                     outside every unit, the file's bytes
//                                     (no view has module-level lines)
//   "/\x01ste-code-lines:<pid>.<n>"   code that ran in this scope read the
//                                     lines of code objects (co_firstlineno,
//                                     Method#source_location), which needs
//                                     no run: every unit of every file it
//                                     loaded, with its place
//   "/\x01ste-defs-slow:<pid>:<why>"  the process tracks with the slow
//                                     fallback tracer (ste_defs.py), and why
//                                     ("python-3.9-no-compiled-tracer")
//   "/\x01ste-ref:<name>"             code that ran in this scope named a
//                                     constant whose last segment is <name>
//                                     (Ruby: ste_const_reads.rb), found or
//                                     not; "*": any name (`Module#constants`
//                                     ran, or the tracker's doubt)
//   "/\x01ste-refs:<pid>"             the process's tracker makes the ref
//                                     records (a process that ran a `.rb`
//                                     file of the repository without it
//                                     named any name)
// (the pid makes a forked child's markers its own: the interceptor drops
// a path the process recorded before the fork)
// ReduceLogs (log_reduction.h, definition_resolution.cc) resolves them
// with a DefinitionCache.
//
// Dependencies: the views (inventory.h, "Views") of a source file F, each
// a part of it (DefinitionPart):
//   "F/\x01ste-def"           its module-level code (what every importer
//                             runs): imports, signatures, decorators, class
//                             attributes, which definitions, docstrings and
//                             constants exist;
//   "F/\x01ste-def:<name>"    one definition ("Polygon.area"): its text,
//                             wherever it is;
//   "F/\x01ste-at:<name>"     the same with its place (its lines);
//   "F/\x01ste-doc:<name>"    a docstring ("<module>", "Polygon",
//                             "Polygon.area");
//   "F/\x01ste-const:<name>"  a simple constant's value (Python: at the
//                             top level; Ruby: in a class or module body
//                             too);
//   "F/\x01ste-sig:<name>"    a plain top-level function's header (Python:
//                             its parameters, defaults, annotations; Ruby,
//                             format 10: any unit's parameters), for
//                             the tests whose code names it (those that
//                             ran it depend on its unit, which holds it);
//   "F/\x01ste-names"        which plain functions and simple constants
//                             it binds, in order (Python; Ruby, format 8:
//                             its simple constants), for the tests
//                             that read its namespace by string,
//                             or star-imported it (Ruby: listed a
//                             module's constants): a name added or
//                             removed;
//   "F/\x01ste-absent:<name>" whether it binds <name> (a plain function,
//                             a simple constant or an import's name;
//                             Python), for the tests that looked it up and
//                             did not find it, and those whose code
//                             imported it (`from F's module import <name>`);
//   "F/\x01ste-import:<name>" where an import that only binds <name> in a
//                             package's __init__.py takes it from (Python,
//                             format 6; ImportsHold), for the tests whose
//                             code names it.
// (An added plain function or simple constant is no module-level code:
// ste_fingerprint.py, "names". The code of F that names it holds the name
// in its fingerprint, and the tests that looked for it elsewhere depend on
// the two views above.)
// And "\x01ste-ref/<name>" (no file; kAbsent, never in an inventory): a
// ref record. A simple constant added to a Ruby file F (format 8: no
// module-level code) selects the tests that loaded F (F/\x01ste-def) and
// named its last segment, or any name (selection.cc).
// Their values are the fingerprints of integrations/python/
// ste_fingerprint.py (BLAKE2b-128) or integrations/ruby/ste_fingerprint.rb
// (SHA-256 cut to 128 bits), stored as the entry's hash: the first 16 hex
// digits the high half. A file that does not parse has no named parts
// and a module entry whose hash is XXH3-128 of "ste-unparsed\0"
// and its bytes: every definition of it is gone, its module-level code
// changed (every test that loaded it is selected).
#ifndef STE_DEFINITIONS_H_
#define STE_DEFINITIONS_H_

#include <xxhash.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/inventory.h"

namespace ste {

// The tracker's records (see top): the last component of a code or data
// record, and the two markers' whole paths.
inline constexpr std::string_view kCodeRecordPrefix = "\x01ste-code:";
inline constexpr std::string_view kDataRecordName = "\x01ste-data";
inline constexpr std::string_view kDefsBeginPrefix = "/\x01ste-defs-begin:";
inline constexpr std::string_view kDefsEndPrefix = "/\x01ste-defs-end:";
inline constexpr std::string_view kDocRecordPrefix = "\x01ste-doc:";
inline constexpr std::string_view kDocsTrackedRecordName = "\x01ste-docs-tracked";
inline constexpr std::string_view kNameRecordPrefix = "\x01ste-name:";
inline constexpr std::string_view kNamespaceRecordName = "\x01ste-namespace";
inline constexpr std::string_view kDefsV2Prefix = "/\x01ste-defs-v2:";
inline constexpr std::string_view kPositionsPrefix = "/\x01ste-positions:";
inline constexpr std::string_view kCodeLinesPrefix = "/\x01ste-code-lines:";
inline constexpr std::string_view kDefsSlowPrefix = "/\x01ste-defs-slow:";
inline constexpr std::string_view kDefsV3Prefix = "/\x01ste-defs-v3:";
inline constexpr std::string_view kAbsentRecordPrefix = "\x01ste-absent:";
inline constexpr std::string_view kStarRecordName = "\x01ste-star";
inline constexpr std::string_view kLineRecordPrefix = "\x01ste-line:";
inline constexpr std::string_view kRefRecordPrefix = "/\x01ste-ref:";
inline constexpr std::string_view kRefsTrackedPrefix = "/\x01ste-refs:";
// A ref record's name for any name.
inline constexpr std::string_view kAnyRef = "*";
// The dependency a ref record of `name` becomes: "\x01ste-ref/<name>" (no
// view: no inventory entry gives it a value).
std::string NameRefPath(std::string_view name);

// "F/\x01ste-def" for unit "", else "F/\x01ste-def:<unit>".
std::string DefinitionViewPath(std::string_view file, std::string_view unit);
// The view of one part (see top): "F/\x01ste-at:<name>" and so on; `name`
// is ignored for kModule.
std::string DefinitionPartPath(std::string_view file, DefinitionPart part, std::string_view name);

// How a definition view's change reads: "src/geo.py::Polygon.area",
// "src/geo.py (module-level code)". "" for any other path.
std::string DescribeDefinition(std::string_view view_path);

struct DefinitionUnit {
  std::string name;  // "area", "Shape.name", "Shape.x#2"
  uint32_t first_line = 0;
  uint32_t last_line = 0;
  XXH128_hash_t hash = {0, 0};   // its text
  XXH128_hash_t place = {0, 0};  // its text and lines (the `at` line; else hash)
};

struct DefinitionDoc {
  std::string name;  // "<module>", "Shape", "Shape.area"
  uint32_t line = 0;  // the first line of its class or unit; 0: the module's
  XXH128_hash_t hash = {0, 0};
};

struct DefinitionConst {
  std::string name;
  XXH128_hash_t hash = {0, 0};
};

// A name a from-import binds at the top of a module (Python, format 6:
// ste_fingerprint.py, "imports"): `from <level dots><module> import
// <attr> as <name>`.
struct DefinitionImport {
  std::string name;
  uint32_t level = 0;
  std::string module;
  std::string attr;
  // The fingerprinter's standard library binds `attr` in `module` (format
  // 10: the `stdlib` flag; StdlibImportsHold).
  bool stdlib = false;
  XXH128_hash_t hash = {0, 0};
};

struct FileDefinitions {
  bool parsed = false;
  std::string error;  // why not, when !parsed
  // The module-level code without the imports that only bind names (see
  // `imports`), and with them (`module_full`, when the fingerprinter says).
  XXH128_hash_t module = {0, 0};
  bool has_full = false;
  XXH128_hash_t module_full = {0, 0};
  // Without only the imports from the standard library (format 10: when
  // there are others too).
  bool has_stdlib = false;
  XXH128_hash_t module_stdlib = {0, 0};
  std::vector<DefinitionImport> imports;
  // The names bound directly in the module's body (Python, format 6;
  // has_binds when the fingerprinter says), sorted.
  bool has_binds = false;
  std::vector<std::string> binds;
  std::vector<DefinitionUnit> units;  // in file order, not overlapping
  std::vector<DefinitionDoc> docs;
  std::vector<DefinitionConst> consts;
  // Python: plain functions' headers; Ruby (format 10): each unit's
  // parameters, named like the unit.
  std::vector<DefinitionConst> sigs;
  bool has_names = false;  // the fingerprinter said which names it binds (Python)
  XXH128_hash_t names = {0, 0};

  // The unit whose lines hold `line`, or null (module-level code).
  const DefinitionUnit* UnitAt(uint32_t line) const;
  // The docstring of the class or unit starting at `line` (0: the
  // module's), or null.
  const DefinitionDoc* DocAt(uint32_t line) const;
  const DefinitionConst* Const(std::string_view name) const;
  const DefinitionConst* Sig(std::string_view name) const;
  const DefinitionImport* Import(std::string_view name) const;
  bool Binds(std::string_view name) const;
  // Each part a name selects (constants, headers, imports): fn(part, name).
  template <typename Fn>
  void ForEachNamedPart(Fn&& fn) const {
    for (const DefinitionConst& c : consts) fn(DefinitionPart::kConst, c.name);
    for (const DefinitionConst& c : sigs) fn(DefinitionPart::kSig, c.name);
    for (const DefinitionImport& i : imports) fn(DefinitionPart::kImport, i.name);
  }
};

// The method name a Ruby unit's name holds, as the tracker's name records
// give it (ste_consts.rb, METHOD_NAME): "Geo::Polygon#area?#2" -> "area",
// "Geo::Polygon.create" -> "create", "helper" -> "helper"; "" for a name
// that is no identifier (an operator's, escaped: "Vec#%2F").
std::string RubyMethodName(std::string_view unit);

// The module entry's hash of a file that did not parse (see top).
XXH128_hash_t UnparsedModuleHash(std::string_view content);
// The hash of an "F/\x01ste-absent:<name>" entry: whether F binds <name>.
XXH128_hash_t AbsentNameHash(bool bound);

// Runs the fingerprinter of each file's language on file contents, one
// process per language for many files: integrations/python/
// ste_fingerprint.py (`python3 -I -S -B script`) for ".py",
// integrations/ruby/ste_fingerprint.rb (`ruby --disable=all script`) for
// ".rb"; both speak the protocol at the top of ste_fingerprint.py. The
// language is chosen by the path's extension only; a file of no known
// language is !parsed ("no fingerprinter for ..."). The scripts run
// without RUBYOPT/RUBYLIB in their environment (a test's tracker is not
// theirs). Thread-safe (const).
class Fingerprinter {
 public:
  struct Language {
    std::string extension;          // ".py": the end of the file's path
    std::vector<std::string> argv;  // the command; files on its stdin
  };
  explicit Fingerprinter(std::vector<Language> languages) : languages_(std::move(languages)) {}
  // One FileDefinitions per (path, content), in order: each language's
  // files in one process, or, when there are many, in a process per core
  // (contiguous chunks of at least 64). A process that cannot be run,
  // fails or answers out of protocol leaves each of its files !parsed with
  // that reason (callers: file level); the others are unaffected.
  // InvalidArgument when the two vectors differ in size.
  absl::StatusOr<std::vector<FileDefinitions>> Run(const std::vector<std::string>& paths,
                                                   const std::vector<std::string>& contents) const;
  // The scripts beside `integrations_dir` (<dir>/python/..., <dir>/ruby/...),
  // run with python3 and ruby from PATH.
  static Fingerprinter ForIntegrations(const std::string& integrations_dir);

  // The language of `path` (its entry in the list), or null.
  const Language* LanguageOf(std::string_view path) const;

 private:
  absl::StatusOr<std::vector<FileDefinitions>> RunLanguage(const Language& language,
                                                           const std::vector<std::string>& contents) const;
  std::vector<Language> languages_;
};

// The definitions of the files of one tree that does not change while it
// is used (a record build's checkout), by absolute path, fingerprinted
// once. Thread-safe.
//
// With a `disk_dir`, fingerprints are also kept on disk by content, from
// one record to the next (a file unchanged since is not fingerprinted
// again): one file per entry, `<disk_dir>/<32 hex>`, the XXH3-128 of the
// fingerprinter's identity and the file's bytes, holding the protocol's
// answer for that file (ste_fingerprint.py, "Protocol": its lines from
// `module` to `end`). The identity of a language's fingerprinter: its
// command, its script's bytes, the bytes of every file of the script's
// extension beside it (which it may load: ste_fingerprint.rb requires
// ste_consts.rb; unreadable, no disk), and its answer for an empty file
// (which holds the interpreter's name and version, and the format's). Only
// files that parsed are kept. An entry is written to a temporary and
// renamed (no fsync: a torn one does not parse, and is a miss); each use
// touches it, and PruneDisk removes those unused for `max_age_days`. A
// directory that cannot be made or written turns the disk off, silently:
// the fingerprinter runs, as without one.
//
// A few files at a time (a record fingerprints the files each test ran as
// the test ends) go to one process per language kept running between
// calls (a start per test would cost more than the parse); many at once,
// to the Fingerprinter's processes (one per core).
class DefinitionCache {
 public:
  explicit DefinitionCache(Fingerprinter fingerprinter, std::string disk_dir = "");
  ~DefinitionCache();
  DefinitionCache(const DefinitionCache&) = delete;
  DefinitionCache& operator=(const DefinitionCache&) = delete;
  // Fingerprints, in one run, those of `abs_paths` not cached yet.
  void Prefetch(const std::vector<std::string>& abs_paths);
  // A file's definitions (fingerprinted now if needed). A file that cannot
  // be read, or a fingerprinter that fails, gives !parsed with the reason.
  std::shared_ptr<const FileDefinitions> Get(const std::string& abs_path);

  // How many files were fingerprinted, and how many were found on disk.
  struct Counts {
    size_t fingerprinted = 0;
    size_t from_disk = 0;
  };
  Counts counts() const;
  // Removes the disk's entries not used for `max_age_days`; how many.
  size_t PruneDisk(int max_age_days) const;

 private:
  // The identity of `language`'s fingerprinter (see above), or nullopt
  // when it cannot be had (then no disk for it). Computed once.
  std::optional<XXH128_hash_t> Identity(const Fingerprinter::Language& language);
  // Fingerprints `contents` (of `paths`, in order): few, through the kept
  // processes; many, through fingerprinter_.Run.
  std::vector<FileDefinitions> Fingerprint(const std::vector<std::string>& paths,
                                           const std::vector<std::string>& contents);

  struct Kept;  // a language's kept process (definitions.cc)

  Fingerprinter fingerprinter_;
  const std::string disk_dir_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const FileDefinitions>> files_;
  std::map<const Fingerprinter::Language*, std::optional<XXH128_hash_t>> identities_;
  std::once_flag disk_made_;  // the directory made (or not: !disk_ok_), once
  bool disk_ok_ = true;
  Counts counts_;
  std::mutex kept_mu_;  // one request at a time through the kept processes
  std::map<const Fingerprinter::Language*, std::unique_ptr<Kept>> kept_;
};

// Where a worker keeps fingerprints on disk (DefinitionCache), under the
// checkout's root, and for how long an unused one stays.
inline constexpr char kFingerprintCacheDir[] = ".ste/fingerprints";
inline constexpr int kFingerprintCacheDays = 30;

// The fingerprinter's protocol answer for one file (ste_fingerprint.py,
// "Protocol"): its lines from `module` to `end`, or one `error` line. And
// the reverse: nullopt for text that is not one file's answer.
std::string FingerprintAnswer(const FileDefinitions& defs);
std::optional<FileDefinitions> ParseFingerprintAnswer(std::string_view text);

// The inventory entry of a definition view (see top) of `defs`; nullopt
// when the file has no such definition (or did not parse, for a unit).
// `content` is the file's bytes (for UnparsedModuleHash). The module view
// leaves out the imports that only bind names only when `imports_hold`
// (ImportsHold) and the standard library's hold (StdlibImportsHold);
// without only the standard library's when those alone hold
// (`module_stdlib`); else it holds them all (`module_full`).
std::optional<InventoryEntry> DefinitionViewEntry(const std::string& view_path, const View& view,
                                                  const FileDefinitions& defs,
                                                  std::string_view content, bool imports_hold = false,
                                                  bool stdlib_hold = false);

// Imports that only bind names (Python format 6, ste_fingerprint.py
// "imports"). They are left out of a module's own code only in a package's
// `__init__.py` (a submodule it imports cannot be still loading when it
// does) and only when each one names a file of the tree that binds what
// it imports directly in its body: `from .sub import x` (level 1 and up,
// from the package's folder) or `from pkg.sub import x` (pkg this
// folder's name), `sub/__init__.py` or `sub.py` (no extension module
// beside it). ImportedFile: that file, repo-relative, or "" when it is
// none of those; ImportsHold: whether every import of `defs` (the
// fingerprints of `init_file`) holds, given each file's fingerprints
// (`defs_of`: null when not known).
// What ImportedFile asks of the tree (repo-relative paths): whether a path
// is a regular file, and whether an extension module `<stem>.*.so` (or
// .pyd) is beside `<stem>`: of an inventory, or of the disk under a root.
struct ImportTree {
  std::function<bool(const std::string&)> is_file;
  std::function<bool(const std::string&)> has_extension_module;
  // Whether a file of the tree could be imported as the top-level module
  // `name` (StdlibImportsHold).
  std::function<bool(const std::string&)> may_shadow;
};
ImportTree ImportTreeOf(const Inventory& tree);  // (kept by reference)
ImportTree ImportTreeOnDisk(const std::string& root);
std::string ImportedFile(std::string_view init_file, const DefinitionImport& import, const ImportTree& tree);
bool ImportsHold(std::string_view init_file, const FileDefinitions& defs, const ImportTree& tree,
                 const std::function<const FileDefinitions*(const std::string&)>& defs_of);
// Imports from the standard library (format 10, the `stdlib` flag; in any
// module, ImportsHold leaves them out): the fingerprinter found that its
// interpreter's standard library binds each name. What it cannot see is
// the tree: a file the import system could find first under the module's
// top-level name (`<dir>/<name>.py`, `<dir>/<name>/__init__.py`, an
// extension module `<dir>/<name>.*.so`, where `<dir>` is the root or a
// folder that is no package: one a test runner or a script may put on
// sys.path). StdlibImportsHold: no such file for any of them.
bool StdlibImportsHold(const FileDefinitions& defs, const ImportTree& tree);

// Select time: the entries now of the definition views `view_paths` (repo-
// relative), given the tree's inventory `head` (scanned) and, when there is
// one, the baseline's inventory `base`: a file whose entry is unchanged
// keeps base's entries (no fingerprinting); the others are read, checked
// against head's hash, and fingerprinted in one run. A view of a file that
// is gone or no longer a regular file has no entry. Error only when a file
// changed while read (callers select all).
absl::StatusOr<std::vector<InventoryEntry>> DefinitionViewsNow(
    const std::string& root, const std::vector<std::string>& view_paths, const Inventory* base,
    const Inventory& head, const Fingerprinter& fingerprinter);

}  // namespace ste

#endif  // STE_DEFINITIONS_H_
