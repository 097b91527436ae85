// Domain types <-> their ste.v1 messages, both directions in one place
// (the selection, its changes, baselines, finished tests). Lossless:
// FromProto(ToProto(x)) == x (proto_convert_test.cc). FromProto refuses a message it
// cannot map exactly (an unknown mode, type or change word) with
// InvalidArgument: a client then widens to all instead of guessing.
#ifndef STE_RPC_PROTO_CONVERT_H_
#define STE_RPC_PROTO_CONVERT_H_

#include <optional>

#include "absl/status/statusor.h"
#include "ste/baseline_store.h"
#include "ste/build_session.h"
#include "ste/checkout.h"
#include "ste/inventory.h"
#include "ste/selection.h"
#include "ste/v1/scheduler.pb.h"

namespace ste {

void ToProto(const InventoryChange& change, v1::Change* out);
absl::StatusOr<InventoryChange> FromProto(const v1::Change& change);

void ToProto(const BaselineInfo& info, v1::Baseline* out);  // id, mri, commit
BaselineInfo FromProto(const v1::Baseline& baseline);        // state kComplete

// A selection and the baseline it compared with (none: unset).
void ToProto(const Selection& selection, const std::optional<BaselineInfo>& baseline,
             v1::SelectResponse* out);
struct SelectionAnswer {
  Selection selection;
  std::optional<BaselineInfo> baseline;
};
absl::StatusOr<SelectionAnswer> FromProto(const v1::SelectResponse& response);

v1::BuildState ToProto(BaselineState state);  // building is RUNNING
v1::TestOutcome ToProto(TestOutcome outcome);
absl::StatusOr<TestOutcome> FromProto(v1::TestOutcome outcome);
void ToProto(const FinishedTest& test, v1::FinishedTest* out);
absl::StatusOr<FinishedTest> FromProto(const v1::FinishedTest& test);

void ToProto(const BaselineLookup& lookup, v1::BaselineLookup* out);
BaselineLookup FromProto(const v1::BaselineLookup& lookup);
// The lookup of a request: its `lookup` when set, else baseline_id / mri.
template <typename Request>
BaselineLookup LookupOf(const Request& req) {
  if (req.has_lookup()) return FromProto(req.lookup());
  BaselineLookup which;
  which.id = req.baseline_id();
  which.mri = req.mri();
  return which;
}

// A change word of ChangedPaths ("added", "deleted", "modified") checked.
absl::Status ValidateChangeWord(const std::string& word);

}  // namespace ste

#endif  // STE_RPC_PROTO_CONVERT_H_
