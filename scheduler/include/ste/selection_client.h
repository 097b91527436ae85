// `ste select --scheduler ADDR`: the tree is hashed here, the baseline and
// the selection come from a scheduler (and its store). The same steps as
// SelectForCheckout (selection_pipeline.h), split across the wire: this
// side asks GetBaseline for the baseline's external paths and commit, reads
// the tree and the force reason from the checkout, and sends them to
// Select, where the scheduler runs SelectForCheckout on them.
//
// Fail safe: a scheduler that cannot be reached, refuses, or answers with
// something that cannot be read gives mode all over the tests of the tree,
// with the reason. An unreadable tree is reported as in SelectionOutcome.
#ifndef STE_SELECTION_CLIENT_H_
#define STE_SELECTION_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <memory>

#include "ste/baseline_loader.h"
#include "ste/checkout.h"
#include "ste/rpc_common.h"
#include "ste/selection_pipeline.h"

namespace ste {

SelectionOutcome SelectThroughScheduler(const std::shared_ptr<grpc::Channel>& channel,
                                        const RpcAuth& auth, LocalCheckout& checkout,
                                        const BaselineQuery& query);

}  // namespace ste

#endif  // STE_SELECTION_CLIENT_H_
