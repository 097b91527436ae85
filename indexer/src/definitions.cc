#include "ste/definitions.h"

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
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace ste {
namespace {

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
absl::StatusOr<std::vector<FileDefinitions>> ParseAnswer(absl::string_view text, size_t files) {
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
      if (!absl::SimpleAtoi(line.substr(5), &n) || n != out.size()) return bad(line);
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

absl::StatusOr<std::vector<FileDefinitions>> Fingerprinter::RunLanguage(
    const Language& language, const std::vector<std::string>& contents) const {
  if (contents.empty()) return std::vector<FileDefinitions>();
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<std::string> args = language.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // A test's Ruby tracker (RUBYOPT=-r...) and load path are not the script's.
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; e++) {
    if (std::strncmp(*e, "RUBYOPT=", 8) != 0 && std::strncmp(*e, "RUBYLIB=", 8) != 0) envp.push_back(*e);
  }
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    return absl::NotFoundError(absl::StrCat("cannot run ", args[0], ": ", std::strerror(rc)));
  }
  std::string request;
  for (const std::string& c : contents) absl::StrAppend(&request, c.size(), "\n", c);
  // Written from a thread while the answer is read: neither pipe fills.
  std::thread writer([fd = in[1], &request] {
    // A reader that exits early must not kill ste with SIGPIPE.
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    WriteAll(fd, request);
    close(fd);
    struct timespec zero = {0, 0};
    while (sigtimedwait(&block, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  });
  std::string answer;
  char buf[65536];
  for (;;) {
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
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

void DefinitionCache::Prefetch(const std::vector<std::string>& abs_paths) {
  std::vector<std::string> wanted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& p : abs_paths) {
      if (!files_.count(p)) wanted.push_back(p);
    }
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  if (wanted.empty()) return;
  std::vector<std::string> contents;
  std::vector<std::string> readable;
  std::map<std::string, std::shared_ptr<const FileDefinitions>> done;
  for (const std::string& p : wanted) {
    absl::StatusOr<std::string> bytes = ReadFileBytes(p);
    if (!bytes.ok()) {
      auto d = std::make_shared<FileDefinitions>();
      d->error = std::string(bytes.status().message());
      done[p] = std::move(d);
      continue;
    }
    readable.push_back(p);
    contents.push_back(*std::move(bytes));
  }
  absl::StatusOr<std::vector<FileDefinitions>> run = fingerprinter_.Run(readable, contents);
  for (size_t i = 0; i < readable.size(); i++) {
    auto d = std::make_shared<FileDefinitions>();
    if (run.ok()) {
      *d = std::move((*run)[i]);
    } else {
      d->error = std::string(run.status().message());
    }
    done[readable[i]] = std::move(d);
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [p, d] : done) files_.emplace(p, std::move(d));
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
                                                  std::string_view content) {
  InventoryEntry e;
  e.path = view_path;
  e.type = FileType::kRegular;
  if (view.part == DefinitionPart::kModule) {
    e.hash = defs.parsed ? defs.module : UnparsedModuleHash(content);
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
      e.hash = AbsentNameHash(defs.Const(view.arg) != nullptr || defs.Sig(view.arg) != nullptr);
      return e;
  }
  return std::nullopt;
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
    const std::string abs = file == kRootPath ? root : absl::StrCat(root, "/", file);
    absl::StatusOr<std::string> bytes = ReadFileBytes(abs);
    if (!bytes.ok()) return bytes.status();
    XXH128_hash_t h = XXH3_128bits(bytes->data(), bytes->size());
    if (h.low64 != now->hash.low64 || h.high64 != now->hash.high64) {
      return absl::AbortedError(absl::StrCat(file, " changed while it was fingerprinted"));
    }
    changed.push_back(file);
    contents.push_back(*std::move(bytes));
  }
  std::vector<FileDefinitions> defs(changed.size());
  if (!changed.empty()) {
    absl::StatusOr<std::vector<FileDefinitions>> run = fingerprinter.Run(changed, contents);
    if (run.ok()) {
      defs = *std::move(run);
    } else {
      for (FileDefinitions& d : defs) d.error = std::string(run.status().message());
    }
  }
  for (size_t i = 0; i < changed.size(); i++) {
    for (const auto& [path, view] : by_file[changed[i]]) {
      if (std::optional<InventoryEntry> e = DefinitionViewEntry(path, view, defs[i], contents[i])) {
        out.push_back(*std::move(e));
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const InventoryEntry& a, const InventoryEntry& b) { return a.path < b.path; });
  return out;
}

}  // namespace ste
