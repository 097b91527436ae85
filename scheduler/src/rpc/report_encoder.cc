// Dictionary-coded Report streams (report_encoder.h).
#include "ste/report_encoder.h"

#include <algorithm>
#include <set>

#include "proto_convert.h"

namespace ste {
namespace {

constexpr size_t kPathTableBytes = 4 << 20;  // per PathTable message

}  // namespace

ReportEncoder::ReportEncoder(size_t max_ids_per_message)
    : max_ids_(std::max<size_t>(max_ids_per_message, 1)) {}

void ReportEncoder::Reset() { ids_.clear(); }

void ReportEncoder::Encode(uint64_t lease_id, const TestRecord& record,
                           std::vector<v1::ReportMessage>* out) {
  // New paths first, in tables of bounded size.
  v1::PathTable* table = nullptr;
  size_t table_bytes = 0;
  for (const ScopeDependencies& s : record.deps.scopes) {
    for (const DepKey& k : s.deps) {
      auto [it, added] = ids_.try_emplace(k.path, static_cast<uint32_t>(ids_.size()));
      if (!added) continue;
      if (table == nullptr || table_bytes + k.path.size() > kPathTableBytes ||
          static_cast<size_t>(table->paths_size()) >= max_ids_) {
        out->emplace_back();
        table = out->back().mutable_paths();
        table->set_first_id(it->second);
        table_bytes = 0;
      }
      table->add_paths(k.path);
      table_bytes += k.path.size();
    }
  }
  // Then the result, split when it has too many ids.
  auto start = [&]() {
    out->emplace_back();
    v1::TestResult* r = out->back().mutable_result();
    r->set_lease_id(lease_id);
    r->set_test(record.test);
    r->set_outcome(ToProto(OutcomeOf(record)));
    r->set_exit_code(record.exit_code);
    r->set_seconds(record.seconds);
    return r;
  };
  v1::TestResult* r = start();
  r->set_output_log(record.output_log);
  r->set_output_shared(record.output_shared);
  r->set_output_tail(record.output_tail);
  r->set_output_bytes(record.output_bytes);
  r->set_flaky(record.flaky);
  std::set<std::string> writes;
  for (const auto& [scope, paths] : record.deps.writes) writes.insert(paths.begin(), paths.end());
  for (const std::string& w : writes) r->add_writes(w);
  r->set_opaque(record.deps.opaque);
  for (const std::string& why : record.deps.opaque_reasons) r->add_opaque_reasons(why);
  r->set_error(record.error);
  for (const std::string& name : record.deps.case_order) r->add_case_order(name);
  size_t in_message = 0;
  for (const ScopeDependencies& s : record.deps.scopes) {
    v1::ScopeDependencies* scope = nullptr;
    for (const DepKey& k : s.deps) {
      if (in_message >= max_ids_) {
        r->set_continued(true);
        r = start();
        scope = nullptr;
        in_message = 0;
      }
      if (scope == nullptr) {
        scope = r->add_scopes();
        scope->set_scope(s.scope);
      }
      uint32_t id = ids_.at(k.path);
      switch (k.kind) {
        case DepKind::kContent: scope->add_content(id); break;
        case DepKind::kAbsent: scope->add_absent(id); break;
        case DepKind::kListing: scope->add_listing(id); break;
      }
      in_message++;
    }
  }
}

}  // namespace ste
