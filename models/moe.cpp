#include "models/moe.h"

#include <algorithm>
#include <cmath>

#include "models/linear.h"
#include "models/size_math.h"

namespace models {

namespace {

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

// GShard's dispatch and combine as the einsums MaxText runs (layers/moe.py
// dense_matmul), per group (sequence) of T tokens and E x C buffer rows:
//   masks     one-hot buffer position x gate weight      B x T x E x C
//   dispatch  "BSM,BSEC->EBCM": buffers = mask^T x       (E C, T, D)
//   combine   "EBCM,BSEC->BSM": y = cmask x buffers       (T, E C, D)
// and their backward: the buffers' gradient (E C, T, D), the combine
// mask's (T, D, E C: on to the gates), the input's (T, E C, D). One-hot
// products, not the model's work: kind dispatch, executed FLOPs only.
void add_einsum_routing(LayerSpec& l, const Dims& d, const std::string& f, std::uint64_t E, std::uint64_t C) {
  const std::uint64_t EC = checked_mul(E, C, "expert buffer rows");
  const std::uint64_t cells = checked_mul(d.BT, EC, "routing masks");
  const auto einsum = [&](const std::string& name, Pass pass, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                          const std::string& out, Names after) {
    MatmulSpec mm;
    mm.name = name;
    mm.kind = MatmulKind::dispatch;
    mm.pass = pass;
    mm.count = d.B;
    mm.m = m;
    mm.k = k;
    mm.n = n;
    mm.output = out;
    mm.after = std::move(after);
    mm.model_share = 0;
    (pass == Pass::forward ? l.forward : l.backward).push_back(mm);
  };
  l.elementwise_fwd.push_back(make_elementwise(f + ".masks", ElementwiseOp::routing_mask, Pass::forward, cells, false,
                                               f + ".masks.out", {f + ".gates"}));
  einsum(f + ".dispatch.einsum", Pass::forward, EC, d.T, d.D, f + ".buffers", {f + ".masks"});
  einsum(f + ".combine.einsum", Pass::forward, d.T, EC, d.D, f + ".combined.sum", {f + ".combine"});
  einsum(f + ".combine.einsum.dY", Pass::backward_data, EC, d.T, d.D, f + ".combined.grad.buffers", {});
  einsum(f + ".combine.einsum.dMask", Pass::backward_data, d.T, d.D, EC, f + ".masks.grad", {});
  einsum(f + ".dispatch.einsum.dX", Pass::backward_data, d.T, EC, d.D, f + ".dispatch.in.grad", {f + ".dispatch.bwd"});
  l.stash.push_back({f + ".masks.out", cells, kBf16Bytes + 1, "the combine (bf16) and dispatch (bool) masks"});
}

bool is_dense_mlp(const std::string& name, const std::string& f) { return name.compare(0, f.size() + 1, f + ".") == 0; }

}  // namespace

std::uint64_t einsum_capacity(const TransformerConfig& c, std::uint64_t seq) {
  if (c.capacity_factor <= 0) return seq;
  const double fair = std::ceil(double(checked_mul(seq, c.top_k, "routed tokens")) / double(c.experts));
  return static_cast<std::uint64_t>(std::max(fair * c.capacity_factor, c.capacity_factor));
}

std::uint64_t grouped_kernel_rows(std::uint64_t rows, std::uint64_t groups, std::uint64_t tile) {
  if (tile == 0 || rows == 0) return rows;
  const std::uint64_t tiles = (rows + tile - 1) / tile + std::max<std::uint64_t>(groups, 1) - 1;
  return checked_mul(tiles, tile, "grouped matmul rows");
}

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
// its experts (expert_matmul: batched), or one grouped matmul over all
// their tokens (grouped, MatmulSpec::grouped); the strategy sizes each
// expert by its routed tokens.
void add_moe(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n, std::uint64_t ordinal) {
  const TransformerConfig& c = *shape.cfg;
  const std::string &p = n.p, &f = n.f, e = f + ".experts", sh = f + ".shared";
  const bool gated = c.gated();  // SwiGLU or GeGLU
  const char* gate_why = c.mlp == "geglu" ? "GeGLU backward" : "SwiGLU backward";
  const ElementwiseOp act_op = activation_op(c.mlp);
  const bool grouped = c.expert_matmul == "grouped";
  const bool einsum = c.expert_matmul == "einsum";
  // Tensor parallelism of the experts (expert_tensor_split): each rank
  // holds every local expert's slice of F, up and gate column-parallel,
  // down row-parallel (its output a partial sum over the tensor ranks).
  const bool split = c.expert_tensor_split;
  const auto dense = [&](const auto& op) { return is_dense_mlp(op.name, f) || op.name == p + ".ln2.bwd"; };
  const auto drop = [&](auto& v) { v.erase(std::remove_if(v.begin(), v.end(), dense), v.end()); };
  drop(l.params);
  drop(l.forward);
  drop(l.backward);
  drop(l.elementwise_fwd);
  drop(l.elementwise_bwd);
  drop(l.stash);
  l.routing_layer = ordinal;

  const std::uint64_t E = c.experts, F = c.expert_width(), local = E / c.expert_shards;
  const std::uint64_t C = einsum ? einsum_capacity(c, d.T) : 0;
  const std::uint64_t m =
      einsum ? checked_mul(d.B, C, c.expert_shards, "expert buffers") : uniform_expert_tokens(c, d.BT);
  const std::uint64_t routed = checked_mul(local, m, "routed tokens");
  const std::uint64_t x = d.BT * d.D, gates = checked_mul(d.BT, E, "router logits");
  const std::uint64_t rd = checked_mul(routed, d.D, "routed activations");
  const std::uint64_t rf = checked_mul(routed, F, "expert activations");
  const auto fwd = Pass::forward;
  const auto bwd = Pass::backward_data;
  const std::string in = p + ".ln2", in_grad = in + ".out.grad";

  l.params.push_back({f + ".w_router", d.D, E, ParamSplit::replicated});
  for (const char* w : {"w_up", "w_gate", "w_down"}) {
    if (std::string(w) == "w_gate" && !gated) continue;
    const bool down = std::string(w) == "w_down";
    const ParamSplit tp = !split ? ParamSplit::replicated : down ? ParamSplit::rows : ParamSplit::cols;
    ParamSpec ps{e + "." + w, checked_mul(E, down ? F : d.D, "expert weights"), down ? d.D : F, tp};
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
  if (einsum) add_einsum_routing(l, d, f, E, C);
  l.exchange_fwd.push_back(
      {f + ".dispatch", true, rd, d.D, f + ".dispatched", {einsum ? f + ".dispatch.einsum" : f + ".gates"}});
  // The experts: a batched matmul over the chip's experts, m its tokens.
  const auto expert = [&](const std::string& name, std::uint64_t k, std::uint64_t n, const std::string& w,
                          const std::string& out, const std::string& grad, Names after, Names after_bwd, TpRole tp) {
    const std::size_t fw = l.forward.size(), bw = l.backward.size();
    add_linear(l,
               {name, m, k, n, w, split ? tp : TpRole::replicated, out, grad, std::move(after), std::move(after_bwd)});
    for (std::size_t j = fw; j < l.forward.size(); ++j) l.forward[j].tokens = Dim::m;
    for (std::size_t j = bw; j < l.backward.size(); ++j)
      l.backward[j].tokens = l.backward[j].pass == Pass::backward_weight ? Dim::k : Dim::m;
    for (auto* v : {&l.forward, &l.backward})
      for (std::size_t j = v == &l.forward ? fw : bw; j < v->size(); ++j) {
        MatmulSpec& mm = (*v)[j];
        if (einsum) {
          // Capacity-padded buffers: every expert computes all its rows,
          // however many the router fills.
          mm.tokens = Dim::none;
          mm.count = local;
          mm.model_share = std::min(1.0, double(uniform_expert_tokens(c, d.BT)) / double(m));
          continue;
        }
        if (!grouped) {
          mm.count = local;
          continue;
        }
        // One grouped matmul: all the chip's experts' tokens along `tokens`.
        mm.groups = local;
        mm.group_tile = c.grouped_tile;
        (mm.tokens == Dim::k ? mm.k : mm.m) = routed;
      }
  };
  const std::string act = e + "." + c.mlp;
  expert(e + ".up", d.D, F, e + ".w_up", e + ".up.out", f + ".dispatched.grad", {f + ".dispatch"}, {act + ".bwd"},
         TpRole::column);
  if (gated)
    expert(e + ".gate", d.D, F, e + ".w_gate", e + ".gate.out", f + ".dispatched.grad", {f + ".dispatch"},
           {act + ".bwd"}, TpRole::column);
  ElementwiseSpec a = make_elementwise(act, act_op, fwd, rf, split, e + ".act.out",
                                       gated ? Names{e + ".up", e + ".gate"} : Names{e + ".up"});
  a.routed_width = F;
  ef.push_back(a);
  expert(e + ".down", F, d.D, e + ".w_down", e + ".down.out", e + ".act.out.grad", {act}, {f + ".combine.bwd"},
         TpRole::row);
  l.exchange_fwd.push_back({f + ".combine", false, rd, d.D, f + ".combined", {e + ".down"}});
  Names sum{einsum ? f + ".combine.einsum" : f + ".combine", p + ".attn.residual"};
  Names ln2_after{einsum ? f + ".dispatch.einsum.dX" : f + ".dispatch.bwd", f + ".router.dX"};
  if (c.shared_experts) {
    const std::uint64_t SF = c.shared_experts * F;
    const std::string sact = sh + "." + c.mlp;
    add_linear(
        l, {sh + ".up", d.BT, d.D, SF, sh + ".w_up", TpRole::column, sh + ".up.out", in_grad, {in}, {sact + ".bwd"}});
    if (gated)
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
                                  gated ? Names{sh + ".up", sh + ".gate"} : Names{sh + ".up"}));
    add_linear(
        l,
        {sh + ".down", d.BT, SF, d.D, sh + ".w_down", TpRole::row, sh + ".down.out", sh + ".act.out.grad", {sact}, {}});
    eb.push_back(make_elementwise(sact + ".bwd", act_op, bwd, d.BT * SF, true, sh + ".act.in.grad", {sh + ".down.dX"}));
    sum.push_back(sh + ".down");
    ln2_after.push_back(sh + ".up.dX");
    if (gated) ln2_after.push_back(sh + ".gate.dX");
    l.stash.push_back({sh + ".up.out", d.BT * SF, kBf16Bytes, "shared experts' activation backward"});
    if (gated) l.stash.push_back({sh + ".gate.out", d.BT * SF, kBf16Bytes, gate_why});
    l.stash.push_back({sh + ".act.out", d.BT * SF, kBf16Bytes, "dW of the shared experts' down"});
  }
  // The gate-weighted sum of each token's expert outputs, into the residual.
  ef.push_back(make_elementwise(f + ".residual", ElementwiseOp::residual_add, fwd, x, false, p + ".out", sum));

  // Backward: the output gradient to the experts, through them, back.
  l.exchange_bwd.push_back(
      {f + ".combine.bwd", true, rd, d.D, f + ".combined.grad", einsum ? Names{f + ".combine.einsum.dY"} : Names{}});
  ElementwiseSpec ab = make_elementwise(act + ".bwd", act_op, bwd, rf, split, e + ".act.in.grad", {e + ".down.dX"});
  ab.routed_width = F;
  eb.push_back(ab);
  l.exchange_bwd.push_back({f + ".dispatch.bwd", false, rd, d.D, f + ".dispatched.grad.back",
                            gated ? Names{e + ".up.dX", e + ".gate.dX"} : Names{e + ".up.dX"}});
  eb.push_back(make_elementwise(f + ".gates.bwd", ElementwiseOp::softmax, bwd, gates, false, f + ".logits.grad",
                                {einsum ? f + ".combine.einsum.dMask" : f + ".combine.bwd"}));
  eb.push_back(
      make_elementwise(p + ".ln2.bwd", ElementwiseOp::layernorm, bwd, x, false, p + ".ln2.in.grad", ln2_after));
  eb.push_back(make_elementwise(f + ".residual.bwd", ElementwiseOp::residual_add, bwd, x, false,
                                p + ".attn.residual.out.grad", {p + ".ln2.bwd"}));

  const std::uint64_t b = kBf16Bytes;
  l.stash.push_back({f + ".gates.out", gates, b, "router softmax backward, the gate-weighted sum"});
  l.stash.push_back({f + ".dispatched", rd, b, "dW of the experts' up"});
  if (gated) l.stash.push_back({e + ".gate.out", rf, b, gate_why});
  l.stash.push_back({e + ".up.out", rf, b, gated ? gate_why : "activation backward"});
  l.stash.push_back({e + ".act.out", rf, b, "dW of the experts' down"});
  l.stash.push_back({f + ".combined", rd, b, "gradient of the gates (the weighted sum)"});
}

}  // namespace models
