#include "models/mla.h"

#include "models/linear.h"
#include "models/size_math.h"

namespace models {

namespace {

struct MlaDims {
  std::uint64_t q_lora, kv_lora, rope, kv_up;  // kv_up: heads x (nope + v_head_dim)
};

MlaDims mla_dims(const Dims& d, const TransformerConfig& c) {
  return {c.q_lora_rank, c.kv_lora_rank, c.qk_rope_head_dim,
          checked_mul(d.N, c.qk_nope_head_dim + c.v_head_dim, "heads x (qk_nope_head_dim + v_head_dim)")};
}

}  // namespace

void add_mla_params(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const std::string& a = n.a;
  const MlaDims m = mla_dims(d, *shape.cfg);
  if (m.q_lora) {
    l.params.push_back({a + ".w_q_down", d.D, m.q_lora, ParamSplit::replicated});
    l.params.push_back(norm_param(a + ".q_latent_norm.scale", m.q_lora));
    l.params.push_back({a + ".w_q", m.q_lora, d.NH, ParamSplit::cols});
  } else {
    l.params.push_back({a + ".w_q", d.D, d.NH, ParamSplit::cols});
  }
  l.params.push_back({a + ".w_kv_down", d.D, m.kv_lora + m.rope, ParamSplit::replicated});
  l.params.push_back(norm_param(a + ".kv_latent_norm.scale", m.kv_lora));
  l.params.push_back({a + ".w_kv_up", m.kv_lora, m.kv_up, ParamSplit::cols});
}

Names add_mla_projections(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const std::string &p = n.p, &a = n.a;
  const MlaDims m = mla_dims(d, *shape.cfg);
  const std::string ln1_grad = p + ".ln1.out.grad";
  if (m.q_lora) {
    add_linear(l, {a + ".q_down",
                   d.BT,
                   d.D,
                   m.q_lora,
                   a + ".w_q_down",
                   TpRole::replicated,
                   a + ".q_latent",
                   ln1_grad,
                   {p + ".ln1"},
                   {a + ".q_latent_norm.bwd"}});
    l.elementwise_fwd.push_back(norm_forward(a + ".q_latent_norm", d.BT * m.q_lora, false, {a + ".q_down"}));
    add_linear(l, {a + ".q",
                   d.BT,
                   m.q_lora,
                   d.NH,
                   a + ".w_q",
                   TpRole::column,
                   a + ".q",
                   a + ".q_latent_norm.out.grad",
                   {a + ".q_latent_norm"},
                   {a + ".score.dQ"}});
  } else {
    add_linear(
        l,
        {a + ".q", d.BT, d.D, d.NH, a + ".w_q", TpRole::column, a + ".q", ln1_grad, {p + ".ln1"}, {a + ".score.dQ"}});
  }
  // The rotary half of the keys comes straight from the down-projection,
  // so dK flows back into it as well as through W_UKV.
  add_linear(l, {a + ".kv_down",
                 d.BT,
                 d.D,
                 m.kv_lora + m.rope,
                 a + ".w_kv_down",
                 TpRole::replicated,
                 a + ".kv_latent",
                 ln1_grad,
                 {p + ".ln1"},
                 {a + ".kv_latent_norm.bwd", a + ".score.dK"}});
  l.elementwise_fwd.push_back(norm_forward(a + ".kv_latent_norm", d.BT * m.kv_lora, false, {a + ".kv_down"}));
  add_linear(l, {a + ".kv_up",
                 d.BT,
                 m.kv_lora,
                 m.kv_up,
                 a + ".w_kv_up",
                 TpRole::column,
                 a + ".kv",
                 a + ".kv_latent_norm.out.grad",
                 {a + ".kv_latent_norm"},
                 {a + ".score.dK", a + ".context.dV"}});
  return {a + ".q", a + ".kv_up", a + ".kv_down"};
}

Names mla_input_grads(const BlockShape& shape, const BlockNames& n) {
  return {n.a + (shape.cfg->q_lora_rank ? ".q_down.dX" : ".q.dX"), n.a + ".kv_down.dX"};
}

void add_mla_backward_norms(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const MlaDims m = mla_dims(d, *shape.cfg);
  if (m.q_lora)
    l.elementwise_bwd.push_back(norm_backward(n.a + ".q_latent_norm", d.BT * m.q_lora, false, {n.a + ".q.dX"}));
  l.elementwise_bwd.push_back(norm_backward(n.a + ".kv_latent_norm", d.BT * m.kv_lora, false, {n.a + ".kv_up.dX"}));
}

void add_mla_stash(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const std::string& a = n.a;
  const MlaDims m = mla_dims(d, *shape.cfg);
  const std::uint64_t b = kBf16Bytes;
  if (m.q_lora) {
    l.stash.push_back({a + ".q_latent", d.BT * m.q_lora, b, "query latent norm backward"});
    l.stash.push_back({a + ".q_latent_norm.out", d.BT * m.q_lora, b, "dW of the query up-projection"});
  }
  l.stash.push_back({a + ".kv_latent", checked_mul(d.BT, m.kv_lora + m.rope, "latents"), b,
                     "key/value latent norm backward; its rotary part is the keys' shared half (dQ = dS K)"});
  l.stash.push_back({a + ".kv_latent_norm.out", d.BT * m.kv_lora, b, "dW of the key/value up-projection"});
  l.stash.push_back({a + ".q", d.BT * d.NH, b, "dK = dS^T Q"});
  l.stash.push_back({a + ".kv", checked_mul(d.BT, m.kv_up, "keys and values"), b, "dQ = dS K (k_nope), dP = dO V^T"});
}

}  // namespace models
