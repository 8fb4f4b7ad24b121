#include "workloads/train/fsdp.h"

namespace workloads {

Deps FsdpWeights::gather(hw::Program& prog, std::size_t layer, const std::string& tag) {
  const ParallelAxes& fsdp = stage_.spec.parallelism.fsdp;
  if (fsdp.degree == 1) return {};
  const Deps after = passes_.size() == 2 ? passes_.front() : Deps{};
  return sharded_collective(stage_, prog, interconnect::CollectiveOp::all_gather, layer, tag,
                            CollectivePurpose::weights, fsdp, hw::kBf16Bytes, after);
}

void FsdpWeights::pass_done(const Deps& sinks) {
  if (passes_.size() == 2) passes_.erase(passes_.begin());
  passes_.push_back(sinks);
}

Deps FsdpWeights::reduce_scatter(hw::Program& prog, std::size_t layer, const std::string& tag,
                                 const Deps& grads) const {
  const ParallelAxes& fsdp = stage_.spec.parallelism.fsdp;
  if (fsdp.degree == 1) return grads;
  return sharded_collective(stage_, prog, interconnect::CollectiveOp::reduce_scatter, layer, tag,
                            CollectivePurpose::gradients, fsdp, hw::kBf16Bytes, grads);  // as the gather, BF16
}

}  // namespace workloads
