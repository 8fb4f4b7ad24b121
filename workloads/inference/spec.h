#pragma once
// The `workload:` mapping of `kind: inference` (docs/serving.md):
//   workload:
//     kind: inference
//     model: {type: transformer, ...}   # the train kind's model; seq_len: the KV cache's length
//     batch: 64                         # sequences served at once (over the pod)
//     prompt_len: 2048                  # tokens of each prompt (prefill)
//     decode_len: 256                   # tokens generated per sequence (decode steps)
//     phase: both                       # prefill | decode | both
//     dtype: {weights: int8, kv_cache: bf16, activations: quantized}
//     parallelism: {tensor: model, data: data}   # and expert, for a mixture of experts
//     simulate_anyway: false            # run even if the KV cache does not fit
//     scheduling: sync                  # the host's work per step in series (sync) or beside it (async)
//     requests: {count: 200, rate: 4, prompt_len: [512, 2048], decode_len: [128], batching: continuous}
#include <cstdint>

#include "hw/number_format.h"
#include "models/model_config.h"
#include "sim/params.h"
#include "sim/yaml_node.h"
#include "workloads/inference/host_step.h"
#include "workloads/inference/request_stream.h"
#include "workloads/train/forward_step.h"

namespace workloads {

struct Experiment;

enum class InferencePhase { prefill, decode, both };
const sim::EnumNames<InferencePhase>& inference_phase_names();
const char* to_string(InferencePhase p);

// What multiplies 8-bit weights and KV cache: activations quantized to the
// same format, the matmul at the format's MAC rate (AQT serving int8), or
// bf16 activations, the 8-bit operand converted to bf16 and the matmul at
// the bf16 rate (weight-only quantization: JetStream-PyTorch's int8,
// docs/serving.md#weight-only-8-bit-matmuls).
enum class Activations { quantized, bf16 };
const sim::EnumNames<Activations>& activations_names();

// Number formats of what serving keeps in HBM: the weights (8-bit ones run
// their matmuls as `activations` says) and the KV cache (8-bit: the
// attention matmuls read it at one byte per element).
struct InferenceDtypes {
  hw::NumberFormat weights = hw::NumberFormat::bf16;
  hw::NumberFormat kv_cache = hw::NumberFormat::bf16;
  Activations activations = Activations::quantized;
};

struct InferenceSpec {
  models::ModelConfig model;
  std::uint64_t batch = 0;
  std::uint64_t prompt_len = 0;
  std::uint64_t decode_len = 0;
  InferencePhase phase = InferencePhase::both;
  InferenceDtypes dtype;
  // data, tensor and expert only (the other parallelisms stay degree 1);
  // expert parallelism splits the batch as data parallelism does.
  TrainParallelism parallelism;
  bool simulate_anyway = false;
  // Where the server puts the host's work of each step (host.serve_step):
  // between device steps or beside them (host_step.h).
  Scheduling scheduling = Scheduling::sync;
  // A stream of requests served `batch` sequences at a time (count 0: none).
  RequestStreamSpec requests;

  bool prefill() const { return phase != InferencePhase::decode; }
  bool decode() const { return phase != InferencePhase::prefill; }
  // Sequences on each model replica (each data- and expert-parallel rank).
  std::uint64_t replica_batch() const { return batch / parallelism.batch_shards(); }
  // The decode step simulated stands for all decode_len of them: step i
  // (1-based) attends over prompt_len + i cached tokens, and a step's time
  // is linear in that length, so the step at the mean, prompt_len +
  // (decode_len + 1) / 2, is the mean step (exactly so for odd decode_len).
  std::uint64_t decode_context() const { return prompt_len + (decode_len + 1) / 2; }
  // The 8-bit format the step's weights or KV cache are stored in (bf16 if
  // none), and the format its MXUs run in (bf16 if the matmuls are
  // weight-only).
  hw::NumberFormat stored_format() const {
    return dtype.weights != hw::NumberFormat::bf16 ? dtype.weights : dtype.kv_cache;
  }
  hw::NumberFormat mxu_format() const {
    return dtype.activations == Activations::bf16 ? hw::NumberFormat::bf16 : stored_format();
  }
  // The forward pass a serving step runs (forward_step.h): the model, its
  // parallelism, the format of its 8-bit matmuls.
  ForwardStep forward_step() const;
};

// KV-cache bytes of one token of one sequence, all layers, on one chip of
// tensor parallelism `tp`: 2 (K and V) x layers x max(kv_heads / tp, 1) x
// head_dim x the cache format's bytes (with more ranks than KV heads each
// rank caches its replica of one head).
std::uint64_t kv_bytes_per_token(const models::TransformerConfig& cfg, hw::NumberFormat kv, std::uint32_t tp);

// Every key of `kind: inference` (tpusim explain inference).
const sim::ParamTable<InferenceSpec>& inference_params();

// Validates against the experiment's mesh and chip; throws sim::ConfigError
// located at the offending key.
InferenceSpec load_inference_spec(const sim::YamlNode& node, const Experiment& exp);

}  // namespace workloads
