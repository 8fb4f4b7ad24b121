#pragma once
// How the data-parallel replicas of a stage agree on their weights: what a
// layer's gradients go through once its last backward has produced them,
// and what its weights go through after the optimizer has updated the
// chip's share. One implementation per strategy, chosen by the workload's
// keys (program_builder.cpp, gradient_sync_for):
//   data_parallel.h  an all-reduce of the gradients over the data axes;
//                    nothing after the update (parallelism.zero: 0)
//   zero.h           ZeRO-1: a reduce-scatter into the optimizer's shards,
//                    an all-gather of the updated weights (zero: 1)
// Invariants: reduce is called once per layer of the stage, in backward
// order, after the layer's final gradients (fsdp's reduce-scatters and the
// tensor replicas' sum included); after_update once per layer, after its
// update. Both only add collectives, on the chip's gradients and weights
// ICI queues.
#include <cstddef>

#include "hw/program.h"
#include "workloads/train/pass_context.h"

namespace workloads {

class GradientSync {
 public:
  virtual ~GradientSync() = default;
  // Layer `layer`'s gradients, ready after `grads`, reduced over the
  // replicas; returns what its update waits for.
  virtual Deps reduce(hw::Program& prog, std::size_t layer, const Deps& grads) = 0;
  // Layer `layer`'s shard updated after `updated`: what follows it.
  virtual void after_update(hw::Program& prog, std::size_t layer, const Deps& updated) = 0;
};

}  // namespace workloads
