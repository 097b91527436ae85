#include "output_format.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ste/ci_output.h"
#include "ste/json.h"

namespace ste::cli {

std::string_view OutputFormatName(OutputFormat format) {
  switch (format) {
    case OutputFormat::kText: return "text";
    case OutputFormat::kJson: return "json";
    case OutputFormat::kGithub: return "github";
    case OutputFormat::kMatrix: return "matrix";
    case OutputFormat::kRunner: return "runner";
    case OutputFormat::kJunit: return "junit";
    case OutputFormat::kGtestFilter: return "gtest-filter";
  }
  return "?";
}

absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view value,
                                               const std::vector<OutputFormat>& allowed) {
  std::string names;
  for (size_t i = 0; i < allowed.size(); i++) {
    if (OutputFormatName(allowed[i]) == value) return allowed[i];
    absl::StrAppend(&names, i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ",
                    std::string(OutputFormatName(allowed[i])));
  }
  return absl::InvalidArgumentError(absl::StrCat("--format is ", names, ", not '", std::string(value), "'"));
}

// ---- JsonWriter ---------------------------------------------------------

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (empty_.empty()) return;
  if (!empty_.back()) out_ += ',';
  empty_.back() = false;
}

JsonWriter& JsonWriter::Open(char bracket) {
  Separate();
  out_ += bracket;
  empty_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::Close(char bracket) {
  out_ += bracket;
  empty_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view name) {
  Separate();
  AppendJsonString(name, &out_);
  out_ += ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view bytes) {
  Separate();
  AppendJsonString(bytes, &out_);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  Separate();
  absl::StrAppend(&out_, value);
  return *this;
}

JsonWriter& JsonWriter::Seconds(double value) {
  Separate();
  absl::StrAppendFormat(&out_, "%.3f", value);
  return *this;
}

JsonWriter& JsonWriter::Fraction(double value) {
  Separate();
  absl::StrAppendFormat(&out_, "%.6f", value);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  Separate();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  Separate();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::PathMember(std::string_view name, std::string_view value) {
  Separate();
  AppendJsonPathField(name, value, &out_);
  return *this;
}

JsonWriter& JsonWriter::VersionMember() { return Key("version").Int(kJsonOutputVersion); }

std::string JsonWriter::Take() {
  std::string out = std::move(out_);
  out_.clear();
  empty_.clear();
  after_key_ = false;
  return out;
}

std::string AddVersionToJsonLines(std::string_view lines) {
  const std::string version = absl::StrCat(",\"version\":", kJsonOutputVersion, "}");
  std::string out;
  out.reserve(lines.size() + lines.size() / 8);
  size_t start = 0;
  while (start < lines.size()) {
    size_t end = lines.find('\n', start);
    if (end == std::string_view::npos) end = lines.size();
    std::string_view line = lines.substr(start, end - start);
    // A JSON string holds no raw newline: each line is one whole object.
    if (!line.empty() && line.back() == '}') {
      absl::StrAppend(&out, std::string(line.substr(0, line.size() - 1)), version);
    } else {
      out.append(line.data(), line.size());
    }
    if (end < lines.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

// ---- select -------------------------------------------------------------

std::string SelectionReasonText(const SelectionReason& r) {
  if (r.rule) return std::string(ReasonChangeWord(r));
  if (std::string view = DescribeViewChange(r.path, ReasonChangeWord(r)); !view.empty()) {
    return EscapeForText(view);
  }
  std::string what = r.kind == DepKind::kAbsent    ? "was absent, now exists"
                     : r.kind == DepKind::kListing ? "listing changed"
                                                   : absl::StrCat("content ", std::string(ReasonChangeWord(r)));
  return absl::StrCat(EscapeForText(r.path), " (", what, ")");
}

std::vector<std::string> SelectedNames(const SelectedTest& t) {
  if (t.cases.empty()) return {t.test};
  std::vector<std::string> names;
  for (const std::string& c : t.cases) names.push_back(absl::StrCat(t.test, "::", c));
  return names;
}

std::string CaseCountLine(const Selection& s) {
  size_t files = 0, cased = 0, cases = 0;
  for (const SelectedTest& t : s.tests) {
    (t.cases.empty() ? files : cased)++;
    cases += t.cases.size();
  }
  if (cased == 0) return "";
  return absl::StrCat(files + cased, " test files selected: ", files, " whole, ", cased,
                      " as ", cases, " cases\n");
}

std::string SelectionText(const Selection& s, bool explain, bool null) {
  std::string out;
  if (null) {
    for (const SelectedTest& t : s.tests) {
      for (const std::string& name : SelectedNames(t)) absl::StrAppend(&out, name, std::string(1, '\0'));
    }
    return out;
  }
  for (const SelectedTest& t : s.tests) {
    for (const std::string& name : SelectedNames(t)) absl::StrAppend(&out, EscapeForText(name), "\n");
    if (!explain) continue;
    if (!t.cases.empty()) {
      absl::StrAppend(&out, "  <- (", t.cases.size(), t.cases.size() == 1 ? " case" : " cases",
                      " of ", EscapeForText(t.test),
                      ": every change below is in code only they ran, or that one ran before them; "
                      "the rest of the file is unchanged)\n");
    }
    for (const SelectionReason& r : t.reasons) {
      absl::StrAppend(&out, "  <- ", SelectionReasonText(r), "\n");
    }
    if (t.more_reasons) absl::StrAppend(&out, "  <- and ", t.more_reasons, " more\n");
    if (t.flaky) {
      absl::StrAppend(&out, "  (flaky: in the baseline it did not pass, then passed when run again)\n");
    }
  }
  return out;
}

std::string SelectionJson(const Selection& s, const std::optional<BaselineInfo>& base) {
  JsonWriter j;
  j.BeginObject();
  j.Key("mode").String(SelectionModeName(s.mode));
  j.Key("reason").String(s.reason);
  j.Key("baseline");
  if (base) {
    j.BeginObject().Key("id").Int(base->id).Key("mri").Int(base->mri);
    j.Key("commit").String(base->commit).EndObject();
  } else {
    j.Null();
  }
  j.Key("changed").BeginArray();
  for (const InventoryChange& c : s.changed) {
    j.BeginObject().PathMember("path", c.path);
    j.Key("change").String(ChangeWord(c)).Key("type").String(FileTypeName(c.type)).EndObject();
  }
  j.EndArray().Key("tests").BeginArray();
  for (const SelectedTest& t : s.tests) {
    j.BeginObject().PathMember("test", t.test);
    if (!t.cases.empty()) {
      j.Key("cases").BeginArray();
      for (const std::string& c : t.cases) j.String(c);
      j.EndArray();
    }
    j.Key("reasons").BeginArray();
    for (const SelectionReason& r : t.reasons) {
      j.BeginObject().PathMember("path", r.path);
      j.Key("kind").String(ReasonKindWord(r)).Key("change").String(ReasonChangeWord(r)).EndObject();
    }
    j.EndArray().Key("more_reasons").Int(static_cast<int64_t>(t.more_reasons));
    if (t.seconds) j.Key("seconds").Seconds(*t.seconds);
    if (t.flaky) j.Key("flaky").Bool(true);
    j.EndObject();
  }
  j.EndArray().Key("wide").BeginArray();
  for (const WideCause& w : s.wide) {
    j.BeginObject().PathMember("path", w.cause.path);
    j.Key("kind").String(ReasonKindWord(w.cause)).Key("change").String(ReasonChangeWord(w.cause));
    j.Key("tests").Int(static_cast<int64_t>(w.tests)).Key("entries").BeginArray();
    for (const auto& [path, change] : w.entries) {
      j.BeginObject().PathMember("path", path).Key("change").String(ChangeKindName(change)).EndObject();
    }
    j.EndArray().Key("more_entries").Int(static_cast<int64_t>(w.more_entries)).EndObject();
  }
  j.EndArray().VersionMember().EndObject();
  return j.Take() + "\n";
}

std::vector<Shard> SelectionShards(const Selection& s, size_t shards) {
  std::vector<ShardInput> in;
  for (const SelectedTest& t : s.tests) in.push_back({t.test, t.seconds});
  return SplitIntoShards(in, shards);
}

std::vector<Shard> ShardsOfNames(std::vector<Shard> shards, const Selection& s, RunnerKind kind) {
  if (TestsAreCTestNames(kind)) return shards;
  std::map<std::string_view, const SelectedTest*> by_file;
  for (const SelectedTest& t : s.tests) by_file.emplace(t.test, &t);
  for (Shard& sh : shards) {
    std::vector<std::string> names;
    for (const std::string& file : sh.tests) {
      auto it = by_file.find(file);
      if (it == by_file.end()) {
        names.push_back(file);
        continue;
      }
      for (std::string& name : SelectedNames(*it->second)) names.push_back(std::move(name));
    }
    sh.tests = std::move(names);
  }
  return shards;
}

std::string MatrixJson(const std::vector<Shard>& shards, RunnerKind kind) {
  JsonWriter j;
  j.BeginObject().Key("include").BeginArray();
  for (const Shard& sh : shards) {
    j.BeginObject().Key("shard").Int(static_cast<int64_t>(sh.index));
    j.Key("of").Int(static_cast<int64_t>(shards.size()));
    j.Key("count").Int(static_cast<int64_t>(sh.tests.size())).Key("seconds").Seconds(sh.seconds);
    j.Key("tests").BeginArray();
    for (const std::string& test : sh.tests) j.String(test);
    j.EndArray().Key("args").String(RunnerArguments(kind, sh.tests)).EndObject();
  }
  j.EndArray().EndObject();
  return j.Take();
}

std::string RunnerLine(const Selection& s, RunnerKind kind) {
  std::vector<std::string> tests;
  for (const SelectedTest& t : s.tests) {
    if (TestsAreCTestNames(kind)) {
      tests.push_back(t.test);
      continue;
    }
    for (std::string& name : SelectedNames(t)) tests.push_back(std::move(name));
  }
  std::string line = RunnerArguments(kind, tests);
  return line.empty() ? "" : line + "\n";
}

std::string GtestFilter(const Selection& s) {
  if (s.tests.empty()) return "";
  std::vector<std::string> patterns;
  std::set<std::string_view> seen;
  for (const SelectedTest& t : s.tests) {
    if (t.cases.empty()) return "*\n";
    for (const std::string& c : t.cases) {
      if (c.empty() || c[0] == '-' || c.find_first_of(":*?\n") != std::string::npos) return "*\n";
      if (seen.insert(c).second) patterns.push_back(c);
    }
  }
  return absl::StrJoin(patterns, ":") + "\n";
}

absl::StatusOr<std::string> GithubOutputEntries(const Selection& s, const std::string& tests_file,
                                                const std::string& matrix, const std::string& gtest_filter) {
  std::vector<std::pair<std::string, std::string>> values = {
      {"mode", std::string(SelectionModeName(s.mode))},
      {"reason", s.reason},
      {"tests_file", tests_file},
  };
  if (!matrix.empty()) values.emplace_back("matrix", matrix);
  if (!gtest_filter.empty()) values.emplace_back("gtest_filter", gtest_filter);
  std::string entries;
  for (const auto& [name, value] : values) {
    absl::StatusOr<std::string> entry = GithubFileEntry(name, value);
    if (!entry.ok()) return entry.status();
    entries += *entry;
  }
  return entries;
}

std::string GithubSummary(const Selection& s) {
  CappedSummary md;
  md.AddText(absl::StrCat("### ste select: ", std::string(SelectionModeName(s.mode)), "\n\n",
                          MarkdownText(s.reason), "\n\n"));
  if (!s.wide.empty()) {
    md.AddText("Most tests came from:\n\n");
    for (const WideCause& w : s.wide) {
      md.AddText(absl::StrCat("- ", MarkdownCode(DescribeWideCause(w)), "\n"));
    }
    md.AddText("\n");
  }
  md.AddText("| test | why |\n|---|---|\n");
  for (const SelectedTest& t : s.tests) {
    std::string why;
    for (const SelectionReason& r : t.reasons) {
      absl::StrAppend(&why, why.empty() ? "" : "; ", MarkdownText(SelectionReasonText(r)));
    }
    if (t.more_reasons) absl::StrAppend(&why, "; and ", t.more_reasons, " more");
    md.AddRow(absl::StrCat("| ", MarkdownCode(t.test), " | ", why, " |"));
  }
  return md.Finish("tests");
}

// ---- why, deps ----------------------------------------------------------

std::string WhyText(const std::vector<Dependent>& dependents) {
  std::string out;
  for (const Dependent& d : dependents) {
    if (d.kind == "view") {
      absl::StrAppend(&out, "view ", EscapeForText(d.view), "\t", EscapeForText(d.test), "\t(",
                      EscapeForText(d.description), ")\n");
    } else {
      absl::StrAppend(&out, d.kind, "\t", EscapeForText(d.test), "\n");
    }
  }
  return out;
}

std::string WhyJson(std::string_view path, const std::vector<Dependent>& dependents) {
  JsonWriter j;
  j.BeginObject().PathMember("path", path).Key("tests").BeginArray();
  for (const Dependent& d : dependents) {
    j.BeginObject().PathMember("test", d.test).Key("kind").String(d.kind);
    if (d.kind == "view") {
      j.Key("view").String(d.view).Key("description").String(d.description);
    }
    j.EndObject();
  }
  j.EndArray().VersionMember().EndObject();
  return j.Take() + "\n";
}

std::string DepsText(const TestDependencies& deps) {
  std::string out;
  for (const DepKey& k : deps.deps) {
    absl::StrAppend(&out, std::string(DepKindName(k.kind)), "\t", EscapeForText(k.path), "\n");
  }
  if (deps.opaque) out += "opaque\t(it ran something ste could not trace)\n";
  return out;
}

std::string DepsJson(const TestDependencies& deps) {
  JsonWriter j;
  j.BeginObject().PathMember("test", deps.test);
  j.Key("baseline").Int(deps.baseline).Key("opaque").Bool(deps.opaque);
  j.Key("deps").BeginArray();
  for (const DepKey& k : deps.deps) {
    j.BeginObject().PathMember("path", k.path).Key("kind").String(DepKindName(k.kind)).EndObject();
  }
  j.EndArray().VersionMember().EndObject();
  return j.Take() + "\n";
}

// ---- baseline list, log dump, record ------------------------------------

std::string BaselineListJson(const std::vector<BaselineSummary>& baselines, int64_t now_unix) {
  JsonWriter j;
  j.BeginObject().Key("baselines").BeginArray();
  for (const BaselineSummary& b : baselines) {
    j.BeginObject().Key("id").Int(b.info.id).Key("mri").Int(b.info.mri);
    j.Key("commit").String(b.info.commit).Key("state").String(BaselineStateName(b.info.state));
    j.Key("tests").Int(b.tests).Key("bytes").Int(b.blob_bytes);
    j.Key("created_unix").Int(b.info.created_unix).Key("completed_unix").Int(b.info.completed_unix);
    j.Key("age_seconds").Int(std::max<int64_t>(0, now_unix - b.info.created_unix));
    j.Key("writer_alive");
    if (b.info.state != BaselineState::kBuilding) {
      j.Null();
    } else {
      j.Bool(b.writer_alive);
    }
    j.Key("failure").String(b.info.failure).EndObject();
  }
  j.EndArray().VersionMember().EndObject();
  return j.Take() + "\n";
}

std::string AuditJson(const AuditResult& audit, uint64_t seed) {
  const Selection& s = audit.selection.selection;
  const int64_t baseline = audit.selection.baseline ? audit.selection.baseline->id : 0;
  JsonWriter j;
  j.BeginObject().Key("mode").String(SelectionModeName(s.mode)).Key("reason").String(s.reason);
  j.Key("baseline").Int(baseline).Key("left_out").Int(static_cast<int64_t>(audit.left_out.size()));
  j.Key("seed").String(std::to_string(seed)).Key("ran").Int(static_cast<int64_t>(audit.ran.size()));
  j.Key("misses").Int(static_cast<int64_t>(audit.misses)).Key("flaky").Int(static_cast<int64_t>(audit.flaky));
  j.Key("miss_rate_upper_95").Fraction(MissRateUpperBound(audit.misses, audit.ran.size(), 0.95));
  j.Key("tests").BeginArray();
  for (const AuditedTest& t : audit.ran) {
    j.BeginObject().PathMember("test", t.test).Key("outcome").String(TestOutcomeName(t.outcome));
    j.Key("exit_code").Int(t.exit_code).Key("seconds").Seconds(t.seconds).Key("miss").Bool(t.miss);
    j.Key("flaky").Bool(t.flaky).Key("reruns").Int(static_cast<int64_t>(t.reruns));
    j.PathMember("output", t.output_log);
    if (t.miss) {
      j.Key("dependencies").BeginArray();
      for (const DepKey& k : t.dependencies) {
        j.BeginObject().PathMember("path", k.path).Key("kind").String(DepKindName(k.kind)).EndObject();
      }
      j.EndArray();
    }
    j.EndObject();
  }
  j.EndArray().VersionMember().EndObject();
  return j.Take() + "\n";
}

std::string LogRecordLine(const ProcessLog& log, const LogRecord& r, OutputFormat format) {
  if (format != OutputFormat::kJson) {
    return absl::StrCat(log.pid, "\t", log.ppid, "\t", EscapeForText(r.scope), "\t",
                        std::string(RecordKindName(r.kind)), "\t", RecordOpName(r.op), "\t",
                        EscapeForText(r.path), "\n");
  }
  JsonWriter j;
  j.BeginObject().Key("pid").Int(log.pid).Key("ppid").Int(log.ppid).PathMember("scope", r.scope);
  j.Key("kind").String(RecordKindName(r.kind)).Key("op").String(RecordOpName(r.op));
  j.PathMember("path", r.path).PathMember("log", log.file).VersionMember().EndObject();
  return j.Take() + "\n";
}

std::string JUnitReport(const std::vector<FinishedTest>& tests, const JUnitOptions& options) {
  return JUnitXml(tests, options);
}

std::string SlowTrackerNote(size_t tests, const std::map<std::string, size_t>& processes) {
  if (processes.empty()) return "";
  size_t total = 0;
  std::string why;
  for (const auto& [reason, n] : processes) {
    total += n;
    absl::StrAppend(&why, why.empty() ? "" : ", ", EscapeForText(reason), " (", n, ")");
  }
  return absl::StrCat(total, total == 1 ? " Python process" : " Python processes", " of ", tests,
                      tests == 1 ? " test" : " tests",
                      " tracked definitions with the slower fallback tracer: ", why,
                      " (docs/concepts.md, \"Definitions\")");
}

}  // namespace ste::cli
