// How the `ste` commands print data: the output formats (text, json,
// github, matrix, runner, junit), each rendered here from typed values, so
// that no command builds JSON by concatenation and every JSON document
// carries the same "version".
//
// JSON outputs (docs/outputs.md): every JSON document ste prints has a
// top-level "version": kJsonOutputVersion (an integer), the version of that
// output's layout; it grows only when a field changes meaning or goes away
// (new fields do not change it). It is the last key: of the document
// printed whole (select, why, deps, baseline list), of every line of an
// output of one object per line (index dump, inventory, log dump), so
// that a document still starts with what it is about. The one exception is
// `select --format matrix`: it is GitHub's strategy.matrix, where every
// top-level key is a matrix dimension, so it has no "version".
//
// Paths and names in JSON follow ste/json.h (valid UTF-8, "<name>_hex" with
// the raw bytes when not); in text, ste/json.h's EscapeForText (one name is
// one line).
#ifndef STE_CLI_OUTPUT_FORMAT_H_
#define STE_CLI_OUTPUT_FORMAT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ste/audit.h"
#include "ste/baseline_store.h"
#include "ste/build_session.h"
#include "ste/dependency.h"
#include "ste/junit_report.h"
#include "ste/log_reader.h"
#include "ste/runner_kind.h"
#include "ste/selection.h"
#include "ste/shards.h"

namespace ste::cli {

enum class OutputFormat { kText, kJson, kGithub, kMatrix, kRunner, kJunit, kGtestFilter };

// "text", "json", "github", "matrix", "runner", "junit", "gtest-filter".
std::string_view OutputFormatName(OutputFormat format);

// The format `value` names, when it is one of `allowed` (non-empty);
// otherwise InvalidArgument "--format is text or json, not 'xml'" (the
// allowed values, in their order).
absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view value,
                                               const std::vector<OutputFormat>& allowed);

// The version every JSON document carries (see top).
inline constexpr int kJsonOutputVersion = 1;

// Writes one JSON value: the commas, the quoting and the nesting, so that
// a document is written as the values it holds. Misuse (a value where a
// key is due, an End without a Begin) is a bug of the caller, not checked.
class JsonWriter {
 public:
  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  // In an object: the next member's name; its value follows.
  JsonWriter& Key(std::string_view name);
  JsonWriter& String(std::string_view bytes);  // ste/json.h AppendJsonString
  JsonWriter& Int(int64_t value);
  JsonWriter& Seconds(double value);  // "%.3f"
  JsonWriter& Fraction(double value);  // "%.6f"
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // A whole member: "name":"<value>" and, when value is not UTF-8,
  // "name_hex" (ste/json.h AppendJsonPathField).
  JsonWriter& PathMember(std::string_view name, std::string_view value);
  // The member "version":kJsonOutputVersion.
  JsonWriter& VersionMember();
  // The text written; the writer is empty after.
  std::string Take();

 private:
  JsonWriter& Open(char bracket);
  JsonWriter& Close(char bracket);
  void Separate();  // a comma before every value but a container's first

  std::string out_;
  std::vector<bool> empty_;  // per open container: nothing in it yet
  bool after_key_ = false;
};

// Each line of `lines` (one JSON object per line, as ste/selection_index.h
// DumpJson and ste/inventory.h ToJsonLines write them) with
// ,"version":kJsonOutputVersion before its closing brace.
std::string AddVersionToJsonLines(std::string_view lines);

// ---- audit -------------------------------------------------------------

// `ste audit --json` (docs/outputs.md): the selection audited, the tests
// run and their outcomes, each miss's dependencies.
std::string AuditJson(const AuditResult& audit, uint64_t seed);

// ---- select -----------------------------------------------------------

// One reason as a user reads it: "lib/a.sh (content modified)", a view's
// description, or the rule ("new test").
std::string SelectionReasonText(const SelectionReason& reason);

// What a selected test hands the runner: its file, or (SelectedTest::cases)
// "<file>::<case>" for each of its cases (a pytest node id; ste_unittest.py
// takes the same form).
std::vector<std::string> SelectedNames(const SelectedTest& test);

// "N test files selected: W whole, C as K cases\n" when some file was
// narrowed to cases; "" otherwise.
std::string CaseCountLine(const Selection& selection);

// The tests (SelectedNames), one per line (escaped); `explain`: each test
// followed by its "  <- reason" lines; `null`: each as it is, ended by a
// NUL byte.
std::string SelectionText(const Selection& selection, bool explain, bool null);

// {"mode","reason","baseline":{"id","mri","commit"}|null,
//  "changed":[{"path","change","type"}],
//  "tests":[{"test","cases"?,"reasons":[{"path","kind","change"}],"more_reasons","seconds"?}],
//  "wide":[{"path","kind","change","tests","entries":[{"path","change"}],"more_entries"}],
//  "version"} and a newline.
std::string SelectionJson(const Selection& selection, const std::optional<BaselineInfo>& baseline);

// The selection's tests (files) split into at most `shards` shards
// (ste/shards.h). A file narrowed to cases stays whole in one shard: its
// cases run in one process, in order, as they did when recorded.
std::vector<Shard> SelectionShards(const Selection& selection, size_t shards);

// `shards` (SelectionShards of `selection`) with each file replaced by
// what is handed to the runner (SelectedNames): the tests of --format
// matrix and github's matrix.
// ctest: the CTest tests themselves (their cases go by GtestFilter).
std::vector<Shard> ShardsOfNames(std::vector<Shard> shards, const Selection& selection, RunnerKind kind);

// {"include":[{"shard","of","count","seconds","tests","args"}]}, no
// newline: what a GitHub Actions strategy.matrix takes (no "version": each
// top-level key would be a matrix dimension).
std::string MatrixJson(const std::vector<Shard>& shards, RunnerKind kind);

// The tests as arguments for the runner (ste/runner_kind.h) and a newline;
// "" when there is no test (the runner must not be called then). ctest:
// the CTest tests, whole; their cases go by GtestFilter.
std::string RunnerLine(const Selection& selection, RunnerKind kind);

// For ctest with tests.unit = "case": the GoogleTest filter (GTEST_FILTER)
// that runs the selected cases, "Suite.Case:Suite.Other" and a newline,
// when every selected test was narrowed to cases; "*" (every case) when
// one is selected whole or a case's name holds a character the filter
// reads as a pattern (':', '*', '?', a leading '-'); "" when there is no
// test. A case of another selected binary with the same name runs too:
// more, never fewer.
std::string GtestFilter(const Selection& selection);

// The $GITHUB_OUTPUT entries mode, reason, tests_file and (when not empty)
// matrix and gtest_filter (ctest: GtestFilter without its newline), each
// in GitHub's multi-line form with a fresh delimiter (ste/ci_output.h
// GithubFileEntry).
absl::StatusOr<std::string> GithubOutputEntries(const Selection& selection,
                                                const std::string& tests_file,
                                                const std::string& matrix,
                                                const std::string& gtest_filter = "");

// The Markdown step summary: mode, reason, the wide causes, a table of the
// tests and why, every name escaped, capped below GitHub's limit.
std::string GithubSummary(const Selection& selection);

// ---- why, deps --------------------------------------------------------

// A test depending on a path (`ste why`).
struct Dependent {
  std::string test;         // repo-relative
  std::string kind;         // content, absent, listing, or view
  std::string view;         // kind view: the view's name
  std::string description;  // kind view: what the test used of the listing
};

// "kind<TAB>test" per line; a view "view NAME<TAB>test<TAB>(description)".
std::string WhyText(const std::vector<Dependent>& dependents);

// {"path","tests":[{"test","kind","view"?,"description"?}],"version"} and a
// newline.
std::string WhyJson(std::string_view path, const std::vector<Dependent>& dependents);

// What a test depended on in a baseline (`ste deps`).
struct TestDependencies {
  std::string test;  // repo-relative
  int64_t baseline = 0;
  std::vector<DepKey> deps;  // sorted
  bool opaque = false;
};

// "kind<TAB>path" per dependency, then "opaque<TAB>(...)" when opaque.
std::string DepsText(const TestDependencies& deps);

// {"test","baseline","opaque","deps":[{"path","kind"}],"version"} and a
// newline.
std::string DepsJson(const TestDependencies& deps);

// ---- baseline list, log dump, record ----------------------------------

// {"baselines":[{"id","mri","commit","state","tests","bytes",
// "created_unix","completed_unix","age_seconds","writer_alive","failure"}],
// "version"} and a newline; ages as of `now_unix`.
std::string BaselineListJson(const std::vector<BaselineSummary>& baselines, int64_t now_unix);

// One record of a process log: "pid ppid scope kind op path" tab-separated
// (escaped), or {"pid","ppid","scope","kind","op","path","log","version"};
// a newline either way.
std::string LogRecordLine(const ProcessLog& log, const LogRecord& record, OutputFormat format);

// JUnit XML of a record build (scheduler's ste/junit_report.h).
std::string JUnitReport(const std::vector<FinishedTest>& tests, const JUnitOptions& options);

// The one line `ste record` and `ste worker` give when Python processes
// tracked definitions with the slow fallback tracer (`processes`: why ->
// how many, of `tests` tests; TestDependencies::slow_trackers), without
// its newline; "" when none did.
std::string SlowTrackerNote(size_t tests, const std::map<std::string, size_t>& processes);

}  // namespace ste::cli

#endif  // STE_CLI_OUTPUT_FORMAT_H_
