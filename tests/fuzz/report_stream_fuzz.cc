// Copyright: the ste authors. Fuzz target: a worker's Report stream, a
// sequence of ReportMessages (framing in report_stream.h), through the
// scheduler's ReportStreamDecoder (scheduler/src/rpc/report_decoder.h)
// as SchedulerService::Report drives it: TakeWorker, then Decode, message
// by message, into a build; Finish at the end. Each frame that is not a
// message ends the stream, as a broken stream ends the service's read loop.
//
// The build here interns paths as BuildSession does (ValidateDependencyPath
// first, one id per distinct path) and takes external files that
// Inventory::Parse accepted. Properties: every id in a complete result is
// one the build handed out; an error on a result always comes with its
// stand-in (RefusedResult) for the same lease.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "report_decoder.h"
#include "report_stream.h"
#include "ste/build_session.h"

namespace {

class InterningTarget final : public ste::ReportTarget {
 public:
  absl::StatusOr<uint32_t> InternPath(std::string_view path) override {
    if (absl::Status s = ste::ValidateDependencyPath(path); !s.ok()) return s;
    auto [it, added] = ids_.emplace(std::string(path), static_cast<uint32_t>(ids_.size()));
    return it->second;
  }
  absl::Status AddExternal(const ste::Inventory& external) override {
    for (const ste::InventoryEntry& e : external) {
      if (absl::Status s = ste::ValidateDependencyPath(e.path); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  size_t size() const { return ids_.size(); }

 private:
  std::map<std::string, uint32_t> ids_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ste::ReportStreamDecoder decoder;
  InterningTarget target;
  for (std::string_view frame : ste::fuzz::SplitFrames(bytes)) {
    ste::v1::ReportMessage m;
    if (!m.ParseFromArray(frame.data(), static_cast<int>(frame.size()))) break;
    absl::StatusOr<bool> named = decoder.TakeWorker(m);
    if (!named.ok()) return 0;
    std::optional<ste::LeaseResult> refused;
    absl::StatusOr<std::optional<ste::LeaseResult>> whole = decoder.Decode(m, target, &refused);
    if (refused.has_value()) {
      STE_FUZZ_CHECK(m.has_result() && refused->lease_id == m.result().lease_id());
      STE_FUZZ_CHECK(refused->opaque && refused->outcome == ste::TestOutcome::kError);
    }
    if (!whole.ok()) {
      if (m.has_result()) STE_FUZZ_CHECK(refused.has_value());
      return 0;
    }
    if (!whole->has_value()) continue;
    const ste::LeaseResult& r = **whole;
    STE_FUZZ_CHECK(r.lease_id == m.result().lease_id());
    for (const ste::ResultScope& s : r.scopes) {
      for (const auto& ids : s.ids) {
        for (uint32_t id : ids) STE_FUZZ_CHECK(id < target.size());
      }
    }
  }
  (void)decoder.Finish();
  return 0;
}
