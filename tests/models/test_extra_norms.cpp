// Query/key norms (Qwen3; Llama 4 Scout's use_qk_norm) and Gemma 2/3's
// post-attention and post-MLP norms, against hand counts: their scales
// (head_dim each for the query and key norms, d_model each for the post
// norms), their elementwise work (a norm over each of the B T x heads x
// head_dim query and key elements; over the B T x d_model outputs), the
// inputs they stash for their backward, and no change in matmul FLOPs.
#include <catch2/catch.hpp>

#include "model_lookup.h"
#include "models/transformer.h"

namespace test_extra_norms {

namespace {

using model_lookup::layer;

models::TransformerConfig base() {
  models::TransformerConfig c;
  c.layers = 1;
  c.d_model = 512;
  c.d_ff = 2048;
  c.heads = 8;
  c.kv_heads = 2;
  c.head_dim = 128;
  c.seq_len = 32;
  c.vocab = 256;
  return c;
}

double elementwise_elements(const models::LayerSpec& l, const std::string& name) {
  for (const auto* v : {&l.elementwise_fwd, &l.elementwise_bwd})
    for (const auto& e : *v)
      if (e.name == name) return double(e.elements);
  FAIL("no elementwise op " << name);
  return 0;
}

}  // namespace

TEST_CASE("Query/key norms: a norm per head, head_dim scales, pre-norm Q and K stashed", "[models][norms]") {
  auto c = base();
  const std::uint64_t B = 2;
  const auto plain = models::build_transformer(c, B);
  c.qk_norm = true;
  const auto normed = models::build_transformer(c, B);
  const auto &p = layer(plain, "block0"), &n = layer(normed, "block0");
  const double BT = 64, H = 128, NH = 8 * 128, KH = 2 * 128;
  CHECK(double(n.param_count() - p.param_count()) == 2 * H);
  CHECK(elementwise_elements(n, "block0.attn.q_norm") == BT * NH);
  CHECK(elementwise_elements(n, "block0.attn.k_norm") == BT * KH);
  CHECK(elementwise_elements(n, "block0.attn.q_norm.bwd") == BT * NH);
  CHECK(double(n.activation_bytes() - p.activation_bytes()) == 2 * BT * (NH + KH));
  CHECK(n.forward_matmul_flops() == p.forward_matmul_flops());
  CHECK(n.backward_matmul_flops() == p.backward_matmul_flops());
}

TEST_CASE("Post norms: two d_model scales, the attention and MLP outputs stashed", "[models][norms]") {
  auto c = base();
  const std::uint64_t B = 2;
  const auto plain = models::build_transformer(c, B);
  c.post_norms = true;
  const auto normed = models::build_transformer(c, B);
  const auto &p = layer(plain, "block0"), &n = layer(normed, "block0");
  const double BT = 64, D = 512;
  CHECK(double(n.param_count() - p.param_count()) == 2 * D);
  CHECK(elementwise_elements(n, "block0.attn.post_norm") == BT * D);
  CHECK(elementwise_elements(n, "block0.mlp.post_norm.bwd") == BT * D);
  CHECK(double(n.activation_bytes() - p.activation_bytes()) == 2 * 2 * BT * D);
  // A norm is 5 FLOPs per element forward, 13 backward (ELECTRA's count
  // and models/elementwise_spec.cpp).
  CHECK(n.forward_elementwise_flops() - p.forward_elementwise_flops() == 2 * 5 * BT * D);
  CHECK(n.backward_elementwise_flops() - p.backward_elementwise_flops() == 2 * 13 * BT * D);
  CHECK(n.forward_matmul_flops() == p.forward_matmul_flops());
}

}  // namespace test_extra_norms
