#include "models/mlp_block.h"

#include "models/linear.h"
#include "models/size_math.h"

namespace models {

namespace {

const char* activation_why(const std::string& mlp) {
  if (mlp == "swiglu") return "SwiGLU backward";
  if (mlp == "geglu") return "GeGLU backward";
  if (mlp == "relu") return "ReLU backward";
  return "GELU backward";
}

}  // namespace

void add_mlp_params(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const std::string& f = n.f;
  l.params.push_back({f + ".w_up", d.D, d.F, ParamSplit::cols});
  if (shape.cfg->gated()) l.params.push_back({f + ".w_gate", d.D, d.F, ParamSplit::cols});
  l.params.push_back({f + ".w_down", d.F, d.D, ParamSplit::rows});
  if (shape.cfg->post_norms) l.params.push_back(norm_param(f + ".post_norm.scale", d.D));
}

std::string add_mlp_forward(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n,
                            const std::string& in, const std::string& in_grad, const std::string& out) {
  const std::string& f = n.f;
  const TransformerConfig& c = *shape.cfg;
  const bool gated = c.gated(), post = c.post_norms;
  const std::string act = f + "." + c.mlp;
  add_linear(l, {f + ".up", d.BT, d.D, d.F, f + ".w_up", TpRole::column, f + ".up.out", in_grad, {in}, {act + ".bwd"}});
  if (gated)
    add_linear(
        l,
        {f + ".gate", d.BT, d.D, d.F, f + ".w_gate", TpRole::column, f + ".gate.out", in_grad, {in}, {act + ".bwd"}});
  l.elementwise_fwd.push_back(make_elementwise(act, activation_op(c.mlp), Pass::forward, d.BT * d.F, true,
                                               f + ".act.out",
                                               gated ? Names{f + ".up", f + ".gate"} : Names{f + ".up"}));
  add_linear(l, {f + ".down",
                 d.BT,
                 d.F,
                 d.D,
                 f + ".w_down",
                 TpRole::row,
                 out,
                 f + ".act.out.grad",
                 {act},
                 post ? Names{f + ".post_norm.bwd"} : Names{}});
  if (!post) return f + ".down";
  l.elementwise_fwd.push_back(norm_forward(f + ".post_norm", d.BT * d.D, false, {f + ".down"}));
  return f + ".post_norm";
}

void add_mlp_backward(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const std::string& f = n.f;
  const TransformerConfig& c = *shape.cfg;
  if (c.post_norms) l.elementwise_bwd.push_back(norm_backward(f + ".post_norm", d.BT * d.D, false, {}));
  const std::string act = f + "." + c.mlp;
  l.elementwise_bwd.push_back(make_elementwise(act + ".bwd", activation_op(c.mlp), Pass::backward_data, d.BT * d.F,
                                               true, f + ".act.in.grad", {f + ".down.dX"}));
}

Names mlp_input_grads(const BlockShape& shape, const BlockNames& n) {
  return shape.cfg->gated() ? Names{n.f + ".up.dX", n.f + ".gate.dX"} : Names{n.f + ".up.dX"};
}

void add_mlp_stash(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n) {
  const std::string& f = n.f;
  const TransformerConfig& c = *shape.cfg;
  const std::uint64_t h = d.BT * d.F, b = kBf16Bytes;
  if (c.post_norms) l.stash.push_back({f + ".down.out", d.BT * d.D, b, "post-MLP norm backward"});
  if (c.gated()) l.stash.push_back({f + ".gate.out", h, b, activation_why(c.mlp)});
  l.stash.push_back({f + ".up.out", h, b, activation_why(c.mlp)});
  l.stash.push_back({f + ".act.out", h, b, "dW of down"});
}

}  // namespace models
