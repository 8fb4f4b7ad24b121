#include "models/transformer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/linear.h"
#include "models/size_math.h"

namespace models {

namespace {

using Names = std::vector<std::string>;

// Sizes of one (micro)batch, multiplied once with overflow checks.
struct Dims {
  std::uint64_t B, T, D, F, N, K, H, V;
  // tokens, query width, key/value width, batch x heads, attention probabilities
  std::uint64_t BT, NH, KH, BN, probs;

  Dims(const TransformerConfig& c, std::uint64_t batch)
      : B(batch),
        T(c.seq_len),
        D(c.d_model),
        F(c.d_ff),
        N(c.heads),
        K(c.kv()),
        H(c.head_dim),
        V(c.vocab),
        BT(checked_mul(batch, c.seq_len, "tokens")),
        NH(checked_mul(c.heads, c.head_dim, "heads x head_dim")),
        KH(checked_mul(c.kv(), c.head_dim, "kv_heads x head_dim")),
        BN(checked_mul(batch, c.heads, "batch x heads")),
        probs(checked_mul(BN, c.seq_len, c.seq_len, "attention probabilities")) {
    checked_mul(BT, std::max({D, F, NH, V}), "activations");
  }
};

// Marks an attention matmul as flash attention runs it.
MatmulSpec fused(MatmulSpec s, Causal causal, bool a_on_chip, bool out_on_chip, bool recompute = false) {
  s.causal = causal;
  s.a_on_chip = a_on_chip;
  s.out_on_chip = out_on_chip;
  s.recompute = recompute;
  return s;
}

// An elementwise op fused into the attention kernel: its work stays, its
// tensors never cross HBM.
ElementwiseSpec in_kernel(ElementwiseSpec e) {
  e.bytes = 0;
  return e;
}

// The tokens of one microbatch an expert takes under uniform routing, over
// the `shards` chips of its expert group: each chip's tokens x top_k
// spread evenly over the experts (rounded up), at most `shards` capacities.
std::uint64_t uniform_expert_tokens(const TransformerConfig& c, std::uint64_t tokens) {
  const std::uint64_t routed = checked_mul(tokens, c.top_k, c.expert_shards, "routed tokens");
  std::uint64_t m = (routed + c.experts - 1) / c.experts;
  if (c.capacity_factor > 0) {
    const auto capacity =
        static_cast<std::uint64_t>(std::ceil(c.capacity_factor * double(tokens * c.top_k) / double(c.experts)));
    m = std::min(m, capacity * c.expert_shards);
  }
  return m;
}

// One of the four batched attention matmuls (count = batch x heads), split
// over tensor-parallel ranks by heads.
MatmulSpec attention_matmul(std::string name, MatmulKind kind, Pass pass, const Dims& d, std::uint64_t m,
                            std::uint64_t k, std::uint64_t n, std::string output, Names after) {
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
  return s;
}

ParamSpec norm_param(const std::string& name, std::uint64_t d) { return {name, 1, d, ParamSplit::replicated}; }

LayerSpec embedding_layer(const Dims& d) {
  LayerSpec l;
  l.name = "embedding";
  l.kind = LayerKind::embedding;
  l.params = {{"embedding.table", d.V, d.D, ParamSplit::rows}};
  const std::uint64_t x = d.BT * d.D;
  l.elementwise_fwd.push_back(make_elementwise("embedding.lookup", ElementwiseOp::embedding_lookup, Pass::forward, x,
                                               false, "embedding.out", {}));
  l.elementwise_bwd.push_back(make_elementwise("embedding.lookup.bwd", ElementwiseOp::embedding_lookup,
                                               Pass::backward_weight, x, false, "embedding.table.grad", {}));
  l.stash.push_back({"embedding.ids", d.BT, kTokenIdBytes, "scatter-add of dY into the rows of dE"});
  l.output_bytes = checked_mul(x, kBf16Bytes, "bytes");
  return l;
}

struct BlockShape {
  std::string mlp;  // relu | gelu | swiglu
  bool flash = false;
  bool parallel = false;
  const TransformerConfig* moe = nullptr;  // mixture of experts (serial blocks only)
};

bool is_dense_mlp(const std::string& name, const std::string& f) { return name.compare(0, f.size() + 1, f + ".") == 0; }

// Turns a serial block's dense MLP into a mixture of experts (GShard,
// Lepikhin et al. 2020, arXiv:2006.16668; Switch, Fedus et al. 2021,
// arXiv:2101.03961; Mixtral, Jiang et al. 2024, arXiv:2401.04088):
//   gates = softmax(LN2(h) W_router)            replicated, d_model x experts
//   dispatch: all-to-all of each token to the chips of its top_k experts
//   each expert: the MLP (act as `mlp`) of expert_d_ff on its tokens
//   combine: all-to-all back, weighted by the gates, + shared experts' MLP
// Backward runs the two all-to-alls again, the other way round: the output
// gradient to the experts (combine's gradient), the input gradients back
// (dispatch's). The chip's experts are one batched matmul of `count` =
// its experts; the strategy sizes each expert by its routed tokens.
void make_moe(LayerSpec& l, const Dims& d, const BlockShape& shape, const std::string& p, std::uint64_t i) {
  const TransformerConfig& c = *shape.moe;
  const std::string f = p + ".mlp", e = f + ".experts", sh = f + ".shared";
  const bool swiglu = shape.mlp == "swiglu";
  const ElementwiseOp act_op = swiglu                ? ElementwiseOp::swiglu
                               : shape.mlp == "relu" ? ElementwiseOp::relu
                                                     : ElementwiseOp::gelu;
  const auto dense = [&](const auto& op) { return is_dense_mlp(op.name, f) || op.name == p + ".ln2.bwd"; };
  const auto drop = [&](auto& v) { v.erase(std::remove_if(v.begin(), v.end(), dense), v.end()); };
  drop(l.params);
  drop(l.forward);
  drop(l.backward);
  drop(l.elementwise_fwd);
  drop(l.elementwise_bwd);
  drop(l.stash);
  l.routing_layer = i;

  const std::uint64_t E = c.experts, F = c.expert_width(), local = E / c.expert_shards;
  const std::uint64_t m = uniform_expert_tokens(c, d.BT), routed = checked_mul(local, m, "routed tokens");
  const std::uint64_t x = d.BT * d.D, gates = checked_mul(d.BT, E, "router logits");
  const std::uint64_t rd = checked_mul(routed, d.D, "routed activations");
  const std::uint64_t rf = checked_mul(routed, F, "expert activations");
  const auto fwd = Pass::forward;
  const auto bwd = Pass::backward_data;
  const std::string in = p + ".ln2", in_grad = in + ".out.grad";

  l.params.push_back({f + ".w_router", d.D, E, ParamSplit::replicated});
  for (const char* w : {"w_up", "w_gate", "w_down"}) {
    if (std::string(w) == "w_gate" && !swiglu) continue;
    const bool down = std::string(w) == "w_down";
    ParamSpec ps{e + "." + w, checked_mul(E, down ? F : d.D, "expert weights"), down ? d.D : F, ParamSplit::replicated};
    ps.shards = c.expert_shards;
    l.params.push_back(ps);
    if (c.shared_experts)
      l.params.push_back({sh + "." + w, down ? c.shared_experts * F : d.D, down ? d.D : c.shared_experts * F,
                          down ? ParamSplit::rows : ParamSplit::cols});
  }

  auto& ef = l.elementwise_fwd;
  auto& eb = l.elementwise_bwd;
  // Router: logits and their softmax (top-k picks the largest of them).
  add_linear(l, {f + ".router",
                 d.BT,
                 d.D,
                 E,
                 f + ".w_router",
                 TpRole::replicated,
                 f + ".logits",
                 in_grad,
                 {in},
                 {f + ".gates.bwd"}});
  ef.push_back(
      make_elementwise(f + ".gates", ElementwiseOp::softmax, fwd, gates, false, f + ".gates.out", {f + ".router"}));
  l.exchange_fwd.push_back({f + ".dispatch", true, rd, d.D, f + ".dispatched", {f + ".gates"}});
  // The experts: a batched matmul over the chip's experts, m its tokens.
  const auto expert = [&](const std::string& name, std::uint64_t k, std::uint64_t n, const std::string& w,
                          const std::string& out, const std::string& grad, Names after, Names after_bwd) {
    const std::size_t fw = l.forward.size(), bw = l.backward.size();
    add_linear(l, {name, m, k, n, w, TpRole::replicated, out, grad, std::move(after), std::move(after_bwd)});
    for (std::size_t j = fw; j < l.forward.size(); ++j) l.forward[j].tokens = Dim::m;
    for (std::size_t j = bw; j < l.backward.size(); ++j)
      l.backward[j].tokens = l.backward[j].pass == Pass::backward_weight ? Dim::k : Dim::m;
    for (auto* v : {&l.forward, &l.backward})
      for (std::size_t j = v == &l.forward ? fw : bw; j < v->size(); ++j) (*v)[j].count = local;
  };
  const std::string act = e + "." + shape.mlp;
  expert(e + ".up", d.D, F, e + ".w_up", e + ".up.out", f + ".dispatched.grad", {f + ".dispatch"}, {act + ".bwd"});
  if (swiglu)
    expert(e + ".gate", d.D, F, e + ".w_gate", e + ".gate.out", f + ".dispatched.grad", {f + ".dispatch"},
           {act + ".bwd"});
  ElementwiseSpec a = make_elementwise(act, act_op, fwd, rf, false, e + ".act.out",
                                       swiglu ? Names{e + ".up", e + ".gate"} : Names{e + ".up"});
  a.routed_width = F;
  ef.push_back(a);
  expert(e + ".down", F, d.D, e + ".w_down", e + ".down.out", e + ".act.out.grad", {act}, {f + ".combine.bwd"});
  l.exchange_fwd.push_back({f + ".combine", false, rd, d.D, f + ".combined", {e + ".down"}});
  Names sum{f + ".combine", p + ".attn.residual"};
  Names ln2_after{f + ".dispatch.bwd", f + ".router.dX"};
  if (c.shared_experts) {
    const std::uint64_t SF = c.shared_experts * F;
    const std::string sact = sh + "." + shape.mlp;
    add_linear(
        l, {sh + ".up", d.BT, d.D, SF, sh + ".w_up", TpRole::column, sh + ".up.out", in_grad, {in}, {sact + ".bwd"}});
    if (swiglu)
      add_linear(l, {sh + ".gate",
                     d.BT,
                     d.D,
                     SF,
                     sh + ".w_gate",
                     TpRole::column,
                     sh + ".gate.out",
                     in_grad,
                     {in},
                     {sact + ".bwd"}});
    ef.push_back(make_elementwise(sact, act_op, fwd, d.BT * SF, true, sh + ".act.out",
                                  swiglu ? Names{sh + ".up", sh + ".gate"} : Names{sh + ".up"}));
    add_linear(
        l,
        {sh + ".down", d.BT, SF, d.D, sh + ".w_down", TpRole::row, sh + ".down.out", sh + ".act.out.grad", {sact}, {}});
    eb.push_back(make_elementwise(sact + ".bwd", act_op, bwd, d.BT * SF, true, sh + ".act.in.grad", {sh + ".down.dX"}));
    sum.push_back(sh + ".down");
    ln2_after.push_back(sh + ".up.dX");
    if (swiglu) ln2_after.push_back(sh + ".gate.dX");
    l.stash.push_back({sh + ".up.out", d.BT * SF, kBf16Bytes, "shared experts' activation backward"});
    if (swiglu) l.stash.push_back({sh + ".gate.out", d.BT * SF, kBf16Bytes, "SwiGLU backward"});
    l.stash.push_back({sh + ".act.out", d.BT * SF, kBf16Bytes, "dW of the shared experts' down"});
  }
  // The gate-weighted sum of each token's expert outputs, into the residual.
  ef.push_back(make_elementwise(f + ".residual", ElementwiseOp::residual_add, fwd, x, false, p + ".out", sum));

  // Backward: the output gradient to the experts, through them, back.
  l.exchange_bwd.push_back({f + ".combine.bwd", true, rd, d.D, f + ".combined.grad", {}});
  ElementwiseSpec ab = make_elementwise(act + ".bwd", act_op, bwd, rf, false, e + ".act.in.grad", {e + ".down.dX"});
  ab.routed_width = F;
  eb.push_back(ab);
  l.exchange_bwd.push_back({f + ".dispatch.bwd", false, rd, d.D, f + ".dispatched.grad.back",
                            swiglu ? Names{e + ".up.dX", e + ".gate.dX"} : Names{e + ".up.dX"}});
  eb.push_back(make_elementwise(f + ".gates.bwd", ElementwiseOp::softmax, bwd, gates, false, f + ".logits.grad",
                                {f + ".combine.bwd"}));
  eb.push_back(
      make_elementwise(p + ".ln2.bwd", ElementwiseOp::layernorm, bwd, x, false, p + ".ln2.in.grad", ln2_after));
  eb.push_back(make_elementwise(f + ".residual.bwd", ElementwiseOp::residual_add, bwd, x, false,
                                p + ".attn.residual.out.grad", {p + ".ln2.bwd"}));

  const std::uint64_t b = kBf16Bytes;
  l.stash.push_back({f + ".gates.out", gates, b, "router softmax backward, the gate-weighted sum"});
  l.stash.push_back({f + ".dispatched", rd, b, "dW of the experts' up"});
  if (swiglu) l.stash.push_back({e + ".gate.out", rf, b, "SwiGLU backward"});
  l.stash.push_back({e + ".up.out", rf, b, swiglu ? "SwiGLU backward" : "activation backward"});
  l.stash.push_back({e + ".act.out", rf, b, "dW of the experts' down"});
  l.stash.push_back({f + ".combined", rd, b, "gradient of the gates (the weighted sum)"});
}

LayerSpec block_layer(std::uint64_t i, const Dims& d, const BlockShape& shape) {
  const std::string p = "block" + std::to_string(i);
  const std::string a = p + ".attn", f = p + ".mlp";
  const bool swiglu = shape.mlp == "swiglu", flash = shape.flash, parallel = shape.parallel;
  const std::uint64_t x = d.BT * d.D, q = d.BT * d.NH, kv = d.BT * d.KH, h = d.BT * d.F;
  LayerSpec l;
  l.name = p;
  l.kind = LayerKind::transformer_block;
  l.params = {norm_param(p + ".ln1.scale", d.D),
              norm_param(p + ".ln1.bias", d.D),
              {a + ".w_q", d.D, d.NH, ParamSplit::cols},
              {a + ".w_k", d.D, d.KH, ParamSplit::cols, 1, d.K},
              {a + ".w_v", d.D, d.KH, ParamSplit::cols, 1, d.K},
              {a + ".w_o", d.NH, d.D, ParamSplit::rows}};
  if (!parallel) {
    l.params.push_back(norm_param(p + ".ln2.scale", d.D));
    l.params.push_back(norm_param(p + ".ln2.bias", d.D));
  }
  l.params.push_back({f + ".w_up", d.D, d.F, ParamSplit::cols});
  if (swiglu) l.params.push_back({f + ".w_gate", d.D, d.F, ParamSplit::cols});
  l.params.push_back({f + ".w_down", d.F, d.D, ParamSplit::rows});

  auto& ef = l.elementwise_fwd;
  auto& eb = l.elementwise_bwd;
  const auto fwd = Pass::forward;
  const auto bwd = Pass::backward_data;
  const auto score = MatmulKind::attention_score;
  const auto context = MatmulKind::attention_context;
  // Parallel blocks (PaLM) feed attention and MLP from one layer norm and
  // add both to the residual stream at once: the two row-parallel outputs
  // (O and down) sum into one tensor, so tensor parallelism all-reduces once
  // forward, and the input gradients of Q, K, V, up and gate sum into one,
  // all-reduced once backward.
  const std::string mlp_in = parallel ? p + ".ln1" : p + ".ln2";
  const std::string mlp_in_grad = (parallel ? p + ".ln1" : p + ".ln2") + ".out.grad";
  const std::string attn_out = parallel ? p + ".mix" : a + ".out";
  const std::string mlp_out = parallel ? p + ".mix" : f + ".down.out";

  // --- attention: x + W_o softmax(Q K^T) V, Q/K/V = LN1(x) W_q/W_k/W_v ---
  ef.push_back(make_elementwise(p + ".ln1", ElementwiseOp::layernorm, fwd, x, false, p + ".ln1.out", {}));
  const std::string attn_bwd_after = parallel ? p + ".residual.bwd" : f + ".residual.bwd";
  add_linear(l, {a + ".q",
                 d.BT,
                 d.D,
                 d.NH,
                 a + ".w_q",
                 TpRole::column,
                 a + ".q",
                 p + ".ln1.out.grad",
                 {p + ".ln1"},
                 {a + ".score.dQ"}});
  add_linear(l, {a + ".k",
                 d.BT,
                 d.D,
                 d.KH,
                 a + ".w_k",
                 TpRole::column,
                 a + ".k",
                 p + ".ln1.out.grad",
                 {p + ".ln1"},
                 {a + ".score.dK"},
                 d.K});
  add_linear(l, {a + ".v",
                 d.BT,
                 d.D,
                 d.KH,
                 a + ".w_v",
                 TpRole::column,
                 a + ".v",
                 p + ".ln1.out.grad",
                 {p + ".ln1"},
                 {a + ".context.dV"},
                 d.K});
  // Each query head attends with its group's key and value head, so the
  // attention matmuls are batch x (query) heads of them, whatever kv_heads.
  // scores[b,h] = Q[b,h] (T x H) K[b,h]^T (H x T)
  MatmulSpec s_fwd = attention_matmul(a + ".score", score, fwd, d, d.T, d.H, d.T, a + ".scores", {a + ".q", a + ".k"});
  l.forward.push_back(flash ? fused(s_fwd, Causal::out_lower, false, true) : s_fwd);
  ElementwiseSpec softmax =
      make_elementwise(a + ".softmax", ElementwiseOp::softmax, fwd, d.probs, true, a + ".probs", {a + ".score"});
  ef.push_back(flash ? in_kernel(softmax) : softmax);
  // context[b,h] = P[b,h] (T x T) V[b,h] (T x H)
  MatmulSpec c_fwd =
      attention_matmul(a + ".context", context, fwd, d, d.T, d.T, d.H, a + ".context", {a + ".softmax", a + ".v"});
  l.forward.push_back(flash ? fused(c_fwd, Causal::depth_upto_row, true, false) : c_fwd);
  add_linear(l, {a + ".o",
                 d.BT,
                 d.NH,
                 d.D,
                 a + ".w_o",
                 TpRole::row,
                 attn_out,
                 a + ".context.grad",
                 {a + ".context"},
                 {attn_bwd_after}});
  if (!parallel)
    ef.push_back(
        make_elementwise(a + ".residual", ElementwiseOp::residual_add, fwd, x, false, a + ".residual.out", {a + ".o"}));

  // --- MLP: h + W_down act(LN2(h) W_up [, LN2(h) W_gate]) ---
  const std::string act = f + "." + shape.mlp;
  const ElementwiseOp act_op = swiglu                ? ElementwiseOp::swiglu
                               : shape.mlp == "relu" ? ElementwiseOp::relu
                                                     : ElementwiseOp::gelu;
  if (!parallel)
    ef.push_back(
        make_elementwise(p + ".ln2", ElementwiseOp::layernorm, fwd, x, false, p + ".ln2.out", {a + ".residual"}));
  add_linear(
      l,
      {f + ".up", d.BT, d.D, d.F, f + ".w_up", TpRole::column, f + ".up.out", mlp_in_grad, {mlp_in}, {act + ".bwd"}});
  if (swiglu)
    add_linear(l, {f + ".gate",
                   d.BT,
                   d.D,
                   d.F,
                   f + ".w_gate",
                   TpRole::column,
                   f + ".gate.out",
                   mlp_in_grad,
                   {mlp_in},
                   {act + ".bwd"}});
  ef.push_back(make_elementwise(act, act_op, fwd, h, true, f + ".act.out",
                                swiglu ? Names{f + ".up", f + ".gate"} : Names{f + ".up"}));
  add_linear(l, {f + ".down", d.BT, d.F, d.D, f + ".w_down", TpRole::row, mlp_out, f + ".act.out.grad", {act}, {}});
  if (parallel)
    ef.push_back(make_elementwise(p + ".residual", ElementwiseOp::residual_add, fwd, x, false, p + ".out",
                                  {f + ".down", a + ".o"}));
  else
    ef.push_back(make_elementwise(f + ".residual", ElementwiseOp::residual_add, fwd, x, false, p + ".out",
                                  {f + ".down", a + ".residual"}));

  // --- backward elementwise, in execution order (the matmuls' order is in
  // their `after` lists) ---
  eb.push_back(make_elementwise(act + ".bwd", act_op, bwd, h, true, f + ".act.in.grad", {f + ".down.dX"}));
  if (parallel) {
    // dx = dY (skip path) + LN backward of the summed branch gradients.
    eb.push_back(
        make_elementwise(p + ".residual.bwd", ElementwiseOp::residual_add, bwd, x, false, p + ".mix.grad", {}));
  } else {
    eb.push_back(make_elementwise(p + ".ln2.bwd", ElementwiseOp::layernorm, bwd, x, false, p + ".ln2.in.grad",
                                  swiglu ? Names{f + ".up.dX", f + ".gate.dX"} : Names{f + ".up.dX"}));
    // dh = dY (skip path of the MLP residual) + LN2 backward (branch path)
    eb.push_back(make_elementwise(f + ".residual.bwd", ElementwiseOp::residual_add, bwd, x, false,
                                  a + ".residual.out.grad", {p + ".ln2.bwd"}));
  }
  if (flash) {
    // FlashAttention-2's backward (Dao 2023, arXiv:2307.08691, algorithm 2):
    // S = Q K^T and P again from the saved log-sum-exp, dV = P^T dO,
    // dP = dO V^T, dS = P (dP - rowsum(dO O)), dQ = dS K, dK = dS^T Q, all
    // in one kernel that skips the blocks causal masking removes.
    l.backward.push_back(
        fused(attention_matmul(a + ".score.recompute", score, bwd, d, d.T, d.H, d.T, a + ".scores", {a + ".o.dX"}),
              Causal::out_lower, false, true, true));
    eb.push_back(in_kernel(make_elementwise(a + ".softmax.recompute", ElementwiseOp::softmax, fwd, d.probs, true,
                                            a + ".probs", {a + ".score.recompute"})));
    l.backward.push_back(
        fused(attention_matmul(a + ".context.dP", context, bwd, d, d.T, d.H, d.T, a + ".probs.grad", {a + ".o.dX"}),
              Causal::out_lower, false, true));
    l.backward.push_back(fused(
        attention_matmul(a + ".context.dV", context, bwd, d, d.T, d.T, d.H, a + ".v.grad", {a + ".softmax.recompute"}),
        Causal::depth_from_row, true, false));
    eb.push_back(in_kernel(make_elementwise(a + ".softmax.bwd", ElementwiseOp::softmax, bwd, d.probs, true,
                                            a + ".scores.grad", {a + ".context.dP", a + ".softmax.recompute"})));
    l.backward.push_back(
        fused(attention_matmul(a + ".score.dQ", score, bwd, d, d.T, d.T, d.H, a + ".q.grad", {a + ".softmax.bwd"}),
              Causal::depth_upto_row, true, false));
    l.backward.push_back(
        fused(attention_matmul(a + ".score.dK", score, bwd, d, d.T, d.T, d.H, a + ".k.grad", {a + ".softmax.bwd"}),
              Causal::depth_from_row, true, false));
  } else {
    l.backward.push_back(
        attention_matmul(a + ".context.dP", context, bwd, d, d.T, d.H, d.T, a + ".probs.grad", {a + ".o.dX"}));
    l.backward.push_back(
        attention_matmul(a + ".context.dV", context, bwd, d, d.T, d.T, d.H, a + ".v.grad", {a + ".o.dX"}));
    eb.push_back(make_elementwise(a + ".softmax.bwd", ElementwiseOp::softmax, bwd, d.probs, true, a + ".scores.grad",
                                  {a + ".context.dP"}));
    l.backward.push_back(
        attention_matmul(a + ".score.dQ", score, bwd, d, d.T, d.T, d.H, a + ".q.grad", {a + ".softmax.bwd"}));
    l.backward.push_back(
        attention_matmul(a + ".score.dK", score, bwd, d, d.T, d.T, d.H, a + ".k.grad", {a + ".softmax.bwd"}));
  }
  const Names ln1_grads = parallel
                              ? (swiglu ? Names{a + ".q.dX", a + ".k.dX", a + ".v.dX", f + ".up.dX", f + ".gate.dX"}
                                        : Names{a + ".q.dX", a + ".k.dX", a + ".v.dX", f + ".up.dX"})
                              : Names{a + ".q.dX", a + ".k.dX", a + ".v.dX"};
  eb.push_back(
      make_elementwise(p + ".ln1.bwd", ElementwiseOp::layernorm, bwd, x, false, p + ".ln1.in.grad", ln1_grads));
  // dx = dh (skip path of the attention residual) + LN1 backward
  if (parallel)
    eb.push_back(make_elementwise(p + ".ln1.residual.bwd", ElementwiseOp::residual_add, bwd, x, false, p + ".in.grad",
                                  {p + ".ln1.bwd", p + ".residual.bwd"}));
  else
    eb.push_back(make_elementwise(a + ".residual.bwd", ElementwiseOp::residual_add, bwd, x, false, p + ".in.grad",
                                  {p + ".ln1.bwd", f + ".residual.bwd"}));

  // Everything the backward pass reads, saved in BF16: Korthikanti et al.
  // 2022 (arXiv:2205.05198, section 4.1) without the dropout masks and
  // outputs, i.e. 2 (4D + 4NH + 2F) bytes + 2NT per token (+2F for SwiGLU)
  // for multi-head, materialized attention. Grouped-query attention keeps
  // K and V at kv_heads x head_dim; flash attention keeps, instead of the
  // T x T probabilities, the softmax's log-sum-exp per row (FP32).
  const std::uint64_t b = kBf16Bytes;
  l.stash = {{p + ".in", x, b, "LN1 backward"},
             {p + ".ln1.out", x, b, parallel ? "dW of Q, K, V, up and gate" : "dW of Q, K, V projections"},
             {a + ".q", q, b, "dK = dS^T Q"},
             {a + ".k", kv, b, "dQ = dS K"},
             {a + ".v", kv, b, "dP = dO V^T"}};
  if (flash)
    l.stash.push_back({a + ".lse", d.BN * d.T, 4, "P = exp(S - lse) in the backward kernel"});
  else
    l.stash.push_back({a + ".probs", d.probs, b, "softmax backward, dV = P^T dO"});
  l.stash.push_back(
      {a + ".context", q, b, flash ? "dW of the output projection, rowsum(dO O)" : "dW of the output projection"});
  if (!parallel) {
    l.stash.push_back({a + ".residual.out", x, b, "LN2 backward"});
    l.stash.push_back({p + ".ln2.out", x, b, swiglu ? "dW of up and gate" : "dW of up"});
  }
  if (swiglu) l.stash.push_back({f + ".gate.out", h, b, "SwiGLU backward"});
  l.stash.push_back({f + ".up.out", h, b,
                     swiglu                ? "SwiGLU backward"
                     : shape.mlp == "relu" ? "ReLU backward"
                                           : "GELU backward"});
  l.stash.push_back({f + ".act.out", h, b, "dW of down"});

  if (shape.moe) make_moe(l, d, shape, p, i);
  l.output_bytes = checked_mul(x, kBf16Bytes, "bytes");
  l.input_grad_bytes = l.output_bytes;
  return l;
}

LayerSpec output_layer(const Dims& d, bool tied) {
  LayerSpec l;
  l.name = "output";
  l.kind = LayerKind::output;
  l.params = {norm_param("output.norm.scale", d.D), norm_param("output.norm.bias", d.D)};
  if (!tied) l.params.push_back({"output.unembedding", d.D, d.V, ParamSplit::cols});
  const std::uint64_t x = d.BT * d.D;
  l.elementwise_fwd.push_back(
      make_elementwise("output.norm", ElementwiseOp::layernorm, Pass::forward, x, false, "output.norm.out", {}));
  // Logits = LN(x) W_U, vocabulary-parallel (column-parallel over the vocab).
  // Tied: W_U = E^T, so the weight is the embedding table and dW (D x V)
  // accumulates, transposed, into its gradient.
  add_linear(l, {"output.logits",
                 d.BT,
                 d.D,
                 d.V,
                 tied ? "embedding.table" : "output.unembedding",
                 TpRole::column,
                 "output.logits",
                 "output.norm.out.grad",
                 {"output.norm"},
                 {}});
  l.elementwise_bwd.push_back(make_elementwise("output.norm.bwd", ElementwiseOp::layernorm, Pass::backward_data, x,
                                               false, "output.in.grad", {"output.logits.dX"}));
  l.stash = {{"output.in", x, kBf16Bytes, "final LN backward"},
             {"output.norm.out", x, kBf16Bytes, "dW of the unembedding"}};
  l.output_bytes = checked_mul(d.BT, d.V, kBf16Bytes, "bytes");
  l.input_grad_bytes = checked_mul(x, kBf16Bytes, "bytes");
  return l;
}

LayerSpec loss_layer(const Dims& d) {
  const std::uint64_t logits = d.BT * d.V;
  LayerSpec l;
  l.name = "loss";
  l.kind = LayerKind::loss;
  // Vocabulary-parallel cross-entropy (Megatron): each rank handles its slice
  // of the vocabulary and exchanges only per-token max and sum.
  l.elementwise_fwd.push_back(make_elementwise("loss.cross_entropy", ElementwiseOp::cross_entropy, Pass::forward,
                                               logits, true, "loss.probs", {}));
  l.elementwise_bwd.push_back(make_elementwise("loss.cross_entropy.bwd", ElementwiseOp::cross_entropy,
                                               Pass::backward_data, logits, true, "output.logits.grad", {}));
  l.stash = {{"loss.probs", logits, kBf16Bytes, "dlogits = probs - onehot(labels)"},
             {"loss.labels", d.BT, kTokenIdBytes, "dlogits = probs - onehot(labels)"}};
  l.input_grad_bytes = checked_mul(logits, kBf16Bytes, "bytes");
  return l;
}

// What an inference pass keeps of a training layer: its forward work.
void forward_only(LayerSpec& l) {
  l.backward.clear();
  l.elementwise_bwd.clear();
  l.stash.clear();
  l.input_grad_bytes = 0;
}

}  // namespace

ModelSpec build_transformer(const TransformerConfig& cfg, std::uint64_t batch) {
  const std::pair<const char*, std::uint64_t> sizes[] = {
      {"layers", cfg.layers},     {"d_model", cfg.d_model}, {"d_ff", cfg.d_ff},   {"heads", cfg.heads},
      {"head_dim", cfg.head_dim}, {"seq_len", cfg.seq_len}, {"vocab", cfg.vocab}, {"batch", batch}};
  for (const auto& [name, v] : sizes)
    if (v == 0) throw std::invalid_argument(std::string("build_transformer: ") + name + " must be >= 1");
  if (cfg.mlp != "relu" && cfg.mlp != "gelu" && cfg.mlp != "swiglu")
    throw std::invalid_argument("build_transformer: mlp must be relu, gelu or swiglu, got '" + cfg.mlp + "'");
  if (cfg.heads % cfg.kv() != 0) throw std::invalid_argument("build_transformer: kv_heads must divide heads");
  if (cfg.attention != "materialized" && cfg.attention != "flash")
    throw std::invalid_argument("build_transformer: attention must be materialized or flash");
  if (cfg.block != "serial" && cfg.block != "parallel")
    throw std::invalid_argument("build_transformer: block must be serial or parallel");
  if (cfg.moe()) {
    if (cfg.block != "serial") throw std::invalid_argument("build_transformer: experts need block: serial");
    if (cfg.top_k == 0 || cfg.top_k > cfg.experts)
      throw std::invalid_argument("build_transformer: top_k must be between 1 and experts");
    if (cfg.expert_shards == 0 || cfg.experts % cfg.expert_shards != 0)
      throw std::invalid_argument("build_transformer: the expert-parallel chips must divide the experts");
  }

  const Dims d(cfg, batch);
  ModelSpec m;
  m.type = "transformer";
  m.batch = batch;
  m.seq_len = cfg.seq_len;
  m.layers.reserve(cfg.layers + 3);
  m.layers.push_back(embedding_layer(d));
  const BlockShape shape{cfg.mlp, cfg.attention == "flash", cfg.block == "parallel", cfg.moe() ? &cfg : nullptr};
  for (std::uint64_t i = 0; i < cfg.layers; ++i) m.layers.push_back(block_layer(i, d, shape));
  m.layers.push_back(output_layer(d, cfg.tied_embeddings));
  m.layers.push_back(loss_layer(d));
  return m;
}

ModelSpec build_transformer_prefill(const TransformerConfig& cfg, std::uint64_t batch) {
  ModelSpec m = build_transformer(cfg, batch);
  m.layers.pop_back();  // the loss
  for (LayerSpec& l : m.layers) forward_only(l);
  LayerSpec& out = m.layers.back();
  for (MatmulSpec& mm : out.forward)
    if (mm.name == "output.logits") mm.m = batch;  // the last token of each sequence
  out.output_bytes = checked_mul(batch, cfg.vocab, kBf16Bytes, "bytes");
  return m;
}

ModelSpec build_transformer_decode(const TransformerConfig& cfg, std::uint64_t batch, std::uint64_t context) {
  if (context == 0) throw std::invalid_argument("build_transformer_decode: context must be >= 1");
  TransformerConfig one = cfg;
  one.seq_len = 1;
  ModelSpec m = build_transformer(one, batch);
  m.layers.pop_back();  // the loss
  const std::uint64_t group = cfg.heads / cfg.kv();
  const std::uint64_t instances = checked_mul(batch, cfg.kv(), "batch x kv_heads");
  const std::uint64_t keys = checked_mul(instances, context, "cached keys");
  const std::uint64_t scores = checked_mul(keys, group, "attention scores");
  const bool flash = cfg.attention == "flash";
  for (LayerSpec& l : m.layers) {
    forward_only(l);
    for (MatmulSpec& mm : l.forward) {
      if (mm.kind == MatmulKind::linear) continue;
      // scores = q_group (group x H) K^T (H x context), context = P (group x context) V (context x H),
      // per sequence and kv head; a decode query sees every cached key (no mask).
      const bool score = mm.kind == MatmulKind::attention_score;
      mm.count = 1;
      mm.m = group;
      mm.k = score ? cfg.head_dim : context;
      mm.n = score ? keys : checked_mul(instances, cfg.head_dim, "attention outputs");
      mm.tp_split = Dim::n;  // whole kv heads; ranks sharing one split its query heads
      mm.tp_units = cfg.kv();
      mm.tp_excess = Dim::m;
      mm.causal = Causal::none;
      mm.out_on_chip = flash && score;
      mm.a_on_chip = flash && !score;
    }
    for (ElementwiseSpec& e : l.elementwise_fwd)
      if (e.op == ElementwiseOp::softmax) {
        e.bytes = e.bytes / e.elements * scores;
        e.elements = scores;
      }
  }
  return m;
}

}  // namespace models
