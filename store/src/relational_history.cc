// Copyright: the ste authors. The relational store's history
// (HistoryStore): one INSERT per selection or audit, and the newest rows
// read back oldest first (baseline_store.h, "The history").
#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "relational_store.h"
#include "ste/baseline_loader.h"
#include "ste/status_macros.h"

namespace ste {
namespace {

absl::Status CheckCounts(std::initializer_list<int64_t> counts) {
  for (int64_t n : counts) {
    if (n < 0) return absl::InvalidArgumentError(absl::StrCat("a history count is negative: ", n));
  }
  return absl::OkStatus();
}

absl::Status CheckNames(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    if (n.empty() || n.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError("a test name in an audit is empty or holds a NUL byte");
    }
  }
  return absl::OkStatus();
}

// Text the database takes: no NUL byte (PostgreSQL refuses one), at most
// `max` bytes, not cut inside a UTF-8 sequence.
std::string StorableText(std::string_view text, size_t max) {
  std::string out;
  for (char c : text) {
    if (c != '\0') out.push_back(c);
  }
  if (out.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
  }
  return out;
}

std::string_view AsStd(absl::string_view v) { return std::string_view(v.data(), v.size()); }

// "LIMIT n" of the newest rows, or every row.
std::string NewestFirst(const char* columns, const char* table, int64_t limit) {
  return absl::StrCat("SELECT ", columns, " FROM ", table, " ORDER BY id DESC",
                      limit > 0 ? absl::StrCat(" LIMIT ", limit) : std::string());
}

}  // namespace

absl::StatusOr<int64_t> RelationalStore::AppendSelection(const SelectionEntry& e) {
  if (e.mode != "all" && e.mode != "subset" && e.mode != "none") {
    return absl::InvalidArgumentError(absl::StrCat("a selection's mode is \"", e.mode, "\""));
  }
  STE_RETURN_IF_ERROR(CheckCounts({e.baseline, e.tests, e.selected, e.changed}));
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> row,
      db_->Query(absl::StrCat("INSERT INTO ste.selections (at_unix, baseline, commit_id, mode, "
                              "reason, tests, selected, changed, skipped_seconds, seconds, origin) "
                              "VALUES (",
                              dialect_.now_s,
                              ", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id"),
                 SqlParams()
                     .Int(e.baseline)
                     .Text(StorableText(e.commit, 200))
                     .Text(e.mode)
                     .Text(StorableText(e.reason, kMaxHistoryReasonBytes))
                     .Int(e.tests)
                     .Int(e.selected)
                     .Int(e.changed)
                     .Double(std::max(0.0, e.skipped_seconds))
                     .Double(std::max(0.0, e.seconds))
                     .Text(StorableText(e.origin, 100))));
  if (row->size() != 1) return absl::InternalError("INSERT ... RETURNING id returned no row");
  const int64_t id = row->Int(0, 0);
  STE_RETURN_IF_ERROR(row->ParseStatus());
  return id;
}

absl::StatusOr<int64_t> RelationalStore::AppendAudit(const AuditEntry& e) {
  if (e.kind != "audit" && e.kind != "observe") {
    return absl::InvalidArgumentError(absl::StrCat("an audit's kind is \"", e.kind, "\""));
  }
  STE_RETURN_IF_ERROR(CheckCounts({e.baseline, e.left_out, e.ran}));
  STE_RETURN_IF_ERROR(CheckNames(e.missed));
  STE_RETURN_IF_ERROR(CheckNames(e.flaky));
  const std::string missed = EncodeTestNames(e.missed);
  const std::string flaky = EncodeTestNames(e.flaky);
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> row,
      db_->Query(absl::StrCat("INSERT INTO ste.audits (at_unix, baseline, commit_id, kind, "
                              "left_out, ran, misses, flakes, missed, flaky) VALUES (",
                              dialect_.now_s, ", $1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id"),
                 SqlParams()
                     .Int(e.baseline)
                     .Text(StorableText(e.commit, 200))
                     .Text(e.kind)
                     .Int(e.left_out)
                     .Int(e.ran)
                     .Int(static_cast<int64_t>(DecodeTestNames(missed).size()))
                     .Int(static_cast<int64_t>(DecodeTestNames(flaky).size()))
                     .Bytes(missed)
                     .Bytes(flaky)));
  if (row->size() != 1) return absl::InternalError("INSERT ... RETURNING id returned no row");
  const int64_t id = row->Int(0, 0);
  STE_RETURN_IF_ERROR(row->ParseStatus());
  return id;
}

absl::StatusOr<std::vector<SelectionEntry>> RelationalStore::Selections(int64_t limit) {
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> rows,
      db_->Query(NewestFirst("id, at_unix, baseline, commit_id, mode, reason, tests, selected, "
                             "changed, skipped_seconds, seconds, origin",
                             "ste.selections", limit)));
  std::vector<SelectionEntry> out(static_cast<size_t>(rows->size()));
  for (int i = 0; i < rows->size(); ++i) {
    SelectionEntry& e = out[out.size() - 1 - static_cast<size_t>(i)];
    e.id = rows->Int(i, 0);
    e.at_unix = rows->Int(i, 1);
    e.baseline = rows->Int(i, 2);
    e.commit = rows->Text(i, 3);
    e.mode = rows->Text(i, 4);
    e.reason = rows->Text(i, 5);
    e.tests = rows->Int(i, 6);
    e.selected = rows->Int(i, 7);
    e.changed = rows->Int(i, 8);
    e.skipped_seconds = rows->Double(i, 9);
    e.seconds = rows->Double(i, 10);
    e.origin = rows->Text(i, 11);
  }
  STE_RETURN_IF_ERROR(rows->ParseStatus());
  return out;
}

absl::StatusOr<std::vector<AuditEntry>> RelationalStore::Audits(int64_t limit) {
  STE_RETURN_IF_ERROR(Ready());
  // The names are bytes: read apart from the other columns (PostgreSQL
  // sends a query's columns all as text or all as binary).
  STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> rows,
                       db_->Query(NewestFirst("id, at_unix, baseline, commit_id, kind, left_out, ran",
                                              "ste.audits", limit)));
  STE_ASSIGN_OR_RETURN(std::unique_ptr<SqlRows> names,
                       db_->Query(NewestFirst("missed, flaky", "ste.audits", limit), {}, true));
  if (names->size() != rows->size()) {
    return absl::AbortedError("the audits changed between two reads; try again");
  }
  std::vector<AuditEntry> out(static_cast<size_t>(rows->size()));
  for (int i = 0; i < rows->size(); ++i) {
    AuditEntry& e = out[out.size() - 1 - static_cast<size_t>(i)];
    e.id = rows->Int(i, 0);
    e.at_unix = rows->Int(i, 1);
    e.baseline = rows->Int(i, 2);
    e.commit = rows->Text(i, 3);
    e.kind = rows->Text(i, 4);
    e.left_out = rows->Int(i, 5);
    e.ran = rows->Int(i, 6);
    e.missed = DecodeTestNames(AsStd(names->Bytes(i, 0)));
    e.flaky = DecodeTestNames(AsStd(names->Bytes(i, 1)));
  }
  STE_RETURN_IF_ERROR(rows->ParseStatus());
  STE_RETURN_IF_ERROR(names->ParseStatus());
  return out;
}

}  // namespace ste
