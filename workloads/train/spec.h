#pragma once
// The `workload:` mapping of `kind: train` (docs/training.md):
//   workload:
//     kind: train
//     model: {type: transformer, ...}      # models/model_config.h
//     global_batch: 256                    # samples or sequences per step
//     parallelism: {data: data, fsdp: fsdp, tensor: model, pipeline: pipe,
//                   context: ctx, microbatches: 8, schedule: 1f1b, zero: 0}
//     precision: {params: bfloat16, optimizer: float32}
//     optimizer: adam                      # adam | sgd
//     overlap: true                        # gradient all-reduces under the backward pass
//     elementwise: fused                   # fused | unfused (own HBM round trip)
//     remat: none                          # none | full | minimal (recompute what it does not keep) | offload
//     simulate_anyway: false               # run even if it does not fit in HBM
//     input: {distribution: uniform, min: 512, seed: 1}  # tokens per replica (input.h)
//     steps: 10, learning_rate: 0.1, seed: 1  # functional: true only (train_functional.h)
// Each parallelism takes mesh axes (a name or a list of names) or a degree
// that names one mesh axis of that size; every mesh axis of more than one
// chip is used by exactly one of them, so the degrees multiply to the chips.
#include <cstdint>
#include <string>
#include <vector>

#include "interconnect/collective_spec.h"
#include "models/model_config.h"
#include "sim/params.h"
#include "sim/yaml_node.h"
#include "workloads/train/input.h"
#include "workloads/train/optimizer.h"
#include "workloads/train/pipeline_schedule.h"

namespace workloads {

struct Experiment;

// As read from YAML: the axes named, or (no names) a degree that picks one
// axis of that size. After load_train_spec: the axes and the product of
// their sizes.
struct ParallelAxes {
  std::vector<std::string> axes;  // mesh axes, major first; empty: degree 1
  std::uint32_t degree = 1;       // product of their sizes
};

// fused: elementwise ops work on data the neighbouring matmul kernels hold
// in VMEM (XLA's output and input fusion): vector-unit time, no HBM traffic
// of their own. unfused: each reads its operands from HBM and writes its
// result back (ElementwiseSpec::bytes), the pessimistic bound.
enum class Elementwise { fused, unfused };
const sim::EnumNames<Elementwise>& elementwise_names();
const char* to_string(Elementwise e);

// Rematerialisation (gradient checkpointing; Chen et al. 2016,
// arXiv:1604.06174; MaxText's remat_policy): none keeps every activation
// the backward pass reads; full keeps only each repeated layer's input
// (Transformer block, MLP dense layer) and runs the layer's forward again
// inside its backward, before the layer's backward ops (Korthikanti et al.
// 2022, arXiv:2205.05198 s.5: "2sbh" per layer); minimal (MaxText's
// remat_policy=minimal, which saves the outputs of the weight matmuls:
// query, key, value and output projections, the MLP's matmuls) keeps the
// layer's input and those outputs and recomputes the rest of its forward
// (layer norms, the attention core, activation, residual adds); offload
// (MaxText's offloaded policies) keeps what none keeps but moves each
// repeated layer's stash to host memory over the chip's host link during
// the forward and back for its backward, recomputing nothing.
enum class Remat { none, full, minimal, offload };
const sim::EnumNames<Remat>& remat_names();
const char* to_string(Remat r);

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

// `functional: true` (experiment level) on an MLP under pure data
// parallelism: real BF16 training steps (workloads/train/functional.h).
struct FunctionalTraining {
  bool enabled = false;
  std::uint32_t steps = 10;
  double learning_rate = 0.1;
  std::uint64_t seed = 1;
};

struct TrainSpec {
  models::ModelConfig model;
  std::uint64_t global_batch = 0;
  TrainParallelism parallelism;
  Precision precision;
  OptimizerCost optimizer = optimizer_cost(Optimizer::adam);  // optimizer.kind is the YAML value, under precision
  bool overlap = true;
  // Sequence-parallel tensor collectives as collective matmuls (spec.cpp).
  bool collective_matmul = false;
  Elementwise elementwise = Elementwise::fused;
  Remat remat = Remat::none;
  bool simulate_anyway = false;
  FunctionalTraining functional;
  InputSpec input;  // per-replica sequence lengths; not enabled: model.seq_len everywhere

  std::uint64_t replica_batch() const { return global_batch / parallelism.batch_shards(); }
  // Each data-parallel replica's tokens per sequence (input.h), in replica
  // order (replica_of, layout.h).
  std::vector<std::uint64_t> replica_lengths() const;
  std::uint64_t microbatch_size() const { return replica_batch() / parallelism.microbatches; }
  // The model as one chip runs it: with context parallelism, a Transformer
  // over its seq_len / context tokens of each sequence.
  models::ModelConfig chip_model() const;
};

// Every key of `kind: train` and of its `parallelism:` (tpusim explain train).
const sim::ParamTable<TrainSpec>& train_params();
const sim::ParamTable<TrainParallelism>& parallelism_params();
const sim::ParamTable<Precision>& precision_params();

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

// Validates against the experiment's mesh; throws sim::ConfigError located
// at the offending key.
TrainSpec load_train_spec(const sim::YamlNode& node, const Experiment& exp);

}  // namespace workloads
