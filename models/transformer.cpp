#include "models/transformer.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/attention.h"
#include "models/block_parts.h"
#include "models/lm_head.h"
#include "models/mla.h"
#include "models/mlp_block.h"
#include "models/moe.h"
#include "models/size_math.h"

namespace models {

namespace {

// One block, pre-norm: x + Attn(LN1(x)), then h + MLP(LN2(h)) (serial), or
// x + Attn(LN(x)) + MLP(LN(x)) (parallel); the pieces in attention.h,
// mla.h, mlp_block.h and moe.h, assembled in execution order.
LayerSpec block_layer(std::uint64_t i, const Dims& d, const BlockShape& shape, std::uint64_t moe_ordinal) {
  const BlockNames n(i);
  const std::string &p = n.p, &a = n.a, &f = n.f;
  const TransformerConfig& c = *shape.cfg;
  const bool parallel = shape.parallel, mla = c.mla();
  const std::uint64_t x = d.BT * d.D;
  LayerSpec l;
  l.name = p;
  l.kind = LayerKind::transformer_block;
  l.params = {norm_param(p + ".ln1.scale", d.D), norm_param(p + ".ln1.bias", d.D)};
  if (mla)
    add_mla_params(l, d, shape, n);
  else
    add_gqa_params(l, d, shape, n);
  add_output_projection_params(l, d, shape, n);
  if (!parallel) {
    l.params.push_back(norm_param(p + ".ln2.scale", d.D));
    l.params.push_back(norm_param(p + ".ln2.bias", d.D));
  }
  add_mlp_params(l, d, shape, n);

  auto& ef = l.elementwise_fwd;
  auto& eb = l.elementwise_bwd;
  const auto fwd = Pass::forward;
  const auto bwd = Pass::backward_data;
  // Parallel blocks (PaLM) feed attention and MLP from one layer norm and
  // add both to the residual stream at once: the two row-parallel outputs
  // (O and down) sum into one tensor, so tensor parallelism all-reduces once
  // forward, and the input gradients of Q, K, V, up and gate sum into one,
  // all-reduced once backward.
  const std::string mlp_in = parallel ? p + ".ln1" : p + ".ln2";
  const std::string mlp_in_grad = mlp_in + ".out.grad";
  const std::string attn_out = parallel ? p + ".mix" : a + ".out";
  const std::string mlp_out = parallel ? p + ".mix" : f + ".down.out";

  // --- attention: x + W_o softmax(Q K^T) V ---
  ef.push_back(norm_forward(p + ".ln1", x, false, {}));
  const std::string attn_bwd_after = parallel ? p + ".residual.bwd" : f + ".residual.bwd";
  const Names q_ready = mla ? add_mla_projections(l, d, shape, n) : add_gqa_projections(l, d, shape, n);
  add_attention_core_forward(l, d, shape, n, q_ready, {mla ? a + ".kv_up" : a + ".v"});
  add_output_projection(l, d, shape, n, attn_out, attn_bwd_after);

  // --- MLP: h + W_down act(LN2(h) W_up [, LN2(h) W_gate]) ---
  if (!parallel) ef.push_back(norm_forward(p + ".ln2", x, false, {a + ".residual"}));
  const std::string mlp_last = add_mlp_forward(l, d, shape, n, mlp_in, mlp_in_grad, mlp_out);
  if (parallel)
    ef.push_back(make_elementwise(p + ".residual", ElementwiseOp::residual_add, fwd, x, false, p + ".out",
                                  {mlp_last, a + ".o"}));
  else
    ef.push_back(make_elementwise(f + ".residual", ElementwiseOp::residual_add, fwd, x, false, p + ".out",
                                  {mlp_last, a + ".residual"}));

  // --- backward elementwise, in execution order (the matmuls' order is in
  // their `after` lists) ---
  add_mlp_backward(l, d, shape, n);
  if (parallel) {
    // dx = dY (skip path) + LN backward of the summed branch gradients.
    eb.push_back(
        make_elementwise(p + ".residual.bwd", ElementwiseOp::residual_add, bwd, x, false, p + ".mix.grad", {}));
  } else {
    eb.push_back(norm_backward(p + ".ln2", x, false, mlp_input_grads(shape, n)));
    // dh = dY (skip path of the MLP residual) + LN2 backward (branch path)
    eb.push_back(make_elementwise(f + ".residual.bwd", ElementwiseOp::residual_add, bwd, x, false,
                                  a + ".residual.out.grad", {p + ".ln2.bwd"}));
  }
  add_attention_core_backward(l, d, shape, n);
  Names ln1_grads = mla ? mla_input_grads(shape, n) : gqa_input_grads(n);
  if (mla)
    add_mla_backward_norms(l, d, shape, n);
  else
    add_gqa_backward_norms(l, d, shape, n);
  if (parallel) {
    const Names m = mlp_input_grads(shape, n);
    ln1_grads.insert(ln1_grads.end(), m.begin(), m.end());
  }
  eb.push_back(norm_backward(p + ".ln1", x, false, ln1_grads));
  // dx = dh (skip path of the attention residual) + LN1 backward
  if (parallel)
    eb.push_back(make_elementwise(p + ".ln1.residual.bwd", ElementwiseOp::residual_add, bwd, x, false, p + ".in.grad",
                                  {p + ".ln1.bwd", p + ".residual.bwd"}));
  else
    eb.push_back(make_elementwise(a + ".residual.bwd", ElementwiseOp::residual_add, bwd, x, false, p + ".in.grad",
                                  {p + ".ln1.bwd", f + ".residual.bwd"}));

  // Everything the backward pass reads, saved in BF16: Korthikanti et al.
  // 2022 (arXiv:2205.05198, section 4.1) without the dropout masks and
  // outputs, i.e. 2 (4D + 4NH + 2F) bytes + 2NT per token (+2F for a gated
  // MLP) for multi-head, materialized attention. Grouped-query attention
  // keeps K and V at kv_heads x head_dim; flash attention keeps, instead of
  // the T x T probabilities, the softmax's log-sum-exp per row (FP32).
  const std::uint64_t b = kBf16Bytes;
  l.stash.push_back({p + ".in", x, b, "LN1 backward"});
  l.stash.push_back({p + ".ln1.out", x, b,
                     mla        ? "dW of the query and key/value down-projections"
                     : parallel ? "dW of Q, K, V, up and gate"
                                : "dW of Q, K, V projections"});
  if (mla)
    add_mla_stash(l, d, shape, n);
  else
    add_gqa_stash(l, d, shape, n);
  add_attention_core_stash(l, d, shape, n);
  add_output_projection_stash(l, d, shape, n);
  if (!parallel) {
    l.stash.push_back({a + ".residual.out", x, b, "LN2 backward"});
    l.stash.push_back({p + ".ln2.out", x, b, c.gated() ? "dW of up and gate" : "dW of up"});
  }
  add_mlp_stash(l, d, shape, n);

  if (shape.moe) add_moe(l, d, shape, n, moe_ordinal);
  l.output_bytes = checked_mul(x, kBf16Bytes, "bytes");
  l.input_grad_bytes = l.output_bytes;
  return l;
}

void check_config(const TransformerConfig& cfg, std::uint64_t batch) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument("build_transformer: " + what); };
  const std::pair<const char*, std::uint64_t> sizes[] = {
      {"layers", cfg.layers},   {"d_model", cfg.d_model}, {"d_ff", cfg.d_ff}, {"heads", cfg.heads},
      {"seq_len", cfg.seq_len}, {"vocab", cfg.vocab},     {"batch", batch},   {"vocab_tiles", cfg.vocab_tiles}};
  for (const auto& [name, v] : sizes)
    if (v == 0) fail(std::string(name) + " must be >= 1");
  if (cfg.mlp != "relu" && cfg.mlp != "gelu" && cfg.mlp != "swiglu" && cfg.mlp != "geglu")
    fail("mlp must be relu, gelu, swiglu or geglu, got '" + cfg.mlp + "'");
  if (cfg.mla()) {
    if (cfg.qk_nope_head_dim + cfg.qk_rope_head_dim == 0 || cfg.v_head_dim == 0)
      fail("multi-head latent attention needs qk_nope_head_dim + qk_rope_head_dim and v_head_dim >= 1");
    if (cfg.qk_norm) fail("qk_norm is for grouped-query attention; latent attention has its own norms");
  } else {
    if (cfg.head_dim == 0) fail("head_dim must be >= 1");
    if (cfg.q_lora_rank || cfg.qk_nope_head_dim || cfg.qk_rope_head_dim || cfg.v_head_dim)
      fail("q_lora_rank and the qk/v head dims configure latent attention: they need kv_lora_rank > 0");
  }
  if (cfg.heads % cfg.kv() != 0) fail("kv_heads must divide heads");
  if (cfg.attention != "materialized" && cfg.attention != "flash") fail("attention must be materialized or flash");
  if (cfg.block != "serial" && cfg.block != "parallel") fail("block must be serial or parallel");
  if (cfg.post_norms && cfg.block != "serial") fail("post_norms need block: serial");
  if (cfg.sliding_window_pattern && !cfg.sliding_window) fail("sliding_window_pattern needs a sliding_window");
  if (cfg.moe()) {
    if (cfg.block != "serial") fail("experts need block: serial");
    if (cfg.post_norms) fail("post_norms are not modelled with experts");
    if (cfg.top_k == 0 || cfg.top_k > cfg.experts) fail("top_k must be between 1 and experts");
    if (cfg.expert_shards == 0 || cfg.experts % cfg.expert_shards != 0)
      fail("the expert-parallel chips must divide the experts");
    if (cfg.moe_layer_step == 0) fail("moe_layer_step must be >= 1");
    if (cfg.expert_matmul != "batched" && cfg.expert_matmul != "grouped" && cfg.expert_matmul != "einsum")
      fail("expert_matmul must be batched, grouped or einsum");
    if (cfg.expert_matmul == "einsum" && cfg.capacity_factor <= 0)
      fail("expert_matmul: einsum fills capacity-padded buffers: it needs a capacity_factor > 0");
  }
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
  check_config(cfg, batch);

  const Dims d(cfg, batch);
  ModelSpec m;
  m.type = "transformer";
  m.batch = batch;
  m.seq_len = cfg.seq_len;
  m.layers.reserve(cfg.layers + 3);
  m.layers.push_back(embedding_layer(d));
  std::uint64_t moe_ordinal = 0;
  for (std::uint64_t i = 0; i < cfg.layers; ++i) {
    BlockShape shape;
    shape.cfg = &cfg;
    shape.flash = cfg.attention == "flash";
    shape.parallel = cfg.block == "parallel";
    shape.moe = cfg.moe_layer(i);
    // A window as wide as the sequence masks nothing.
    shape.window = cfg.attended(i, cfg.seq_len) < cfg.seq_len ? cfg.sliding_window : 0;
    m.layers.push_back(block_layer(i, d, shape, moe_ordinal));
    if (shape.moe) ++moe_ordinal;
  }
  m.layers.push_back(output_layer(d, cfg));
  m.layers.push_back(loss_layer(d, cfg));
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

namespace {

// Shapes attention matmul `mm` (Q K^T or P V) as `rows` query rows of each
// of `instances` products with `keys` cached keys, the instances folded
// along n (build_transformer_decode's comment); a query sees every key (no
// mask). Returns the scores it computes.
std::uint64_t fold_attention(MatmulSpec& mm, const TransformerConfig& cfg, std::uint64_t rows, std::uint64_t instances,
                             std::uint64_t keys) {
  const bool flash = cfg.attention == "flash";
  const std::uint64_t folded = checked_mul(instances, keys, "cached keys");
  // scores = q_group (group x H) K^T (H x context), context = P (group x context) V (context x Hv),
  // per sequence and kv head.
  const bool score = mm.kind == MatmulKind::attention_score;
  mm.count = 1;
  mm.m = rows;
  mm.k = score ? cfg.qk_head_dim() : keys;
  mm.n = score ? folded : checked_mul(instances, cfg.v_dim(), "attention outputs");
  mm.tp_split = Dim::n;  // whole kv heads; ranks sharing one split its query heads
  mm.tp_units = cfg.kv();
  mm.tp_excess = Dim::m;
  mm.causal = Causal::none;
  mm.window = 0;
  mm.out_on_chip = flash && score;
  mm.a_on_chip = flash && !score;
  return checked_mul(folded, rows, "attention scores");
}

void set_softmax(LayerSpec& l, std::uint64_t scores) {
  for (ElementwiseSpec& e : l.elementwise_fwd)
    if (e.op == ElementwiseOp::softmax) {
      e.bytes = e.bytes / e.elements * scores;
      e.elements = scores;
    }
}

}  // namespace

ModelSpec build_transformer_decode(const TransformerConfig& cfg, std::uint64_t batch, std::uint64_t context) {
  if (context == 0) throw std::invalid_argument("build_transformer_decode: context must be >= 1");
  TransformerConfig one = cfg;
  one.seq_len = 1;
  ModelSpec m = build_transformer(one, batch);
  m.layers.pop_back();  // the loss
  const std::uint64_t group = cfg.heads / cfg.kv();
  const std::uint64_t instances = checked_mul(batch, cfg.kv(), "batch x kv_heads");
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    LayerSpec& l = m.layers[i];
    forward_only(l);
    // A block (layers[1 + b] is block b) reads the cached keys it attends
    // to: the window's on a local block.
    const std::uint64_t cached = l.kind == LayerKind::transformer_block ? cfg.attended(i - 1, context) : context;
    std::uint64_t scores = 0;
    for (MatmulSpec& mm : l.forward)
      if (is_attention(mm.kind)) scores = fold_attention(mm, cfg, group, instances, cached);
    if (scores > 0) set_softmax(l, scores);
  }
  return m;
}

ModelSpec build_transformer_mixed(const TransformerConfig& cfg, std::uint64_t batch, std::uint64_t context,
                                  const std::vector<PromptChunk>& chunks) {
  if (chunks.empty()) return build_transformer_decode(cfg, batch, context);
  if (batch > 0 && context == 0) throw std::invalid_argument("build_transformer_mixed: context must be >= 1");
  std::uint64_t rows = batch;
  for (const PromptChunk& c : chunks) {
    if (c.tokens == 0) throw std::invalid_argument("build_transformer_mixed: an empty chunk");
    rows = checked_add(rows, c.tokens, "tokens");
  }
  TransformerConfig one = cfg;
  one.seq_len = 1;
  ModelSpec m = build_transformer(one, rows);
  m.layers.pop_back();  // the loss
  const std::uint64_t group = cfg.heads / cfg.kv();
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    LayerSpec& l = m.layers[i];
    forward_only(l);
    if (l.kind != LayerKind::transformer_block) continue;
    std::vector<MatmulSpec> ops;
    std::uint64_t scores = 0;
    for (MatmulSpec& mm : l.forward) {
      if (!is_attention(mm.kind)) {
        ops.push_back(mm);
        continue;
      }
      // Each chunk's queries (group x tokens rows a kv head) over the keys
      // they see under the causal mask: prior + j for the j-th, prior +
      // (tokens + 1) / 2 on the mean (a flash kernel skips masked blocks).
      // The last op keeps the block's own name, which the ops after it
      // wait for; the others run before it on the MXU.
      for (std::size_t j = 0; j < chunks.size(); ++j) {
        const bool last = batch == 0 && j + 1 == chunks.size();
        MatmulSpec op = mm;
        if (!last) {
          op.name += ".chunk" + std::to_string(j);
          op.output += ".chunk" + std::to_string(j);
        }
        const std::uint64_t keys = cfg.attended(i - 1, chunks[j].prior + (chunks[j].tokens + 1) / 2);
        scores += fold_attention(op, cfg, checked_mul(group, chunks[j].tokens, "chunk rows"), cfg.kv(), keys);
        ops.push_back(op);
      }
      if (batch > 0) {
        scores += fold_attention(mm, cfg, group, checked_mul(batch, cfg.kv(), "batch x kv_heads"),
                                 cfg.attended(i - 1, context));
        ops.push_back(mm);
      }
    }
    l.forward = ops;
    set_softmax(l, scores);
  }
  // Logits for each decoding sequence and each chunk's last token (vLLM
  // samples every scheduled request's last token, keeping only finished
  // prompts').
  LayerSpec& out = m.layers.back();
  const std::uint64_t sampled = batch + chunks.size();
  for (MatmulSpec& mm : out.forward)
    if (mm.name == "output.logits") mm.m = sampled;
  out.output_bytes = checked_mul(sampled, cfg.vocab, kBf16Bytes, "bytes");
  return m;
}

}  // namespace models
