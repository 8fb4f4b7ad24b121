#pragma once
// One layer of a model for one (micro)batch: its parameters, its forward and
// backward matmuls and elementwise ops, and the activations it keeps from the
// forward pass for the backward pass. A layer is the unit a strategy places
// on a pipeline stage and the unit of a gradient all-reduce.
#include <cstdint>
#include <string>
#include <vector>

#include "models/elementwise_spec.h"
#include "models/matmul_spec.h"
#include "sim/units.h"

namespace models {

// How tensor parallelism splits a parameter tensor (rows x cols): a
// column-parallel weight W[k][n] is split along cols (n), a row-parallel one
// along rows (k), the vocabulary-parallel embedding table [vocab][d_model]
// along rows (Megatron-LM, arXiv:1909.08053, section 3).
enum class ParamSplit { replicated, rows, cols };

struct ParamSpec {
  std::string name;  // e.g. "block3.mlp.w_up"; MatmulSpec::weight refers to it
  std::uint64_t rows = 0, cols = 0;
  ParamSplit tp_split = ParamSplit::replicated;
  // Expert weights: the chips of expert parallelism each hold 1 / shards
  // of them (whole experts); 1 for everything else.
  std::uint64_t shards = 1;
  // The split axis is this many whole key/value heads (0: it splits
  // freely); more ranks than heads hold a replica each (MatmulSpec::tp_units).
  std::uint64_t tp_units = 0;
  std::uint64_t elements() const { return rows * cols; }
};

// An activation kept from the forward pass until the layer's backward pass.
struct StashSpec {
  std::string name;  // the tensor, e.g. "block3.attn.softmax.out"
  std::uint64_t elements = 0;
  std::uint64_t bytes_per_element = sim::kBf16Bytes;  // BF16; 4: int32 token ids; 3: a bool + BF16 mask pair
  std::string why;                                    // which backward op reads it
  std::uint64_t bytes() const { return elements * bytes_per_element; }
};

// Mixture of experts: an all-to-all of tokens over the expert-parallel
// chips, from each chip to the chips holding the experts its router picked
// (to_experts: dispatch, and the gradient of combine) or back (combine, and
// the gradient of dispatch). `elements` is what the chip sends under
// uniform routing (tokens x d_model); the strategy sizes each pair's share
// from the routing.
struct ExchangeSpec {
  std::string name;  // e.g. "block3.moe.dispatch"
  bool to_experts = true;
  std::uint64_t elements = 0;
  std::uint64_t width = 0;  // elements per token (d_model)
  std::string output;
  std::vector<std::string> after;  // as MatmulSpec::after
};

enum class LayerKind { dense, embedding, transformer_block, output, loss };

struct LayerSpec {
  std::string name;  // "dense0", "embedding", "block3", "output", "loss"
  LayerKind kind = LayerKind::dense;
  std::vector<ParamSpec> params;  // the parameters this layer owns
  std::vector<MatmulSpec> forward;
  std::vector<MatmulSpec> backward;  // backward_data and backward_weight
  std::vector<ElementwiseSpec> elementwise_fwd;
  std::vector<ElementwiseSpec> elementwise_bwd;
  std::vector<StashSpec> stash;
  std::vector<ExchangeSpec> exchange_fwd, exchange_bwd;  // mixture of experts
  std::uint64_t routing_layer = 0;                       // which layer's routing its exchanges follow
  // BF16 bytes this layer hands to the next one in the forward pass, and the
  // gradient bytes it hands back to the previous one in the backward pass
  // (0 when nothing needs it): what a pipeline-stage boundary sends.
  std::uint64_t output_bytes = 0;
  std::uint64_t input_grad_bytes = 0;

  std::uint64_t param_count() const;
  std::uint64_t param_bytes() const;       // BF16: the size of this layer's gradient all-reduce
  std::uint64_t activation_bytes() const;  // sum of the stash
  // Matmul FLOPs of the model's own work; what a kernel executes on top
  // (recomputation, capacity padding, one-hot dispatch: MatmulSpec::
  // model_flops) is in extra_matmul_flops; executed_forward_matmul_flops is
  // all a forward pass runs (a rematerialized layer runs it again).
  double forward_matmul_flops() const;
  double backward_matmul_flops() const;
  double extra_matmul_flops() const;
  double executed_forward_matmul_flops() const;
  double forward_elementwise_flops() const;
  double backward_elementwise_flops() const;
  double forward_flops() const { return forward_matmul_flops() + forward_elementwise_flops(); }
  double backward_flops() const { return backward_matmul_flops() + backward_elementwise_flops(); }
};

const char* to_string(ParamSplit s);
const char* to_string(LayerKind k);

}  // namespace models
