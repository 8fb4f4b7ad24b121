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

#include "models/model_config.h"
#include "sim/params.h"
#include "sim/yaml_node.h"
#include "workloads/train/forward_step.h"
#include "workloads/train/input.h"
#include "workloads/train/optimizer.h"
#include "workloads/train/pipeline_schedule.h"

namespace workloads {

struct Experiment;

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
  // The forward pass's description (forward_step.h), which the layer pass
  // and its strategies read.
  ForwardStep forward_step() const;
};

// Every key of `kind: train` (tpusim explain train).
const sim::ParamTable<TrainSpec>& train_params();
const sim::ParamTable<Precision>& precision_params();

// Validates against the experiment's mesh; throws sim::ConfigError located
// at the offending key.
TrainSpec load_train_spec(const sim::YamlNode& node, const Experiment& exp);

}  // namespace workloads
