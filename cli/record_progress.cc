#include "record_progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "repo_context.h"
#include "ste/json.h"

namespace ste::cli {
namespace {

const char* StatusWord(const FinishedTest& t) {
  switch (t.outcome) {
    case TestOutcome::kPassed: return "ok";
    case TestOutcome::kFailed: return "FAIL";
    case TestOutcome::kError: return "ERROR";
  }
  return "ERROR";
}

// The terminal's width in columns (stderr's), else $COLUMNS, else 80.
size_t TerminalColumns() {
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* env = std::getenv("COLUMNS"); env && std::atoi(env) > 0) {
    return static_cast<size_t>(std::atoi(env));
  }
  return 80;
}

// `line` cut to at most `width` bytes (hence columns: one byte is at most
// one column), not inside a UTF-8 character.
std::string CutTo(std::string line, size_t width) {
  if (line.size() <= width) return line;
  size_t cut = width;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) cut--;
  line.resize(cut);
  return line;
}

size_t LinesIn(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n + (!text.empty() && text.back() != '\n');
}

}  // namespace

std::string ShownPath(const std::string& path) {
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return path;
  std::string dir = cwd;
  if (dir != "/") dir += "/";
  if (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0) return path.substr(dir.size());
  return path;
}

std::string ShownLogPath(const FinishedTest& t, bool remote) {
  if (!remote) return EscapeForText(ShownPath(t.output_log));
  return absl::StrCat(EscapeForText(t.output_log),
                      t.worker_name.empty() ? "" : absl::StrCat(" on worker ", t.worker_name));
}

RecordProgress::RecordProgress(std::string mode, bool remote) : mode_(std::move(mode)), remote_(remote) {}

void RecordProgress::OnTest(const FinishedTest& t, size_t done, size_t total) {
  const bool passed = t.outcome == TestOutcome::kPassed;
  failed_ += !passed;
  if (mode_ == "bar") {
    PrintBar(t, done, total);
    if (!passed) held_.push_back(t);
    if (done == total) Finish();
  } else if (mode_ == "plain") {
    std::fprintf(stderr, "[%zu/%zu] %-5s %s (%s)\n", done, total, StatusWord(t),
                 EscapeForText(t.test).c_str(), Seconds(t.seconds).c_str());
    if (!passed) PrintTail(t);
  }
}

void RecordProgress::PrintBar(const FinishedTest& t, size_t done, size_t total) {
  const size_t columns = TerminalColumns();
  const size_t width = columns >= 70 ? 30 : 10;
  const size_t filled = total ? width * done / total : 0;
  std::string line = absl::StrCat("[", std::string(filled, '#'), std::string(width - filled, '.'), "] ",
                                  done, "/", total);
  if (failed_) absl::StrAppend(&line, ", ", failed_, " not passed");
  absl::StrAppend(&line, "  ", StatusWord(t), " ", EscapeForText(t.test));
  // One column short of the width: a full line would wrap on some terminals.
  std::fprintf(stderr, "\r\033[K%s", CutTo(std::move(line), columns - 1).c_str());
  std::fflush(stderr);
  bar_open_ = true;
}

void RecordProgress::Finish() {
  if (bar_open_) {
    std::fputc('\n', stderr);
    bar_open_ = false;
  }
  std::vector<FinishedTest> held = std::move(held_);
  held_.clear();
  for (const FinishedTest& t : held) PrintTail(t);
}

void RecordProgress::PrintTail(const FinishedTest& t) {
  if (t.output_log.empty()) return;  // not captured
  const std::string test = EscapeForText(t.test);
  const std::string what = absl::StrCat(StatusWord(t), " ", test, " (exit ", t.exit_code, ")");
  const std::string log = absl::StrCat(t.output_shared ? "the batch log " : "", ShownLogPath(t, remote_));
  if (t.output_shared && !shown_logs_.insert(t.output_log).second) {
    std::fprintf(stderr, "---- %s: its output is in the batch log shown above (%s) ----\n", what.c_str(),
                 ShownLogPath(t, remote_).c_str());
    return;
  }
  if (t.output_tail.empty()) {
    std::fprintf(stderr, "---- %s: no output (%s) ----\n", what.c_str(), log.c_str());
    return;
  }
  const size_t lines = LinesIn(t.output_tail);
  const bool whole = t.output_tail.size() == t.output_bytes;
  std::fprintf(stderr, "---- %s: %s %zu line%s of %s ----\n", what.c_str(), whole ? "all" : "the last",
               lines, lines == 1 ? "" : "s", log.c_str());
  std::fwrite(t.output_tail.data(), 1, t.output_tail.size(), stderr);
  if (t.output_tail.back() != '\n') std::fputc('\n', stderr);
  std::fprintf(stderr, "---- end of %s ----\n", test.c_str());
}

}  // namespace ste::cli
