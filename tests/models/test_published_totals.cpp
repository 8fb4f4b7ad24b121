// Whole-model parameter counts against the totals their authors publish,
// from each model's published dimensions (the same ones MaxText's model
// files carry), within what the published rounding allows. Activated
// parameters are the total less the routed experts a token does not go
// to: layers with experts x (experts - top_k) x one expert's parameters.
//   DeepSeek-V3 (arXiv:2412.19437 s.4.2 and abstract): 671B total, 37B
//     activated ("671B" and "37B" to the billion).
//   Mixtral 8x7B (Mistral AI, "Mixtral of experts", 2023-12-11;
//     arXiv:2401.04088): 46.7B total, 12.9B active per token.
//   Gemma 3 12B (arXiv:2503.19786 Table 1): 1,012M embedding and 10,759M
//     non-embedding parameters, 417M more in the vision encoder (not
//     modelled).
//   Llama 4 Scout and Maverick (Meta, "The Llama 4 herd", 2025-04-05): 17B
//     active each, 109B and 400B total; those totals include the vision
//     encoder, which a text model leaves out.
// LayerNorm biases (which these models do not have) add 2 d_model per
// norm, under 1e-5 of any total here.
#include <catch2/catch.hpp>

#include "models/transformer.h"

namespace test_published_totals {

namespace {

double inactive(const models::TransformerConfig& c) {
  const double per_expert = 3.0 * double(c.d_model) * double(c.expert_width());
  return double(c.moe_layers()) * double(c.experts - c.top_k) * per_expert;
}

double total(const models::TransformerConfig& c) { return double(models::build_transformer(c, 1).param_count()); }

models::TransformerConfig llama4(std::uint64_t experts, std::uint64_t step) {
  models::TransformerConfig c;
  c.layers = 48;
  c.d_model = 5120;
  c.d_ff = 16384;
  c.heads = 40;
  c.kv_heads = 8;
  c.head_dim = 128;
  c.seq_len = 16;
  c.vocab = 202048;
  c.mlp = "swiglu";
  c.experts = experts;
  c.top_k = 1;
  c.shared_experts = 1;
  c.expert_d_ff = 8192;
  c.moe_layer_step = step;
  c.qk_norm = true;
  return c;
}

}  // namespace

TEST_CASE("DeepSeek-V3: 671B total, 37B activated", "[models][published]") {
  models::TransformerConfig c;
  c.layers = 61;
  c.d_model = 7168;
  c.d_ff = 18432;
  c.heads = 128;
  c.q_lora_rank = 1536;
  c.kv_lora_rank = 512;
  c.qk_nope_head_dim = 128;
  c.qk_rope_head_dim = 64;
  c.v_head_dim = 128;
  c.seq_len = 16;
  c.vocab = 129280;
  c.mlp = "swiglu";
  c.experts = 256;
  c.top_k = 8;
  c.shared_experts = 1;
  c.expert_d_ff = 2048;
  c.first_dense_layers = 3;
  const double n = total(c);
  CHECK(n == Approx(671e9).margin(0.5e9));
  // DeepSeek's 37B is the activated count without the input embedding (a
  // lookup of one row per token): 36.6B, 37.6B with it. Mixtral's and
  // Llama 4's published active counts below include theirs.
  const double embedding = 129280.0 * 7168;
  CHECK(n - inactive(c) - embedding == Approx(37e9).margin(0.5e9));
}

TEST_CASE("Mixtral 8x7B: 46.7B total, 12.9B active", "[models][published]") {
  models::TransformerConfig c;
  c.layers = 32;
  c.d_model = 4096;
  c.d_ff = 14336;
  c.heads = 32;
  c.kv_heads = 8;
  c.head_dim = 128;
  c.seq_len = 16;
  c.vocab = 32000;
  c.mlp = "swiglu";
  c.experts = 8;
  c.top_k = 2;
  const double n = total(c);
  CHECK(n == Approx(46.7e9).margin(0.05e9));
  CHECK(n - inactive(c) == Approx(12.9e9).margin(0.05e9));
}

TEST_CASE("Gemma 3 12B: 10,759M non-embedding parameters, 12B with the embedding", "[models][published]") {
  models::TransformerConfig c;
  c.layers = 48;
  c.d_model = 3840;
  c.d_ff = 15360;
  c.heads = 16;
  c.kv_heads = 8;
  c.head_dim = 256;
  c.seq_len = 16;
  c.vocab = 262144;
  c.tied_embeddings = true;
  c.mlp = "geglu";
  c.sliding_window = 1024;
  c.sliding_window_pattern = 6;
  c.qk_norm = true;
  c.post_norms = true;
  const double n = total(c), embedding = 262144.0 * 3840;
  CHECK(n - embedding == Approx(10759e6).margin(0.5e6 + 0.002 * 10759e6));
  CHECK(n == Approx(12e9).margin(0.5e9));
}

TEST_CASE("Llama 4 Scout and Maverick: 17B active, 109B and 400B total with the vision encoder",
          "[models][published]") {
  const auto scout = llama4(16, 1), maverick = llama4(128, 2);
  // Text models: below the published totals by the vision encoder, which
  // is about 1% of Scout (under 2B) and under 0.5% of Maverick.
  const double s = total(scout), m = total(maverick);
  CHECK(s < 109.5e9);
  CHECK(s > 109e9 - 2e9);
  CHECK(m == Approx(400e9).epsilon(0.005));
  CHECK(s - inactive(scout) == Approx(17e9).margin(0.5e9));
  CHECK(m - inactive(maverick) == Approx(17e9).margin(0.5e9));
  CHECK(maverick.moe_layers() == 24);
}

}  // namespace test_published_totals
