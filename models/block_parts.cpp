#include "models/block_parts.h"

#include <algorithm>
#include <stdexcept>

#include "models/size_math.h"

namespace models {

Dims::Dims(const TransformerConfig& c, std::uint64_t batch)
    : B(batch),
      T(c.seq_len),
      D(c.d_model),
      F(c.d_ff),
      N(c.heads),
      K(c.kv()),
      H(c.qk_head_dim()),
      V(c.vocab),
      Hv(c.v_dim()),
      BT(checked_mul(batch, c.seq_len, "tokens")),
      NH(checked_mul(c.heads, c.qk_head_dim(), "heads x head_dim")),
      KH(checked_mul(c.kv(), c.qk_head_dim(), "kv_heads x head_dim")),
      NHv(checked_mul(c.heads, c.v_dim(), "heads x v_head_dim")),
      KHv(checked_mul(c.kv(), c.v_dim(), "kv_heads x v_head_dim")),
      BN(checked_mul(batch, c.heads, "batch x heads")),
      probs(checked_mul(BN, c.seq_len, c.seq_len, "attention probabilities")) {
  checked_mul(BT, std::max({D, F, NH, NHv, V, c.expert_width() * std::max<std::uint64_t>(1, c.shared_experts)}),
              "activations");
}

MatmulSpec fused(MatmulSpec s, Causal causal, bool a_on_chip, bool out_on_chip, bool recompute) {
  s.causal = causal;
  s.a_on_chip = a_on_chip;
  s.out_on_chip = out_on_chip;
  s.recompute = recompute;
  return s;
}

ElementwiseSpec in_kernel(ElementwiseSpec e) {
  e.bytes = 0;
  return e;
}

MatmulSpec attention_matmul(std::string name, MatmulKind kind, Pass pass, const Dims& d, std::uint64_t m,
                            std::uint64_t k, std::uint64_t n, std::string output, Names after, std::uint64_t window) {
  MatmulSpec s;
  s.name = std::move(name);
  s.kind = kind;
  s.pass = pass;
  s.count = d.BN;
  s.m = m;
  s.k = k;
  s.n = n;
  s.tp = TpRole::heads;
  s.tp_split = Dim::count;
  s.output = std::move(output);
  s.after = std::move(after);
  s.window = window;
  return s;
}

ParamSpec norm_param(const std::string& name, std::uint64_t d) { return {name, 1, d, ParamSplit::replicated}; }

ElementwiseOp activation_op(const std::string& mlp) {
  if (mlp == "relu") return ElementwiseOp::relu;
  if (mlp == "gelu") return ElementwiseOp::gelu;
  if (mlp == "swiglu") return ElementwiseOp::swiglu;
  if (mlp == "geglu") return ElementwiseOp::geglu;
  throw std::invalid_argument("activation_op: unknown mlp '" + mlp + "'");
}

ElementwiseSpec norm_forward(const std::string& name, std::uint64_t elements, bool tp_sharded, Names after) {
  return make_elementwise(name, ElementwiseOp::layernorm, Pass::forward, elements, tp_sharded, name + ".out",
                          std::move(after));
}

ElementwiseSpec norm_backward(const std::string& name, std::uint64_t elements, bool tp_sharded, Names after_bwd) {
  return make_elementwise(name + ".bwd", ElementwiseOp::layernorm, Pass::backward_data, elements, tp_sharded,
                          name + ".in.grad", std::move(after_bwd));
}

}  // namespace models
