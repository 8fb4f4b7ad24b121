#pragma once
// What a model's forward pass needs to become ops on a chip, whether a
// training step or a serving step runs it: the model, how the chips split
// it, and the formats its matmuls and elementwise work run in. The train
// and inference specs each give one (TrainSpec::forward_step,
// InferenceSpec::forward_step); the layer pass (layer_pass.h) and the
// strategies it calls read nothing else of either.
#include "hw/number_format.h"
#include "models/model_config.h"
#include "sim/params.h"
#include "workloads/train/parallelism.h"

namespace workloads {

// fused: elementwise ops work on data the neighbouring matmul kernels hold
// in VMEM (XLA's output and input fusion): vector-unit time, no HBM traffic
// of their own. unfused: each reads its operands from HBM and writes its
// result back (ElementwiseSpec::bytes), the pessimistic bound.
enum class Elementwise { fused, unfused };
const sim::EnumNames<Elementwise>& elementwise_names();
const char* to_string(Elementwise e);

// jit: the step is one compiled program (jax.jit), its elementwise ops
// fused as `elementwise` says. eager: every op is dispatched from the host
// one at a time, as JAX runs without jit: each kernel's launch also waits
// for the host's dispatch (the host runs ahead of the chip while the chip is
// slower, so dispatch costs only where ops are shorter than it), and nothing
// is fused (unfused elementwise).
enum class Execution { jit, eager };
const sim::EnumNames<Execution>& execution_names();
const char* to_string(Execution e);

struct ForwardStep {
  models::ModelConfig model;
  TrainParallelism parallelism;
  // The format of the model's quantized matmuls (QuantizedMatmuls picks
  // which); bf16: none.
  hw::NumberFormat matmul = hw::NumberFormat::bf16;
  Elementwise elementwise = Elementwise::fused;
  // Sequence-parallel tensor collectives as collective matmuls
  // (tensor_parallel.h).
  bool collective_matmul = false;
  // Weight-only: only the stored operand (weights, KV cache) is in `matmul`'s
  // format; the activations and the MXU work stay bf16
  // (kernels::OperandQuantization::weight_only).
  bool weight_only = false;
};

}  // namespace workloads
