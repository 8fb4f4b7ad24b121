#pragma once
// What the builders of a Transformer's layers share (transformer.cpp,
// attention.cpp, mla.cpp, mlp_block.cpp, moe.cpp, lm_head.cpp): the sizes
// of one (micro)batch, the shape of one block, and small constructors of
// their ops. Internal to models/.
#include <cstdint>
#include <string>
#include <vector>

#include "models/layer_spec.h"
#include "models/transformer_config.h"

namespace models {

using Names = std::vector<std::string>;

// Sizes of one (micro)batch, multiplied once with overflow checks.
struct Dims {
  std::uint64_t B, T, D, F, N, K, H, V;
  std::uint64_t Hv;  // width of a value head (H: of a query/key head)
  // tokens, query width, key width, value width (query heads and key/value
  // heads), batch x heads, attention probabilities
  std::uint64_t BT, NH, KH, NHv, KHv, BN, probs;

  Dims(const TransformerConfig& c, std::uint64_t batch);
};

// One block: which attention and MLP it has.
struct BlockShape {
  const TransformerConfig* cfg = nullptr;
  bool flash = false;
  bool parallel = false;
  bool moe = false;          // experts replace the MLP (serial blocks only)
  std::uint64_t window = 0;  // keys a query attends to (sliding window); 0: every earlier one
};

// The names of block i's parts: "block<i>", its ".attn" and ".mlp".
struct BlockNames {
  std::string p, a, f;
  explicit BlockNames(std::uint64_t i) : p("block" + std::to_string(i)), a(p + ".attn"), f(p + ".mlp") {}
};

// Marks an attention matmul as flash attention runs it.
MatmulSpec fused(MatmulSpec s, Causal causal, bool a_on_chip, bool out_on_chip, bool recompute = false);

// An elementwise op fused into the attention kernel: its work stays, its
// tensors never cross HBM.
ElementwiseSpec in_kernel(ElementwiseSpec e);

// One of the four batched attention matmuls (count = batch x heads), split
// over tensor-parallel ranks by heads, within `window` keys per query.
MatmulSpec attention_matmul(std::string name, MatmulKind kind, Pass pass, const Dims& d, std::uint64_t m,
                            std::uint64_t k, std::uint64_t n, std::string output, Names after,
                            std::uint64_t window = 0);

// A norm's scale (or bias) over d elements, replicated.
ParamSpec norm_param(const std::string& name, std::uint64_t d);

// The activation of an MLP variant (relu | gelu | swiglu | geglu).
ElementwiseOp activation_op(const std::string& mlp);

// A norm (ElementwiseOp::layernorm) on `elements` and its backward, the
// backward reading what `after_bwd` produces.
ElementwiseSpec norm_forward(const std::string& name, std::uint64_t elements, bool tp_sharded, Names after);
ElementwiseSpec norm_backward(const std::string& name, std::uint64_t elements, bool tp_sharded, Names after_bwd);

}  // namespace models
