// Copyright: the ste authors. `ste report`'s page (report_html.h).
#include "report_html.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ste/inventory.h"
#include "ste/json.h"

namespace ste::cli {
namespace {

// A name as the page shows it (report_html.h).
std::string H(std::string_view bytes) {
  const std::string text = EscapeForText(bytes);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string Percent(double fraction) {
  // A bound of 0.00006% is not 0.0%.
  if (fraction > 0 && fraction < 0.001) return absl::StrFormat("%.2g%%", 100 * fraction);
  return absl::StrFormat("%.1f%%", 100 * fraction);
}

std::string Duration(double seconds) {
  if (seconds < 120) return absl::StrFormat("%.1f s", seconds);
  if (seconds < 7200) return absl::StrFormat("%.1f min", seconds / 60);
  if (seconds < 3600 * 1000) return absl::StrFormat("%.1f h", seconds / 3600);
  return absl::StrFormat("%.0f h", seconds / 3600);
}

std::string Time(int64_t unix) {
  const time_t t = static_cast<time_t>(unix);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

// A key as people read it: a view by what it stands for.
std::string KeyText(const DepKey& key) {
  if (IsViewPath(key.path)) {
    if (std::optional<View> view = ParseView(key.path)) {
      // Where it is: the source file of a definition, the directory of a
      // listing's view (not for a variable, which is nowhere).
      if (view->kind == ViewKind::kEnv) return DescribeView(*view);
      return absl::StrCat(view->dir, ": ", DescribeView(*view));
    }
  }
  return absl::StrCat(key.path, " (", std::string(DepKindName(key.kind)), ")");
}

constexpr char kStyle[] = R"css(
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1000px;color:#1d2330;padding:0 16px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde}
.sub{color:#667}.cards{display:flex;flex-wrap:wrap;gap:10px;margin:14px 0}
.card{border:1px solid #dde;border-radius:6px;padding:8px 12px;min-width:140px}
.card b{display:block;font-size:20px}.card span{color:#667;font-size:12px}
table{border-collapse:collapse;width:100%;font-size:13px}td,th{padding:3px 6px;border-bottom:1px solid #eef;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;white-space:nowrap}td.name{word-break:break-all;font-family:ui-monospace,monospace}
.bar{background:#4a78c2;height:10px;border-radius:2px}.empty{color:#889;font-style:italic}
.miss{color:#b3261e;font-weight:bold}svg text{font-size:11px;fill:#556}
)css";

class Page {
 public:
  void Raw(std::string_view s) { out_.append(s.data(), s.size()); }
  template <typename... A>
  void Add(const A&... parts) {
    absl::StrAppend(&out_, parts...);
  }
  void Section(const char* id, const char* title, std::string_view intro) {
    Add("<section id=\"", id, "\"><h2>", title, "</h2>");
    if (!intro.empty()) Add("<p class=\"sub\">", std::string(intro), "</p>");
  }
  void End() { Raw("</section>\n"); }
  void Empty(const std::string& why) { Add("<p class=\"empty\">", H(why), "</p>"); }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// One value per point, y in [0, top]: a polyline and its dots (`red`
// marks points to draw red), axes with `label`s.
void Plot(Page& p, const std::vector<double>& ys, const std::vector<bool>& red, double top,
          const std::string& top_label, const std::string& x_label) {
  constexpr int kW = 960, kH = 220, kL = 72, kR = 10, kT = 10, kB = 30;
  const double w = kW - kL - kR, h = kH - kT - kB;
  p.Add("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100%\" viewBox=\"0 0 ", kW, " ", kH,
        "\" role=\"img\" data-points=\"", ys.size(), "\">");
  p.Add("<line x1=\"", kL, "\" y1=\"", kT + h, "\" x2=\"", kW - kR, "\" y2=\"", kT + h, "\" stroke=\"#99a\"/>");
  p.Add("<line x1=\"", kL, "\" y1=\"", kT, "\" x2=\"", kL, "\" y2=\"", kT + h, "\" stroke=\"#99a\"/>");
  p.Add("<text x=\"", kL - 4, "\" y=\"", kT + 8, "\" text-anchor=\"end\">", H(top_label), "</text>");
  p.Add("<text x=\"", kL - 4, "\" y=\"", kT + h, "\" text-anchor=\"end\">0</text>");
  p.Add("<text x=\"", kL + w / 2, "\" y=\"", kH - 6, "\" text-anchor=\"middle\">", H(x_label), "</text>");
  if (top <= 0) top = 1;
  auto x = [&](size_t i) { return kL + (ys.size() <= 1 ? w / 2 : w * static_cast<double>(i) / static_cast<double>(ys.size() - 1)); };
  auto y = [&](double v) { return kT + h - h * std::clamp(v / top, 0.0, 1.0); };
  std::string points;
  for (size_t i = 0; i < ys.size(); i++) absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f ", x(i), y(ys[i])));
  p.Add("<polyline fill=\"none\" stroke=\"#4a78c2\" stroke-width=\"1.5\" points=\"", points, "\"/>");
  for (size_t i = 0; i < ys.size(); i++) {
    const bool r = i < red.size() && red[i];
    p.Add(absl::StrFormat("<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"/>", r ? "all" : "pt",
                          x(i), y(ys[i]), ys.size() > 120 ? "1.5" : "3", r ? "#c23a3a" : "#4a78c2"));
  }
  p.Raw("</svg>");
}

void Summary(Page& p, const ReportData& d) {
  p.Add("<section id=\"summary\" data-builds=\"", d.builds, "\" data-mean-fraction=\"",
        absl::StrFormat("%.4f", d.mean_fraction), "\" data-median-fraction=\"",
        absl::StrFormat("%.4f", d.median_fraction), "\" data-saved-seconds=\"",
        absl::StrFormat("%.1f", d.saved_seconds), "\" data-audit-ran=\"", d.audit_ran,
        "\" data-audit-misses=\"", d.audit_misses, "\" data-miss-rate-upper=\"",
        absl::StrFormat("%.4f", d.miss_rate_upper_95), "\"><div class=\"cards\">");
  auto card = [&](const std::string& value, const char* what) {
    p.Add("<div class=\"card\"><b>", H(value), "</b><span>", what, "</span></div>");
  };
  card(absl::StrCat(d.builds), "builds selected");
  card(d.builds ? Percent(d.mean_fraction) : "-", "mean selected");
  card(d.builds ? Percent(d.median_fraction) : "-", "median selected");
  card(Duration(d.saved_seconds), "test time saved");
  card(absl::StrCat(d.mode_all), "builds that ran all");
  card(absl::StrCat(d.audit_misses, " / ", d.audit_ran), "audit misses / left-out tests run");
  card(d.audit_ran ? absl::StrCat("\u2264 ", Percent(d.miss_rate_upper_95)) : "-", "miss rate (95% bound)");
  card(absl::StrCat(d.tests), "tests in the baseline");
  p.Raw("</div></section>\n");
}

void Fractions(Page& p, const ReportData& d) {
  std::vector<const SelectionEntry*> builds;
  for (const SelectionEntry& e : d.selections) {
    if (CountsAsBuild(e) && e.tests > 0) builds.push_back(&e);
  }
  p.Section("selected-fraction", "Selected fraction over builds",
            "Each point is one select (a matrix of shards counts once): the share of the tests it selected. "
            "Red: mode all (where a point averages several builds: most of them).");
  if (builds.empty()) {
    p.Empty(d.selections_error.empty() ? "No selection is recorded yet: every ste select appends one."
                                       : "No history: " + d.selections_error);
    p.End();
    return;
  }
  // At most kMaxPlotPoints: consecutive builds averaged.
  const size_t buckets = std::min(builds.size(), kMaxPlotPoints);
  std::vector<double> ys(buckets, 0);
  std::vector<bool> red(buckets, false);
  std::vector<size_t> counts(buckets, 0), alls(buckets, 0);
  for (size_t i = 0; i < builds.size(); i++) {
    const size_t b = i * buckets / builds.size();
    ys[b] += 100.0 * static_cast<double>(builds[i]->selected) / static_cast<double>(builds[i]->tests);
    counts[b]++;
    if (builds[i]->mode == "all") alls[b]++;
  }
  // A point of several builds is red when most of them ran all.
  for (size_t b = 0; b < buckets; b++) {
    ys[b] /= static_cast<double>(std::max<size_t>(counts[b], 1));
    red[b] = 2 * alls[b] > counts[b];
  }
  Plot(p, ys, red, 100, "100%",
       buckets < builds.size()
           ? absl::StrCat(builds.size(), " builds, ", Time(builds.front()->at_unix), " to ", Time(builds.back()->at_unix),
                          " (averaged in ", buckets, " points)")
           : absl::StrCat(builds.size(), " builds, ", Time(builds.front()->at_unix), " to ",
                          Time(builds.back()->at_unix)));
  // The latest few, with their reasons.
  p.Raw("<table id=\"latest-builds\"><tr><th>when</th><th>mode</th><th class=\"n\">selected</th>"
        "<th class=\"n\">changed</th><th class=\"n\">baseline</th><th>reason</th></tr>");
  const size_t shown = std::min<size_t>(builds.size(), 10);
  for (size_t i = builds.size(); i-- > builds.size() - shown;) {
    const SelectionEntry& e = *builds[i];
    p.Add("<tr><td>", Time(e.at_unix), "</td><td>", H(e.mode), "</td><td class=\"n\">", e.selected, " / ", e.tests,
          "</td><td class=\"n\">", e.changed, "</td><td class=\"n\">", e.baseline, "</td><td>", H(e.reason),
          "</td></tr>");
  }
  p.Raw("</table>");
  p.End();
}

void Saved(Page& p, const ReportData& d) {
  p.Section("time-saved", "Time saved",
            "The recorded durations of the tests each build left out, summed over the builds.");
  std::vector<double> sums;
  double sum = 0;
  for (const SelectionEntry& e : d.selections) {
    if (!CountsAsBuild(e)) continue;
    sum += e.skipped_seconds;
    sums.push_back(sum);
  }
  if (sums.empty()) {
    p.Empty("No selection is recorded yet.");
    p.End();
    return;
  }
  std::vector<double> ys;
  const size_t buckets = std::min(sums.size(), kMaxPlotPoints);
  for (size_t b = 0; b < buckets; b++) ys.push_back(sums[(b + 1) * sums.size() / buckets - 1]);
  p.Add("<p>", H(Duration(sum)), " of test time saved over ", sums.size(), " builds.</p>");
  Plot(p, ys, {}, sum, Duration(sum), absl::StrCat(sums.size(), " builds"));
  p.End();
}

void Baseline(Page& p, const ReportData& d) {
  if (!d.baseline) {
    p.Section("baseline", "The baseline", "");
    p.Empty("No complete baseline: " + d.baseline_error);
    p.End();
    return;
  }
  p.Section("baseline", "The baseline",
            absl::StrCat("Baseline ", d.baseline->id, " of commit ", H(d.baseline->commit.substr(0, 12)), ", mri ",
                         d.baseline->mri, ", recorded ", Time(d.baseline->completed_unix), ": ", d.tests,
                         " tests (", d.passed, " passed, ", d.failed, " failed, ", d.errors, " errors) taking ",
                         Duration(d.test_seconds), "; ", d.keys, " dependency keys."));
  if (!d.details_error.empty()) p.Empty("Part of it could not be read: " + d.details_error);
  p.End();

  p.Section("widest", "What pulls in the most tests",
            "The repository's files and directories with the most tests behind them (those every test has are below): a change "
            "to one selects them all.");
  if (d.widest.empty()) {
    p.Empty("None: every dependency is every test's, or there is none.");
  } else {
    const double most = static_cast<double>(d.widest.front().tests);
    p.Raw("<table><tr><th>dependency</th><th class=\"n\">tests</th><th style=\"width:30%\"></th></tr>");
    for (const ReportKey& k : d.widest) {
      p.Add("<tr><td class=\"name\">", H(KeyText(k.key)), "</td><td class=\"n\">", k.tests, " (",
            Percent(static_cast<double>(k.tests) / static_cast<double>(std::max<size_t>(d.tests, 1))),
            ")</td><td><div class=\"bar\" style=\"width:",
            absl::StrFormat("%.1f", 100 * static_cast<double>(k.tests) / most), "%\"></div></td></tr>");
    }
    p.Raw("</table>");
  }
  p.End();

  p.Section("everyone", "What every test depends on",
            absl::StrCat(d.everyone_count,
                         " dependencies are every test's: the root scope's (what ran outside any test) and "
                         "what each test read. A change to one selects all; the repository's own first."));
  if (d.everyone.empty()) {
    p.Empty("None.");
  } else {
    p.Raw("<table>");
    for (const DepKey& k : d.everyone) p.Add("<tr><td class=\"name\">", H(KeyText(k)), "</td></tr>");
    p.Raw("</table>");
    if (d.everyone_count > d.everyone.size()) p.Add("<p class=\"sub\">and ", d.everyone_count - d.everyone.size(), " more</p>");
  }
  p.End();

  p.Section("opaque", "Opaque tests",
            absl::StrCat(d.opaque_count,
                         " tests ran something ste could not follow; each is selected by every change."));
  if (d.opaque.empty()) {
    p.Empty("None.");
  } else {
    p.Raw("<table><tr><th>test</th><th>why</th></tr>");
    for (const auto& [test, why] : d.opaque) {
      p.Add("<tr><td class=\"name\">", H(test), "</td><td>", H(why), "</td></tr>");
    }
    p.Raw("</table>");
  }
  p.End();

  p.Section("slowest", "The slowest tests", "Their wall time in the baseline.");
  if (d.slowest.empty()) {
    p.Empty("None.");
  } else {
    const double most = std::max(d.slowest.front().seconds, 1e-9);
    p.Raw("<table><tr><th>test</th><th class=\"n\">seconds</th><th style=\"width:30%\"></th></tr>");
    for (const TestResult& r : d.slowest) {
      p.Add("<tr><td class=\"name\">", H(r.test), "</td><td class=\"n\">", absl::StrFormat("%.2f", r.seconds),
            "</td><td><div class=\"bar\" style=\"width:", absl::StrFormat("%.1f", 100 * r.seconds / most),
            "%\"></div></td></tr>");
    }
    p.Raw("</table>");
  }
  p.End();
}

void Flaky(Page& p, const ReportData& d) {
  p.Section("flaky", "Flaky tests",
            "Tests whose outcome changed while none of their dependencies did: failed, then passed when run "
            "again (runner.retries in the record, or an audit's rerun). Never a reason to select less.");
  if (d.flaky.empty() && d.flaky_seen.empty()) {
    p.Empty("None seen.");
    p.End();
    return;
  }
  p.Raw("<table><tr><th>test</th><th>seen by</th></tr>");
  for (const std::string& t : d.flaky) {
    p.Add("<tr><td class=\"name\">", H(t), "</td><td>the baseline's record</td></tr>");
  }
  for (const auto& [t, times] : d.flaky_seen) {
    p.Add("<tr><td class=\"name\">", H(t), "</td><td>", times, times == 1 ? " audit" : " audits", "</td></tr>");
  }
  p.Raw("</table>");
  p.End();
}

void Hazards(Page& p, const ReportData& d) {
  p.Section("hazards", "Order hazards",
            absl::StrCat(d.hazards_count,
                         " pairs: a test wrote a file and left it behind, and another read it, looked for it or "
                         "listed its directory. Their outcomes may depend on the order they run in."));
  if (d.hazards.empty()) {
    p.Empty(d.baseline ? "None found in the baseline." : "No baseline.");
    p.End();
    return;
  }
  p.Raw("<table><tr><th>writer</th><th>path</th><th>reader</th><th>how</th></tr>");
  for (const Hazard& h : d.hazards) {
    p.Add("<tr><td class=\"name\">", H(h.writer), "</td><td class=\"name\">", H(h.path), "</td><td class=\"name\">",
          H(h.reader), "</td><td>", std::string(DepKindName(h.kind)), "</td></tr>");
  }
  p.Raw("</table>");
  p.End();
}

void Audits(Page& p, const ReportData& d) {
  p.Section("audits", "Audits and the miss rate",
            absl::StrCat("ste audit runs tests a selection left out; ste record --observe runs them all. Over the ",
                         d.audits.size(), " stored: ", d.audit_misses, " misses in ", d.audit_ran,
                         " left-out tests run",
                         d.audit_ran ? absl::StrCat(", so the miss rate is at most ", Percent(d.miss_rate_upper_95),
                                                    " (95% confidence, Clopper-Pearson)")
                                     : std::string(),
                         "."));
  if (d.audits.empty()) {
    p.Empty(d.audits_error.empty() ? "No audit is stored yet: run ste audit, or ste record --observe."
                                   : "No history: " + d.audits_error);
    p.End();
    return;
  }
  p.Raw("<table><tr><th>when</th><th>kind</th><th class=\"n\">baseline</th><th class=\"n\">left out</th>"
        "<th class=\"n\">ran</th><th class=\"n\">misses</th><th>missed</th><th>flaky</th></tr>");
  const size_t shown = std::min<size_t>(d.audits.size(), 50);
  for (size_t i = d.audits.size(); i-- > d.audits.size() - shown;) {
    const AuditEntry& a = d.audits[i];
    std::string missed, flaky;
    for (size_t k = 0; k < a.missed.size() && k < 10; k++) absl::StrAppend(&missed, k ? "<br>" : "", H(a.missed[k]));
    for (size_t k = 0; k < a.flaky.size() && k < 10; k++) absl::StrAppend(&flaky, k ? "<br>" : "", H(a.flaky[k]));
    p.Add("<tr class=\"audit\"><td>", Time(a.at_unix), "</td><td>", H(a.kind), "</td><td class=\"n\">", a.baseline,
          "</td><td class=\"n\">", a.left_out, "</td><td class=\"n\">", a.ran, "</td><td class=\"n",
          a.missed.empty() ? "" : " miss", "\">", a.missed.size(), "</td><td class=\"name\">", missed,
          "</td><td class=\"name\">", flaky, "</td></tr>");
  }
  p.Raw("</table>");
  p.End();
}

}  // namespace

std::string ReportHtml(const ReportData& d, const std::string& title, int64_t now_unix) {
  Page p;
  p.Add("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ste report: ", H(title),
        "</title><style>", kStyle, "</style></head><body>\n<h1>ste report: ", H(title), "</h1><p class=\"sub\">Made ",
        Time(now_unix), " from the store's history (the newest ", d.selections.size(), " selections, ",
        d.audits.size(), " audits) and its latest baseline.</p>\n");
  Summary(p, d);
  Fractions(p, d);
  Saved(p, d);
  Baseline(p, d);
  Flaky(p, d);
  Hazards(p, d);
  Audits(p, d);
  p.Raw("</body></html>\n");
  return p.Take();
}

}  // namespace ste::cli
