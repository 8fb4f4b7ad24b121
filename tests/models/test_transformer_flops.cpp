// Transformer FLOPs against published accounting:
// - the scaling book's per-layer training FLOPs (transformers.md, "What
//   should you take away"): MLP 18BTDF (gated; 12BTDF for two matrices),
//   attention 24BTDNH + 12BT^2NH, vocabulary 6BTDV for the unembedding;
// - training ~ 6 x params x tokens (Kaplan et al. 2020, section 2.1), plus
//   the attention term 12 L T d_attn per token (Kaplan's C_forward =
//   2N + 2 n_layer n_ctx d_attn, times 3 for training);
// - PaLM's model FLOPs per token for MFU, 6N + 12 L H Q T (Chowdhery et al.
//   2022, appendix B);
// - backward = 2 x forward for every matmul.
#include <catch2/catch.hpp>

#include "model_lookup.h"
#include "models/transformer.h"
#include "transformer_shapes.h"

namespace test_transformer_flops {

using model_lookup::layer;

namespace {

double train_matmul_flops(const models::LayerSpec& l) { return l.forward_matmul_flops() + l.backward_matmul_flops(); }

}  // namespace

TEST_CASE("Per-layer training FLOPs match the scaling book's table", "[models][transformer][flops]") {
  models::TransformerConfig c;
  c.layers = 2;
  c.d_model = 1024;
  c.d_ff = 2816;
  c.heads = 12;  // N H = 1536 != D: the table keeps them apart
  c.head_dim = 128;
  c.seq_len = 512;
  c.vocab = 32000;
  const double B = 3, T = 512, D = 1024, F = 2816, NH = 12 * 128, V = 32000;

  c.mlp = "swiglu";
  const auto gated = models::build_transformer(c, 3);
  CHECK(train_matmul_flops(layer(gated, "block1")) ==
        Approx(18 * B * T * D * F + 24 * B * T * D * NH + 12 * B * T * T * NH).epsilon(1e-12));
  c.mlp = "gelu";
  const auto plain = models::build_transformer(c, 3);
  CHECK(train_matmul_flops(layer(plain, "block0")) ==
        Approx(12 * B * T * D * F + 24 * B * T * D * NH + 12 * B * T * T * NH).epsilon(1e-12));
  // The book's "Vocab 12BTDV" counts the embedding as a one-hot matmul too;
  // here the embedding is a gather (no matmul FLOPs): 6BTDV for the logits.
  CHECK(train_matmul_flops(layer(plain, "output")) == Approx(6 * B * T * D * V).epsilon(1e-12));
  CHECK(train_matmul_flops(layer(plain, "embedding")) == 0);
}

TEST_CASE("GPT-3 6.7B-like: FLOPs per step = (6 N + 12 L T D) tokens", "[models][transformer][flops]") {
  const auto m = models::build_transformer(transformer_shapes::gpt3_6p7b(), 4);
  const double N = double(m.param_count()), L = 32, T = 2048, D = 4096;
  const double tokens = 4 * T;
  CHECK(double(m.tokens()) == tokens);
  const double kaplan = (6 * N + 12 * L * T * D) * tokens;
  // Matmuls: exact but for the LayerNorm parameters (in N, not in matmuls).
  CHECK(m.matmul_flops_per_step() == Approx(kaplan).epsilon(1e-3));
  // Everything, elementwise work included.
  CHECK(m.flops_per_step() == Approx(kaplan).epsilon(0.01));
  // 6ND alone undercounts by the attention term, T / (6 D) x (12 L D^2 / N) ~ 8%.
  const double six_nd = 6 * N * tokens;
  CHECK(m.flops_per_step() / six_nd == Approx(1 + 12 * L * T * D / (6 * N)).epsilon(0.005));
  CHECK(m.flops_per_step() / six_nd > 1.05);
}

TEST_CASE("Short context: FLOPs per step within 5% of 6 x params x tokens", "[models][transformer][flops]") {
  for (auto cfg : {transformer_shapes::gpt3_6p7b(), transformer_shapes::gpt_1p3b()}) {
    cfg.seq_len = cfg.d_model / 4;  // attention term ~ T/(6D) = 4%
    const auto m = models::build_transformer(cfg, 8);
    const double six_nd = 6.0 * double(m.param_count()) * double(m.tokens());
    INFO("d_model " << cfg.d_model << ": " << m.flops_per_step() / six_nd);
    CHECK(m.flops_per_step() == Approx(six_nd).epsilon(0.05));
    CHECK(m.flops_per_step() > six_nd);
  }
}

TEST_CASE("Model FLOPs per token match PaLM's 6N + 12 L H Q T", "[models][transformer][flops]") {
  const auto cfg = transformer_shapes::gpt_1p3b();
  const auto m = models::build_transformer(cfg, 2);
  const double N = double(m.param_count());
  const double palm = 6 * N + 12.0 * 24 * 16 * 128 * 2048;
  CHECK(m.model_flops_per_token() == Approx(palm).epsilon(1e-3));
  // Independent of the batch size.
  CHECK(models::build_transformer(cfg, 5).model_flops_per_token() == Approx(m.model_flops_per_token()));
}

TEST_CASE("Every forward matmul's backward matmuls cost exactly 2x its FLOPs", "[models][transformer][flops]") {
  for (const std::string mlp : {"gelu", "swiglu"}) {
    auto cfg = transformer_shapes::gpt_1p3b();
    cfg.layers = 2;
    cfg.seq_len = 256;
    cfg.mlp = mlp;
    const auto m = models::build_transformer(cfg, 2);
    for (const auto& l : m.layers) {
      INFO(l.name << " " << mlp);
      CHECK(l.backward_matmul_flops() == 2 * l.forward_matmul_flops());
      for (const auto& f : l.forward) {
        // Its gradients are named after it: X.dX + X.dW, or score.dQ +
        // score.dK, context.dP + context.dV.
        double grads = 0;
        int n = 0;
        for (const auto& b : l.backward)
          if (b.name.rfind(f.name + ".", 0) == 0) {
            grads += b.flops();
            ++n;
            CHECK(b.kind == f.kind);
            CHECK(b.count * b.m * b.k * b.n == f.count * f.m * f.k * f.n);
          }
        INFO(f.name);
        CHECK(n == 2);
        CHECK(grads == 2 * f.flops());
      }
    }
  }
}

TEST_CASE("Elementwise FLOPs stay below 1% of matmul FLOPs at scale", "[models][transformer][flops]") {
  const auto m = models::build_transformer(transformer_shapes::gpt3_6p7b(), 1);
  const double elementwise = m.flops_per_step() - m.matmul_flops_per_step();
  CHECK(elementwise > 0);
  CHECK(elementwise < 0.01 * m.matmul_flops_per_step());
}

}  // namespace test_transformer_flops
