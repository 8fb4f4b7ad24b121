#include "workloads/train/zero.h"

namespace workloads {

Deps ZeroOneSync::reduce(hw::Program& prog, std::size_t layer, const Deps& grads) {
  return sharded_collective(stage_, prog, interconnect::CollectiveOp::reduce_scatter, layer, "",
                            CollectivePurpose::gradients, stage_.spec.parallelism.data, stage_.stored_bytes(), grads);
}

void ZeroOneSync::after_update(hw::Program& prog, std::size_t layer, const Deps& updated) {
  sharded_collective(stage_, prog, interconnect::CollectiveOp::all_gather, layer, "", CollectivePurpose::weights,
                     stage_.spec.parallelism.data, stage_.stored_bytes(), updated);
}

}  // namespace workloads
