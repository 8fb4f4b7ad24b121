#pragma once
// ZeRO stage 1 over the data axes (Rajbhandari et al. 2020, "ZeRO: Memory
// Optimizations Toward Training Trillion Parameter Models",
// arXiv:1910.02054 s.5.1, P_os): the optimizer state is sharded over the
// data-parallel replicas. Each layer's gradients are reduce-scattered over
// the data axes into the shards (the chip's fsdp shard of them, as stored),
// each replica updates its shard, and the updated weights are all-gathered
// back (as stored). Memory: the optimizer state of one layer is split over
// TrainParallelism::optimizer_shards() = the data degree.
#include "workloads/train/gradient_sync.h"
#include "workloads/train/shards.h"

namespace workloads {

class ZeroOneSync : public GradientSync {
 public:
  explicit ZeroOneSync(const StageView& stage) : stage_(stage) {}
  Deps reduce(hw::Program& prog, std::size_t layer, const Deps& grads) override;
  void after_update(hw::Program& prog, std::size_t layer, const Deps& updated) override;

 private:
  const StageView& stage_;
};

}  // namespace workloads
