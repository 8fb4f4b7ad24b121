#include "models/attention.h"

#include "models/linear.h"
#include "models/size_math.h"

namespace models {

namespace {

const auto fwd = Pass::forward;
const auto bwd = Pass::backward_data;
const auto score = MatmulKind::attention_score;
const auto context = MatmulKind::attention_context;

}  // namespace

void add_gqa_params(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const std::string& a = n.a;
  l.params.push_back({a + ".w_q", d.D, d.NH, ParamSplit::cols});
  l.params.push_back({a + ".w_k", d.D, d.KH, ParamSplit::cols, 1, d.K});
  l.params.push_back({a + ".w_v", d.D, d.KHv, ParamSplit::cols, 1, d.K});
  if (shape.cfg->qk_norm) {
    // One scale over a head's width, shared by the heads (Qwen3's q_norm
    // and k_norm: RMSNorm(head_dim)).
    l.params.push_back(norm_param(a + ".q_norm.scale", d.H));
    l.params.push_back(norm_param(a + ".k_norm.scale", d.H));
  }
}

Names add_gqa_projections(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const std::string &p = n.p, &a = n.a;
  const bool qk_norm = shape.cfg->qk_norm;
  // With query/key norms, dQ and dK reach the projections through them.
  const std::string q_grad_from = qk_norm ? a + ".q_norm.bwd" : a + ".score.dQ";
  const std::string k_grad_from = qk_norm ? a + ".k_norm.bwd" : a + ".score.dK";
  add_linear(l, {a + ".q",
                 d.BT,
                 d.D,
                 d.NH,
                 a + ".w_q",
                 TpRole::column,
                 a + ".q",
                 p + ".ln1.out.grad",
                 {p + ".ln1"},
                 {q_grad_from}});
  add_linear(l, {a + ".k",
                 d.BT,
                 d.D,
                 d.KH,
                 a + ".w_k",
                 TpRole::column,
                 a + ".k",
                 p + ".ln1.out.grad",
                 {p + ".ln1"},
                 {k_grad_from},
                 d.K});
  add_linear(l, {a + ".v",
                 d.BT,
                 d.D,
                 d.KHv,
                 a + ".w_v",
                 TpRole::column,
                 a + ".v",
                 p + ".ln1.out.grad",
                 {p + ".ln1"},
                 {a + ".context.dV"},
                 d.K});
  if (!qk_norm) return {a + ".q", a + ".k"};
  l.elementwise_fwd.push_back(norm_forward(a + ".q_norm", d.BT * d.NH, true, {a + ".q"}));
  l.elementwise_fwd.push_back(norm_forward(a + ".k_norm", d.BT * d.KH, true, {a + ".k"}));
  return {a + ".q_norm", a + ".k_norm"};
}

Names gqa_input_grads(const BlockNames& n) { return {n.a + ".q.dX", n.a + ".k.dX", n.a + ".v.dX"}; }

void add_gqa_backward_norms(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  if (!shape.cfg->qk_norm) return;
  l.elementwise_bwd.push_back(norm_backward(n.a + ".q_norm", d.BT * d.NH, true, {n.a + ".score.dQ"}));
  l.elementwise_bwd.push_back(norm_backward(n.a + ".k_norm", d.BT * d.KH, true, {n.a + ".score.dK"}));
}

void add_gqa_stash(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const std::string& a = n.a;
  const std::uint64_t b = kBf16Bytes, q = d.BT * d.NH, k = d.BT * d.KH, v = d.BT * d.KHv;
  if (shape.cfg->qk_norm) {
    l.stash.push_back({a + ".q", q, b, "query norm backward"});
    l.stash.push_back({a + ".k", k, b, "key norm backward"});
    l.stash.push_back({a + ".q_norm.out", q, b, "dK = dS^T Q"});
    l.stash.push_back({a + ".k_norm.out", k, b, "dQ = dS K"});
  } else {
    l.stash.push_back({a + ".q", q, b, "dK = dS^T Q"});
    l.stash.push_back({a + ".k", k, b, "dQ = dS K"});
  }
  l.stash.push_back({a + ".v", v, b, "dP = dO V^T"});
}

void add_attention_core_forward(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n,
                                const Names& q_ready, const Names& v_ready) {
  const std::string& a = n.a;
  const bool flash = shape.flash;
  const std::uint64_t w = shape.window;
  // Each query head attends with its group's key and value head, so the
  // attention matmuls are batch x (query) heads of them, whatever kv_heads.
  // scores[b,h] = Q[b,h] (T x H) K[b,h]^T (H x T)
  MatmulSpec s_fwd = attention_matmul(a + ".score", score, fwd, d, d.T, d.H, d.T, a + ".scores", q_ready, w);
  l.forward.push_back(flash ? fused(s_fwd, Causal::out_lower, false, true) : s_fwd);
  ElementwiseSpec softmax =
      make_elementwise(a + ".softmax", ElementwiseOp::softmax, fwd, d.probs, true, a + ".probs", {a + ".score"});
  l.elementwise_fwd.push_back(flash ? in_kernel(softmax) : softmax);
  // context[b,h] = P[b,h] (T x T) V[b,h] (T x Hv)
  Names c_after{a + ".softmax"};
  c_after.insert(c_after.end(), v_ready.begin(), v_ready.end());
  MatmulSpec c_fwd = attention_matmul(a + ".context", context, fwd, d, d.T, d.T, d.Hv, a + ".context", c_after, w);
  l.forward.push_back(flash ? fused(c_fwd, Causal::depth_upto_row, true, false) : c_fwd);
}

void add_attention_core_backward(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const std::string& a = n.a;
  const std::uint64_t w = shape.window;
  auto& eb = l.elementwise_bwd;
  const auto mm = [&](const std::string& name, MatmulKind kind, std::uint64_t m, std::uint64_t k, std::uint64_t nn,
                      const std::string& out, Names after) {
    return attention_matmul(a + name, kind, bwd, d, m, k, nn, a + out, std::move(after), w);
  };
  if (shape.flash) {
    // FlashAttention-2's backward (Dao 2023, arXiv:2307.08691, algorithm 2):
    // S = Q K^T and P again from the saved log-sum-exp, dV = P^T dO,
    // dP = dO V^T, dS = P (dP - rowsum(dO O)), dQ = dS K, dK = dS^T Q, all
    // in one kernel that skips the blocks causal masking removes.
    l.backward.push_back(fused(mm(".score.recompute", score, d.T, d.H, d.T, ".scores", {a + ".o.dX"}),
                               Causal::out_lower, false, true, true));
    eb.push_back(in_kernel(make_elementwise(a + ".softmax.recompute", ElementwiseOp::softmax, fwd, d.probs, true,
                                            a + ".probs", {a + ".score.recompute"})));
    l.backward.push_back(fused(mm(".context.dP", context, d.T, d.Hv, d.T, ".probs.grad", {a + ".o.dX"}),
                               Causal::out_lower, false, true));
    l.backward.push_back(fused(mm(".context.dV", context, d.T, d.T, d.Hv, ".v.grad", {a + ".softmax.recompute"}),
                               Causal::depth_from_row, true, false));
    eb.push_back(in_kernel(make_elementwise(a + ".softmax.bwd", ElementwiseOp::softmax, bwd, d.probs, true,
                                            a + ".scores.grad", {a + ".context.dP", a + ".softmax.recompute"})));
    l.backward.push_back(fused(mm(".score.dQ", score, d.T, d.T, d.H, ".q.grad", {a + ".softmax.bwd"}),
                               Causal::depth_upto_row, true, false));
    l.backward.push_back(fused(mm(".score.dK", score, d.T, d.T, d.H, ".k.grad", {a + ".softmax.bwd"}),
                               Causal::depth_from_row, true, false));
  } else {
    l.backward.push_back(mm(".context.dP", context, d.T, d.Hv, d.T, ".probs.grad", {a + ".o.dX"}));
    l.backward.push_back(mm(".context.dV", context, d.T, d.T, d.Hv, ".v.grad", {a + ".o.dX"}));
    eb.push_back(make_elementwise(a + ".softmax.bwd", ElementwiseOp::softmax, bwd, d.probs, true, a + ".scores.grad",
                                  {a + ".context.dP"}));
    l.backward.push_back(mm(".score.dQ", score, d.T, d.T, d.H, ".q.grad", {a + ".softmax.bwd"}));
    l.backward.push_back(mm(".score.dK", score, d.T, d.T, d.H, ".k.grad", {a + ".softmax.bwd"}));
  }
}

void add_attention_core_stash(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const std::string& a = n.a;
  if (shape.flash)
    l.stash.push_back({a + ".lse", d.BN * d.T, 4, "P = exp(S - lse) in the backward kernel"});
  else
    l.stash.push_back({a + ".probs", d.probs, kBf16Bytes, "softmax backward, dV = P^T dO"});
  l.stash.push_back({a + ".context", d.BT * d.NHv, kBf16Bytes,
                     shape.flash ? "dW of the output projection, rowsum(dO O)" : "dW of the output projection"});
}

void add_output_projection_params(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  l.params.push_back({n.a + ".w_o", d.NHv, d.D, ParamSplit::rows});
  if (shape.cfg->post_norms) l.params.push_back(norm_param(n.a + ".post_norm.scale", d.D));
}

void add_output_projection(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n,
                           const std::string& out, const std::string& bwd_after) {
  const std::string& a = n.a;
  const std::uint64_t x = d.BT * d.D;
  const bool post = shape.cfg->post_norms;
  add_linear(l, {a + ".o",
                 d.BT,
                 d.NHv,
                 d.D,
                 a + ".w_o",
                 TpRole::row,
                 out,
                 a + ".context.grad",
                 {a + ".context"},
                 {post ? a + ".post_norm.bwd" : bwd_after}});
  if (post) {
    // Gemma 2/3: h = x + norm(W_o context); the norm's input is kept for
    // its backward.
    l.elementwise_fwd.push_back(norm_forward(a + ".post_norm", x, false, {a + ".o"}));
    l.elementwise_bwd.push_back(norm_backward(a + ".post_norm", x, false, {bwd_after}));
  }
  if (!shape.parallel)
    l.elementwise_fwd.push_back(make_elementwise(a + ".residual", ElementwiseOp::residual_add, fwd, x, false,
                                                 a + ".residual.out", {post ? a + ".post_norm" : a + ".o"}));
}

void add_output_projection_stash(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  if (shape.cfg->post_norms) l.stash.push_back({n.a + ".out", d.BT * d.D, kBf16Bytes, "post-attention norm backward"});
}

}  // namespace models
