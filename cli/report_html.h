// `ste report`'s page: one self-contained HTML file (no script, no
// network, no external file: styles inline, plots as inline SVG) made
// from ReportData (scheduler's ste/report.h). Every name on it (tests,
// paths, reasons: a pull request chooses them) is escaped: EscapeForText's
// visible escapes for control characters and bytes that are not UTF-8,
// then HTML's for & < > " '.
//
// What a reader (or a test) can find on it, by id:
//   summary          the figures: data-builds, data-mean-fraction,
//                    data-median-fraction, data-saved-seconds,
//                    data-audit-ran, data-audit-misses, data-miss-rate-upper
//   selected-fraction  an <svg> plot of each build's selected fraction
//                    (at most kMaxPlotPoints points: more builds are
//                    averaged in as many buckets), mode all in red (a
//                    bucket: most of its builds)
//   time-saved       an <svg> plot of the seconds saved, summed over builds
//   widest           a table: the keys that pull in the most tests
//   everyone         a table: what every test depends on
//   opaque, slowest, flaky, hazards, audits   tables
// A section with nothing to show says why in a <p class="empty">.
#ifndef STE_CLI_REPORT_HTML_H_
#define STE_CLI_REPORT_HTML_H_

#include <cstdint>
#include <string>

#include "ste/report.h"

namespace ste::cli {

inline constexpr size_t kMaxPlotPoints = 500;

// `title` names the repository; `now_unix` is when the page was made.
std::string ReportHtml(const ReportData& data, const std::string& title, int64_t now_unix);

}  // namespace ste::cli

#endif  // STE_CLI_REPORT_HTML_H_
