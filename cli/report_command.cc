// `ste report [-o FILE] [--history N] [--top N]`: one HTML page of what
// the store knows (scheduler's ste/report.h gathers it, report_html.h
// renders it).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "invocation.h"
#include "report_html.h"
#include "ste/atomic_file.h"
#include "ste/report.h"

namespace ste::cli {
namespace {

const CommandSpec kReportSpec = {
    "report",
    "Usage: ste report [-o FILE] [--history N] [--top N]\n"
    "\n"
    "Writes one self-contained HTML page (no script, nothing fetched: a CI\n"
    "artifact anyone can open) of what the store knows:\n"
    "  - the selected fraction of every build over time, and the test time\n"
    "    the selections saved (each `ste select` appends its mode, counts,\n"
    "    baseline, changed paths and duration to the store; a scheduler's\n"
    "    selections too);\n"
    "  - from the latest baseline: the dependencies that pull in the most\n"
    "    tests, what every test depends on (the root scope's), the opaque\n"
    "    tests and why, the slowest tests, the flaky tests and the order\n"
    "    hazards (as `ste hazards`);\n"
    "  - every stored audit (`ste audit`, `ste record --observe`) and the\n"
    "    miss rate they measured together, with its 95% bound.\n"
    "Lists are cut to --top entries with their counts, and more builds than\n"
    "the plot has points are averaged, so a store of 100,000 tests and\n"
    "thousands of builds still gives a small page.\n"
    "\n"
    "-o FILE: where (default .ste/report.html in the repository; '-' for\n"
    "stdout). Exit status: 0 written; 1 the store could not be opened or the\n"
    "file not written; 2 bad usage.\n\n",
    {{"output", 'o', true, "FILE", "where to write the page (default .ste/report.html; - for stdout)"},
     {"history", 0, true, "N", "how many of the newest selections and audits to read (default 5000)"},
     {"top", 0, true, "N", "the longest a list on the page gets (default 20)"},
     {"config", 0, true, "FILE", "ste.toml to use"},
     {"store", 0, true, "URL", "the store to use instead of ste.toml's store.url"}}};

bool PositiveFlag(const ParsedFlags& flags, const char* name, int64_t max, int64_t* out) {
  if (!flags.Has(name)) return true;
  int64_t v = 0;
  if (!absl::SimpleAtoi(flags.Get(name), &v) || v < 1 || v > max) return false;
  *out = v;
  return true;
}

}  // namespace

int ReportCommand(const std::vector<std::string>& args) {
  Invocation in(kReportSpec);
  if (std::optional<int> done = in.Parse(args)) return *done;
  if (!in.flags().positional.empty()) return in.UsageError("takes no arguments");
  ReportOptions options;
  int64_t top = static_cast<int64_t>(options.top);
  if (!PositiveFlag(in.flags(), "history", 10'000'000, &options.history)) {
    return in.UsageError("--history takes a number from 1 to 10000000");
  }
  if (!PositiveFlag(in.flags(), "top", 10'000, &top)) return in.UsageError("--top takes a number from 1 to 10000");
  options.top = static_cast<size_t>(top);
  const Config* config = in.config();
  if (config == nullptr) return in.exit_code();
  absl::StatusOr<Store*> store = in.store(StoreAccess::kRead);
  if (!store.ok()) return in.Fail(store.status());
  absl::StatusOr<ReportData> data = GatherReport(**store, options);
  if (!data.ok()) return in.Fail(data.status());
  const std::string title = std::filesystem::path(config->root).filename().string();
  const std::string page = ReportHtml(*data, title.empty() ? config->root : title, std::time(nullptr));
  const std::string output = in.flags().Get("output", config->root + "/.ste/report.html");
  if (output == "-") {
    std::fwrite(page.data(), 1, page.size(), stdout);
  } else {
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(output).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (absl::Status written = WriteFileAtomically(output, page); !written.ok()) return in.Fail(written);
  }
  std::fprintf(stderr, "ste report: %s: %zu builds, %zu audits, %s; %zu bytes\n",
               output == "-" ? "stdout" : output.c_str(), data->builds, data->audits.size(),
               data->baseline ? absl::StrCat("baseline ", data->baseline->id, " (", data->tests, " tests)").c_str()
                              : "no baseline",
               page.size());
  return ExitCode(Outcome::kSuccess);
}

}  // namespace ste::cli
