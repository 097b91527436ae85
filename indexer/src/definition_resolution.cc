// Definition resolution: the definition tracker's records of a run turned
// into definition dependencies (definition_resolution.h), and the per-test
// fallback to file level (ApplyDefinitionFallback, log_reduction.h).
#include "definition_resolution.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ste/definitions.h"
#include "ste/selection_index.h"

namespace ste {
namespace {

bool Under(const std::string& dir, const std::string& path) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

// "<file>/<last>" with <last> starting with the mark: true, both set.
bool SplitRecord(const std::string& path, std::string* file, std::string_view* last) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= path.size() || path[slash + 1] != '\x01') {
    return false;
  }
  *last = std::string_view(path).substr(slash + 1);
  *file = path.substr(0, slash);
  return true;
}

// A unit whose fingerprinter gave no `at` line has its place in its text:
// no place view of its own to depend on.
bool HasOwnPlace(const DefinitionUnit& u) { return u.place.low64 != u.hash.low64 || u.place.high64 != u.hash.high64; }

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool ParseLine(std::string_view number, uint32_t* line) {
  return absl::SimpleAtoi(absl::string_view(number.data(), number.size()), line);
}

}  // namespace

bool ProcessCode::Take(const LogRecord& r) {
  if (r.kind != RecordKind::kAbsent && r.kind != RecordKind::kContent) return false;
  if (TakeSlowTracker(r)) return true;
  const std::string_view p = r.path;
  const bool opens = StartsWith(p, kDefsBeginPrefix);
  if (opens || StartsWith(p, kDefsEndPrefix)) {
    if (opens) begin = true;
    end = !opens;
    Touch(r.scope);
    return true;
  }
  if (StartsWith(p, kDefsV2Prefix)) {
    v2 = true;
    return true;
  }
  if (StartsWith(p, kDefsV3Prefix)) {
    v3 = true;
    return true;
  }
  if (StartsWith(p, kPositionsPrefix)) {
    positions.insert(r.scope);
    Touch(r.scope);
    return true;
  }
  if (StartsWith(p, kCodeLinesPrefix)) {
    code_lines.insert(r.scope);
    Touch(r.scope);
    return true;
  }
  if (StartsWith(p, kRefsTrackedPrefix)) {
    refs_tracked = true;
    return true;
  }
  if (StartsWith(p, kRefRecordPrefix) && p.size() > kRefRecordPrefix.size() &&
      p.find('/', kRefRecordPrefix.size()) == std::string_view::npos) {
    refs[r.scope].insert(std::string(p.substr(kRefRecordPrefix.size())));
    Touch(r.scope);
    return true;
  }
  std::string file;
  std::string_view last;
  if (!SplitRecord(r.path, &file, &last)) return false;
  uint32_t line = 0;
  if (StartsWith(last, kCodeRecordPrefix)) {
    if (!ParseLine(last.substr(kCodeRecordPrefix.size()), &line)) return false;
    lines[r.scope][file].insert(line);
  } else if (last == kDataRecordName) {
    data.insert(file);
    data_in[r.scope].insert(file);
  } else if (StartsWith(last, kDocRecordPrefix)) {
    if (!ParseLine(last.substr(kDocRecordPrefix.size()), &line)) return false;
    docs[r.scope][file].insert(line);
  } else if (last == kDocsTrackedRecordName) {
    docs_tracked[r.scope].insert(file);
    return true;
  } else if (StartsWith(last, kNameRecordPrefix) && last.size() > kNameRecordPrefix.size()) {
    names[r.scope][file].insert(std::string(last.substr(kNameRecordPrefix.size())));
  } else if (last == kNamespaceRecordName) {
    namespaces[r.scope].insert(file);
  } else if (StartsWith(last, kAbsentRecordPrefix) && last.size() > kAbsentRecordPrefix.size()) {
    absent[r.scope][file].insert(std::string(last.substr(kAbsentRecordPrefix.size())));
  } else if (last == kStarRecordName) {
    stars[r.scope].insert(file);
  } else if (StartsWith(last, kLineRecordPrefix)) {
    if (!ParseLine(last.substr(kLineRecordPrefix.size()), &line)) return false;
    shown_lines[r.scope][file].insert(line);
  } else {
    return false;
  }
  Touch(r.scope);
  return true;
}

void ProcessCode::Touch(const std::string& scope) {
  if (std::find(scopes.begin(), scopes.end(), scope) == scopes.end()) scopes.push_back(scope);
}

void ResolveDefinitions(const std::vector<ProcessCode>& code, const ContentRecorders& content_by,
                        const PathPolicy& policy, std::map<std::string, std::set<DepKey>>* by_scope,
                        TestDependencies* out) {
  auto repo_file = [&](const std::string& abs, std::string* rel) {
    if (!Under(policy.root, abs)) return false;
    *rel = RepoRelative(policy.root, abs);
    return !policy.ignore.Matches(*rel);
  };
  std::vector<std::set<std::string>> ran(code.size()), data(code.size());
  std::vector<std::string> files;
  for (size_t i = 0; i < code.size(); i++) {
    for (const auto& [scope, by_file] : code[i].lines) {
      for (const auto& [abs, lines] : by_file) {
        std::string rel;
        if (!repo_file(abs, &rel)) continue;
        ran[i].insert(rel);
        files.push_back(abs);
      }
    }
    for (const std::string& abs : code[i].data) {
      std::string rel;
      if (repo_file(abs, &rel)) data[i].insert(rel);
    }
    if (code[i].begin && !code[i].end) {
      const std::vector<std::string>& s = code[i].scopes;
      for (size_t k = s.size() > 1 ? 1 : 0; k < s.size(); k++) out->untracked_scopes.insert(s[k]);
    }
  }
  policy.definitions->Prefetch(files);
  // Which scopes' processes watched a file's docstrings as they loaded it.
  std::map<std::string, std::set<std::string>> watched;  // abs file -> scopes
  for (const ProcessCode& c : code) {
    for (const auto& [scope, files] : c.docs_tracked) {
      for (const std::string& abs : files) watched[abs].insert(scope);
    }
  }
  auto docs_watched = [&](const ProcessCode& c, const std::string& scope, const std::string& abs) {
    for (const auto& [where, files] : c.docs_tracked) {
      if (files.count(abs)) return true;
    }
    auto it = watched.find(abs);
    if (it == watched.end()) return false;
    for (const std::string& where : it->second) {
      if (where == scope || ScopeContains(where, scope)) return true;
    }
    return false;
  };
  // What a process whose tracker does not say depends on (see the header):
  // every part of F it cannot tell apart, in `scope`.
  auto conservative = [&](const ProcessCode& c, const std::string& scope, const std::string& abs,
                          const std::string& rel, const FileDefinitions& defs) {
    std::set<DepKey>& deps = (*by_scope)[scope];
    auto add = [&](DefinitionPart part, const std::string& name) {
      deps.insert(DepKey{DefinitionPartPath(rel, part, name), DepKind::kContent});
    };
    if (!c.v2 || !docs_watched(c, scope, abs)) {
      for (const DefinitionDoc& d : defs.docs) add(DefinitionPart::kDoc, d.name);
    }
    // (A Ruby tracker's ref records tell the same: "*" below.)
    if (!c.v3 && !c.refs_tracked && defs.has_names) add(DefinitionPart::kNames, "");
    if (c.v2) return;
    defs.ForEachNamedPart(add);
  };
  // (scope, file) recorded there by whole accounts, not read as data, not
  // run by every one of them (below).
  std::vector<std::pair<std::string, std::string>> checked;
  for (const auto& [scope, paths] : content_by) {
    for (const auto& [rel, procs] : paths) {
      bool whole = true, all_ran = true;
      for (size_t p : procs) {
        whole = whole && code[p].begin && code[p].end && !data[p].count(rel);
        all_ran = all_ran && ran[p].count(rel);
      }
      if (!whole) continue;
      if (!all_ran) {
        checked.emplace_back(scope, rel);
        continue;
      }
      const std::string abs = absl::StrCat(policy.root, "/", rel);
      std::shared_ptr<const FileDefinitions> defs = policy.definitions->Get(abs);
      if (!defs->parsed) continue;
      std::set<DepKey>& deps = (*by_scope)[scope];
      deps.erase(DepKey{rel, DepKind::kContent});
      deps.insert(DepKey{DefinitionViewPath(rel, ""), DepKind::kContent});
      for (size_t p : procs) conservative(code[p], scope, abs, rel, *defs);
      out->definition_files[scope].push_back(rel);
    }
  }
  // A file read as data is a content dependency where it was read, whether
  // or not the interceptor recorded that read there (a forked child's read
  // of a file its parent loaded is not: the parent's record is in its scope).
  for (const ProcessCode& c : code) {
    for (const auto& [scope, files] : c.data_in) {
      for (const std::string& abs : files) {
        std::string rel;
        if (repo_file(abs, &rel)) (*by_scope)[scope].insert(DepKey{rel, DepKind::kContent});
      }
    }
  }
  // Scopes where frames' lines were read, by any process there.
  std::set<std::string> positions, code_lines;
  for (const ProcessCode& c : code) {
    positions.insert(c.positions.begin(), c.positions.end());
    code_lines.insert(c.code_lines.begin(), c.code_lines.end());
  }
  // The parts of a parsed repo file named by a process's records in a scope.
  auto parts = [&](const auto& by_file, auto&& each) {
    for (const auto& [abs, what] : by_file) {
      std::string rel;
      if (!repo_file(abs, &rel)) continue;
      std::shared_ptr<const FileDefinitions> defs = policy.definitions->Get(abs);
      if (defs->parsed) each(abs, rel, *defs, what);
    }
  };
  std::set<std::string> any_ref;  // scopes where a module's constants were listed
  for (const ProcessCode& c : code) {
    for (const auto& [ran_in, by_file] : c.lines) {
      const std::string& scope = ran_in;  // (a lambda cannot capture a structured binding)
      std::set<DepKey>& deps = (*by_scope)[scope];
      // Without a word on lines, the place of what ran (a unit's text and
      // place were one fingerprint before the tracker said).
      const bool placed = !c.v2;
      parts(by_file, [&](const std::string& abs, const std::string& rel, const FileDefinitions& defs,
                         const std::set<uint32_t>& lines) {
        deps.insert(DepKey{DefinitionViewPath(rel, ""), DepKind::kContent});
        // (A Ruby file's names, as a listing: no change of them selects the
        // test, but the baseline keeps them, to tell a constant added from
        // one no test named: definitions.cc.)
        if (c.refs_tracked && defs.has_names && absl::EndsWith(rel, ".rb")) {
          deps.insert(DepKey{DefinitionPartPath(rel, DefinitionPart::kNames, ""), DepKind::kListing});
        }
        conservative(c, scope, abs, rel, defs);
        for (uint32_t line : lines) {
          if (const DefinitionUnit* u = defs.UnitAt(line)) {
            deps.insert(DepKey{DefinitionViewPath(rel, u->name), DepKind::kContent});
            if (placed && HasOwnPlace(*u)) {
              deps.insert(DepKey{DefinitionPartPath(rel, DefinitionPart::kPlace, u->name), DepKind::kContent});
            }
          }
        }
      });
    }
    // A line shown as a frame's place: the unit holding it, with its
    // place; a module-level line, the file's bytes (its place is in no
    // view: a line added to a function above it moves it).
    for (const auto& [scope, by_file] : c.shown_lines) {
      std::set<DepKey>& deps = (*by_scope)[scope];
      parts(by_file, [&](const std::string&, const std::string& rel, const FileDefinitions& defs,
                         const std::set<uint32_t>& lines) {
        for (uint32_t line : lines) {
          const DefinitionUnit* u = defs.UnitAt(line);
          if (u == nullptr) {
            deps.insert(DepKey{rel, DepKind::kContent});
          } else if (HasOwnPlace(*u)) {
            deps.insert(DepKey{DefinitionPartPath(rel, DefinitionPart::kPlace, u->name), DepKind::kContent});
          } else {
            deps.insert(DepKey{DefinitionViewPath(rel, u->name), DepKind::kContent});
          }
        }
      });
    }
    for (const auto& [scope, by_file] : c.docs) {
      std::set<DepKey>& deps = (*by_scope)[scope];
      parts(by_file, [&](const std::string&, const std::string& rel, const FileDefinitions& defs,
                         const std::set<uint32_t>& lines) {
        for (uint32_t line : lines) {
          if (const DefinitionDoc* d = defs.DocAt(line)) {
            deps.insert(DepKey{DefinitionPartPath(rel, DefinitionPart::kDoc, d->name), DepKind::kContent});
          }
        }
      });
    }
    // The names code named, for the constants added since (selection.cc);
    // a process that ran Ruby code without saying: any name.
    for (const auto& [scope, names] : c.refs) {
      std::set<DepKey>& deps = (*by_scope)[scope];
      for (const std::string& name : names) deps.insert(DepKey{NameRefPath(name), DepKind::kAbsent});
      if (names.count(std::string(kAnyRef))) any_ref.insert(scope);
    }
    if (!c.refs_tracked) {
      for (const auto& [scope, by_file] : c.lines) {
        for (const auto& [abs, lines] : by_file) {
          std::string rel;
          if (absl::EndsWith(abs, ".rb") && repo_file(abs, &rel)) {
            (*by_scope)[scope].insert(DepKey{NameRefPath(kAnyRef), DepKind::kAbsent});
            break;
          }
        }
      }
    }
    for (const auto& [scope, by_file] : c.names) {
      std::set<DepKey>& deps = (*by_scope)[scope];
      parts(by_file, [&](const std::string&, const std::string& rel, const FileDefinitions& defs,
                         const std::set<std::string>& names) {
        const bool ruby = absl::EndsWith(rel, ".rb");
        for (const std::string& name : names) {
          if (defs.Const(name) != nullptr) {
            deps.insert(DepKey{DefinitionPartPath(rel, DefinitionPart::kConst, name), DepKind::kContent});
          }
          if (defs.Sig(name) != nullptr) {
            deps.insert(DepKey{DefinitionPartPath(rel, DefinitionPart::kSig, name), DepKind::kContent});
          }
          // (Ruby, format 10: a method name, for each unit of that name.)
          if (ruby) {
            for (const DefinitionConst& sig : defs.sigs) {
              if (RubyMethodName(sig.name) == name) {
                deps.insert(DepKey{DefinitionPartPath(rel, DefinitionPart::kSig, sig.name), DepKind::kContent});
              }
            }
          }
          if (defs.Import(name) != nullptr) {
            deps.insert(DepKey{DefinitionPartPath(rel, DefinitionPart::kImport, name), DepKind::kContent});
          }
        }
      });
    }
    // A namespace read by string: every name's part, and which names
    // there are; a star import: which names there are (what it copied is
    // used by name).
    auto names_of = [&](const std::map<std::string, std::set<std::string>>& by_scope_files, bool parts) {
      for (const auto& [scope, files] : by_scope_files) {
        std::set<DepKey>& deps = (*by_scope)[scope];
        for (const std::string& abs : files) {
          std::string rel;
          if (!repo_file(abs, &rel)) continue;
          std::shared_ptr<const FileDefinitions> defs = policy.definitions->Get(abs);
          if (!defs->parsed) continue;
          if (parts) {
            defs->ForEachNamedPart([&](DefinitionPart part, const std::string& name) {
              deps.insert(DepKey{DefinitionPartPath(rel, part, name), DepKind::kContent});
            });
          }
          if (defs->has_names) deps.insert(DepKey{DefinitionPartPath(rel, DefinitionPart::kNames, ""), DepKind::kContent});
        }
      }
    };
    names_of(c.namespaces, true);
    names_of(c.stars, false);
    for (const auto& [scope, by_file] : c.absent) {
      std::set<DepKey>& deps = (*by_scope)[scope];
      parts(by_file, [&](const std::string&, const std::string& rel, const FileDefinitions& defs,
                         const std::set<std::string>& names) {
        if (!defs.has_names) {
          // (A fingerprinter that does not say which names it binds keeps
          // them in the module's fingerprint: the module view, which the
          // lookup's process depends on anyway where it loaded the file.)
          deps.insert(DepKey{DefinitionViewPath(rel, ""), DepKind::kContent});
          return;
        }
        for (const std::string& name : names) {
          deps.insert(DepKey{DefinitionPartPath(rel, DefinitionPart::kAbsent, name), DepKind::kContent});
        }
      });
    }
  }
  // A whole account's record of a file it neither ran nor read as data (it
  // notes every read of a source other than the import system's, and every
  // stat that hands out its size or times) is an existence check: a stat,
  // an access, a realpath. F's module view stands for it, and for more (it
  // goes when F does, or stops parsing): pytest's runner looks up every
  // test package's __init__.py, and its forked child each one its parent
  // loaded.
  for (const auto& [scope, rel] : checked) {
    std::shared_ptr<const FileDefinitions> defs = policy.definitions->Get(absl::StrCat(policy.root, "/", rel));
    if (!defs->parsed) continue;
    std::set<DepKey>& deps = (*by_scope)[scope];
    deps.erase(DepKey{rel, DepKind::kContent});
    deps.insert(DepKey{DefinitionViewPath(rel, ""), DepKind::kContent});
    out->definition_files[scope].push_back(rel);
  }
  // Where frames' lines were read: the place of every unit that ran in the
  // scope or in one enclosing it (a unit that ran first in the parent, as
  // it loaded, may run again here: the tracker records it once). Where code
  // objects' lines were read: the place of every unit of every file whose
  // module-level code the scope, or one enclosing it, loaded.
  auto place_of = [&](const View& v, std::set<DepKey>* out) {
    std::shared_ptr<const FileDefinitions> defs = policy.definitions->Get(absl::StrCat(policy.root, "/", v.dir));
    if (!defs->parsed) return;
    for (const DefinitionUnit& u : defs->units) {
      if (HasOwnPlace(u) && (v.part == DefinitionPart::kModule || u.name == v.arg)) {
        out->insert(DepKey{DefinitionPartPath(v.dir, DefinitionPart::kPlace, u.name), DepKind::kContent});
      }
    }
  };
  // In each of `scopes`: what `from` views of the scope or an enclosing one
  // stand for (`add` puts it in the set).
  auto add_for_views = [&](const std::set<std::string>& scopes, DefinitionPart from,
                           const std::function<void(const View&, std::set<DepKey>*)>& add) {
    for (const std::string& scope : scopes) {
      std::set<DepKey> more;
      for (const auto& [other, deps] : *by_scope) {
        if (other != scope && !ScopeContains(other, scope)) continue;
        for (const DepKey& k : deps) {
          std::optional<View> v = ParseView(k.path);
          if (v && v->kind == ViewKind::kDefinition && v->part == from) add(*v, &more);
        }
      }
      (*by_scope)[scope].insert(more.begin(), more.end());
    }
  };
  // The places that units, or modules, stand for.
  add_for_views(positions, DefinitionPart::kUnit, place_of);
  add_for_views(code_lines, DefinitionPart::kModule, place_of);
  // Module#constants ran (any name): which simple constants each Ruby file
  // loaded in the scope or an enclosing one binds, in order (its answer's
  // order; a forking runner's parent loaded them).
  add_for_views(any_ref, DefinitionPart::kModule, [](const View& v, std::set<DepKey>* out) {
    if (absl::EndsWith(v.dir, ".rb")) {
      out->insert(DepKey{DefinitionPartPath(v.dir, DefinitionPart::kNames, ""), DepKind::kContent});
    }
  });
}

void ApplyDefinitionFallback(const TestDependencies& all, const std::string& test,
                             TestDependencies* deps) {
  const std::string own = ScopeOfTest(test);
  auto related = [&](const std::string& scope) {
    return ScopeContains(scope, own) || ScopeContains(own, scope);
  };
  bool tainted = false;
  for (const std::string& s : all.untracked_scopes) tainted = tainted || related(s);
  if (!tainted) return;
  std::set<DepKey> back;
  for (const auto& [scope, files] : all.definition_files) {
    if (!related(scope)) continue;
    for (const std::string& f : files) back.insert(DepKey{f, DepKind::kContent});
  }
  if (back.empty()) return;
  ScopeDependencies* mine = nullptr;
  for (ScopeDependencies& s : deps->scopes) {
    if (s.scope == own) mine = &s;
  }
  if (mine == nullptr) {
    deps->scopes.push_back(ScopeDependencies{own, {}});
    std::sort(deps->scopes.begin(), deps->scopes.end(),
              [](const ScopeDependencies& a, const ScopeDependencies& b) { return a.scope < b.scope; });
    for (ScopeDependencies& s : deps->scopes) {
      if (s.scope == own) mine = &s;
    }
  }
  back.insert(mine->deps.begin(), mine->deps.end());
  mine->deps.assign(back.begin(), back.end());
}

// The slow tracer's note is per process, not per scope: no Touch.
bool ProcessCode::TakeSlowTracker(const LogRecord& r) {
  const std::string_view p = r.path;
  if (p.substr(0, kDefsSlowPrefix.size()) != kDefsSlowPrefix) return false;
  const std::string_view rest = p.substr(kDefsSlowPrefix.size());  // <pid>:<why>
  const size_t colon = rest.find(':');
  slow = std::string(colon == std::string_view::npos ? std::string_view("unknown") : rest.substr(colon + 1));
  return true;
}

void CountSlowTrackers(const std::vector<ProcessCode>& code, TestDependencies* out) {
  for (const ProcessCode& c : code) {
    if (!c.slow.empty()) out->slow_trackers[c.slow]++;
  }
}

}  // namespace ste
