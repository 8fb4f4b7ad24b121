#include "models/mlp.h"

#include <stdexcept>

#include "models/linear.h"
#include "models/size_math.h"

namespace models {

namespace {

ElementwiseOp mlp_activation(const std::string& name) {
  if (name == "relu") return ElementwiseOp::relu;
  if (name == "gelu") return ElementwiseOp::gelu;
  throw std::invalid_argument("build_mlp: activation must be relu or gelu, got '" + name + "'");
}

LayerSpec dense_layer(std::size_t i, std::uint64_t batch, std::uint64_t in, std::uint64_t out, bool last,
                      ElementwiseOp act) {
  const std::string p = "dense" + std::to_string(i);
  const TpRole tp = i % 2 == 0 ? TpRole::column : TpRole::row;
  const bool col = tp == TpRole::column;  // output features split across TP ranks
  const std::uint64_t y = checked_mul(batch, out, "mlp activations");
  const std::string act_name = p + "." + to_string(act);

  LayerSpec l;
  l.name = p;
  l.kind = LayerKind::dense;
  l.params = {{p + ".w", in, out, col ? ParamSplit::cols : ParamSplit::rows},
              // A row-parallel layer adds its bias once, after the all-reduce.
              {p + ".b", 1, out, col ? ParamSplit::cols : ParamSplit::replicated}};

  add_linear(l, Linear{p + ".matmul",
                       batch,
                       in,
                       out,
                       p + ".w",
                       tp,
                       p + ".xw",
                       i == 0 ? "" : p + ".in.grad",
                       {},
                       last ? std::vector<std::string>{} : std::vector<std::string>{act_name + ".bwd"}});
  l.elementwise_fwd.push_back(
      make_elementwise(p + ".bias", ElementwiseOp::bias_add, Pass::forward, y, col, p + ".z", {p + ".matmul"}));
  if (!last) {
    l.elementwise_fwd.push_back(make_elementwise(act_name, act, Pass::forward, y, col, p + ".out", {p + ".bias"}));
    l.elementwise_bwd.push_back(
        make_elementwise(act_name + ".bwd", act, Pass::backward_data, y, col, p + ".z.grad", {}));
  }
  l.elementwise_bwd.push_back(
      make_elementwise(p + ".bias.bwd", ElementwiseOp::bias_add, Pass::backward_weight, y, col, p + ".b.grad",
                       last ? std::vector<std::string>{} : std::vector<std::string>{act_name + ".bwd"}));

  l.stash.push_back({p + ".in", checked_mul(batch, in, "mlp stash"), kBf16Bytes, "dW = X^T dY"});
  // GELU's derivative needs its input. ReLU's needs only the sign of its
  // output, which is the next layer's input and stashed there already.
  if (!last && act == ElementwiseOp::gelu) l.stash.push_back({p + ".z", y, kBf16Bytes, "GELU backward"});

  l.output_bytes = checked_mul(y, kBf16Bytes, "mlp bytes");
  l.input_grad_bytes = i == 0 ? 0 : checked_mul(batch, in, kBf16Bytes, "mlp bytes");
  return l;
}

LayerSpec loss_layer(std::uint64_t batch, std::uint64_t classes, bool sharded) {
  const std::uint64_t logits = checked_mul(batch, classes, "mlp loss");
  LayerSpec l;
  l.name = "loss";
  l.kind = LayerKind::loss;
  l.elementwise_fwd.push_back(make_elementwise("loss.cross_entropy", ElementwiseOp::cross_entropy, Pass::forward,
                                               logits, sharded, "loss.probs", {}));
  l.elementwise_bwd.push_back(make_elementwise("loss.cross_entropy.bwd", ElementwiseOp::cross_entropy,
                                               Pass::backward_data, logits, sharded, "loss.logits.grad", {}));
  l.stash.push_back({"loss.probs", logits, kBf16Bytes, "dlogits = probs - onehot(labels)"});
  l.stash.push_back({"loss.labels", batch, kTokenIdBytes, "dlogits = probs - onehot(labels)"});
  l.input_grad_bytes = checked_mul(logits, kBf16Bytes, "mlp bytes");
  return l;
}

}  // namespace

ModelSpec build_mlp(const MlpConfig& cfg, std::uint64_t batch) {
  if (cfg.widths.size() < 2) throw std::invalid_argument("build_mlp: need at least 2 widths (input and output)");
  for (auto w : cfg.widths)
    if (w == 0) throw std::invalid_argument("build_mlp: widths must be >= 1");
  if (batch == 0) throw std::invalid_argument("build_mlp: batch must be >= 1");
  const ElementwiseOp act = mlp_activation(cfg.activation);

  ModelSpec m;
  m.type = "mlp";
  m.batch = batch;
  m.seq_len = 1;
  const std::size_t n = cfg.widths.size() - 1;
  for (std::size_t i = 0; i < n; ++i)
    m.layers.push_back(dense_layer(i, batch, cfg.widths[i], cfg.widths[i + 1], i + 1 == n, act));
  m.layers.push_back(loss_layer(batch, cfg.widths.back(), (n - 1) % 2 == 0));
  return m;
}

}  // namespace models
