// Transformer parameter counts against the standard closed forms:
// 12 L D^2 for d_ff = 4 d_model (Kaplan et al. 2020, arXiv:2001.08361,
// Table 1: N = 2 d_model n_layer (2 d_attn + d_ff)), the scaling book's
// per-layer table (attention 4DNH, gated MLP 3DF, vocabulary DV), and
// GPT-3's published size.
#include <catch2/catch.hpp>

#include "model_lookup.h"
#include "models/transformer.h"
#include "transformer_shapes.h"

namespace test_transformer_params {

using model_lookup::layer;

TEST_CASE("GPT-3 6.7B-like: 12 L D^2 + V D parameters", "[models][transformer][params]") {
  const auto cfg = transformer_shapes::gpt3_6p7b();
  const auto m = models::build_transformer(cfg, 1);
  const double L = 32, D = 4096, V = 50257;
  // LayerNorm scale + bias: two per block and the final one.
  const double layernorm = 2 * D * (2 * L + 1);
  CHECK(double(m.param_count()) == 12 * L * D * D + V * D + layernorm);
  CHECK(double(m.param_count()) == Approx(12 * L * D * D + V * D).epsilon(1e-4));
  // GPT-3 reports 6.7B including 2048 x 4096 learned position embeddings,
  // which this model leaves out (rotary or no positions).
  CHECK(double(m.param_count()) + 2048 * D == Approx(6.7e9).epsilon(0.01));
  CHECK(m.param_bytes() == 2 * m.param_count());
}

TEST_CASE("Per-layer parameters: attention 4DNH, MLP 2DF (GELU) or 3DF (SwiGLU)", "[models][transformer][params]") {
  // heads x head_dim != d_model on purpose (GPT-3 XL lists 24 heads of 128
  // with d_model 2048).
  models::TransformerConfig c;
  c.layers = 3;
  c.d_model = 2048;
  c.d_ff = 5632;
  c.heads = 24;
  c.head_dim = 128;
  c.seq_len = 16;
  c.vocab = 1000;
  const double D = 2048, F = 5632, NH = 24 * 128, V = 1000;
  const double norms = 4 * D;  // two LayerNorms of scale + bias ("Other" in the scaling book)

  c.mlp = "gelu";
  const auto plain = models::build_transformer(c, 1);
  CHECK(double(layer(plain, "block0").param_count()) == 4 * D * NH + 2 * D * F + norms);
  c.mlp = "swiglu";
  const auto gated = models::build_transformer(c, 1);
  CHECK(double(layer(gated, "block2").param_count()) == 4 * D * NH + 3 * D * F + norms);

  // Untied: the embedding and the unembedding are two V x D matrices.
  CHECK(double(layer(gated, "embedding").param_count()) == V * D);
  CHECK(double(layer(gated, "output").param_count()) == V * D + 2 * D);
  CHECK(double(gated.param_count()) == 3 * (4 * D * NH + 3 * D * F + norms) + 2 * V * D + 2 * D);
}

TEST_CASE("Tied embeddings count the V x D table once and point the unembedding at it",
          "[models][transformer][params]") {
  auto cfg = transformer_shapes::gpt_1p3b();
  cfg.tied_embeddings = false;
  const auto untied = models::build_transformer(cfg, 1);
  cfg.tied_embeddings = true;
  const auto tied = models::build_transformer(cfg, 1);
  CHECK(untied.param_count() - tied.param_count() == 50257ull * 2048);

  const auto& logits = model_lookup::matmul(layer(tied, "output"), "output.logits");
  CHECK(logits.weight == "embedding.table");
  REQUIRE(tied.owner_of("embedding.table") != nullptr);
  CHECK(tied.owner_of("embedding.table")->name == "embedding");
  // Its gradient accumulates into the embedding table's.
  CHECK(model_lookup::matmul(layer(tied, "output"), "output.logits.dW").output == "embedding.table.grad");
  CHECK(untied.owner_of(model_lookup::matmul(layer(untied, "output"), "output.logits").weight)->name == "output");
}

}  // namespace test_transformer_params
