// Copyright: the ste authors. ReportStreamDecoder: a Report stream's
// messages into path ids, external files and complete results.
#include "report_decoder.h"

#include "proto_convert.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "ste/status_macros.h"

namespace ste {
namespace {

// Appends to `dst` the build's ids of the stream path ids `ids`.
absl::Status MapIds(const google::protobuf::RepeatedField<uint32_t>& ids,
                    const std::vector<uint32_t>& table, uint64_t lease_id,
                    std::vector<uint32_t>* dst) {
  dst->reserve(dst->size() + static_cast<size_t>(ids.size()));
  for (uint32_t id : ids) {
    if (id >= table.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "result of lease ", lease_id, ": path id ", id,
          " not in the stream's path table (", table.size(), " paths)"));
    }
    dst->push_back(table[id]);
  }
  return absl::OkStatus();
}

// Merges one TestResult message into `r` (the earlier parts of its lease,
// or an empty result), through the stream's path table.
absl::Status MergeResultPart(const v1::TestResult& m,
                             const std::vector<uint32_t>& table,
                             LeaseResult* r) {
  r->lease_id = m.lease_id();
  r->test = m.test();
  absl::StatusOr<TestOutcome> outcome = FromProto(m.outcome());
  if (!outcome.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("result of lease ", m.lease_id(), ": no outcome"));
  }
  r->outcome = *outcome;
  r->exit_code = m.exit_code();
  if (!m.error().empty()) r->error = m.error();
  if (!m.output_log().empty()) r->output_log = m.output_log();
  r->output_shared = r->output_shared || m.output_shared();
  if (!m.output_tail().empty()) r->output_tail = m.output_tail();
  if (m.output_bytes() != 0) r->output_bytes = m.output_bytes();
  r->flaky = r->flaky || m.flaky();
  for (const std::string& w : m.writes()) r->writes.push_back(w);
  r->seconds = m.seconds();
  r->opaque = r->opaque || m.opaque();
  for (const std::string& why : m.opaque_reasons())
    r->opaque_reasons.push_back(why);
  for (const std::string& name : m.case_order()) r->case_order.push_back(name);
  for (const v1::ScopeDependencies& s : m.scopes()) {
    ResultScope* out = nullptr;
    for (ResultScope& have : r->scopes) {
      if (have.scope == s.scope()) out = &have;
    }
    if (out == nullptr) {
      r->scopes.emplace_back();
      out = &r->scopes.back();
      out->scope = s.scope();
    }
    auto ids = [&](DepKind kind) { return &out->ids[static_cast<int>(kind)]; };
    STE_RETURN_IF_ERROR(
        MapIds(s.content(), table, m.lease_id(), ids(DepKind::kContent)));
    STE_RETURN_IF_ERROR(
        MapIds(s.absent(), table, m.lease_id(), ids(DepKind::kAbsent)));
    STE_RETURN_IF_ERROR(
        MapIds(s.listing(), table, m.lease_id(), ids(DepKind::kListing)));
  }
  return absl::OkStatus();
}

}  // namespace

LeaseResult RefusedResult(uint64_t lease_id, const std::string& test,
                          absl::string_view why) {
  LeaseResult rejected;
  rejected.lease_id = lease_id;
  rejected.test = test;
  rejected.outcome = TestOutcome::kError;
  rejected.exit_code = -1;
  rejected.opaque = true;
  rejected.error = absl::StrCat("its report was refused: ", why);
  rejected.opaque_reasons.push_back(rejected.error);
  return rejected;
}

absl::StatusOr<bool> ReportStreamDecoder::TakeWorker(
    const v1::ReportMessage& m) {
  if (!m.worker_id().empty() && m.worker_id() != worker_id_) {
    if (!worker_id_.empty())
      return absl::InvalidArgumentError("one stream, one worker");
    worker_id_ = m.worker_id();
    return true;
  }
  if (worker_id_.empty()) {
    return absl::InvalidArgumentError(
        "the first message of a report must name its worker");
  }
  return false;
}

absl::StatusOr<std::optional<LeaseResult>> ReportStreamDecoder::Decode(
    const v1::ReportMessage& m, ReportTarget& target,
    std::optional<LeaseResult>* refused) {
  switch (m.item_case()) {
    case v1::ReportMessage::kPaths: {
      if (m.paths().first_id() != table_.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("path table starts at ", m.paths().first_id(),
                         ", expected ", table_.size()));
      }
      for (const std::string& p : m.paths().paths()) {
        absl::StatusOr<uint32_t> id = target.InternPath(p);
        if (!id.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("path table: ", id.status().message()));
        }
        table_.push_back(*id);
      }
      return std::nullopt;
    }
    case v1::ReportMessage::kExternal: {
      absl::StatusOr<Inventory> ext =
          Inventory::Parse(m.external().inventory());
      absl::Status added = ext.ok() ? target.AddExternal(*ext) : ext.status();
      if (!added.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("external files: ", added.message()));
      }
      return std::nullopt;
    }
    case v1::ReportMessage::kResult: {
      const v1::TestResult& r = m.result();
      LeaseResult& acc = partial_[r.lease_id()];
      if (absl::Status s = MergeResultPart(r, table_, &acc); !s.ok()) {
        *refused = RefusedResult(r.lease_id(), r.test(), s.message());
        return s;
      }
      if (r.continued()) return std::nullopt;
      LeaseResult whole = std::move(acc);
      partial_.erase(r.lease_id());
      return std::optional<LeaseResult>(std::move(whole));
    }
    default:
      return absl::InvalidArgumentError("an empty report message");
  }
}

absl::Status ReportStreamDecoder::Finish() const {
  if (partial_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("the stream ended inside the result of lease ",
                   partial_.begin()->first, " (continued without an end)"));
}

}  // namespace ste
