#pragma once
// What the strategies that move a stage's weights and gradients (fsdp.h,
// data_parallel.h, zero.h) share: the stage they build for, and the
// collective over a layer's weights or gradients split into equal shards.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/program.h"
#include "workloads/train/pass_context.h"
#include "workloads/train/spec.h"
#include "workloads/train/stages.h"

namespace workloads {

// One pipeline stage as its chips' programs are built.
struct StageView {
  const PassContext& pass;
  const TrainSpec& spec;
  std::uint32_t index = 0;  // the stage's place in the pipeline
  const StageLayers& layers;
  // Elements of layer l's parameters the stage holds (holdings.h), on one
  // tensor-parallel rank.
  std::uint64_t held_elements(std::size_t layer) const;
  // "stage3": how the stage's collectives are named.
  std::string name() const { return "stage" + std::to_string(index); }
  // Bytes of one gradient or weight element as stored (precision.params).
  std::uint32_t stored_bytes() const;
};

// The ICI queue of a weight or gradient collective `op`: the weights'
// (all-gathers) or the gradients' (reductions), the SparseCores' when
// parallelism.sparsecore_offload moves that kind of collective there.
std::uint32_t sync_queue(const TrainParallelism& p, interconnect::CollectiveOp op);

// A collective over layer `layer`'s weights or gradients split into equal
// shards over `over` (fsdp, or with zero: 1 the data axes): the all-gather
// of the shards (`op` all_gather, on the weights' ICI queue) or the
// reduce-scatter into them (on the gradients'), of `element_bytes`
// elements, after `deps`. `tag` names the microbatch where there is one per
// microbatch; `what` is weights or gradients. A layer without
// parameters adds nothing and returns `deps`.
Deps sharded_collective(const StageView& stage, hw::Program& prog, interconnect::CollectiveOp op, std::size_t layer,
                        const std::string& tag, CollectivePurpose what, const ParallelAxes& over,
                        std::uint32_t element_bytes, const Deps& deps);

}  // namespace workloads
