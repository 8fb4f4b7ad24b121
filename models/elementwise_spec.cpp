#include "models/elementwise_spec.h"

#include <stdexcept>
#include <utility>

#include "models/size_math.h"

namespace models {

// Forward costs follow google-research/electra flops_computation.py, which
// counts every add, multiply, exp, tanh or divide as one FLOP:
//   LAYER_NORM_FLOPS = 5, ACTIVATION_FLOPS = 8 (GELU, tanh form),
//   SOFTMAX_FLOPS = 5 (max, subtract, exp, sum, divide).
// ELECTRA takes backward = forward for these; here each gradient is counted
// operation by operation in the same units (derivations beside each entry).
// They are O(tokens x width), against O(tokens x width^2) for the matmuls,
// so they move total FLOPs by well under 1% (docs/models.md).
ElementwiseCost elementwise_cost(ElementwiseOp op, Pass pass) {
  const bool fwd = pass == Pass::forward;
  switch (op) {
    case ElementwiseOp::layernorm:
      // fwd: ELECTRA's 5 (mean, variance, normalise, scale, shift).
      // bwd: recompute x_hat 2, g = gamma*dy 1, sum(g) 1, sum(g*x_hat) 2,
      // dx = rstd*(g - mean(g) - x_hat*mean(g*x_hat)) 4, dgamma += dy*x_hat 2,
      // dbeta += dy 1 = 13. Reads x, dy; writes dx.
      return fwd ? ElementwiseCost{5, 2} : ElementwiseCost{13, 3};
    case ElementwiseOp::residual_add:
      // fwd: one add, reads 2 writes 1. bwd: the gradient reaching the
      // branch point is the sum of the skip path and the branch path.
      return {1, 3};
    case ElementwiseOp::bias_add:
      // fwd: one add (read x, write y). bwd: db = sum over rows of dY, one
      // add per element (read dY).
      return fwd ? ElementwiseCost{1, 2} : ElementwiseCost{1, 1};
    case ElementwiseOp::relu:
      // fwd: max(x, 0). bwd: select dy where the output is positive.
      return fwd ? ElementwiseCost{1, 2} : ElementwiseCost{1, 3};
    case ElementwiseOp::gelu:
      // fwd: ELECTRA's 8 for 0.5x(1 + tanh(c(x + a x^3))).
      // bwd: recompute t = tanh(c(x + a x^3)) 6, then
      // 0.5(1+t) + 0.5x(1-t^2)c(1 + 3a x^2) 11, times dy 1 = 18.
      return fwd ? ElementwiseCost{8, 2} : ElementwiseCost{18, 3};
    case ElementwiseOp::swiglu:
      // fwd: sigmoid(g) = 1/(1+exp(-g)) 4, silu = g*sigmoid 1, * up 1 = 6;
      // reads gate, up; writes h.
      // bwd: recompute sigmoid 4 and silu 1, d_up = dh*silu 1, d_silu = dh*up 1,
      // silu' = s + g*s*(1-s) 4, d_gate = d_silu*silu' 1 = 12; reads gate,
      // up, dh; writes d_gate, d_up.
      return fwd ? ElementwiseCost{6, 3} : ElementwiseCost{12, 5};
    case ElementwiseOp::geglu:
      // fwd: GELU(gate) 8 (as gelu), * up 1 = 9; reads gate, up; writes h.
      // bwd: recompute t = tanh(c(g + a g^3)) 6 and GELU(g) = 0.5g(1+t) 3,
      // d_up = dh*GELU 1, d_gelu = dh*up 1, GELU'(g) 11 (as gelu's
      // backward), d_gate = d_gelu*GELU' 1 = 23; reads gate, up, dh;
      // writes d_gate, d_up.
      return fwd ? ElementwiseCost{9, 3} : ElementwiseCost{23, 5};
    case ElementwiseOp::softmax:
      // fwd: ELECTRA's 5. The 1/sqrt(head_dim) scale is taken as folded into
      // W_q and the causal mask as a select, neither counted.
      // bwd: dx = y * (dy - sum(dy * y)): multiply, sum, subtract, multiply = 4.
      return fwd ? ElementwiseCost{5, 2} : ElementwiseCost{4, 3};
    case ElementwiseOp::cross_entropy:
      // fwd: a softmax over the classes, 5 per logit (the log and the pick of
      // the label's probability are once per token, not per logit).
      // bwd: dlogits = (p - onehot) / tokens: one multiply per logit (the
      // subtract touches only the label). Reads logits/probs, writes 1.
      return fwd ? ElementwiseCost{5, 2} : ElementwiseCost{1, 2};
    case ElementwiseOp::embedding_lookup:
      // fwd: a gather, no arithmetic (read a row, write it).
      // bwd: scatter-add of dY into the rows of dE: one add per element
      // (read dY, read and write dE).
      return fwd ? ElementwiseCost{0, 2} : ElementwiseCost{1, 3};
    case ElementwiseOp::routing_mask:
      // fwd only: compare the token's buffer position with the cell's 1,
      // times its gate weight 1; writes the mask (the one-hot positions'
      // cumulative count is per token and expert, not per cell).
      return {2, 1};
  }
  throw std::logic_error("elementwise_cost: unknown op");
}

ElementwiseSpec make_elementwise(std::string name, ElementwiseOp op, Pass pass, std::uint64_t elements, bool tp_sharded,
                                 std::string output, std::vector<std::string> after) {
  const ElementwiseCost c = elementwise_cost(op, pass);
  ElementwiseSpec e;
  e.name = std::move(name);
  e.op = op;
  e.pass = pass;
  e.elements = elements;
  e.flops_per_element = c.flops_per_element;
  e.bytes = checked_mul(elements, std::uint64_t(c.tensors) * kBf16Bytes, "elementwise bytes");
  e.tp_sharded = tp_sharded;
  e.output = std::move(output);
  e.after = std::move(after);
  return e;
}

const char* to_string(ElementwiseOp op) {
  switch (op) {
    case ElementwiseOp::layernorm: return "layernorm";
    case ElementwiseOp::residual_add: return "residual_add";
    case ElementwiseOp::bias_add: return "bias_add";
    case ElementwiseOp::relu: return "relu";
    case ElementwiseOp::gelu: return "gelu";
    case ElementwiseOp::swiglu: return "swiglu";
    case ElementwiseOp::geglu: return "geglu";
    case ElementwiseOp::softmax: return "softmax";
    case ElementwiseOp::cross_entropy: return "cross_entropy";
    case ElementwiseOp::embedding_lookup: return "embedding_lookup";
    case ElementwiseOp::routing_mask: return "routing_mask";
  }
  return "?";
}

}  // namespace models
