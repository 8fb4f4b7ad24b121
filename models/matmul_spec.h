#pragma once
// One matrix multiplication of a model, as a shape and a role, with no
// hardware knowledge: C[count][m x n] = A[count][m x k] x B[count][k x n].
// Strategies shard it (tensor parallel), place it (pipeline stages) and turn
// it into per-chip ops; the hardware layer decides how long it takes.
#include <cstdint>
#include <string>
#include <vector>

namespace models {

// Which part of a training step an op belongs to. A backward op either
// produces the gradient of an activation (data) or of a parameter (weight);
// strategies may delay weight-gradient ops to overlap them with the next
// layer's data-gradient ops and with gradient all-reduces.
enum class Pass { forward, backward_data, backward_weight };

// What a forward matmul is: activation x weight (a dense/linear layer), or one
// of the two activation x activation matmuls of attention,
// scores = Q K^T and context = softmax(scores) V (Vaswani et al. 2017, eq. 1).
// Backward matmuls keep the kind of the forward matmul they differentiate.
// dispatch: a one-hot routing einsum of a mixture of experts (activations x
// a mask, GShard's dispatch and combine), executed work that is not the
// model's.
enum class MatmulKind { linear, attention_score, attention_context, dispatch };

inline bool is_attention(MatmulKind k) {
  return k == MatmulKind::attention_score || k == MatmulKind::attention_context;
}

// Which input operand is a model parameter.
enum class Operand { none, a, b };

// The Megatron-LM tensor-parallel role of the forward op this matmul belongs
// to (Shoeybi et al. 2019, arXiv:1909.08053, section 3):
// - column: the weight is split along its output features (n); no
//   communication in the forward pass, an all-reduce of the input gradient in
//   the backward pass (Megatron's "f");
// - row: the weight is split along its input features (k); the forward
//   output is a partial sum that needs an all-reduce (Megatron's "g");
// - heads: attention matmuls, split by attention heads (follows from Q, K, V
//   being column-parallel);
// - replicated: not a tensor-parallel candidate.
enum class TpRole { replicated, column, row, heads };

// A dimension of one matmul (or none).
enum class Dim { none, count, m, k, n };

// Causal masking as a fused attention kernel skips it (flash attention, Dao
// et al. 2022, arXiv:2205.14135): blocks wholly above the diagonal are not
// computed. Which triangle is kept depends on where the two sequence axes
// sit in this matmul:
// - out_lower: C is queries x keys (m x n), keep keys <= query (S = Q K^T, dP);
// - depth_upto_row: m is queries, k is keys, keep keys <= query (O = P V, dQ = dS K);
// - depth_from_row: m is keys, k is queries, keep queries >= key (dV = P^T dO, dK = dS^T Q).
enum class Causal { none, out_lower, depth_upto_row, depth_from_row };

struct MatmulSpec {
  std::string name;  // unique in the model, e.g. "block3.mlp.up.dW"
  MatmulKind kind = MatmulKind::linear;
  Pass pass = Pass::forward;
  // `count` independent matmuls of the same shape (batched matmul):
  // batch x heads for attention, 1 for linear layers, whose batch and
  // sequence are folded into m.
  std::uint64_t count = 1;
  std::uint64_t m = 0, k = 0, n = 0;
  // The parameter this matmul reads (forward, backward_data: W or W^T as
  // operand B) or whose gradient it produces (backward_weight, output dW);
  // empty for attention matmuls. Names a ParamSpec of some layer (with tied
  // embeddings, of another layer than this one).
  std::string weight;
  Operand weight_operand = Operand::none;
  TpRole tp = TpRole::replicated;
  // The dimension of THIS matmul that tensor parallelism splits. Splitting k
  // (the contraction) leaves every rank with a partial sum of the whole
  // output: that output needs an all-reduce (or reduce-scatter).
  Dim tp_split = Dim::none;
  // The tensor written. Matmuls with the same output accumulate into it
  // (e.g. dX = dQ W_q^T + dK W_k^T + dV W_v^T), so one all-reduce covers them.
  std::string output;
  // Ops of the same layer and pass (by name) whose results this one reads.
  // Empty: it reads only the layer's input (forward) or the gradient arriving
  // from the next layer (backward), plus activations stashed by the forward.
  std::vector<std::string> after;
  // Fused kernels keep tensors in VMEM: A produced on chip by the same
  // kernel (flash attention's P = softmax(S)), and C consumed on chip (its
  // S and dP) never cross HBM.
  bool a_on_chip = false;
  bool out_on_chip = false;
  Causal causal = Causal::none;
  // Work done again to save memory (flash attention's backward recomputes
  // S = Q K^T): executed FLOPs, not model FLOPs.
  bool recompute = false;
  // The share of the products that is the model's work: below 1 for an
  // expert's capacity-padded buffer (rows no token fills), 0 for one-hot
  // dispatch (MatmulKind::dispatch). MFU counts model_flops, HFU flops.
  double model_share = 1;
  // An expert's matmul (mixture of experts): `count` is the chip's experts,
  // and this dimension (m of the forward and dX, k of dW) the tokens each
  // takes under uniform routing; the strategy gives each expert the tokens
  // its router actually sends it. Dim::none: not an expert's.
  Dim tokens = Dim::none;
  // The split dimension is made of `tp_units` indivisible units (key/value
  // heads of grouped- or multi-query attention); 0: it splits freely. With
  // more tensor-parallel ranks than units, each unit is replicated on
  // tp / units ranks (vLLM and Megatron replicate KV heads this way), and
  // those ranks split `tp_excess` instead (Dim::m: the query heads of a
  // decode step's group) or repeat the work (Dim::none: the K and V
  // projections).
  std::uint64_t tp_units = 0;
  Dim tp_excess = Dim::none;
  // Sliding-window attention (docs/models.md#sliding-window-attention): a
  // query attends to at most `window` keys, itself and the window - 1
  // before it; 0: to every earlier key. A causal kernel skips the blocks
  // wholly outside that band too; materialized attention computes the
  // whole square and masks it, as it does the causal triangle.
  std::uint64_t window = 0;
  // An expert matmul (tokens != none) run as one grouped matmul over the
  // chip's `groups` experts (MegaBlocks, Gale et al. 2022, arXiv:2211.15841;
  // MaxText's megablox): count 1, `tokens` all the tokens its experts take,
  // each row block multiplied by its expert's weight; 0: `count` matmuls,
  // one per expert. The kernel computes whole tiles of `group_tile` rows
  // along the tokens (grouped_kernel_rows, models/moe.h); 0: exact rows.
  std::uint64_t groups = 0;
  std::uint64_t group_tile = 0;

  // The share of the m x k x n products a causal kernel computes, over the
  // exact triangle of a T x T square: (T + 1) / 2T; 1 when not causal.
  // Within a window W < T: the band, sum over queries i = 1..T of
  // min(i, W), over T^2.
  double causal_fraction() const;
  // 2 FLOPs (multiply + add) per multiply-accumulate computed.
  double flops() const { return 2.0 * double(count) * double(m) * double(k) * double(n) * causal_fraction(); }
  double model_flops() const { return recompute ? 0.0 : flops() * model_share; }
};

const char* to_string(Pass p);
const char* to_string(MatmulKind k);
const char* to_string(TpRole r);
const char* to_string(Dim d);
const char* to_string(Causal c);

}  // namespace models
