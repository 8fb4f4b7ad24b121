// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434 s.2.1;
// DeepSeek-V3, arXiv:2412.19437 s.2.1 and s.4.2) against hand counts from
// the paper's definitions: DeepSeek-V3's attention parameters from its
// published dimensions (d_model 7168, 128 heads, q_lora_rank 1536,
// kv_lora_rank 512, per-head query/key 128 + 64 rotary, value 128), one
// layer's matmul FLOPs and stash, and the query path without a query
// latent (DeepSeek-V2-Lite's q_lora_rank 0).
#include <catch2/catch.hpp>

#include "model_lookup.h"
#include "models/transformer.h"

namespace test_mla {

namespace {

using model_lookup::layer;
using model_lookup::matmul;

// DeepSeek-V3's attention (arXiv:2412.19437 s.4.2) on a short sequence.
models::TransformerConfig deepseek_v3_attention() {
  models::TransformerConfig c;
  c.layers = 1;
  c.d_model = 7168;
  c.d_ff = 18432;
  c.heads = 128;
  c.q_lora_rank = 1536;
  c.kv_lora_rank = 512;
  c.qk_nope_head_dim = 128;
  c.qk_rope_head_dim = 64;
  c.v_head_dim = 128;
  c.seq_len = 64;
  c.vocab = 1000;
  c.mlp = "swiglu";
  return c;
}

double attention_params(const models::LayerSpec& l) {
  double n = 0;
  for (const auto& p : l.params)
    if (p.name.find(".attn.") != std::string::npos) n += double(p.elements());
  return n;
}

}  // namespace

TEST_CASE("MLA: DeepSeek-V3's attention parameters from its published dimensions", "[models][mla]") {
  const auto m = models::build_transformer(deepseek_v3_attention(), 1);
  const double D = 7168, N = 128, q_lora = 1536, kv_lora = 512, nope = 128, rope = 64, v = 128;
  const double expected = D * q_lora + q_lora               // W_DQ and the query latent's norm
                          + q_lora * N * (nope + rope)      // W_UQ
                          + D * (kv_lora + rope) + kv_lora  // W_DKV (with the shared rotary key) and its norm
                          + kv_lora * N * (nope + v)        // W_UKV
                          + N * v * D;                      // W_O
  CHECK(attention_params(layer(m, "block0")) == expected);
  // 187.1 M per layer, as the dimensions give (11.4 B over 61 layers).
  CHECK(expected == Approx(187.1e6).epsilon(1e-3));
}

TEST_CASE("MLA: one layer's matmul FLOPs and stash by hand", "[models][mla]") {
  const auto c = deepseek_v3_attention();
  const std::uint64_t B = 2;
  const auto m = models::build_transformer(c, B);
  const auto& l = layer(m, "block0");
  const double BT = double(B) * 64, T = 64, D = 7168, N = 128, ql = 1536, kvl = 512, qk = 192, v = 128, rope = 64;
  // Forward: the four projections, the core on 192-wide query/key heads and
  // 128-wide values over the full (materialized) square, W_O.
  CHECK(matmul(l, "block0.attn.q_down").flops() == 2 * BT * D * ql);
  CHECK(matmul(l, "block0.attn.q").flops() == 2 * BT * ql * N * qk);
  CHECK(matmul(l, "block0.attn.kv_down").flops() == 2 * BT * D * (kvl + rope));
  CHECK(matmul(l, "block0.attn.kv_up").flops() == 2 * BT * kvl * N * (128 + v));
  CHECK(matmul(l, "block0.attn.score").flops() == 2 * B * N * T * qk * T);
  CHECK(matmul(l, "block0.attn.context").flops() == 2 * B * N * T * T * v);
  CHECK(matmul(l, "block0.attn.o").flops() == 2 * BT * N * v * D);
  // Backward: each forward matmul twice over (dX and dW; dQ, dK, dP, dV).
  const double attn_fwd = 2 * BT * (D * ql + ql * N * qk + D * (kvl + rope) + kvl * N * (128 + v) + N * v * D) +
                          2 * B * N * T * T * (qk + v);
  const double mlp_fwd = 2 * BT * 3 * D * 18432;
  CHECK(l.forward_matmul_flops() == Approx(attn_fwd + mlp_fwd).epsilon(1e-12));
  CHECK(l.backward_matmul_flops() == Approx(2 * (attn_fwd + mlp_fwd)).epsilon(1e-12));

  // Stash (BF16 elements per token): the block input and LN1's output, the
  // query latent and its norm, the key/value latent with the rotary key and
  // its norm, Q, [k_nope, V], the probabilities (N T), the context (N v),
  // then the MLP's (LN2 input and output, gate, up, activation).
  const double per_token =
      2 * D + 2 * ql + (kvl + rope) + kvl + N * qk + N * (128 + v) + N * T + N * v + 2 * D + 3 * 18432;
  CHECK(double(l.activation_bytes()) == 2 * BT * per_token);
}

TEST_CASE("MLA without a query latent projects queries straight from d_model", "[models][mla]") {
  auto c = deepseek_v3_attention();
  c.q_lora_rank = 0;
  const auto m = models::build_transformer(c, 1);
  const auto& l = layer(m, "block0");
  CHECK_FALSE(model_lookup::has_matmul(l, "block0.attn.q_down"));
  CHECK(matmul(l, "block0.attn.q").k == 7168);
  const double D = 7168, N = 128;
  CHECK(attention_params(l) == D * N * 192 + D * 576 + 512 + 512 * N * 256 + N * 128 * D);
}

TEST_CASE("MLA with flash attention: the causal core on 192-wide heads, 128-wide values", "[models][mla]") {
  auto c = deepseek_v3_attention();
  c.attention = "flash";
  const auto m = models::build_transformer(c, 1);
  const auto& l = layer(m, "block0");
  const double T = 64, N = 128;
  // The exact causal triangle: T (T + 1) / 2 query-key pairs per head.
  CHECK(matmul(l, "block0.attn.score").flops() == Approx(2 * N * 192 * T * (T + 1) / 2).epsilon(1e-12));
  CHECK(matmul(l, "block0.attn.context").flops() == Approx(2 * N * 128 * T * (T + 1) / 2).epsilon(1e-12));
}

TEST_CASE("MLA: the K and V a block caches per token, as decode reads them", "[models][mla]") {
  const auto c = deepseek_v3_attention();
  // 128 heads of 192-wide keys and 128-wide values (not the 512 + 64
  // latent the absorbed form would cache).
  CHECK(c.kv_width() == 128u * (192 + 128));
  const auto m = models::build_transformer_decode(c, 3, 100);
  const auto& l = layer(m, "block0");
  // The B operands of the two decode matmuls are exactly the cache: K
  // (H x keys) and V (keys x Hv) for every sequence and head.
  const auto &s = matmul(l, "block0.attn.score"), &o = matmul(l, "block0.attn.context");
  CHECK(s.k * s.n + o.k * o.n == 3u * 100 * c.kv_width());
  models::TransformerConfig g;
  g.kv_heads = 8;
  g.heads = 32;
  g.head_dim = 128;
  CHECK(g.kv_width() == 2u * 8 * 128);
}

}  // namespace test_mla
