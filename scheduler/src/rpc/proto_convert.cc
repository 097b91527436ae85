#include "proto_convert.h"

#include "absl/strings/str_cat.h"
#include "ste/status_macros.h"

namespace ste {
namespace {

constexpr FileType kFileTypes[] = {FileType::kRegular, FileType::kSymlink, FileType::kDirectory,
                                   FileType::kOther, FileType::kMissing};
constexpr ChangeKind kChangeKinds[] = {ChangeKind::kModified, ChangeKind::kAdded,
                                       ChangeKind::kDeleted};

absl::StatusOr<FileType> FileTypeFromName(const std::string& name) {
  for (FileType t : kFileTypes) {
    if (FileTypeName(t) == name) return t;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown file type '", name, "'"));
}

absl::StatusOr<ChangeKind> ChangeKindFromName(const std::string& name) {
  for (ChangeKind k : kChangeKinds) {
    if (ChangeKindName(k) == name) return k;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown change '", name, "'"));
}

}  // namespace

v1::BuildState ToProto(BaselineState s) {
  switch (s) {
    case BaselineState::kBuilding: return v1::BUILD_STATE_RUNNING;
    case BaselineState::kComplete: return v1::BUILD_STATE_COMPLETE;
    case BaselineState::kFailed: return v1::BUILD_STATE_FAILED;
  }
  return v1::BUILD_STATE_FAILED;
}

v1::TestOutcome ToProto(TestOutcome o) {
  switch (o) {
    case TestOutcome::kPassed: return v1::TEST_OUTCOME_PASSED;
    case TestOutcome::kFailed: return v1::TEST_OUTCOME_FAILED;
    case TestOutcome::kError: return v1::TEST_OUTCOME_ERROR;
  }
  return v1::TEST_OUTCOME_ERROR;
}

absl::StatusOr<TestOutcome> FromProto(v1::TestOutcome o) {
  switch (o) {
    case v1::TEST_OUTCOME_PASSED: return TestOutcome::kPassed;
    case v1::TEST_OUTCOME_FAILED: return TestOutcome::kFailed;
    case v1::TEST_OUTCOME_ERROR: return TestOutcome::kError;
    default: break;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown test outcome ", static_cast<int>(o)));
}

void ToProto(const FinishedTest& f, v1::FinishedTest* t) {
  t->set_test(f.test);
  t->set_outcome(ToProto(f.outcome));
  t->set_exit_code(f.exit_code);
  t->set_seconds(f.seconds);
  t->set_opaque(f.opaque);
  t->set_detail(f.detail);
  t->set_output_log(f.output_log);
  t->set_output_shared(f.output_shared);
  t->set_output_tail(f.output_tail);
  t->set_output_bytes(f.output_bytes);
  t->set_worker_name(f.worker_name);
  t->set_flaky(f.flaky);
}

absl::StatusOr<FinishedTest> FromProto(const v1::FinishedTest& t) {
  FinishedTest f;
  absl::StatusOr<TestOutcome> outcome = FromProto(t.outcome());
  if (!outcome.ok()) return absl::InvalidArgumentError(absl::StrCat(t.test(), ": ", outcome.status().message()));
  f.test = t.test();
  f.outcome = *outcome;
  f.exit_code = t.exit_code();
  f.seconds = t.seconds();
  f.opaque = t.opaque();
  f.detail = t.detail();
  f.output_log = t.output_log();
  f.output_shared = t.output_shared();
  f.output_tail = t.output_tail();
  f.output_bytes = t.output_bytes();
  f.worker_name = t.worker_name();
  f.flaky = t.flaky();
  return f;
}

absl::Status ValidateChangeWord(const std::string& word) {
  return ChangeKindFromName(word).status();
}

void ToProto(const InventoryChange& c, v1::Change* out) {
  out->set_path(c.path);
  out->set_change(std::string(ChangeKindName(c.change)));
  out->set_type(std::string(FileTypeName(c.type)));
  out->set_old_type(std::string(FileTypeName(c.old_type)));
}

absl::StatusOr<InventoryChange> FromProto(const v1::Change& c) {
  InventoryChange out;
  out.path = c.path();
  absl::StatusOr<ChangeKind> kind = ChangeKindFromName(c.change());
  absl::StatusOr<FileType> type = FileTypeFromName(c.type());
  absl::StatusOr<FileType> old_type = c.old_type().empty() ? type : FileTypeFromName(c.old_type());
  for (const absl::Status& s : {kind.status(), type.status(), old_type.status()}) {
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("change of ", c.path(), ": ", s.message()));
  }
  out.change = *kind;
  out.type = *type;
  out.old_type = *old_type;
  return out;
}

void ToProto(const BaselineInfo& info, v1::Baseline* out) {
  out->set_id(info.id);
  out->set_mri(info.mri);
  out->set_commit(info.commit);
}

BaselineInfo FromProto(const v1::Baseline& b) {
  BaselineInfo info;
  info.id = b.id();
  info.mri = b.mri();
  info.commit = b.commit();
  info.state = BaselineState::kComplete;  // only complete baselines are selected with
  return info;
}

void ToProto(const BaselineLookup& w, v1::BaselineLookup* out) {
  out->set_id(w.id);
  out->set_commit(w.commit);
  for (const std::string& c : w.commits) out->add_commits(c);
  out->set_mri(w.mri);
  out->set_hint(w.hint);
  out->set_fallback(w.fallback);
  for (const std::string& c : w.fallback_commits) out->add_fallback_commits(c);
}

BaselineLookup FromProto(const v1::BaselineLookup& l) {
  BaselineLookup w;
  w.id = l.id();
  w.commit = l.commit();
  w.commits.assign(l.commits().begin(), l.commits().end());
  w.mri = l.mri();
  w.hint = l.hint();
  w.fallback = l.fallback();
  w.fallback_commits.assign(l.fallback_commits().begin(), l.fallback_commits().end());
  return w;
}

void ToProto(const Selection& s, const std::optional<BaselineInfo>& baseline,
             v1::SelectResponse* out) {
  switch (s.mode) {
    case SelectionMode::kAll: out->set_mode(v1::SELECTION_MODE_ALL); break;
    case SelectionMode::kSubset: out->set_mode(v1::SELECTION_MODE_SUBSET); break;
    case SelectionMode::kNone: out->set_mode(v1::SELECTION_MODE_NONE); break;
  }
  out->set_reason(s.reason);
  if (baseline) ToProto(*baseline, out->mutable_baseline());
  for (const InventoryChange& c : s.changed) ToProto(c, out->add_changed());
  for (const WideCause& w : s.wide) {
    v1::WideCause* cause = out->add_wide();
    cause->set_path(w.cause.path);
    cause->set_kind(std::string(ReasonKindWord(w.cause)));
    cause->set_change(std::string(ReasonChangeWord(w.cause)));
    cause->set_tests(w.tests);
    for (const auto& [path, change] : w.entries) {
      v1::Change* e = cause->add_entries();
      e->set_path(path);
      e->set_change(std::string(ChangeKindName(change)));
    }
    cause->set_more_entries(w.more_entries);
  }
  for (const SelectedTest& t : s.tests) {
    v1::SelectedTest* test = out->add_tests();
    test->set_test(t.test);
    test->set_more_reasons(static_cast<uint32_t>(t.more_reasons));
    if (t.seconds) test->set_seconds(*t.seconds);
    for (const std::string& c : t.cases) test->add_cases(c);
    test->set_flaky(t.flaky);
    for (const SelectionReason& r : t.reasons) {
      v1::SelectionReason* why = test->add_reasons();
      why->set_path(r.path);
      why->set_kind(std::string(ReasonKindWord(r)));
      why->set_change(std::string(ReasonChangeWord(r)));
    }
  }
}

absl::StatusOr<SelectionAnswer> FromProto(const v1::SelectResponse& r) {
  SelectionAnswer a;
  Selection& s = a.selection;
  switch (r.mode()) {
    case v1::SELECTION_MODE_ALL: s.mode = SelectionMode::kAll; break;
    case v1::SELECTION_MODE_SUBSET: s.mode = SelectionMode::kSubset; break;
    case v1::SELECTION_MODE_NONE: s.mode = SelectionMode::kNone; break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown selection mode ", r.mode()));
  }
  s.reason = r.reason();
  if (r.has_baseline()) a.baseline = FromProto(r.baseline());
  for (const v1::Change& c : r.changed()) {
    absl::StatusOr<InventoryChange> change = FromProto(c);
    if (!change.ok()) return change.status();
    s.changed.push_back(*std::move(change));
  }
  for (const v1::WideCause& w : r.wide()) {
    WideCause cause;
    STE_ASSIGN_OR_RETURN(cause.cause, ReasonFromWords(w.path(), w.kind(), w.change()));
    cause.tests = w.tests();
    for (const v1::Change& e : w.entries()) {
      STE_ASSIGN_OR_RETURN(ChangeKind change, ChangeKindFromName(e.change()));
      cause.entries.emplace_back(e.path(), change);
    }
    cause.more_entries = w.more_entries();
    s.wide.push_back(std::move(cause));
  }
  for (const v1::SelectedTest& t : r.tests()) {
    SelectedTest out;
    out.test = t.test();
    out.more_reasons = t.more_reasons();
    if (t.has_seconds()) out.seconds = t.seconds();
    out.cases.assign(t.cases().begin(), t.cases().end());
    out.flaky = t.flaky();
    for (const v1::SelectionReason& why : t.reasons()) {
      STE_ASSIGN_OR_RETURN(SelectionReason reason,
                           ReasonFromWords(why.path(), why.kind(), why.change()));
      out.reasons.push_back(std::move(reason));
    }
    s.tests.push_back(std::move(out));
  }
  return a;
}

}  // namespace ste
