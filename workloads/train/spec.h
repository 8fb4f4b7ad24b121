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
#include "workloads/train/remat_policy.h"

namespace workloads {

struct Experiment;

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
  // eager: every kernel waits for eager_dispatch seconds of host dispatch
  // and elementwise ops are unfused (forward_step.h).
  Execution execution = Execution::jit;
  double eager_dispatch = 0;
  Remat remat = Remat::none;
  TensorPlaces remat_tensors;  // remat: custom: MaxText checkpoint name -> place
  bool simulate_anyway = false;
  FunctionalTraining functional;
  InputSpec input;  // per-replica sequence lengths; not enabled: model.seq_len everywhere

  std::uint64_t replica_batch() const { return global_batch / parallelism.batch_shards(); }
  // Each data-parallel replica's tokens per sequence (input.h), in replica
  // order (replica_of, layout.h).
  std::vector<std::uint64_t> replica_lengths() const;
  std::uint64_t microbatch_size() const { return replica_batch() / parallelism.microbatches; }
  // The model as one chip runs it: with context parallelism, a Transformer
  // over its seq_len / context tokens of each sequence; a mixture of
  // experts' experts sharded over expert parallelism, each expert's MLP
  // width over tensor parallelism (models::TransformerConfig).
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
