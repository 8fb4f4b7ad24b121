#pragma once
// How the chips share a step: the `parallelism:` mapping of kind: train
// (and kind: inference, which reads the same keys). Each parallelism takes
// mesh axes (a name or a list of names) or a degree that names one mesh axis
// of that size; every mesh axis of more than one chip is used by exactly one
// of them, so the degrees multiply to the chips.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "interconnect/collective_spec.h"
#include "models/model_config.h"
#include "sim/params.h"
#include "sim/yaml_node.h"
#include "workloads/train/pipeline_schedule.h"

namespace workloads {

// As read from YAML: the axes named, or (no names) a degree that picks one
// axis of that size. After load_train_spec: the axes and the product of
// their sizes.
struct ParallelAxes {
  std::vector<std::string> axes;  // mesh axes, major first; empty: degree 1
  std::uint32_t degree = 1;       // product of their sizes
};

// The collectives XLA moves onto the chip's SparseCores
// (--xla_tpu_enable_sparse_core_collective_offload_{all_gather,
// reduce_scatter,all_reduce}; hw/sparsecore.h): each of these kinds of the
// step's weight and gradient collectives (fsdp's and ZeRO-1's gathers and
// reduce-scatters, the gradient all-reduces) runs on the SparseCores' own ICI
// queue, its reductions their HBM flows, its handshake across slices theirs.
// The other collectives (tensor, context, expert) stay on the TensorCore.
struct SparseCoreOffload {
  bool all_gather = false, reduce_scatter = false, all_reduce = false;
  bool any() const { return all_gather || reduce_scatter || all_reduce; }
  bool of(interconnect::CollectiveOp op) const {
    return op == interconnect::CollectiveOp::all_gather       ? all_gather
           : op == interconnect::CollectiveOp::reduce_scatter ? reduce_scatter
           : op == interconnect::CollectiveOp::all_reduce     ? all_reduce
                                                              : false;
  }
};

struct TrainParallelism {
  // fsdp: fully sharded data parallelism (ZeRO-3; Rajbhandari et al. 2020,
  // arXiv:1910.02054; PyTorch FSDP, Zhao et al. 2023, arXiv:2304.11277):
  // a data-parallel axis over which parameters, gradients and optimizer
  // state are sharded; each layer's weights are all-gathered before its
  // forward and its backward, its gradients reduce-scattered.
  // context: context parallelism (ring attention; Liu et al. 2023,
  // arXiv:2310.01889): each chip of these axes holds 1/N of every
  // sequence, and the attention of its queries runs over the N key/value
  // blocks passed around the axes (ring_attention.h).
  // expert: expert parallelism (GShard, Lepikhin et al. 2020,
  // arXiv:2006.16668): a mixture of experts' experts sharded over these
  // axes, which also split the batch as data parallelism does; each
  // block's tokens go to their experts' chips and back by all-to-alls.
  ParallelAxes data, fsdp, tensor, pipeline, context, expert;
  // The expert dispatch and combine all-to-alls' algorithm: direct or
  // dimension_ordered (docs/interconnect.md, Algorithms and their steps).
  interconnect::Algorithm expert_all_to_all = interconnect::Algorithm::direct;
  std::uint32_t microbatches = 1;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  // interleaved: chunks of layers per stage (stages.h, pipeline_schedule.h).
  std::uint32_t virtual_stages = 1;
  // false: no gradient all-reduce at all; every data-parallel replica
  // updates its weights from its own shard's gradients (they diverge).
  bool sync_gradients = true;
  // ZeRO stage over the data axes (Rajbhandari et al. 2020): 0 replicates
  // the optimizer state; 1 shards it, each replica updating its shard after
  // a reduce-scatter of the gradients and all-gathering the updated weights.
  std::uint32_t zero = 0;
  // Megatron sequence parallelism with the tensor parallelism
  // (tensor_split.h): a block's tensor-parallel all-reduce becomes a
  // reduce-scatter and an all-gather, the work between them split.
  bool sequence = false;
  SparseCoreOffload sparsecore_offload;
  // The chips one layer's optimizer state is split over: the data axes with
  // zero: 1, the fsdp axes otherwise (1 without fsdp).
  std::uint32_t optimizer_shards() const { return zero == 1 ? data.degree : fsdp.degree; }
  // Replicas of the model, each on its own share of the batch.
  std::uint32_t batch_shards() const { return data.degree * fsdp.degree * expert.degree; }
  // What each layer's gradients are all-reduced over after its backward:
  // the data axes and the context axes, whose chips hold the same weights
  // and compute gradients from other tokens, and for all but the experts'
  // weights (experts: false) the expert axes.
  ParallelAxes gradient_axes(bool experts = false) const {
    ParallelAxes g = data;
    for (const ParallelAxes* more : {&context, &expert}) {
      if (experts && more == &expert) continue;
      g.axes.insert(g.axes.end(), more->axes.begin(), more->axes.end());
      g.degree *= more->degree;
    }
    return g;
  }
};

// Every key of `parallelism:` (tpusim explain train).
const sim::ParamTable<TrainParallelism>& parallelism_params();

// Shared with kind: inference (workloads/inference/spec.h).
// `parallelism.data` (or tensor, ...) as written: mesh axis names, or a degree.
void read_parallel_axes(const sim::YamlNode& n, ParallelAxes& out);
// The mesh axes each parallelism of `out` runs over, every mesh axis of
// more than one chip used by exactly one (errors located at `par`'s keys,
// or at `where` without `par`); no `par`: data parallelism over the mesh.
void resolve_parallel_axes(const sim::YamlNode& par, const sim::YamlNode& where,
                           const std::vector<std::pair<std::string, std::uint32_t>>& mesh, TrainParallelism& out);
// The model sizes tensor parallelism of `tp` splits divide evenly (located at `model`'s keys).
void check_tensor_split(const sim::YamlNode& model, const models::ModelConfig& cfg, std::uint32_t tp);
// Expert parallelism of degree `ep` (`expert`: its parallelism key) needs
// a mixture of experts (model.experts) split into whole experts per chip.
void check_expert_split(const sim::YamlNode& expert, const models::ModelConfig& cfg, std::uint32_t ep);

}  // namespace workloads
