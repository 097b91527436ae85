// Copyright: the ste authors. Views: named functions of a directory's
// listing (inventory.h, "Views", is the contract; docs/concepts.md the
// why). Each emulates one piece of CPython's stdlib, cited where it is.
#include <xxhash.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ste/environment.h"
#include "ste/inventory.h"
#include "ste/little_endian.h"
#include "ste/repo_path.h"
#include "ste/status_macros.h"
#include "ste/pytest_ini.h"

namespace ste {
namespace {

constexpr std::string_view kPthName = "ste-pth";
constexpr std::string_view kDistsName = "ste-dists";
constexpr std::string_view kDistsNamedPrefix = "ste-dists:";
constexpr std::string_view kEntryPointsPrefix = "ste-entry-points:";
constexpr std::string_view kDefinitionModuleName = "ste-def";
constexpr std::string_view kEnvPrefix = "ste-env:";
constexpr std::string_view kPytestIniName = "ste-pytest-ini";
constexpr std::string_view kPytestIniFile = "pyproject.toml";
// The named parts of a source file (definitions.h, "Views").
constexpr std::pair<std::string_view, DefinitionPart> kDefinitionPrefixes[] = {
    {"ste-def:", DefinitionPart::kUnit},
    {"ste-at:", DefinitionPart::kPlace},
    {"ste-doc:", DefinitionPart::kDoc},
    {"ste-const:", DefinitionPart::kConst},
    {"ste-sig:", DefinitionPart::kSig},
    {"ste-absent:", DefinitionPart::kAbsent},
    {"ste-import:", DefinitionPart::kImport},
};
constexpr std::string_view kDefinitionNamesName = "ste-names";
constexpr int kMaxReadAttempts = 3;

absl::string_view AV(std::string_view s) { return {s.data(), s.size()}; }

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool HasNonAscii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return true;
  }
  return false;
}

// str.isspace() for an ASCII character: \t \n \v \f \r, \x1c-\x1f, space.
bool IsPySpace(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return (u >= 0x09 && u <= 0x0d) || (u >= 0x1c && u <= 0x20);
}

// str.strip() of ASCII text.
std::string_view PyStrip(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && IsPySpace(s[b])) ++b;
  while (e > b && IsPySpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// A view's <dir> as ComputeViews takes it: "." , clean repo-relative, or
// "/" or a normalized absolute path.
bool ValidViewDir(std::string_view dir) {
  return IsCleanPath(dir);
}

std::string_view BaseNameOf(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The distribution name importlib.metadata's Lookup takes from an entry's
// lowercased name: low.rpartition(".")[0].partition("-")[0].
std::string_view DistNamePart(std::string_view low) {
  size_t dot = low.rfind('.');
  std::string_view stem = dot == std::string_view::npos ? std::string_view() : low.substr(0, dot);
  return stem.substr(0, stem.find('-'));
}

// The view's name as its value starts with: for a by-name lookup, the name
// normalized (two spellings of one lookup have one value).
std::string CanonicalName(const View& v) {
  switch (v.kind) {
    case ViewKind::kPth:
      return std::string(kPthName);
    case ViewKind::kDists:
      return std::string(kDistsName);
    case ViewKind::kDistsNamed:
      return absl::StrCat(AV(kDistsNamedPrefix), v.arg);
    case ViewKind::kEntryPoints:
      return absl::StrCat(AV(kEntryPointsPrefix), v.arg);
    case ViewKind::kDefinition:
      break;  // not computed here
    case ViewKind::kEnv:
      return EnvViewName(v.arg);
    case ViewKind::kPytestIni:
      return std::string(kPytestIniName);
  }
  return v.name;
}

void AppendField(std::string_view s, std::string* out) {
  AppendU64(out, s.size());
  out->append(s.data(), s.size());
}

// One entry_points.txt as importlib.metadata reads it (Python 3.10+:
// Sectioned.section_pairs and EntryPoints._from_text; 3.8-3.9: a
// ConfigParser(delimiters="=") with optionxform = str, and items()), when
// both read it alike ("clean", see inventory.h): the (name, value) pairs
// of the sections named `group`, in file order.
struct EntryPointsText {
  bool clean = true;
  std::vector<std::pair<std::string, std::string>> pairs;
};

EntryPointsText ParseEntryPoints(std::string_view text, std::string_view group) {
  EntryPointsText out;
  auto unclean = [&out] {
    out.clean = false;
    out.pairs.clear();
    return out;
  };
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    // Non-ASCII; the line breaks only str.splitlines knows (configparser
    // reads them inside a line); '%' (configparser's interpolation).
    if (u >= 0x80 || u == 0x0b || u == 0x0c || u == 0x1c || u == 0x1d || u == 0x1e || c == '%') {
      return unclean();
    }
  }
  std::optional<std::string> section;
  std::set<std::string> sections_seen, names_seen;
  size_t at = 0;
  while (at < text.size()) {
    // read_text's universal newlines, then splitlines: \n, \r\n, \r.
    size_t end = text.find_first_of("\r\n", at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(at, end - at);
    at = end;
    if (at < text.size() && text[at] == '\r' && at + 1 < text.size() && text[at + 1] == '\n') ++at;
    if (at < text.size()) ++at;

    std::string_view line = PyStrip(raw);
    if (line.empty() || line[0] == '#') continue;  // Sectioned.valid
    if (IsPySpace(raw[0])) return unclean();       // a configparser continuation
    if (line[0] == '[') {
      // Sectioned: a line that starts with '[' and ends with ']' names
      // section line.strip("[]"); configparser's SECTCRE \[(?P<header>.+)\]
      // takes what lies between the first '[' and the last ']'. Alike for
      // "[x]" with x non-empty, not starting with '[', not ending with ']'.
      if (line.size() < 3 || line.back() != ']') return unclean();
      std::string_view name = line.substr(1, line.size() - 2);
      if (name.front() == '[' || name.back() == ']') return unclean();
      // configparser merges DEFAULT into every section and, strict, raises
      // on a section named twice.
      if (name == "DEFAULT" || !sections_seen.insert(std::string(name)).second) return unclean();
      section = std::string(name);
      names_seen.clear();
      continue;
    }
    // Sectioned skips pairs before any section; configparser raises.
    if (!section) return unclean();
    // Pair.parse: text.split("=", 1), each stripped; without '=' Python
    // raises (TypeError; configparser a ParsingError), and configparser on
    // an empty name or a name given twice in a section.
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) return unclean();
    std::string_view name = PyStrip(line.substr(0, eq));
    std::string_view value = PyStrip(line.substr(eq + 1));
    if (name.empty() || !names_seen.insert(std::string(name)).second) return unclean();
    if (*section == group) out.pairs.emplace_back(std::string(name), std::string(value));
  }
  return out;
}

enum class EntryFile { kNothing, kOther, kText };

// Reads `path` (following symlinks) as Distribution.read_text would:
// kNothing for what it suppresses (FileNotFoundError, NotADirectoryError,
// IsADirectoryError, PermissionError), kOther for a node that is neither a
// file nor a directory, else the text, read whole with the same stat
// before and after (re-read up to 3 times, then Aborted).
absl::StatusOr<EntryFile> ReadEntryFile(ScanFileSystem* fs, const std::string& path,
                                        std::string* text) {
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<std::unique_ptr<ReadableFile>> file = fs->Open(path, /*follow=*/true);
    if (absl::IsNotFound(file.status()) || absl::IsPermissionDenied(file.status())) {
      return EntryFile::kNothing;
    }
    if (!file.ok()) return file.status();
    STE_ASSIGN_OR_RETURN(FileStat before, (*file)->Stat());
    if (before.type == FileType::kDirectory) return EntryFile::kNothing;
    if (before.type != FileType::kRegular) return EntryFile::kOther;
    text->clear();
    char buf[16 << 10];
    while (true) {
      STE_ASSIGN_OR_RETURN(size_t got, (*file)->Read(buf, sizeof buf));
      if (got == 0) break;
      text->append(buf, got);
    }
    STE_ASSIGN_OR_RETURN(FileStat after, (*file)->Stat());
    if (after.size == before.size && after.mtime_ns == before.mtime_ns &&
        after.ctime_ns == before.ctime_ns && after.inode == before.inode &&
        text->size() == after.size) {
      return EntryFile::kText;
    }
    if (attempt == kMaxReadAttempts) {
      return absl::AbortedError(absl::StrCat(path, ": kept changing while it was read"));
    }
  }
}

// The ste-pytest-ini view `path` of the file `abs` (inventory.h, "Views"):
// kMissing when it is missing, unreadable the ways Path.is_file() or
// read_text() fail, or no regular file (pytest then reads nothing there).
absl::StatusOr<InventoryEntry> PytestIniEntry(ScanFileSystem* fs, const std::string& path, const std::string& abs) {
  InventoryEntry e;
  e.path = path;
  std::string text;
  STE_ASSIGN_OR_RETURN(EntryFile read, ReadEntryFile(fs, abs, &text));
  if (read != EntryFile::kText) return e;  // kMissing, all zeros
  std::string value(kPytestIniName);
  value.push_back('\0');
  value.append(PytestIniValue(text));
  e.type = FileType::kRegular;  // stat fields stay zero
  e.hash = XXH3_128bits(value.data(), value.size());
  return e;
}

// A directory's names as os.listdir gives them (symlinks followed), or
// nullopt when Python would see none because it is not a listable
// directory (missing, not a directory, EACCES).
absl::StatusOr<std::optional<std::vector<std::string>>> ListForView(ScanFileSystem* fs,
                                                                    const std::string& abs) {
  absl::StatusOr<std::unique_ptr<Directory>> dir = fs->OpenDirectory(abs, /*follow=*/true);
  if (absl::IsNotFound(dir.status()) || absl::IsPermissionDenied(dir.status())) {
    return std::optional<std::vector<std::string>>();
  }
  if (!dir.ok()) return dir.status();
  std::vector<std::string> names;
  absl::Status listed = (*dir)->List(&names);
  if (absl::IsPermissionDenied(listed)) return std::optional<std::vector<std::string>>();
  if (!listed.ok()) return listed;
  std::sort(names.begin(), names.end());
  return std::optional<std::vector<std::string>>(std::move(names));
}

std::string JoinUnder(std::string_view dir, std::string_view name) {
  if (dir == "/") return absl::StrCat("/", AV(name));
  return absl::StrCat(AV(dir), "/", AV(name));
}

}  // namespace

bool IsViewPath(std::string_view path) {
  std::string_view last = BaseNameOf(path);
  return !last.empty() && last[0] == kViewMark;
}

std::optional<View> ParseView(std::string_view path) {
  const size_t slash = path.rfind('/');
  std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (last.empty() || last[0] != kViewMark) return std::nullopt;
  View v;
  v.dir = slash == std::string_view::npos ? std::string(kRootPath)
          : slash == 0                    ? std::string("/")
                                          : std::string(path.substr(0, slash));
  v.name = std::string(last.substr(1));
  std::string_view name = v.name;
  if (name == kPthName) {
    v.kind = ViewKind::kPth;
  } else if (name == kDistsName) {
    v.kind = ViewKind::kDists;
  } else if (name.substr(0, kDistsNamedPrefix.size()) == kDistsNamedPrefix &&
             name.size() > kDistsNamedPrefix.size()) {
    v.kind = ViewKind::kDistsNamed;
    v.arg = NormalizeDistName(name.substr(kDistsNamedPrefix.size()));
  } else if (name.substr(0, kEntryPointsPrefix.size()) == kEntryPointsPrefix &&
             name.size() > kEntryPointsPrefix.size()) {
    v.kind = ViewKind::kEntryPoints;
    v.arg = std::string(name.substr(kEntryPointsPrefix.size()));
  } else if (name.substr(0, kEnvPrefix.size()) == kEnvPrefix) {
    // A variable (environment.h): a view of "/" only, its name escaped
    // one way.
    std::optional<std::string> variable = UnescapeEnvName(name.substr(kEnvPrefix.size()));
    if (!variable || v.dir != "/") return std::nullopt;
    v.kind = ViewKind::kEnv;
    v.arg = *std::move(variable);
  } else if (name == kPytestIniName) {
    // Of a file: <dir> is a pyproject.toml.
    if (BaseNameOf(v.dir) != kPytestIniFile) return std::nullopt;
    v.kind = ViewKind::kPytestIni;
  } else if (name == kDefinitionModuleName || name == kDefinitionNamesName) {
    // A part of a source file (definitions.h): <dir> is the file.
    v.kind = ViewKind::kDefinition;
    if (name == kDefinitionNamesName) v.part = DefinitionPart::kNames;
  } else {
    for (const auto& [prefix, part] : kDefinitionPrefixes) {
      if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix) {
        v.kind = ViewKind::kDefinition;
        v.part = part;
        v.arg = std::string(name.substr(prefix.size()));
        return v;
      }
    }
    return std::nullopt;
  }
  return v;
}

bool IsKnownViewComponent(std::string_view component) {
  return !component.empty() && component[0] == kViewMark &&
         component.find('/') == std::string_view::npos && ParseView(component).has_value();
}

std::string NormalizeDistName(std::string_view name) {
  // re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")
  std::string out;
  out.reserve(name.size());
  bool in_run = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_run) out.push_back('_');
      in_run = true;
    } else {
      out.push_back(AsciiLower(c));
      in_run = false;
    }
  }
  return out;
}

bool ViewWatches(const View& view, std::string_view dir_basename, std::string_view name) {
  if (view.kind == ViewKind::kDefinition || view.kind == ViewKind::kEnv || view.kind == ViewKind::kPytestIni) {
    return false;  // no entries
  }
  if (view.kind == ViewKind::kPth) {
    // site.addsitedir: names = [name for name in os.listdir(sitedir) if
    // name.endswith(".pth")] (3.13 also skips names starting with '.').
    return EndsWith(name, ".pth");
  }
  // importlib.metadata.Lookup: low = child.lower(); low.endswith((
  // ".dist-info", ".egg-info")), or base_is_egg and low == "egg-info".
  // ASCII lowercasing decides these suffixes exactly: the only non-ASCII
  // character whose lowercase is ASCII is KELVIN SIGN ('k'), in neither.
  const std::string low = AsciiLower(name);
  const bool dist = EndsWith(low, ".dist-info") || EndsWith(low, ".egg-info");
  const bool egg = !dist && low == "egg-info" && EndsWith(AsciiLower(dir_basename), ".egg");
  if (!dist && !egg) return false;
  if (view.kind != ViewKind::kDistsNamed) return true;
  // Lookup.search(prepared): infos[normalize(name part)], eggs[legacy_
  // normalize(the .egg directory's name part)] (legacy_normalize equal
  // implies normalize equal: a superset). Python lowercases Unicode, so a
  // name with a non-ASCII byte may match anything: it always does.
  if (HasNonAscii(name) || (egg && HasNonAscii(dir_basename))) return true;
  const std::string source = egg ? AsciiLower(dir_basename) : low;
  return NormalizeDistName(DistNamePart(source)) == view.arg;
}

std::string DescribeView(const View& view) {
  switch (view.kind) {
    case ViewKind::kPth:
      return "the *.pth names";
    case ViewKind::kDists:
      return "the *.dist-info and *.egg-info names";
    case ViewKind::kDistsNamed:
      return absl::StrCat("the distributions named ", view.arg);
    case ViewKind::kEntryPoints:
      return absl::StrCat("entry points [", view.arg, "] of its distributions");
    case ViewKind::kEnv:
      return absl::StrCat("the environment variable ", absl::CHexEscape(view.arg));
    case ViewKind::kPytestIni:
      return "its [tool.pytest] table (what pytest reads of it)";
    case ViewKind::kDefinition:
      switch (view.part) {
        case DefinitionPart::kModule: return "its module-level code";
        case DefinitionPart::kUnit: return absl::StrCat("the definition ", view.arg);
        case DefinitionPart::kPlace: return absl::StrCat("the place of ", view.arg);
        case DefinitionPart::kDoc: return absl::StrCat("the docstring of ", view.arg);
        case DefinitionPart::kConst: return absl::StrCat("the constant ", view.arg);
        case DefinitionPart::kSig: return absl::StrCat("the signature of ", view.arg);
        case DefinitionPart::kNames: return "which plain functions and constants it binds";
        case DefinitionPart::kAbsent: return absl::StrCat("whether it binds ", view.arg);
        case DefinitionPart::kImport: return absl::StrCat("what its import binds to ", view.arg);
      }
      break;
  }
  return view.name;
}

absl::StatusOr<std::vector<InventoryEntry>> ComputeViews(const std::string& root,
                                                         const std::vector<std::string>& view_paths,
                                                         const GlobSet& ignore, ScanFileSystem* fs,
                                                         const Environment* environment) {
  if (fs == nullptr) fs = RealScanFileSystem();
  std::optional<Environment> own;  // this process's, made once when asked for
  std::vector<std::string> paths = view_paths;
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  std::vector<View> views;
  views.reserve(paths.size());
  for (const std::string& path : paths) {
    std::optional<View> v = ParseView(path);
    if (!v || !ValidViewDir(v->dir)) {
      return absl::InvalidArgumentError(
          absl::StrCat("not a view path of a known view: '", absl::CHexEscape(path), "'"));
    }
    if (v->kind == ViewKind::kDefinition) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a definition view is fingerprinted (definitions.h), not computed here: '",
          absl::CHexEscape(path), "'"));
    }
    views.push_back(*std::move(v));
  }
  // One listing per directory, however many of its views are asked for.
  std::map<std::string, std::optional<std::vector<std::string>>> listings;
  std::vector<InventoryEntry> out;
  out.reserve(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    const View& v = views[i];
    if (v.kind == ViewKind::kEnv) {
      if (environment == nullptr) {
        if (!own) own = Environment::OfProcess();
        environment = &*own;
      }
      InventoryEntry e;
      e.path = paths[i];
      std::optional<std::string_view> value = environment->Get(v.arg);
      if (value) {
        std::string hashed = CanonicalName(v);
        hashed.push_back('\0');
        hashed.append(*value);
        e.type = FileType::kRegular;  // stat fields stay zero
        e.hash = XXH3_128bits(hashed.data(), hashed.size());
      }  // unset: kMissing, all zeros
      out.push_back(std::move(e));
      continue;
    }
    const bool repo = v.dir[0] != '/';
    const std::string abs = !repo ? v.dir : v.dir == kRootPath ? root : JoinUnder(root, v.dir);
    if (v.kind == ViewKind::kPytestIni) {
      STE_ASSIGN_OR_RETURN(InventoryEntry e, PytestIniEntry(fs, paths[i], abs));
      out.push_back(std::move(e));
      continue;
    }
    auto it = listings.find(abs);
    if (it == listings.end()) {
      absl::StatusOr<std::optional<std::vector<std::string>>> listed = ListForView(fs, abs);
      if (!listed.ok()) return listed.status();
      it = listings.emplace(abs, *std::move(listed)).first;
    }
    InventoryEntry e;
    e.path = paths[i];
    if (!it->second) {
      e.type = FileType::kMissing;  // all zeros
      out.push_back(std::move(e));
      continue;
    }
    // A repo directory's ignored names are invisible, as in its names-hash.
    auto ignored = [&](std::string_view name) {
      if (!repo || ignore.empty()) return false;
      return ignore.Matches(v.dir == kRootPath ? std::string(name) : JoinUnder(v.dir, name));
    };
    const std::string_view basename = BaseNameOf(abs);
    std::string value = CanonicalName(v);
    value.push_back('\0');
    for (const std::string& name : *it->second) {
      if (!ViewWatches(v, basename, name) || ignored(name)) continue;
      if (v.kind != ViewKind::kEntryPoints) {
        value.append(name).push_back('\0');
        continue;
      }
      // PathDistribution(<dir>/<name>).read_text("entry_points.txt").
      const std::string file_name = JoinUnder(name, "entry_points.txt");
      if (ignored(file_name)) continue;
      std::string text;
      absl::StatusOr<EntryFile> read = ReadEntryFile(fs, JoinUnder(abs, file_name), &text);
      if (!read.ok()) return read.status();
      if (*read == EntryFile::kNothing) continue;
      if (*read == EntryFile::kOther) {
        AppendField(name, &value);
        value.push_back('O');
        continue;
      }
      EntryPointsText parsed = ParseEntryPoints(text, v.arg);
      if (parsed.clean && parsed.pairs.empty()) continue;
      AppendField(name, &value);
      if (parsed.clean) {
        value.push_back('P');
        AppendU64(&value, parsed.pairs.size());
        for (const auto& [pair_name, pair_value] : parsed.pairs) {
          AppendField(pair_name, &value);
          AppendField(pair_value, &value);
        }
      } else {
        value.push_back('H');
        XXH128_canonical_t canonical;
        XXH128_canonicalFromHash(&canonical, XXH3_128bits(text.data(), text.size()));
        value.append(reinterpret_cast<const char*>(canonical.digest), sizeof(canonical.digest));
      }
    }
    e.type = FileType::kRegular;  // stat fields stay zero
    e.hash = XXH3_128bits(value.data(), value.size());
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace ste
