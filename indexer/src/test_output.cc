#include "ste/test_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ste/json.h"
#include "ste/test_recorder.h"

namespace ste {
namespace {

constexpr size_t kMaxComponentBytes = 200;  // escaped, before ".log"
constexpr size_t kCutComponentBytes = 180;  // the prefix a long one keeps

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

void AppendEscaped(unsigned char c, std::string* out) { absl::StrAppendFormat(out, "%%%02X", c); }

std::string EscapeComponent(std::string_view c, bool last) {
  if (c.empty()) return "%";
  if (c == ".") return "%2E";
  if (c == "..") return "%2E%2E";
  std::string out;
  out.reserve(c.size());
  for (size_t i = 0; i < c.size();) {
    const unsigned char b = static_cast<unsigned char>(c[i]);
    const size_t n = Utf8SequenceLength(c, i);
    if (n > 1) {
      out.append(c.substr(i, n));
      i += n;
      continue;
    }
    if (n == 0 || b < 0x20 || b == 0x7F || b == '%') {
      AppendEscaped(b, &out);
    } else {
      out.push_back(static_cast<char>(b));
    }
    i++;
  }
  if (!last && absl::EndsWith(out, ".log")) out.replace(out.size() - 4, 1, "%2E");
  if (out.size() > kMaxComponentBytes) {
    size_t cut = kCutComponentBytes;
    auto inside = [&](size_t at) {
      const unsigned char next = static_cast<unsigned char>(out[at]);
      return (next >= 0x80 && next <= 0xBF) || out[at - 1] == '%' || (at >= 2 && out[at - 2] == '%');
    };
    while (cut > 0 && inside(cut)) cut--;
    out = absl::StrCat(out.substr(0, cut), "%~", absl::StrFormat("%016x", Fnv1a64(c)));
  }
  return out;
}

}  // namespace

std::string OutputLogName(std::string_view test) {
  std::string out;
  size_t start = 0;
  for (;;) {
    const size_t slash = test.find('/', start);
    const bool last = slash == std::string_view::npos;
    absl::StrAppend(&out, EscapeComponent(test.substr(start, last ? test.size() - start : slash - start), last));
    if (last) break;
    out.push_back('/');
    start = slash + 1;
  }
  out += ".log";
  return out;
}

std::string BatchLogName(uint64_t n) { return absl::StrCat("%batch-", n, ".log"); }

absl::Status MakeDirectories(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("no directory to make");
  for (size_t at = 1;; at++) {
    at = dir.find('/', at);
    const std::string partial = dir.substr(0, at);
    if (!partial.empty() && mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(absl::StrCat("cannot create ", partial, ": ", std::strerror(errno)));
    }
    if (at == std::string::npos) break;
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(dir, " is not a directory"));
  }
  return absl::OkStatus();
}

absl::StatusOr<OutputTail> ReadOutputTail(const std::string& path, size_t max_lines,
                                          size_t max_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const std::string why = absl::StrCat("cannot read ", path, ": ", std::strerror(errno));
    return errno == ENOENT ? absl::NotFoundError(why) : absl::InternalError(why);
  }
  OutputTail tail;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const std::string why = absl::StrCat("cannot stat ", path, ": ", std::strerror(errno));
    close(fd);
    return absl::InternalError(why);
  }
  tail.file_bytes = static_cast<uint64_t>(st.st_size);
  const size_t want = static_cast<size_t>(std::min<uint64_t>(tail.file_bytes, max_bytes));
  const off_t offset = static_cast<off_t>(tail.file_bytes - want);
  std::string chunk(want, '\0');
  size_t got = 0;
  while (got < want) {
    const ssize_t n = pread(fd, chunk.data() + got, want - got, offset + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = absl::StrCat("cannot read ", path, ": ", std::strerror(errno));
      close(fd);
      return absl::InternalError(why);
    }
    if (n == 0) break;  // shrunk meanwhile
    got += static_cast<size_t>(n);
  }
  close(fd);
  chunk.resize(got);
  std::string_view t = chunk;
  if (offset > 0) {  // the first line may be cut: left out unless it is the only one
    const size_t nl = t.find('\n');
    if (nl != std::string_view::npos && nl + 1 < t.size()) t.remove_prefix(nl + 1);
  }
  if (max_lines == 0) t = {};
  size_t end = t.size();
  if (end > 0 && t[end - 1] == '\n') end--;  // the last line's own newline
  size_t lines = 1;
  for (size_t i = end; i-- > 0;) {
    if (t[i] != '\n') continue;
    if (lines == max_lines) {
      t.remove_prefix(i + 1);
      break;
    }
    lines++;
  }
  tail.text = std::string(t);
  return tail;
}

std::string OutputDirWarning(const Config& config, const std::string& dir) {
  const std::string rel = RepoRelative(config.root, dir);
  if (rel.empty() || rel[0] == '/') return "";
  if (rel != ".") {
    // Ignored when the directory or one above it is: the inventory does
    // not go into an ignored directory.
    for (size_t at = 0;; at++) {
      at = rel.find('/', at);
      if (config.inventory_ignore.Matches(rel.substr(0, at))) return "";
      if (at == std::string::npos) break;
    }
  }
  return absl::StrCat("the output directory ", dir,
                      " is inside the repository and not ignored by the inventory: the next "
                      "'ste select' will see its logs as new files (and select every test that "
                      "lists a directory above them); add \"",
                      rel == "." ? "*.log" : rel + "/**",
                      "\" to [inventory] ignore, or put the logs outside the repository");
}

}  // namespace ste
