// Activations kept for the backward pass, against Korthikanti et al. 2022,
// "Reducing Activation Recomputation in Large Transformer Models"
// (arXiv:2205.05198), section 4.1: per layer, 16-bit activations,
//   s b h (34 + 5 a s / h) bytes
// of which dropout accounts for s b h (masks after attention and after the
// MLP, 1 byte each) + 3 a s^2 b (the attention dropout mask, 1 byte, and its
// 2-byte output). This model has no dropout, so a block keeps
//   32 s b h + 2 a s^2 b bytes   (s = seq, b = batch, h = d_model, a = heads)
// for d_ff = 4h and heads x head_dim = h.
#include <catch2/catch.hpp>

#include "model_lookup.h"
#include "models/transformer.h"

namespace test_activation_stash {

using model_lookup::layer;

namespace {

models::TransformerConfig megatron_like() {
  models::TransformerConfig c;
  c.layers = 2;
  c.d_model = 1024;
  c.d_ff = 4096;
  c.heads = 16;
  c.head_dim = 64;
  c.seq_len = 1024;
  c.vocab = 32000;
  return c;
}

}  // namespace

TEST_CASE("Block stash = Korthikanti et al. without dropout: 32sbh + 2as^2b", "[models][transformer][activations]") {
  const double s = 1024, b = 3, h = 1024, a = 16;
  const auto m = models::build_transformer(megatron_like(), 3);
  CHECK(double(layer(m, "block0").activation_bytes()) == 32 * s * b * h + 2 * a * s * s * b);
  CHECK(double(layer(m, "block1").activation_bytes()) == 32 * s * b * h + 2 * a * s * s * b);
  // With their dropout terms added back the paper's total is recovered.
  const double dropout = s * b * h * 2 + 3 * a * s * s * b;
  CHECK(double(layer(m, "block0").activation_bytes()) + dropout == s * b * h * (34 + 5 * a * s / h));
}

TEST_CASE("Stash scales linearly with batch, and SwiGLU keeps one more d_ff tensor",
          "[models][transformer][activations]") {
  auto c = megatron_like();
  const auto one = models::build_transformer(c, 1);
  const auto four = models::build_transformer(c, 4);
  CHECK(four.activation_bytes() == 4 * one.activation_bytes());
  c.mlp = "swiglu";
  const auto gated = models::build_transformer(c, 1);
  // gate output and up output (both SwiGLU inputs) instead of one GELU input
  CHECK(layer(gated, "block0").activation_bytes() - layer(one, "block0").activation_bytes() == 2 * 1024 * 4096);
}

TEST_CASE("Embedding, output and loss stashes per token", "[models][transformer][activations]") {
  const auto m = models::build_transformer(megatron_like(), 2);
  const std::uint64_t tokens = 2 * 1024;
  CHECK(layer(m, "embedding").activation_bytes() == 4 * tokens);           // int32 token ids
  CHECK(layer(m, "output").activation_bytes() == 2 * 2 * 1024 * tokens);   // final LN input and output, BF16
  CHECK(layer(m, "loss").activation_bytes() == (2 * 32000 + 4) * tokens);  // BF16 probabilities + int32 labels
}

}  // namespace test_activation_stash
