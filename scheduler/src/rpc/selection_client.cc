#include "ste/selection_client.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto_convert.h"
#include "ste/baseline_loader.h"
#include "ste/v1/scheduler.grpc.pb.h"

namespace ste {

SelectionOutcome SelectThroughScheduler(const std::shared_ptr<grpc::Channel>& channel,
                                        const RpcAuth& auth, LocalCheckout& checkout,
                                        const BaselineQuery& query) {
  std::unique_ptr<v1::Scheduler::Stub> stub = v1::Scheduler::NewStub(channel);
  SelectionOutcome out;
  const BaselineLookup lookup = checkout.Lookup(query);
  v1::GetBaselineRequest which;
  ToProto(lookup, which.mutable_lookup());
  v1::GetBaselineResponse found;
  grpc::Status asked = stub->GetBaseline(NewCallContext(auth, 60).get(), which, &found);

  std::vector<std::string> external;
  if (asked.ok() && found.found()) {
    for (const std::string& p : found.external_paths()) external.push_back(p);
    if (!found.definition_inventory().empty()) {
      // Damaged: every changed file with definition views is fingerprinted.
      absl::StatusOr<Inventory> base = Inventory::Parse(found.definition_inventory());
      if (base.ok()) checkout.SetDefinitionBase(*std::move(base));
    }
  }
  absl::StatusOr<TreeNow> tree = checkout.ReadTree(nullptr, external);
  if (!tree.ok()) {
    out.tree = tree.status();
    out.selection = SelectAll(absl::StrCat("cannot inventory the tree: ", tree.status().message()), {});
    return out;
  }
  if (!asked.ok()) {
    out.selection = SelectAll(absl::StrCat("the scheduler did not answer: ", asked.error_message()),
                              tree->tests);
    return out;
  }
  v1::SelectRequest req;
  // The baseline GetBaseline found (its external paths are in the
  // inventory), or the same lookup for the same answer.
  if (found.found()) {
    BaselineLookup same;
    same.id = found.baseline().id();
    ToProto(same, req.mutable_lookup());
  } else {
    ToProto(lookup, req.mutable_lookup());
  }
  req.set_inventory(tree->inventory->Serialize());
  for (const std::string& t : tree->tests) req.add_head_tests(t);
  const std::string& config_path = checkout.config().config_path;
  absl::StatusOr<std::string> text = ReadWholeFile(config_path);
  if (!text.ok()) {
    out.selection = SelectAll(std::string(text.status().message()), tree->tests);
    return out;
  }
  req.set_config(*text);
  req.set_config_name(checkout.rules().config_file);
  std::string force = checkout.ForceReason(found.found() ? found.baseline().commit() : "");
  req.set_force_all(!force.empty());
  req.set_force_reason(force);
  v1::SelectResponse resp;
  grpc::Status selected = stub->Select(NewCallContext(auth, 120).get(), req, &resp);
  if (!selected.ok()) {
    out.selection = SelectAll(absl::StrCat("the scheduler did not answer: ", selected.error_message()),
                              tree->tests);
    return out;
  }
  absl::StatusOr<SelectionAnswer> answer = FromProto(resp);
  if (!answer.ok()) {
    out.selection = SelectAll(absl::StrCat("the scheduler's answer is unusable: ", answer.status().message()),
                              tree->tests);
    return out;
  }
  out.selection = std::move(answer->selection);
  out.baseline = std::move(answer->baseline);
  if (out.baseline) {
    // The scheduler was asked by id (the one GetBaseline found): whether
    // that was a fallback of the base commit is known here.
    if (std::string note = BaselineFallbackNote(lookup, *out.baseline, absl::ToUnixSeconds(absl::Now()));
        !note.empty()) {
      absl::StrAppend(&out.selection.reason, " (", note, ")");
    }
  }
  return out;
}

}  // namespace ste
