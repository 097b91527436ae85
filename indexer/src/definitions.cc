#include "ste/definitions.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <set>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ste/test_output.h"

extern char** environ;

namespace ste {
namespace {

std::string ParentDir(std::string_view dir) {
  const size_t slash = dir.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(dir.substr(0, slash));
}

std::string BaseName(std::string_view dir) {
  const size_t slash = dir.rfind('/');
  return std::string(slash == std::string_view::npos ? dir : dir.substr(slash + 1));
}

constexpr std::string_view kModuleView = "\x01ste-def";

absl::string_view AV(std::string_view s) { return {s.data(), s.size()}; }

absl::StatusOr<std::string> ReadFileBytes(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      return absl::DataLossError(absl::StrCat("cannot read ", path, ": ", std::strerror(e)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

std::optional<XXH128_hash_t> ParseHex128(absl::string_view hex) {
  if (hex.size() != 32) return std::nullopt;
  uint64_t high = 0, low = 0;
  if (!absl::SimpleHexAtoi(hex.substr(0, 16), &high) || !absl::SimpleHexAtoi(hex.substr(16), &low)) {
    return std::nullopt;
  }
  return XXH128_hash_t{low, high};
}

void WriteAll(int fd, const std::string& bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader went away: its answer says the rest
    at += static_cast<size_t>(n);
  }
}

// Parses the script's answer (ste_fingerprint.py, "Protocol").
absl::StatusOr<std::vector<FileDefinitions>> ParseAnswer(absl::string_view text, size_t files, size_t first = 0) {
  std::vector<FileDefinitions> out;
  FileDefinitions* cur = nullptr;
  auto bad = [](absl::string_view line) {
    return absl::DataLossError(absl::StrCat("the fingerprinter answered out of protocol: '", line, "'"));
  };
  bool at_allowed = false;  // an `at` line follows its unit
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const bool after_unit = at_allowed;
    at_allowed = false;
    if (line.substr(0, 3) == "at " && !after_unit) return bad(line);
    if (line.substr(0, 5) == "file ") {
      size_t n = 0;
      if (!absl::SimpleAtoi(line.substr(5), &n) || n != first + out.size()) return bad(line);
      out.emplace_back();
      cur = &out.back();
    } else if (cur == nullptr) {
      return bad(line);
    } else if (line.substr(0, 6) == "error ") {
      cur->error = std::string(line.substr(6));
      cur = nullptr;
    } else if (line.substr(0, 7) == "module ") {
      std::optional<XXH128_hash_t> h = ParseHex128(line.substr(7));
      if (!h) return bad(line);
      cur->module = *h;
    } else if (line.substr(0, 5) == "unit ") {
      std::vector<absl::string_view> f = absl::StrSplit(line.substr(5), absl::MaxSplits(' ', 3));
      DefinitionUnit u;
      std::optional<XXH128_hash_t> h = f.size() == 4 ? ParseHex128(f[0]) : std::nullopt;
      if (!h || !absl::SimpleAtoi(f[1], &u.first_line) || !absl::SimpleAtoi(f[2], &u.last_line) ||
          f[3].empty() || u.first_line > u.last_line ||
          (!cur->units.empty() && cur->units.back().last_line >= u.first_line)) {
        return bad(line);
      }
      u.hash = *h;
      u.place = *h;
      u.name = std::string(f[3]);
      cur->units.push_back(std::move(u));
      at_allowed = true;
      continue;
    } else if (line.substr(0, 3) == "at ") {
      std::optional<XXH128_hash_t> h = ParseHex128(line.substr(3));
      if (!h) return bad(line);
      cur->units.back().place = *h;
    } else if (line.substr(0, 4) == "doc ") {
      std::vector<absl::string_view> f = absl::StrSplit(line.substr(4), absl::MaxSplits(' ', 2));
      DefinitionDoc d;
      std::optional<XXH128_hash_t> h = f.size() == 3 ? ParseHex128(f[0]) : std::nullopt;
      if (!h || !absl::SimpleAtoi(f[1], &d.line) || f[2].empty() || cur->DocAt(d.line) != nullptr) {
        return bad(line);
      }
      d.hash = *h;
      d.name = std::string(f[2]);
      cur->docs.push_back(std::move(d));
    } else if (line.substr(0, 6) == "const " || line.substr(0, 4) == "sig ") {
      // "const <hex> <name>", "sig <hex> <name>": one name each, once.
      const bool sig = line[0] == 's';
      std::vector<absl::string_view> f = absl::StrSplit(line.substr(sig ? 4 : 6), absl::MaxSplits(' ', 1));
      DefinitionConst c;
      std::optional<XXH128_hash_t> h = f.size() == 2 ? ParseHex128(f[0]) : std::nullopt;
      const std::string_view name(f.size() == 2 ? f[1].data() : "", f.size() == 2 ? f[1].size() : 0);
      if (!h || name.empty() || name.find(' ') != std::string_view::npos ||
          (sig ? cur->Sig(name) : cur->Const(name)) != nullptr) {
        return bad(line);
      }
      c.hash = *h;
      c.name = std::string(name);
      (sig ? cur->sigs : cur->consts).push_back(std::move(c));
    } else if (line.substr(0, 7) == "import ") {
      // "import <hex> <name> <level> <module> <attr> [stdlib]"
      std::vector<absl::string_view> f = absl::StrSplit(line.substr(7), ' ');
      DefinitionImport i;
      std::optional<XXH128_hash_t> h =
          f.size() == 5 || (f.size() == 6 && f[5] == "stdlib") ? ParseHex128(f[0]) : std::nullopt;
      if (!h || f[1].empty() || !absl::SimpleAtoi(f[2], &i.level) || f[3].empty() || f[4].empty() ||
          cur->Import(std::string_view(f[1].data(), f[1].size())) != nullptr) {
        return bad(line);
      }
      i.stdlib = f.size() == 6;
      i.hash = *h;
      i.name = std::string(f[1]);
      i.module = std::string(f[3]);
      i.attr = std::string(f[4]);
      cur->imports.push_back(std::move(i));
    } else if (line.substr(0, 5) == "full ") {
      std::optional<XXH128_hash_t> h = ParseHex128(line.substr(5));
      if (!h || cur->has_full) return bad(line);
      cur->module_full = *h;
      cur->has_full = true;
    } else if (line.substr(0, 7) == "stdlib ") {
      std::optional<XXH128_hash_t> h = ParseHex128(line.substr(7));
      if (!h || cur->has_stdlib) return bad(line);
      cur->module_stdlib = *h;
      cur->has_stdlib = true;
    } else if (line.substr(0, 5) == "binds" && (line.size() == 5 || line[5] == ' ')) {
      if (cur->has_binds) return bad(line);
      cur->has_binds = true;
      for (absl::string_view n : absl::StrSplit(line.substr(5), ' ', absl::SkipEmpty())) cur->binds.emplace_back(n);
      if (!std::is_sorted(cur->binds.begin(), cur->binds.end())) return bad(line);
    } else if (line.substr(0, 6) == "names ") {
      std::optional<XXH128_hash_t> h = ParseHex128(line.substr(6));
      if (!h || cur->has_names) return bad(line);
      cur->names = *h;
      cur->has_names = true;
    } else if (line == "end") {
      cur->parsed = true;
      cur = nullptr;
    } else {
      return bad(line);
    }
  }
  if (out.size() != files || cur != nullptr) {
    return absl::DataLossError(absl::StrCat("the fingerprinter answered for ", out.size(), " of ",
                                            files, " files"));
  }
  return out;
}

}  // namespace

std::string DefinitionViewPath(std::string_view file, std::string_view unit) {
  if (unit.empty()) return absl::StrCat(AV(file), "/", AV(kModuleView));
  return absl::StrCat(AV(file), "/", AV(kModuleView), ":", AV(unit));
}

std::string RubyMethodName(std::string_view unit) {
  // "#<k>" of a repeated name.
  if (size_t hash = unit.rfind('#'); hash != std::string_view::npos && hash + 1 < unit.size() &&
                                     std::all_of(unit.begin() + hash + 1, unit.end(),
                                                 [](char c) { return c >= '0' && c <= '9'; })) {
    unit = unit.substr(0, hash);
  }
  size_t cut = unit.find_last_of("#.:");
  std::string_view name = cut == std::string_view::npos ? unit : unit.substr(cut + 1);
  if (!name.empty() && (name.back() == '?' || name.back() == '!' || name.back() == '=')) name.remove_suffix(1);
  auto word = [](char c) { return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (name.empty() || (name[0] >= '0' && name[0] <= '9') || !std::all_of(name.begin(), name.end(), word)) return "";
  return std::string(name);
}

std::string NameRefPath(std::string_view name) {
  // (Not a view path, whose value an inventory entry would give: the
  // name is the last component.)
  return absl::StrCat("\x01ste-ref/", AV(name));
}

std::string DefinitionPartPath(std::string_view file, DefinitionPart part, std::string_view name) {
  switch (part) {
    case DefinitionPart::kModule: return DefinitionViewPath(file, "");
    case DefinitionPart::kUnit: return DefinitionViewPath(file, name);
    case DefinitionPart::kPlace: return absl::StrCat(AV(file), "/\x01ste-at:", AV(name));
    case DefinitionPart::kDoc: return absl::StrCat(AV(file), "/\x01ste-doc:", AV(name));
    case DefinitionPart::kConst: return absl::StrCat(AV(file), "/\x01ste-const:", AV(name));
    case DefinitionPart::kSig: return absl::StrCat(AV(file), "/\x01ste-sig:", AV(name));
    case DefinitionPart::kNames: return absl::StrCat(AV(file), "/\x01ste-names");
    case DefinitionPart::kAbsent: return absl::StrCat(AV(file), "/\x01ste-absent:", AV(name));
    case DefinitionPart::kImport: return absl::StrCat(AV(file), "/\x01ste-import:", AV(name));
  }
  return "";
}

std::string DescribeDefinition(std::string_view view_path) {
  std::optional<View> v = ParseView(view_path);
  if (!v || v->kind != ViewKind::kDefinition) return "";
  switch (v->part) {
    case DefinitionPart::kModule: return absl::StrCat(v->dir, " (module-level code)");
    case DefinitionPart::kUnit: return absl::StrCat(v->dir, "::", v->arg);
    case DefinitionPart::kPlace: return absl::StrCat(v->dir, "::", v->arg, " (its place)");
    case DefinitionPart::kDoc: return absl::StrCat(v->dir, "::", v->arg, " (docstring)");
    case DefinitionPart::kConst: return absl::StrCat(v->dir, "::", v->arg, " (constant)");
    case DefinitionPart::kSig: return absl::StrCat(v->dir, "::", v->arg, " (signature)");
    case DefinitionPart::kNames: return absl::StrCat(v->dir, " (its top-level names)");
    case DefinitionPart::kAbsent: return absl::StrCat(v->dir, "::", v->arg, " (a name looked up)");
    case DefinitionPart::kImport: return absl::StrCat(v->dir, "::", v->arg, " (an import)");
  }
  return "";
}

const DefinitionUnit* FileDefinitions::UnitAt(uint32_t line) const {
  auto it = std::upper_bound(units.begin(), units.end(), line,
                             [](uint32_t l, const DefinitionUnit& u) { return l < u.first_line; });
  if (it == units.begin()) return nullptr;
  --it;
  return line <= it->last_line ? &*it : nullptr;
}

const DefinitionDoc* FileDefinitions::DocAt(uint32_t line) const {
  for (const DefinitionDoc& d : docs) {
    if (d.line == line) return &d;
  }
  return nullptr;
}

const DefinitionConst* FileDefinitions::Const(std::string_view name) const {
  for (const DefinitionConst& c : consts) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const DefinitionConst* FileDefinitions::Sig(std::string_view name) const {
  for (const DefinitionConst& c : sigs) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const DefinitionImport* FileDefinitions::Import(std::string_view name) const {
  for (const DefinitionImport& i : imports) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

bool FileDefinitions::Binds(std::string_view name) const {
  return std::binary_search(binds.begin(), binds.end(), name,
                            [](std::string_view a, std::string_view b) { return a < b; });
}

XXH128_hash_t AbsentNameHash(bool bound) {
  const std::string_view bytes = bound ? std::string_view("ste-absent\0bound", 16) : std::string_view("ste-absent\0absent", 17);
  return XXH3_128bits(bytes.data(), bytes.size());
}

XXH128_hash_t UnparsedModuleHash(std::string_view content) {
  std::string bytes = absl::StrCat("ste-unparsed", absl::string_view("\0", 1), AV(content));
  return XXH3_128bits(bytes.data(), bytes.size());
}

Fingerprinter Fingerprinter::ForIntegrations(const std::string& integrations_dir) {
  return Fingerprinter({
      {".py", {"python3", "-I", "-S", "-B", integrations_dir + "/python/ste_fingerprint.py"}},
      {".rb", {"ruby", "--disable=all", integrations_dir + "/ruby/ste_fingerprint.rb"}},
  });
}

const Fingerprinter::Language* Fingerprinter::LanguageOf(std::string_view path) const {
  for (const Language& l : languages_) {
    if (path.size() > l.extension.size() &&
        path.substr(path.size() - l.extension.size()) == l.extension) {
      return &l;
    }
  }
  return nullptr;
}

absl::StatusOr<std::vector<FileDefinitions>> Fingerprinter::Run(
    const std::vector<std::string>& paths, const std::vector<std::string>& contents) const {
  if (paths.size() != contents.size()) {
    return absl::InvalidArgumentError(absl::StrCat(paths.size(), " paths for ", contents.size(), " contents"));
  }
  std::vector<FileDefinitions> out(paths.size());
  // Each language's files, in order, in one process.
  std::map<const Language*, std::vector<size_t>> by_language;
  for (size_t i = 0; i < paths.size(); i++) {
    if (const Language* l = LanguageOf(paths[i])) {
      by_language[l].push_back(i);
    } else {
      out[i].error = absl::StrCat("no fingerprinter for ", AV(paths[i]));
    }
  }
  // Many files (a record's every loaded source) go to a process per core,
  // in contiguous chunks of at least kFilesPerProcess: parsing is the
  // cost (sympy's 874 modules: 8 s of one core).
  constexpr size_t kFilesPerProcess = 64;
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  for (const auto& [language, files] : by_language) {
    const size_t chunks = std::max<size_t>(1, std::min(cores, files.size() / kFilesPerProcess));
    std::vector<std::vector<size_t>> parts(chunks);
    for (size_t k = 0; k < files.size(); k++) parts[k * chunks / files.size()].push_back(files[k]);
    std::vector<absl::StatusOr<std::vector<FileDefinitions>>> runs(chunks, std::vector<FileDefinitions>());
    auto run_part = [&, language = language](size_t c) {
      std::vector<std::string> batch;
      for (size_t i : parts[c]) batch.push_back(contents[i]);
      runs[c] = RunLanguage(*language, batch);
    };
    std::vector<std::thread> others;
    for (size_t c = 1; c < chunks; c++) others.emplace_back(run_part, c);
    run_part(0);
    for (std::thread& t : others) t.join();
    for (size_t c = 0; c < chunks; c++) {
      for (size_t k = 0; k < parts[c].size(); k++) {
        if (runs[c].ok()) {
          out[parts[c][k]] = std::move((*runs[c])[k]);
        } else {
          out[parts[c][k]].error = std::string(runs[c].status().message());
        }
      }
    }
  }
  return out;
}

namespace {

// The fingerprinter of a language as a child: its stdin and stdout (both
// close-on-exec here), without a test's Ruby tracker and load path
// (RUBYOPT/RUBYLIB are not the script's).
struct FingerprinterChild {
  pid_t pid = -1;
  int in = -1;   // its stdin
  int out = -1;  // its stdout
};

absl::StatusOr<FingerprinterChild> SpawnFingerprinter(const std::vector<std::string>& command) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<std::string> args = command;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; e++) {
    if (std::strncmp(*e, "RUBYOPT=", 8) != 0 && std::strncmp(*e, "RUBYLIB=", 8) != 0) envp.push_back(*e);
  }
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  FingerprinterChild child;
  int rc = posix_spawnp(&child.pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    return absl::NotFoundError(absl::StrCat("cannot run ", args[0], ": ", std::strerror(rc)));
  }
  child.in = in[1];
  child.out = out[0];
  return child;
}

// Writes `request` to `fd` (SIGPIPE blocked on this thread: a reader that
// exits early must not kill ste), then closes it if `close_after`.
void WriteRequest(int fd, const std::string& request, bool close_after) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  WriteAll(fd, request);
  if (close_after) close(fd);
  struct timespec zero = {0, 0};
  while (sigtimedwait(&block, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

std::string Request(const std::vector<std::string>& contents) {
  std::string request;
  for (const std::string& c : contents) absl::StrAppend(&request, c.size(), "\n", c);
  return request;
}

}  // namespace

absl::StatusOr<std::vector<FileDefinitions>> Fingerprinter::RunLanguage(
    const Language& language, const std::vector<std::string>& contents) const {
  if (contents.empty()) return std::vector<FileDefinitions>();
  absl::StatusOr<FingerprinterChild> child = SpawnFingerprinter(language.argv);
  if (!child.ok()) return child.status();
  const pid_t pid = child->pid;
  std::string request = Request(contents);
  // Written from a thread while the answer is read: neither pipe fills.
  std::thread writer([fd = child->in, &request] { WriteRequest(fd, request, true); });
  std::string answer;
  char buf[65536];
  for (;;) {
    ssize_t n = read(child->out, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  close(child->out);
  writer.join();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(absl::StrJoin(language.argv, " "), " failed (", WIFEXITED(status) ? "exit " : "signal ",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), ")"));
  }
  return ParseAnswer(answer, contents.size());
}

std::string FingerprintAnswer(const FileDefinitions& defs) {
  if (!defs.parsed) {
    std::string why = defs.error.empty() ? "unparseable" : defs.error;
    std::replace(why.begin(), why.end(), '\n', ' ');
    return absl::StrCat("error ", why, "\n");
  }
  std::string out = absl::StrCat("module ", HashToHex(defs.module), "\n");
  for (const DefinitionUnit& u : defs.units) {
    absl::StrAppend(&out, "unit ", HashToHex(u.hash), " ", u.first_line, " ", u.last_line, " ", u.name, "\n");
    absl::StrAppend(&out, "at ", HashToHex(u.place), "\n");
  }
  for (const DefinitionDoc& d : defs.docs) absl::StrAppend(&out, "doc ", HashToHex(d.hash), " ", d.line, " ", d.name, "\n");
  for (const DefinitionConst& c : defs.consts) absl::StrAppend(&out, "const ", HashToHex(c.hash), " ", c.name, "\n");
  for (const DefinitionConst& c : defs.sigs) absl::StrAppend(&out, "sig ", HashToHex(c.hash), " ", c.name, "\n");
  if (defs.has_names) absl::StrAppend(&out, "names ", HashToHex(defs.names), "\n");
  for (const DefinitionImport& i : defs.imports) {
    absl::StrAppend(&out, "import ", HashToHex(i.hash), " ", i.name, " ", i.level, " ", i.module, " ", i.attr,
                    i.stdlib ? " stdlib" : "", "\n");
  }
  if (defs.has_full) absl::StrAppend(&out, "full ", HashToHex(defs.module_full), "\n");
  if (defs.has_stdlib) absl::StrAppend(&out, "stdlib ", HashToHex(defs.module_stdlib), "\n");
  if (defs.has_binds) absl::StrAppend(&out, "binds", defs.binds.empty() ? "" : " ", absl::StrJoin(defs.binds, " "), "\n");
  absl::StrAppend(&out, "end\n");
  return out;
}

std::optional<FileDefinitions> ParseFingerprintAnswer(std::string_view text) {
  absl::StatusOr<std::vector<FileDefinitions>> parsed = ParseAnswer(absl::StrCat("file 0\n", AV(text)), 1);
  if (!parsed.ok() || parsed->size() != 1) return std::nullopt;
  return std::move((*parsed)[0]);
}

namespace {

// A cache entry's name: its key in hex.
std::string DiskKey(XXH128_hash_t identity, std::string_view content) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  XXH3_128bits_update(state, &identity, sizeof identity);
  XXH3_128bits_update(state, content.data(), content.size());
  XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return HashToHex(h);
}

// Writes `bytes` to `path` through a temporary in its directory and a
// rename (no fsync: see DefinitionCache). False if it could not.
bool WriteEntry(const std::string& path, const std::string& bytes) {
  std::string temp = absl::StrCat(path, ".tmp.", getpid(), ".", std::hash<std::thread::id>()(std::this_thread::get_id()));
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  size_t at = 0;
  while (at < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += static_cast<size_t>(n);
  }
  const bool whole = close(fd) == 0 && at == bytes.size();
  if (!whole || rename(temp.c_str(), path.c_str()) != 0) {
    unlink(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace

// A language's fingerprinter kept running: its answers come as each file
// is parsed (the scripts flush each), numbered on from the last request.
struct DefinitionCache::Kept {
  FingerprinterChild child;
  size_t next = 0;  // the number of its next answer
  std::string buffered;  // read past the last answer

  ~Kept() { Stop(); }
  void Stop() {
    if (child.pid < 0) return;
    close(child.in);
    close(child.out);
    int status;
    while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    child = FingerprinterChild();
  }
  // The answers for `contents`; an error stops the process (the next
  // request starts another).
  absl::StatusOr<std::vector<FileDefinitions>> Ask(const std::vector<std::string>& command,
                                                   const std::vector<std::string>& contents) {
    if (child.pid < 0) {
      absl::StatusOr<FingerprinterChild> started = SpawnFingerprinter(command);
      if (!started.ok()) return started.status();
      child = *started;
      next = 0;
      buffered.clear();
    }
    std::string request = Request(contents);
    std::thread writer([fd = child.in, &request] { WriteRequest(fd, request, false); });
    // Whole lines up to the last answer's `end` or `error` line.
    size_t done = 0;
    size_t scanned = 0;
    char buf[65536];
    bool eof = false;
    std::string text = std::move(buffered);
    buffered.clear();
    while (done < contents.size()) {
      size_t nl = text.find('\n', scanned);
      if (nl == std::string::npos) {
        ssize_t n = read(child.out, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          eof = true;
          break;
        }
        text.append(buf, static_cast<size_t>(n));
        continue;
      }
      std::string_view line(text.data() + scanned, nl - scanned);
      if (line == "end" || line.substr(0, 6) == "error ") done++;
      scanned = nl + 1;
    }
    writer.join();
    if (eof) {
      Stop();
      return absl::DataLossError(absl::StrCat(absl::StrJoin(command, " "), " stopped before it answered"));
    }
    buffered = text.substr(scanned);
    text.resize(scanned);
    absl::StatusOr<std::vector<FileDefinitions>> parsed = ParseAnswer(text, contents.size(), next);
    if (!parsed.ok()) {
      Stop();
      return parsed.status();
    }
    next += contents.size();
    return parsed;
  }
};

DefinitionCache::DefinitionCache(Fingerprinter fingerprinter, std::string disk_dir)
    : fingerprinter_(std::move(fingerprinter)), disk_dir_(std::move(disk_dir)) {}

DefinitionCache::~DefinitionCache() = default;

std::vector<FileDefinitions> DefinitionCache::Fingerprint(const std::vector<std::string>& paths,
                                                          const std::vector<std::string>& contents) {
  // Many files: a process per core (Fingerprinter::Run).
  constexpr size_t kFew = 64;
  std::vector<FileDefinitions> out(paths.size());
  if (paths.size() > kFew) {
    absl::StatusOr<std::vector<FileDefinitions>> run = fingerprinter_.Run(paths, contents);
    for (size_t i = 0; i < paths.size(); i++) {
      if (run.ok()) {
        out[i] = std::move((*run)[i]);
      } else {
        out[i].error = std::string(run.status().message());
      }
    }
    return out;
  }
  std::map<const Fingerprinter::Language*, std::vector<size_t>> by_language;
  for (size_t i = 0; i < paths.size(); i++) {
    if (const Fingerprinter::Language* l = fingerprinter_.LanguageOf(paths[i])) {
      by_language[l].push_back(i);
    } else {
      out[i].error = absl::StrCat("no fingerprinter for ", paths[i]);
    }
  }
  std::lock_guard<std::mutex> lock(kept_mu_);
  for (const auto& [language, files] : by_language) {
    std::unique_ptr<Kept>& kept = kept_[language];
    if (kept == nullptr) kept = std::make_unique<Kept>();
    std::vector<std::string> batch;
    for (size_t i : files) batch.push_back(contents[i]);
    absl::StatusOr<std::vector<FileDefinitions>> answers = kept->Ask(language->argv, batch);
    for (size_t k = 0; k < files.size(); k++) {
      if (answers.ok()) {
        out[files[k]] = std::move((*answers)[k]);
      } else {
        out[files[k]].error = std::string(answers.status().message());
      }
    }
  }
  return out;
}

std::optional<XXH128_hash_t> DefinitionCache::Identity(const Fingerprinter::Language& language) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = identities_.find(&language);
    if (it != identities_.end()) return it->second;
  }
  std::optional<XXH128_hash_t> id;
  std::vector<FileDefinitions> empty = Fingerprint({"empty" + language.extension}, {""});
  if (empty.size() == 1 && empty[0].parsed) {
    const absl::string_view nul("\0", 1);
    std::string bytes = absl::StrJoin(language.argv, nul);
    const std::string path = language.argv.empty() ? "" : language.argv.back();
    absl::StatusOr<std::string> script = ReadFileBytes(path);
    // The files beside the script that it may load (ste_fingerprint.rb
    // requires ste_consts.rb): every one of its extension there, by name.
    std::vector<std::string> helpers;
    const std::string base = BaseName(path);
    const size_t dot = base.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : base.substr(dot);
    const std::string dir = path.find('/') == std::string::npos ? "." : ParentDir(path);
    bool listed = false;
    if (DIR* d = opendir(dir.c_str())) {
      listed = true;
      while (struct dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (!ext.empty() && absl::EndsWith(name, ext) && name != base) helpers.push_back(name);
      }
      closedir(d);
    }
    std::sort(helpers.begin(), helpers.end());
    bool helpers_read = listed;
    for (const std::string& name : helpers) {
      absl::StatusOr<std::string> helper = ReadFileBytes(absl::StrCat(dir, "/", name));
      if (!helper.ok()) {
        helpers_read = false;
        break;
      }
      absl::StrAppend(&bytes, nul, name, nul, *helper);
    }
    if (script.ok() && helpers_read) {
      absl::StrAppend(&bytes, nul, *script, nul, FingerprintAnswer(empty[0]));
      id = XXH3_128bits(bytes.data(), bytes.size());
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  identities_.emplace(&language, id);
  return id;
}

void DefinitionCache::Prefetch(const std::vector<std::string>& abs_paths) {
  std::vector<std::string> wanted;
  bool disk = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& p : abs_paths) {
      if (!files_.count(p)) wanted.push_back(p);
    }
    disk = !disk_dir_.empty() && disk_ok_;
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  if (wanted.empty()) return;
  if (disk) {
    std::call_once(disk_made_, [this] {
      if (!MakeDirectories(disk_dir_).ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        disk_ok_ = false;
      }
    });
    std::lock_guard<std::mutex> lock(mu_);
    disk = disk_ok_;
  }
  std::vector<std::string> contents;
  std::vector<std::string> readable;
  std::vector<std::string> keys;  // of readable's entries on disk ("": none)
  std::map<std::string, std::shared_ptr<const FileDefinitions>> done;
  size_t from_disk = 0;
  for (const std::string& p : wanted) {
    absl::StatusOr<std::string> bytes = ReadFileBytes(p);
    if (!bytes.ok()) {
      auto d = std::make_shared<FileDefinitions>();
      d->error = std::string(bytes.status().message());
      done[p] = std::move(d);
      continue;
    }
    std::string key;
    if (disk) {
      const Fingerprinter::Language* language = fingerprinter_.LanguageOf(p);
      std::optional<XXH128_hash_t> id = language != nullptr ? Identity(*language) : std::nullopt;
      if (id) {
        key = DiskKey(*id, *bytes);
        const std::string entry = absl::StrCat(disk_dir_, "/", key);
        absl::StatusOr<std::string> kept = ReadFileBytes(entry);
        std::optional<FileDefinitions> defs = kept.ok() ? ParseFingerprintAnswer(*kept) : std::nullopt;
        if (defs && defs->parsed) {
          utimensat(AT_FDCWD, entry.c_str(), nullptr, 0);  // used now (PruneDisk)
          done[p] = std::make_shared<FileDefinitions>(*std::move(defs));
          from_disk++;
          continue;
        }
      }
    }
    readable.push_back(p);
    contents.push_back(*std::move(bytes));
    keys.push_back(std::move(key));
  }
  std::vector<FileDefinitions> run = Fingerprint(readable, contents);
  bool written = true;
  for (size_t i = 0; i < readable.size(); i++) {
    auto d = std::make_shared<FileDefinitions>(std::move(run[i]));
    if (d->parsed && !keys[i].empty() && written) {
      written = WriteEntry(absl::StrCat(disk_dir_, "/", keys[i]), FingerprintAnswer(*d));
    }
    done[readable[i]] = std::move(d);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!written) disk_ok_ = false;
  counts_.fingerprinted += readable.size();
  counts_.from_disk += from_disk;
  for (auto& [p, d] : done) files_.emplace(p, std::move(d));
}

DefinitionCache::Counts DefinitionCache::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

size_t DefinitionCache::PruneDisk(int max_age_days) const {
  if (disk_dir_.empty()) return 0;
  DIR* dir = opendir(disk_dir_.c_str());
  if (dir == nullptr) return 0;
  const time_t cutoff = time(nullptr) - static_cast<time_t>(max_age_days) * 86400;
  size_t removed = 0;
  while (struct dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = absl::StrCat(disk_dir_, "/", name);
    struct stat st;
    // A temporary left by a killed writer goes too, once old.
    if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime < cutoff && unlink(path.c_str()) == 0) {
      removed++;
    }
  }
  closedir(dir);
  return removed;
}

std::shared_ptr<const FileDefinitions> DefinitionCache::Get(const std::string& abs_path) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(abs_path);
    if (it != files_.end()) return it->second;
  }
  Prefetch({abs_path});
  std::lock_guard<std::mutex> lock(mu_);
  return files_.at(abs_path);
}

std::optional<InventoryEntry> DefinitionViewEntry(const std::string& view_path, const View& view,
                                                  const FileDefinitions& defs,
                                                  std::string_view content, bool imports_hold,
                                                  bool stdlib_hold) {
  InventoryEntry e;
  e.path = view_path;
  e.type = FileType::kRegular;
  if (view.part == DefinitionPart::kModule) {
    // Without the imports that only bind names only when each is sure to
    // find its name (ImportsHold, StdlibImportsHold); without the standard
    // library's only when those alone are; else with them all.
    if (!defs.parsed) {
      e.hash = UnparsedModuleHash(content);
    } else if (defs.imports.empty() || !defs.has_full || (imports_hold && stdlib_hold)) {
      e.hash = defs.module;
    } else if (stdlib_hold && defs.has_stdlib) {
      e.hash = defs.module_stdlib;
    } else {
      e.hash = defs.module_full;
    }
    return e;
  }
  if (!defs.parsed) return std::nullopt;
  switch (view.part) {
    case DefinitionPart::kModule:
      break;
    case DefinitionPart::kUnit:
    case DefinitionPart::kPlace:
      for (const DefinitionUnit& u : defs.units) {
        if (u.name == view.arg) {
          e.hash = view.part == DefinitionPart::kUnit ? u.hash : u.place;
          return e;
        }
      }
      break;
    case DefinitionPart::kDoc:
      for (const DefinitionDoc& d : defs.docs) {
        if (d.name == view.arg) {
          e.hash = d.hash;
          return e;
        }
      }
      break;
    case DefinitionPart::kConst:
    case DefinitionPart::kSig:
      if (const DefinitionConst* c = view.part == DefinitionPart::kConst ? defs.Const(view.arg) : defs.Sig(view.arg)) {
        e.hash = c->hash;
        return e;
      }
      break;
    case DefinitionPart::kNames:
      if (!defs.has_names) break;
      e.hash = defs.names;
      return e;
    case DefinitionPart::kAbsent:
      // Only a fingerprinter that says which names it binds (`names`) says
      // whether one is bound: without one, no entry (a change: selected).
      if (!defs.has_names) break;
      e.hash = AbsentNameHash(defs.Const(view.arg) != nullptr || defs.Sig(view.arg) != nullptr ||
                              defs.Import(view.arg) != nullptr);
      return e;
    case DefinitionPart::kImport:
      if (const DefinitionImport* i = defs.Import(view.arg)) {
        e.hash = i->hash;
        return e;
      }
      break;
  }
  return std::nullopt;
}

namespace {

bool IsPackageInit(std::string_view file) {
  return file == "__init__.py" || absl::EndsWith(absl::string_view(file.data(), file.size()), "/__init__.py");
}

// The top-level module names the files of a tree may be imported as
// (ImportTree::may_shadow): each `<dir>/<name>.py` (.pyc, an extension
// module `<name>.*.so` or .pyd) and `<dir>/<name>/__init__.py` where <dir>
// is the root or a folder that is no package (no __init__.py), other than
// a __pycache__. Made once, the first time it is asked.
class ShadowNames {
 public:
  // `files`: calls its argument with each regular file's repo-relative
  // path; `is_file`: whether a repo-relative path is a regular file.
  ShadowNames(std::function<void(const std::function<void(std::string_view)>&)> files,
              std::function<bool(const std::string&)> is_file)
      : files_(std::move(files)), is_file_(std::move(is_file)) {}

  bool Has(const std::string& name) {
    std::call_once(once_, [this] {
      files_([this](std::string_view path) { Add(path); });
    });
    return names_.count(name) > 0;
  }

 private:
  bool OnPath(const std::string& dir) {
    return dir.empty() || (BaseName(dir) != "__pycache__" && !is_file_(dir + "/__init__.py"));
  }
  void Add(std::string_view path) {
    if (path.empty() || path[0] == '/' || path.find('\x01') != std::string_view::npos) return;
    const std::string dir = ParentDir(path);
    const std::string base = BaseName(path);
    if (base == "__init__.py" || base == "__init__.pyc") {
      if (!dir.empty() && OnPath(ParentDir(dir))) names_.insert(BaseName(dir));
      return;
    }
    const size_t dot = base.find('.');
    if (dot == 0 || dot == std::string::npos) return;
    const absl::string_view rest = absl::string_view(base).substr(dot);
    if (rest != ".py" && rest != ".pyc" && !absl::EndsWith(rest, ".so") && !absl::EndsWith(rest, ".pyd")) return;
    if (OnPath(dir)) names_.insert(base.substr(0, dot));
  }

  std::function<void(const std::function<void(std::string_view)>&)> files_;
  std::function<bool(const std::string&)> is_file_;
  std::once_flag once_;
  std::set<std::string> names_;
};

void WalkFiles(const std::string& root, const std::string& rel, const std::function<void(std::string_view)>& each) {
  DIR* d = opendir(rel.empty() ? root.c_str() : absl::StrCat(root, "/", rel).c_str());
  if (d == nullptr) return;
  std::vector<std::string> dirs;
  while (struct dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.empty() || name[0] == '.') continue;  // (., .., .git, .ste, a hidden venv)
    const std::string path = rel.empty() ? name : absl::StrCat(rel, "/", name);
    struct stat st;
    if (lstat(absl::StrCat(root, "/", path).c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      dirs.push_back(path);
    } else if (S_ISREG(st.st_mode)) {
      each(path);
    }
  }
  closedir(d);
  for (const std::string& sub : dirs) WalkFiles(root, sub, each);
}

}  // namespace

ImportTree ImportTreeOf(const Inventory& tree) {
  ImportTree t;
  t.is_file = [&tree](const std::string& path) {
    const InventoryEntry* e = tree.Find(path);
    return e != nullptr && e->type == FileType::kRegular;
  };
  t.has_extension_module = [&tree](const std::string& stem) {
    const std::string prefix = stem + ".";
    for (auto it = std::lower_bound(tree.begin(), tree.end(), prefix,
                                    [](const InventoryEntry& e, const std::string& p) { return e.path < p; });
         it != tree.end() && absl::StartsWith(it->path, prefix); ++it) {
      if (absl::EndsWith(it->path, ".so") || absl::EndsWith(it->path, ".pyd")) return true;
    }
    return false;
  };
  auto shadows = std::make_shared<ShadowNames>(
      [&tree](const std::function<void(std::string_view)>& each) {
        for (const InventoryEntry& e : tree) {
          if (e.type == FileType::kRegular) each(e.path);
        }
      },
      t.is_file);
  t.may_shadow = [shadows](const std::string& name) { return shadows->Has(name); };
  return t;
}

ImportTree ImportTreeOnDisk(const std::string& root) {
  ImportTree t;
  t.is_file = [root](const std::string& path) {
    struct stat st;
    return lstat(absl::StrCat(root, "/", path).c_str(), &st) == 0 && S_ISREG(st.st_mode);
  };
  t.has_extension_module = [root](const std::string& stem) {
    const size_t slash = stem.rfind('/');
    const std::string dir = absl::StrCat(root, "/", slash == std::string::npos ? "" : stem.substr(0, slash));
    const std::string prefix = absl::StrCat(slash == std::string::npos ? stem : stem.substr(slash + 1), ".");
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return true;  // (not known: as if there were one)
    bool found = false;
    while (struct dirent* e = readdir(d)) {
      const absl::string_view name = e->d_name;
      if (absl::StartsWith(name, prefix) && (absl::EndsWith(name, ".so") || absl::EndsWith(name, ".pyd"))) {
        found = true;
        break;
      }
    }
    closedir(d);
    return found;
  };
  auto shadows = std::make_shared<ShadowNames>(
      [root](const std::function<void(std::string_view)>& each) { WalkFiles(root, "", each); }, t.is_file);
  t.may_shadow = [shadows](const std::string& name) { return shadows->Has(name); };
  return t;
}

std::string ImportedFile(std::string_view init_file, const DefinitionImport& import, const ImportTree& tree) {
  if (!IsPackageInit(init_file) || import.module.empty()) return "";
  // The package's folder ("" at the root), then the folder the module's
  // dotted name starts from.
  std::string base = ParentDir(init_file);
  std::vector<std::string> parts = absl::StrSplit(import.module, '.');
  if (import.level == 0) {
    // `from pkg.sub import x` in pkg/__init__.py: pkg is this package only
    // when it is this folder's name (more is not told apart: none).
    if (base.empty() || parts[0] != BaseName(base)) return "";
    parts.erase(parts.begin());
    if (parts.empty()) return "";
  } else {
    for (uint32_t up = 1; up < import.level; up++) {
      if (base.empty()) return "";
      base = ParentDir(base);
    }
  }
  for (const std::string& p : parts) {
    if (p.empty() || p == "." || p == "..") return "";
  }
  const std::string rel = absl::StrCat(base, base.empty() ? "" : "/", absl::StrJoin(parts, "/"));
  // The import system's order: a package's folder, then an extension
  // module (none may be there), then the source.
  if (tree.is_file(rel + "/__init__.py")) return rel + "/__init__.py";
  if (!tree.is_file(rel + ".py") || tree.has_extension_module(rel)) return "";
  return rel + ".py";
}

bool ImportsHold(std::string_view init_file, const FileDefinitions& defs, const ImportTree& tree,
                 const std::function<const FileDefinitions*(const std::string&)>& defs_of) {
  for (const DefinitionImport& i : defs.imports) {
    if (i.stdlib) continue;  // (StdlibImportsHold)
    const std::string target = ImportedFile(init_file, i, tree);
    if (target.empty()) return false;
    const FileDefinitions* d = defs_of(target);
    if (d == nullptr || !d->parsed || !d->has_binds || !d->Binds(i.attr)) return false;
  }
  return true;
}

bool StdlibImportsHold(const FileDefinitions& defs, const ImportTree& tree) {
  for (const DefinitionImport& i : defs.imports) {
    if (!i.stdlib) continue;
    const std::string top = i.module.substr(0, i.module.find('.'));
    if (i.level != 0 || !tree.may_shadow || tree.may_shadow(top)) return false;
  }
  return true;
}

absl::StatusOr<std::vector<InventoryEntry>> DefinitionViewsNow(
    const std::string& root, const std::vector<std::string>& view_paths, const Inventory* base,
    const Inventory& head, const Fingerprinter& fingerprinter) {
  // The views of each file.
  std::map<std::string, std::vector<std::pair<std::string, View>>> by_file;
  for (const std::string& p : view_paths) {
    std::optional<View> v = ParseView(p);
    if (!v || v->kind != ViewKind::kDefinition || v->dir[0] == '/') {
      return absl::InvalidArgumentError(absl::StrCat("not a repository definition view: ", p));
    }
    by_file[v->dir].emplace_back(p, *std::move(v));
  }
  std::vector<InventoryEntry> out;
  std::vector<std::string> changed;  // files to fingerprint
  std::vector<std::string> contents;
  // A file's bytes as `now` hashed them (Aborted: it changed since).
  auto read_as_hashed = [&](const std::string& file, const InventoryEntry& now) -> absl::StatusOr<std::string> {
    absl::StatusOr<std::string> bytes = ReadFileBytes(file == kRootPath ? root : absl::StrCat(root, "/", file));
    if (!bytes.ok()) return bytes.status();
    XXH128_hash_t h = XXH3_128bits(bytes->data(), bytes->size());
    if (h.low64 != now.hash.low64 || h.high64 != now.hash.high64) {
      return absl::AbortedError(absl::StrCat(file, " changed while it was fingerprinted"));
    }
    return bytes;
  };
  for (auto& [file, views] : by_file) {
    const InventoryEntry* now = head.Find(file);
    if (now == nullptr || now->type != FileType::kRegular) continue;  // gone: every view goes
    const InventoryEntry* then = base != nullptr ? base->Find(file) : nullptr;
    if (then != nullptr && then->type == FileType::kRegular && then->hash.low64 == now->hash.low64 &&
        then->hash.high64 == now->hash.high64) {
      for (const auto& [path, view] : views) {
        if (const InventoryEntry* e = base->Find(path)) out.push_back(*e);
      }
      continue;
    }
    absl::StatusOr<std::string> bytes = read_as_hashed(file, *now);
    if (!bytes.ok()) return bytes.status();
    changed.push_back(file);
    contents.push_back(*std::move(bytes));
  }
  auto fingerprint = [&](const std::vector<std::string>& files, const std::vector<std::string>& bytes) {
    std::vector<FileDefinitions> got(files.size());
    if (files.empty()) return got;
    absl::StatusOr<std::vector<FileDefinitions>> run = fingerprinter.Run(files, bytes);
    if (run.ok()) {
      got = *std::move(run);
    } else {
      for (FileDefinitions& d : got) d.error = std::string(run.status().message());
    }
    return got;
  };
  std::vector<FileDefinitions> defs = fingerprint(changed, contents);
  // The files the imports of a changed package's __init__.py name, to know
  // whether each binds what is imported (ImportsHold): those not among the
  // changed ones are fingerprinted too (a file that cannot be read is not
  // known: the imports do not hold).
  std::map<std::string, const FileDefinitions*> known;
  for (size_t i = 0; i < changed.size(); i++) known[changed[i]] = &defs[i];
  std::vector<std::string> more, more_contents;
  const ImportTree import_tree = ImportTreeOf(head);
  for (size_t i = 0; i < changed.size(); i++) {
    if (!defs[i].parsed || defs[i].imports.empty() || !IsPackageInit(changed[i])) continue;
    for (const DefinitionImport& imp : defs[i].imports) {
      const std::string target = ImportedFile(changed[i], imp, import_tree);
      if (target.empty() || known.count(target) ||
          std::find(more.begin(), more.end(), target) != more.end()) {
        continue;
      }
      const InventoryEntry* now = head.Find(target);
      if (now == nullptr) continue;
      absl::StatusOr<std::string> bytes = read_as_hashed(target, *now);
      if (absl::IsAborted(bytes.status())) return bytes.status();
      if (!bytes.ok()) continue;
      more.push_back(target);
      more_contents.push_back(*std::move(bytes));
    }
  }
  std::vector<FileDefinitions> more_defs = fingerprint(more, more_contents);
  for (size_t i = 0; i < more.size(); i++) known[more[i]] = &more_defs[i];
  auto defs_of = [&](const std::string& file) -> const FileDefinitions* {
    auto it = known.find(file);
    return it == known.end() ? nullptr : it->second;
  };
  for (size_t i = 0; i < changed.size(); i++) {
    const bool hold = defs[i].parsed && !defs[i].imports.empty() && ImportsHold(changed[i], defs[i], import_tree, defs_of);
    const bool stdlib_hold = defs[i].parsed && StdlibImportsHold(defs[i], import_tree);
    std::set<std::string> had;
    for (const auto& [path, view] : by_file[changed[i]]) {
      had.insert(path);
      if (std::optional<InventoryEntry> e = DefinitionViewEntry(path, view, defs[i], contents[i], hold, stdlib_hold)) {
        out.push_back(*std::move(e));
      }
    }
    // A Ruby file's simple constants no view of the baseline names (format
    // 8: one added is no module-level code): each an entry, which the
    // diff calls added (selection.cc selects the tests that loaded the
    // file and named it). Not when the file's names (a view every test
    // that loaded it records, definition_resolution.cc) are the
    // baseline's: then none was added, and those are constants no test
    // named.
    if (!defs[i].parsed || !defs[i].has_names || !absl::EndsWith(changed[i], ".rb")) continue;
    const InventoryEntry* names_then =
        base != nullptr ? base->Find(DefinitionPartPath(changed[i], DefinitionPart::kNames, "")) : nullptr;
    if (names_then != nullptr && names_then->hash.low64 == defs[i].names.low64 &&
        names_then->hash.high64 == defs[i].names.high64) {
      continue;
    }
    for (const DefinitionConst& c : defs[i].consts) {
      std::string path = DefinitionPartPath(changed[i], DefinitionPart::kConst, c.name);
      if (had.count(path)) continue;
      InventoryEntry e;
      e.path = std::move(path);
      e.type = FileType::kRegular;
      e.hash = c.hash;
      out.push_back(std::move(e));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const InventoryEntry& a, const InventoryEntry& b) { return a.path < b.path; });
  return out;
}

}  // namespace ste
