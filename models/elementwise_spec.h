#pragma once
// Elementwise (vector-unit) work of a model: activation functions, softmax,
// layer norm, residual and bias adds, the loss and the embedding lookup.
// Each is an element count times a FLOPs-per-element cost; the costs are
// collected in one table (elementwise_cost) with where each number comes from.
#include <cstdint>
#include <string>
#include <vector>

#include "models/matmul_spec.h"

namespace models {

enum class ElementwiseOp {
  layernorm,     // (x - mean) / sqrt(var + eps) * gamma + beta, over d_model
  residual_add,  // x + f(x); backward: the two gradient paths are summed
  bias_add,      // x + b; backward: db = sum of dY over the batch
  relu,
  gelu,              // tanh approximation (Hendrycks & Gimpel 2016)
  swiglu,            // silu(gate) * up (Shazeer 2020, arXiv:2002.05202)
  geglu,             // gelu(gate) * up (Shazeer 2020; Gemma)
  softmax,           // attention probabilities, over the key positions
  cross_entropy,     // softmax over the classes/vocabulary + negative log likelihood
  embedding_lookup,  // gather rows of the table; backward: scatter-add into dE
  routing_mask,      // one-hot position in an expert's buffer x the token's gate weight (GShard)
};

// FLOPs per element and BF16 tensors touched per element (read + written,
// if the op runs on its own rather than fused into a neighbour).
struct ElementwiseCost {
  double flops_per_element = 0;
  unsigned tensors = 0;
};

// Cost of `op` in the forward pass, or of its gradient (any backward pass).
ElementwiseCost elementwise_cost(ElementwiseOp op, Pass pass);

struct ElementwiseSpec {
  std::string name;  // unique in the model, e.g. "block3.mlp.gelu.bwd"
  ElementwiseOp op = ElementwiseOp::residual_add;
  Pass pass = Pass::forward;
  std::uint64_t elements = 0;  // elements of the op's output (its largest tensor)
  double flops_per_element = 0;
  std::uint64_t bytes = 0;  // BF16 bytes read + written when run unfused
  // True when the op works on a tensor that tensor parallelism splits (GELU
  // on d_ff, softmax on heads), so each rank does elements / tp. False when
  // Megatron runs it redundantly on every rank (layer norms, residual adds).
  bool tp_sharded = false;
  std::string output;              // tensor written
  std::vector<std::string> after;  // as MatmulSpec::after
  // Mixture of experts: the op works on the tokens the chip's experts take,
  // `routed_width` elements each (elements: under uniform routing); 0: not.
  std::uint64_t routed_width = 0;

  double flops() const { return double(elements) * flops_per_element; }
};

// An ElementwiseSpec with its cost filled in from elementwise_cost().
ElementwiseSpec make_elementwise(std::string name, ElementwiseOp op, Pass pass, std::uint64_t elements, bool tp_sharded,
                                 std::string output, std::vector<std::string> after);

const char* to_string(ElementwiseOp op);

}  // namespace models
