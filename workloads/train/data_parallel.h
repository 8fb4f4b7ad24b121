#pragma once
// Data parallelism's gradient all-reduce (parallelism.zero: 0; the
// synchronous SGD of Goyal et al. 2017, arXiv:1706.02677, and of every
// framework since): each layer's gradients, the chip's fsdp shard of them
// with fsdp, are all-reduced over the gradient axes (TrainParallelism::
// gradient_axes: data, context and expert). A mixture of experts' expert
// weights, held by the expert-parallel chips one share each, are reduced
// over the data and context axes alone, in an all-reduce of their own.
#include "workloads/train/gradient_sync.h"
#include "workloads/train/shards.h"

namespace workloads {

class DataParallelSync : public GradientSync {
 public:
  explicit DataParallelSync(const StageView& stage) : stage_(stage) {}
  Deps reduce(hw::Program& prog, std::size_t layer, const Deps& grads) override;
  void after_update(hw::Program&, std::size_t, const Deps&) override {}

 private:
  const StageView& stage_;
};

// Key/value heads replicated over the tensor-parallel ranks (fewer heads
// than ranks, models::MatmulSpec::tp_units): each replica's K and V weight
// gradients hold only its query heads' share, so the replicas sum them in
// an all-reduce over the tensor axis once the step's gradients are
// complete (of the chip's fsdp shard). Exact for one head (multi-query
// attention, as PaLM's: every rank holds it); with more heads each group
// of tp / kv_heads ranks would reduce apart, and the whole axis's ring
// moves 2 (t - 1) / t of the bytes instead of 2 (r - 1) / r: a bound.
// Returns `deps` when layer `layer` has no replicated parameters.
Deps replica_gradient_all_reduce(const StageView& stage, hw::Program& prog, std::size_t layer, const Deps& deps);

}  // namespace workloads
