#include "ste/selection.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "ste/case_split.h"
#include "ste/definitions.h"
#include "ste/git.h"
#include "ste/glob.h"
#include "ste/json.h"
#include "ste/repo_path.h"
#include "ste/test_scope.h"

namespace ste {
namespace {

std::string_view BaseNameOf(std::string_view path) {
  return path.substr(path.rfind('/') + 1);  // npos + 1 == 0
}

bool Added(const InventoryChange& c) {
  return c.change == ChangeKind::kAdded ||
         (c.change == ChangeKind::kModified && c.old_type == FileType::kMissing);
}
bool Deleted(const InventoryChange& c) {
  return c.change == ChangeKind::kDeleted ||
         (c.change == ChangeKind::kModified && c.type == FileType::kMissing);
}

// How many tests each cause pulled in, by its words (path, kind, change):
// the order ties keep in Selection::wide.
using PulledCauses =
    std::map<std::tuple<std::string, std::string, std::string>, std::pair<SelectionReason, size_t>>;

// The causes that pulled in the most tests (see Selection::wide).
std::vector<WideCause> WideCauses(const PulledCauses& pulled,
                                  const std::vector<InventoryChange>& changed) {
  std::vector<WideCause> all;
  for (const auto& [key, counted] : pulled) {
    WideCause c;
    c.cause = counted.first;
    c.tests = counted.second;
    all.push_back(std::move(c));
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const WideCause& a, const WideCause& b) { return a.tests > b.tests; });
  if (all.size() > kMaxWideCauses) all.resize(kMaxWideCauses);
  for (WideCause& c : all) {
    if (c.cause.rule || c.cause.kind != DepKind::kListing) continue;
    for (const InventoryChange& e : changed) {
      size_t slash = e.path.rfind('/');
      std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : e.path.substr(0, slash);
      if (parent != c.cause.path || e.path == c.cause.path || IsViewPath(e.path) ||
          !(Added(e) || Deleted(e))) {
        continue;
      }
      if (c.entries.size() < kMaxWideEntries) {
        c.entries.emplace_back(e.path, Added(e) ? ChangeKind::kAdded : ChangeKind::kDeleted);
      } else {
        c.more_entries++;
      }
    }
  }
  return all;
}


// A directory that is still a directory and only had entries come or go.
bool NamesOnly(const InventoryChange& c) {
  return c.change == ChangeKind::kModified && c.type == FileType::kDirectory &&
         c.old_type == FileType::kDirectory;
}

// A repo directory whose names changed is the echo of the entries that
// came or went, which are changes of their own: the path rules (skip_all,
// run_all) look at those entries, not at it.
bool ListingEcho(const InventoryChange& c) { return c.path[0] != '/' && NamesOnly(c); }

// True iff `path` (not a view's) is an entry of `view`'s directory that the
// view looks at, or lies below one. The root's own basename is unknown
// here: its "egg-info" counts for nothing (callers use this to be sure a
// view's change is explained, never to widen).
bool AtOrBelowWatchedEntry(const View& view, std::string_view path) {
  std::string_view rest = path;
  if (view.dir == kRootPath) {
    if (path[0] == '/' || path == kRootPath) return false;
  } else {
    const std::string prefix = view.dir == "/" ? "/" : view.dir + "/";
    if (path.substr(0, prefix.size()) != prefix || path.size() == prefix.size()) return false;
    rest = path.substr(prefix.size());
  }
  const std::string_view basename =
      view.dir == kRootPath ? std::string_view() : BaseNameOf(view.dir);
  return ViewWatches(view, basename, rest.substr(0, rest.find('/')));
}

// A repo view's change that a real change in its directory explains: the
// directory came, went or changed type, or an entry the view looks at came,
// went or changed (or something below one did). What the real entries
// cannot show (a view through a symlinked directory or entry) is not.
bool BackedViewChange(const InventoryChange& c, const std::vector<InventoryChange>& changes) {
  std::optional<View> view = ParseView(c.path);
  if (!view) return false;
  for (const InventoryChange& o : changes) {
    if (o.path[0] == '/' || IsViewPath(o.path)) continue;
    if (o.path == view->dir ? !NamesOnly(o) : AtOrBelowWatchedEntry(*view, o.path)) return true;
  }
  return false;
}

// The changes a test can see. An external directory is not walked: its
// names changing is all there is of the change, and only a test that
// listed it sees it; one that stat'ed it (a `content` dependency: pytest
// stats every parent of the checkout, so a directory created next to the
// checkout changes the parent's names) depends on its existence and type,
// which stayed. Such a change is left out (nothing for the rules to
// weigh, nothing to print); a lookup error keeps it (never narrow).
std::vector<InventoryChange> VisibleChanges(const SelectionIndex& index,
                                            const std::vector<InventoryChange>& changes) {
  std::vector<InventoryChange> out;
  out.reserve(changes.size());
  for (const InventoryChange& c : changes) {
    if (c.path[0] == '/' && NamesOnly(c)) {
      absl::StatusOr<Roaring> listers = index.Lookup(c.path, DepKind::kListing);
      if (listers.ok() && listers->isEmpty()) continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

Selection SelectAll(std::string reason, const std::vector<std::string>& head_tests,
                    std::vector<InventoryChange> changed) {
  Selection s;
  s.mode = SelectionMode::kAll;
  s.reason = std::move(reason);
  s.changed = std::move(changed);
  for (const std::string& t : head_tests) s.tests.push_back(SelectedTest{t, {}, 0, std::nullopt, {}});
  return s;
}

Selection SelectWithoutBaseline(const std::string& why, const std::vector<std::string>& head_tests) {
  return SelectAll(absl::StrCat("no usable baseline: ", why), head_tests);
}

std::string DescribeWideCause(const WideCause& c) {
  const SelectionReason& r = c.cause;
  std::string what;
  if (r.rule) {
    what = std::string(ReasonChangeWord(r));
  } else if (std::string view = DescribeViewChange(r.path, ReasonChangeWord(r)); !view.empty()) {
    what = std::move(view);
  } else if (r.kind == DepKind::kListing && !c.entries.empty()) {
    for (const auto& [path, change] : c.entries) {
      absl::StrAppend(&what, what.empty() ? "" : ", ", path, " ", std::string(ChangeKindName(change)));
    }
    if (c.more_entries) absl::StrAppend(&what, " and ", c.more_entries, " more");
    absl::StrAppend(&what, ": listing of ", r.path);
  } else {
    what = absl::StrCat(r.path, " ", std::string(ReasonChangeWord(r)), ": ",
                        std::string(ReasonKindWord(r)));
  }
  return absl::StrCat(what, " -> ", c.tests, c.tests == 1 ? " test" : " tests");
}

std::string_view SelectionModeName(SelectionMode mode) {
  switch (mode) {
    case SelectionMode::kAll: return "all";
    case SelectionMode::kSubset: return "subset";
    case SelectionMode::kNone: return "none";
  }
  return "all";
}

namespace {

// The tests `ctest -N` lists: lines "  Test  #3: name".
absl::StatusOr<std::vector<std::string>> CTestNames(const Config& config) {
  const std::string dir = config.BuildDir();
  absl::StatusOr<std::string> listed = RunAndCapture({"ctest", "--test-dir", dir, "-N"});
  if (!listed.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot list the CTest tests of ", dir, ": ", listed.status().message()));
  }
  std::vector<std::string> names;
  size_t at = 0;
  while (at < listed->size()) {
    size_t end = listed->find('\n', at);
    if (end == std::string::npos) end = listed->size();
    std::string line = listed->substr(at, end - at);
    at = end + 1;
    size_t test = line.find("Test");
    size_t hash = line.find('#');
    size_t colon = line.find(": ", hash == std::string::npos ? 0 : hash);
    if (test == std::string::npos || hash == std::string::npos || colon == std::string::npos ||
        line.find_first_not_of(' ') != test) {
      continue;
    }
    std::string name = line.substr(colon + 2);
    // The name becomes a scope (ScopeOfTest): a clean repo-relative name.
    if (!IsCleanRelative(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CTest test '", name, "' cannot be a scope (a name with an empty, '.' or '..' part)"));
    }
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> DiscoverTests(const Config& config,
                                                       const Inventory& inventory) {
  const GlobSet& include = config.test_include;
  const GlobSet& exclude = config.test_exclude;
  std::vector<std::string> tests;
  if (TestsAreCTestNames(config.runner_kind)) {
    absl::StatusOr<std::vector<std::string>> names = CTestNames(config);
    if (!names.ok()) return names.status();
    for (std::string& n : *names) {
      if (include.Matches(n) && !exclude.Matches(n)) tests.push_back(std::move(n));
    }
    std::sort(tests.begin(), tests.end());
    tests.erase(std::unique(tests.begin(), tests.end()), tests.end());
    return tests;
  }
  for (const InventoryEntry& e : inventory.entries()) {
    if (e.path.empty() || e.path[0] == '/' || e.path == kRootPath || IsViewPath(e.path)) continue;
    if (e.type != FileType::kRegular && e.type != FileType::kSymlink) continue;
    if (include.Matches(e.path) && !exclude.Matches(e.path)) tests.push_back(e.path);
  }
  return tests;
}

std::vector<std::string> RequestedPaths(const SelectionIndex& index) {
  const std::vector<std::string_view>& paths = index.OutsideAndViewPaths();
  return {paths.begin(), paths.end()};
}

std::string DescribeViewChange(std::string_view path, std::string_view change) {
  std::optional<View> view = ParseView(path);
  if (!view) return "";
  if (view->kind == ViewKind::kDefinition) {
    // "src/geo.py::Polygon.area changed", "src/geo.py: its module-level code changed"
    // "src/geo.py::Polygon.area: its lines changed (read by the tests)",
    // "src/geo.py::Polygon.area: its docstring changed",
    // "src/geo.py::TAX: the constant's value changed"
    const bool gone = change == "deleted";
    const std::string named = absl::StrCat(view->dir, "::", view->arg);
    switch (view->part) {
      case DefinitionPart::kModule:
        return absl::StrCat(view->dir, gone ? ": gone, or not a file" : ": its module-level code changed");
      case DefinitionPart::kUnit:
        return absl::StrCat(named, gone ? " removed" : " changed");
      case DefinitionPart::kPlace:
        return absl::StrCat(named, gone ? " removed" : ": its lines changed (read by the tests)");
      case DefinitionPart::kDoc:
        return absl::StrCat(named, gone ? ": its docstring went" : ": its docstring changed");
      case DefinitionPart::kSig:
        return absl::StrCat(named, gone ? ": no longer a plain function, or removed" : ": its signature changed");
      case DefinitionPart::kConst:
        return absl::StrCat(named, gone ? ": no longer a constant" : ": the constant's value changed");
      case DefinitionPart::kNames:
        // "src/geo.py: a plain function or constant was added or removed (its namespace was read)"
        return absl::StrCat(view->dir, gone ? ": gone, or not a file"
                                            : ": a plain function or constant was added, removed or reordered "
                                              "(the tests read its namespace)");
      case DefinitionPart::kImport:
        // "src/geo/__init__.py::area: what its import binds changed"
        return absl::StrCat(named, gone ? ": no longer imported there" : ": what its import binds changed");
      case DefinitionPart::kAbsent:
        // "src/geo.py::area: now bound (the tests looked it up and did not find it)"
        return absl::StrCat(named, gone ? ": gone, or not a file"
                                        : ": bound now, or no longer (the tests looked it up)");
    }
  }
  if (view->kind == ViewKind::kPytestIni) {
    // "pyproject.toml: its [tool.pytest] table (what pytest reads of it) changed"
    return absl::StrCat(view->dir, ": ", DescribeView(*view), " changed",
                        change == "added" ? " (the file appeared)" : change == "deleted" ? " (the file went)" : "");
  }
  if (view->kind == ViewKind::kEnv) {
    // "the environment variable CI_DB_URL changed (was unset)"
    return absl::StrCat(DescribeView(*view), " changed",
                        change == "added" ? " (was unset)" : change == "deleted" ? " (is unset now)" : "");
  }
  std::string out = absl::StrCat(view->dir, ": ", DescribeView(*view), " changed");
  if (change == "added") out += " (the directory appeared)";
  if (change == "deleted") out += " (the directory went)";
  return out;
}

std::string_view ChangeWord(const InventoryChange& c) {
  switch (c.change) {
    case ChangeKind::kAdded: return "added";
    case ChangeKind::kDeleted: return "deleted";
    case ChangeKind::kModified: break;
  }
  if (c.old_type == FileType::kMissing) return "added";
  if (c.type == FileType::kMissing) return "deleted";
  return "modified";
}

absl::StatusOr<std::vector<InventoryChange>> ChangesFromPaths(
    const Inventory& base, const std::vector<std::pair<std::string, std::string>>& paths) {
  std::map<std::string, InventoryChange> out;
  auto listing = [&](const std::string& path) {
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    if (dir.empty()) dir = "/";
    if (out.count(dir)) return;
    InventoryChange c;
    c.path = dir;
    c.change = ChangeKind::kModified;
    c.type = c.old_type = FileType::kDirectory;
    out[dir] = c;
  };
  for (const auto& [path, word] : paths) {
    const InventoryEntry* e = base.Find(path);
    bool existed = e != nullptr && e->type != FileType::kMissing;
    InventoryChange c;
    c.path = path;
    if (word == "deleted") {
      if (!existed) continue;  // nothing the baseline knew
      c.change = ChangeKind::kDeleted;
      c.type = c.old_type = e->type;
    } else if ((word == "added" || word == "modified") && !existed) {
      c.change = ChangeKind::kAdded;
      c.type = FileType::kRegular;
      c.old_type = FileType::kMissing;
    } else if (word == "added") {
      // The baseline has it: a directory replaced by a file or a link (git
      // lists the directory's files deleted and the path added), a type
      // change as Inventory::Diff sees it. Its dependents by `content`
      // (a stat of the directory) are affected, not its prober by `absent`.
      c.change = ChangeKind::kModified;
      c.type = FileType::kRegular;
      c.old_type = e->type;
    } else if (word == "modified") {
      c.change = ChangeKind::kModified;
      c.type = c.old_type = e->type;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "change '", word, "' of ", path, " is not added, deleted or modified"));
    }
    out[path] = c;
    if (c.change == ChangeKind::kModified) continue;
    if (path[0] == '/') {
      // Outside the repo only the entries tests used are known: a
      // directory's listing counts if the baseline has that directory.
      std::string dir = path.substr(0, std::max<size_t>(path.rfind('/'), 1));
      const InventoryEntry* d = base.Find(dir);
      if (d && d->type == FileType::kDirectory) listing(path);
      continue;
    }
    // Directories an added path brought with it are added too; the first
    // one the baseline knew has a changed listing.
    std::string p = path;
    for (;;) {
      size_t slash = p.rfind('/');
      if (slash == std::string::npos || slash == 0) break;
      std::string dir = p.substr(0, slash);
      const InventoryEntry* d = base.Find(dir);
      if (c.change == ChangeKind::kDeleted || (d && d->type != FileType::kMissing) ||
          out.count(dir)) {
        break;
      }
      InventoryChange a;
      a.path = dir;
      a.change = ChangeKind::kAdded;
      a.type = FileType::kDirectory;
      a.old_type = FileType::kMissing;
      out[dir] = a;
      p = dir;
    }
    listing(p);
  }
  // A directory whose every entry went is gone too (git removes it, and a
  // list of changed paths never names directories): deleted, with the
  // directories beneath it, so that a test that stat'ed it is affected;
  // its own directory's listing changes. Repo paths only (outside, the
  // baseline knows only what tests used).
  const std::vector<InventoryEntry>& entries = base.entries();
  auto under = [&](const std::string& dir) {
    auto before = [](const InventoryEntry& e, const std::string& p) { return e.path < p; };
    std::string lo = dir + "/", hi = dir + "0";  // '0' is '/' + 1
    return std::make_pair(std::lower_bound(entries.begin(), entries.end(), lo, before),
                          std::lower_bound(entries.begin(), entries.end(), hi, before));
  };
  auto emptied = [&](const std::string& dir) {
    auto [from, to] = under(dir);
    for (auto e = from; e != to; ++e) {
      // A directory is judged by its entries; a view is no entry.
      if (e->type == FileType::kDirectory || IsViewPath(e->path)) continue;
      auto c = out.find(e->path);
      if (c == out.end() || !Deleted(c->second)) return false;
    }
    for (auto c = out.lower_bound(dir + "/"); c != out.end() && c->first < dir + "0"; ++c) {
      if (Added(c->second)) return false;
    }
    return true;
  };
  std::vector<std::string> candidates;
  for (const auto& [path, c] : out) {
    if (path[0] != '/' && c.change == ChangeKind::kDeleted) candidates.push_back(path);
  }
  while (!candidates.empty()) {
    std::string path = std::move(candidates.back());
    candidates.pop_back();
    size_t slash = path.rfind('/');
    if (slash == std::string::npos) continue;  // in the root, which stays
    std::string dir = path.substr(0, slash);
    const InventoryEntry* d = base.Find(dir);
    auto known = out.find(dir);
    if (d == nullptr || d->type != FileType::kDirectory ||
        (known != out.end() && !NamesOnly(known->second)) || !emptied(dir)) {
      continue;
    }
    auto [from, to] = under(dir);
    for (auto e = from; e != to; ++e) {
      if (e->type != FileType::kDirectory) continue;
      out[e->path] = InventoryChange{e->path, ChangeKind::kDeleted, e->type, e->type};
    }
    out[dir] = InventoryChange{dir, ChangeKind::kDeleted, d->type, d->type};
    listing(dir);
    candidates.push_back(dir);
  }
  // Views (inventory.h): a list of paths names none. One of `base`
  // changes when its directory came, went or changed type, or a path at or
  // below an entry it looks at is named (wider than its value: a file
  // inside a *.dist-info counts for ste-dists too).
  std::vector<InventoryChange> views;
  for (const InventoryEntry& e : entries) {
    if (!IsViewPath(e.path)) continue;
    std::optional<View> view = ParseView(e.path);
    if (!view) continue;
    bool touched = false, dir_deleted = false;
    for (const auto& [path, c] : out) {
      if (IsViewPath(path)) continue;
      if (path == view->dir) {
        if (!NamesOnly(c)) touched = true;
        if (Deleted(c)) dir_deleted = true;
      } else if (AtOrBelowWatchedEntry(*view, path)) {
        touched = true;
      }
    }
    if (!touched) continue;
    InventoryChange v{e.path, ChangeKind::kModified, FileType::kRegular, FileType::kRegular};
    if (e.type == FileType::kMissing) {
      if (dir_deleted) continue;
      v.change = ChangeKind::kAdded;
      v.old_type = FileType::kMissing;
    } else if (dir_deleted) {
      v.change = ChangeKind::kDeleted;
    }
    views.push_back(std::move(v));
  }
  for (InventoryChange& v : views) out[v.path] = std::move(v);
  std::vector<InventoryChange> changes;
  for (auto& [path, c] : out) changes.push_back(std::move(c));
  return changes;
}

namespace {

// tests.unit = "case": when every reason of *t is a dependency that is
// an own dependency of some of its cases (none a rule, none left out),
// t->cases are the first such case in the run order and every case that
// ran after it, by name; true then. The later cases too: a case sees the
// state the earlier ones left (an lru_cache'd helper that ran in case A
// and is only looked up in B, a global A set), so a change to what A owns
// can make B fail. A case whose scope name cannot be read back
// (case_split.h) leaves the file whole.
bool NarrowToCases(const SelectionIndex& index, SelectedTest* t) {
  if (index.case_count() == 0 || t->more_reasons > 0 || t->reasons.empty()) return false;
  const std::optional<uint32_t> id = index.FindTest(ScopeOfTest(t->test));
  if (!id) return false;
  std::optional<uint32_t> first;  // the earliest case that owns a reason
  for (const SelectionReason& r : t->reasons) {
    if (r.rule) return false;
    bool own = false;
    // A block that cannot be read leaves the file whole.
    absl::StatusOr<std::vector<uint32_t>> cases_of = index.CasesOf(DepKey{r.path, r.kind});
    if (!cases_of.ok()) return false;
    for (uint32_t c : *cases_of) {
      if (index.case_test(c) != *id) continue;
      if (!first || c < *first) first = c;
      own = true;
    }
    if (!own) return false;  // the file's shared part changed
  }
  // A test's cases have consecutive ids in run order (selection_index.h);
  // they are handed to the runner in that order, so that each sees what
  // the earlier ones left as it did.
  std::vector<std::string> cases;
  for (uint32_t c = *first; c < index.case_count() && index.case_test(c) == *id; c++) {
    std::optional<std::string> name = CaseOfScopeName(index.case_name(c));
    if (!name) return false;
    cases.push_back(*std::move(name));
  }
  t->cases = std::move(cases);
  return true;
}

}  // namespace

Selection Select(const SelectionRules& rules, const SelectionInputs& in) {
  const std::vector<InventoryChange> changed = VisibleChanges(in.index, in.changes);
  if (!in.force_all.empty()) return SelectAll(in.force_all, in.head_tests, changed);
  // The configuration itself (runner command, globs) can change any
  // outcome: a change to it always selects all, listed in run_all or not.
  if (!rules.config_file.empty()) {
    for (const InventoryChange& c : changed) {
      if (c.path == rules.config_file) {
        return SelectAll(absl::StrCat(rules.config_file, " (the configuration) changed"),
                         in.head_tests, changed);
      }
    }
  }
  if (!changed.empty()) {
    // A listed external directory's names change counts (it is all there
    // is of the change, and never skippable).
    bool only_skippable = true;
    size_t considered = 0;
    // A repo view's change is the echo of its directory's real entries
    // (as a names change is) when they explain it; an outside view, or
    // one they do not explain, counts and is never skippable.
    for (const InventoryChange& c : changed) {
      if (ListingEcho(c)) continue;
      const bool view = IsViewPath(c.path);
      if (view && c.path[0] != '/' && BackedViewChange(c, changed)) continue;
      considered++;
      if (c.path[0] == '/' || view || !rules.skip_all.Matches(c.path)) only_skippable = false;
    }
    if (considered > 0 && only_skippable) {
      Selection s;
      s.mode = SelectionMode::kNone;
      s.reason = "every changed path matches selection.skip_all";
      s.changed = changed;
      return s;
    }
    // run_all also matches a directory whose names changed (`run_all =
    // ["deploy"]` fires when a file comes or goes in deploy/): wider, never
    // narrower.
    for (const InventoryChange& c : changed) {
      if (c.path[0] == '/' || IsViewPath(c.path)) continue;  // views: echoes
      int i = rules.run_all.FirstMatch(c.path);
      if (i >= 0) {
        // Escaped: the reason goes to terminals and CI outputs as one line,
        // and the path is the change's to choose.
        return SelectAll(absl::StrCat(EscapeForText(c.path), " changed and matches selection.run_all '",
                                      rules.run_all.glob(i).pattern(), "'"),
                         in.head_tests, changed);
      }
    }
    // An environment variable selection.env_run_all names (what shells and
    // libc read unseen): set, unset or changed since the baseline.
    for (const InventoryChange& c : changed) {
      if (!IsEnvViewPath(c.path)) continue;
      std::optional<View> view = ParseView(c.path);
      if (!view) continue;
      int i = rules.env_run_all.FirstMatch(view->arg);
      if (i >= 0) {
        return SelectAll(absl::StrCat("the environment variable ", EscapeForText(view->arg),
                                      " changed and matches selection.env_run_all '",
                                      rules.env_run_all.glob(i).pattern(), "'"),
                         in.head_tests, changed);
      }
    }
  }

  std::set<std::string> head(in.head_tests.begin(), in.head_tests.end());
  std::map<std::string, SelectedTest> picked;
  PulledCauses pulled;  // how many tests each cause pulled in
  auto pick = [&](const std::string& test, SelectionReason reason) {
    if (!head.count(test)) return;  // deleted since the baseline
    auto [counted, fresh] = pulled.try_emplace(
        {reason.path, std::string(ReasonKindWord(reason)), std::string(ReasonChangeWord(reason))},
        reason, 0);
    counted->second.second++;
    SelectedTest& t = picked[test];
    t.test = test;
    if (t.reasons.size() < kMaxReasons) {
      t.reasons.push_back(std::move(reason));
    } else {
      t.more_reasons++;
    }
  };
  auto add_key = [&](const std::string& path, DepKind kind, ChangeKind change) -> absl::Status {
    absl::StatusOr<Roaring> tests = in.index.Lookup(path, kind);
    if (!tests.ok()) return tests.status();
    for (uint32_t id : *tests) {
      pick(std::string(TestOfScope(in.index.test_scope(id))),
           SelectionReason::Dependency(path, kind, change));
    }
    return absl::OkStatus();
  };
  // A simple constant added (Ruby, format 8: no module-level code; its
  // name a part of its own): the tests that loaded its file and whose
  // code named its last segment, or any name (definitions.h, ref
  // records). (Python's added names are told by their own views.)
  auto added_constant = [&](const std::string& path) -> absl::Status {
    std::optional<View> view = ParseView(path);
    if (!view || view->kind != ViewKind::kDefinition || view->part != DefinitionPart::kConst) {
      return absl::OkStatus();
    }
    const size_t colons = view->arg.rfind("::");
    const std::string last = colons == std::string::npos ? view->arg : view->arg.substr(colons + 2);
    absl::StatusOr<Roaring> loaded = in.index.Lookup(DefinitionViewPath(view->dir, ""), DepKind::kContent);
    if (!loaded.ok()) return loaded.status();
    if (loaded->isEmpty()) return absl::OkStatus();
    absl::StatusOr<Roaring> named = in.index.Lookup(NameRefPath(last), DepKind::kAbsent);
    if (!named.ok()) return named.status();
    absl::StatusOr<Roaring> any = in.index.Lookup(NameRefPath(kAnyRef), DepKind::kAbsent);
    if (!any.ok()) return any.status();
    for (uint32_t id : *loaded & (*named | *any)) {
      pick(std::string(TestOfScope(in.index.test_scope(id))),
           SelectionReason::Dependency(path, DepKind::kContent, ChangeKind::kAdded));
    }
    return absl::OkStatus();
  };
  for (const InventoryChange& c : changed) {
    absl::Status s;
    if (IsViewPath(c.path)) {
      // A view is a value: whatever way it changed (its directory came or
      // went too), its dependents are the tests that used it.
      s = add_key(c.path, DepKind::kContent, Added(c) ? ChangeKind::kAdded
                                             : Deleted(c) ? ChangeKind::kDeleted
                                                          : ChangeKind::kModified);
      if (s.ok() && Added(c)) s = added_constant(c.path);
    } else if (Added(c)) {
      s = add_key(c.path, DepKind::kAbsent, ChangeKind::kAdded);
    } else if (Deleted(c)) {
      s = add_key(c.path, DepKind::kContent, ChangeKind::kDeleted);
      if (s.ok()) s = add_key(c.path, DepKind::kListing, ChangeKind::kDeleted);
    } else {
      bool was_dir = c.old_type == FileType::kDirectory;
      bool is_dir = c.type == FileType::kDirectory;
      if (was_dir || is_dir) s = add_key(c.path, DepKind::kListing, ChangeKind::kModified);
      // A directory's own content is its existence and type.
      if (s.ok() && (!was_dir || !is_dir)) {
        s = add_key(c.path, DepKind::kContent, ChangeKind::kModified);
      }
    }
    if (!s.ok()) {
      return SelectAll(absl::StrCat("index unreadable: ", s.message()), in.head_tests, changed);
    }
  }
  for (const std::string& t : in.head_tests) {
    if (!in.index.FindTest(ScopeOfTest(t))) pick(t, SelectionReason::Rule(SelectionRule::kNewTest));
    if (rules.mandatory.Matches(t)) pick(t, SelectionReason::Rule(SelectionRule::kMandatory));
  }
  for (const std::string& t : in.failed_tests) {
    pick(t, SelectionReason::Rule(SelectionRule::kFailedInBaseline));
  }
  for (uint32_t id : in.index.OpaqueTests()) {
    pick(std::string(TestOfScope(in.index.test_scope(id))),
         SelectionReason::Rule(SelectionRule::kOpaque));
  }

  Selection s;
  s.changed = changed;
  bool narrowed = false;
  for (auto& [test, t] : picked) {
    if (rules.cases) narrowed |= NarrowToCases(in.index, &t);
    s.tests.push_back(std::move(t));
  }
  if (s.tests.empty()) {
    s.mode = SelectionMode::kNone;
    s.reason = s.changed.empty() ? "nothing changed since the baseline"
                                 : "no test depends on what changed";
  } else if (s.tests.size() == in.head_tests.size() && !narrowed) {
    s.mode = SelectionMode::kAll;
    s.reason = "every test is affected";
  } else {
    s.mode = SelectionMode::kSubset;
    s.reason = absl::StrCat(s.tests.size(), " of ", in.head_tests.size(),
                            " tests are affected");
  }
  if (s.mode == SelectionMode::kAll || (s.mode == SelectionMode::kSubset && s.tests.size() * 4 > in.head_tests.size())) {
    s.wide = WideCauses(pulled, changed);
  }
  return s;
}

}  // namespace ste
