#include "models/lm_head.h"

#include "models/linear.h"
#include "models/size_math.h"

namespace models {

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

LayerSpec output_layer(const Dims& d, const TransformerConfig& c) {
  const bool tied = c.tied_embeddings;
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
  // accumulates, transposed, into its gradient; a table split over d_model
  // makes the logits row-parallel, partial sums over the whole vocabulary
  // that the tensor ranks all-reduce.
  const bool over_d = tied && c.embedding_shard == "d_model";
  add_linear(l, {"output.logits",
                 d.BT,
                 d.D,
                 d.V,
                 tied ? "embedding.table" : "output.unembedding",
                 over_d ? TpRole::row : TpRole::column,
                 "output.logits",
                 "output.norm.out.grad",
                 {"output.norm"},
                 {}});
  if (c.vocab_tiles > 1) {
    // Each chunk's logits again, for its gradient (MaxText's vocabulary
    // tiling keeps only the final norm's output).
    MatmulSpec again = l.forward.back();
    again.name = "output.logits.recompute";
    again.pass = Pass::backward_data;
    again.recompute = true;
    again.after = {};
    l.backward.push_back(again);
  }
  l.elementwise_bwd.push_back(make_elementwise("output.norm.bwd", ElementwiseOp::layernorm, Pass::backward_data, x,
                                               false, "output.in.grad", {"output.logits.dX"}));
  l.stash = {{"output.in", x, kBf16Bytes, "final LN backward"},
             {"output.norm.out", x, kBf16Bytes, "dW of the unembedding"}};
  l.output_bytes = checked_mul(d.BT, d.V, kBf16Bytes, "bytes");
  l.input_grad_bytes = checked_mul(x, kBf16Bytes, "bytes");
  return l;
}

LayerSpec loss_layer(const Dims& d, const TransformerConfig& c) {
  const std::uint64_t logits = d.BT * d.V;
  // One chunk's logits at a time (vocabulary tiling), rounded up.
  const std::uint64_t held = (logits + c.vocab_tiles - 1) / c.vocab_tiles;
  LayerSpec l;
  l.name = "loss";
  l.kind = LayerKind::loss;
  // Vocabulary-parallel cross-entropy (Megatron): each rank handles its slice
  // of the vocabulary and exchanges only per-token max and sum.
  l.elementwise_fwd.push_back(make_elementwise("loss.cross_entropy", ElementwiseOp::cross_entropy, Pass::forward,
                                               logits, true, "loss.probs", {}));
  l.elementwise_bwd.push_back(make_elementwise("loss.cross_entropy.bwd", ElementwiseOp::cross_entropy,
                                               Pass::backward_data, logits, true, "output.logits.grad", {}));
  l.stash = {{"loss.probs", held, kBf16Bytes,
              c.vocab_tiles > 1 ? "dlogits = probs - onehot(labels), one chunk of tokens at a time"
                                : "dlogits = probs - onehot(labels)"},
             {"loss.labels", d.BT, kTokenIdBytes, "dlogits = probs - onehot(labels)"}};
  l.input_grad_bytes = checked_mul(logits, kBf16Bytes, "bytes");
  return l;
}

}  // namespace models
