#include "workloads/maxtext/flops.h"

#include <algorithm>
#include <cmath>

namespace workloads {

double maxtext_step_tflops(const MaxTextConfig& c, MaxTextFlopCount version) {
  const bool causal = version == MaxTextFlopCount::causal;
  const auto& m = c.model;
  const double b = c.per_device_batch_size, s = static_cast<double>(c.max_target_length), t = b * s;
  const double emb = static_cast<double>(m.emb_dim), heads = static_cast<double>(m.num_query_heads);
  const double hd = static_cast<double>(m.head_dim), acts = static_cast<double>(m.mlp_activations.size());
  auto mlp = [&](double width) { return 2 * t * width * emb * acts + 2 * t * width * emb; };
  const bool routed_and_shared = m.decoder_block == DecoderBlock::deepseek || m.decoder_block == DecoderBlock::llama4;
  const double gate = 2 * t * emb * static_cast<double>(m.num_experts);
  double ffn = 0, attention = 0;
  for (const auto& layer : m.layers()) {
    if (!m.moe()) {
      ffn += mlp(static_cast<double>(m.mlp_dim));
    } else if (!routed_and_shared) {
      ffn += gate + mlp(static_cast<double>(m.mlp_dim)) * static_cast<double>(m.num_experts_per_tok);
    } else if (layer.moe) {
      const double expert = mlp(static_cast<double>(m.moe_mlp_dim));
      ffn += gate + expert * static_cast<double>(m.shared_experts + m.num_experts_per_tok);
    } else {
      ffn += mlp(static_cast<double>(m.mlp_dim));
    }
    double keys = s * s;  // query-key pairs of one sequence
    if (causal && layer.attention == AttentionType::local_sliding)
      keys = s * std::min(s, static_cast<double>(layer.window));
    if (causal && layer.attention == AttentionType::chunk) {
      const double w = static_cast<double>(layer.window), n = std::floor(s / w), r = s - n * w;
      keys = n * w * w + r * r;
    }
    const double per_pair =
        m.attention_type == AttentionType::mla
            ? 2 * heads * static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim)
            : 4 * heads * hd;
    attention += b * keys * per_pair * (causal ? 0.5 : 1.0);
  }
  double qkv = 2 * t * emb * (heads + 2 * static_cast<double>(m.num_kv_heads)) * hd;
  double proj = 2 * t * emb * heads * hd;
  if (m.attention_type == AttentionType::mla) {
    const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double q_rank = static_cast<double>(m.q_lora_rank), kv_rank = static_cast<double>(m.kv_lora_rank);
    qkv = 2 * t * (emb * q_rank + q_rank * heads * qk) +
          2 * t *
              (emb * (kv_rank + static_cast<double>(m.qk_rope_head_dim)) +
               kv_rank * heads * static_cast<double>(m.qk_nope_head_dim + m.v_head_dim));
    proj = 2 * t * emb * heads * static_cast<double>(m.v_head_dim);
  }
  const double layers = static_cast<double>(m.num_decoder_layers);
  const double embedding = 2 * t * emb * static_cast<double>(m.vocab_size);
  const double steps = static_cast<double>(c.gradient_accumulation_steps);
  return ((ffn + (qkv + proj) * layers + embedding) * 3 + attention * 3) * steps / 1e12;
}

}  // namespace workloads
