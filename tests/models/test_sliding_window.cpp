// Sliding-window attention (Mistral 7B, Jiang et al. 2023,
// arXiv:2310.06825 s.2; Gemma 2/3's interleaved local and global layers,
// arXiv:2408.00118, arXiv:2503.19786) against hand counts: with a window
// of W keys, query i (1-based) of a causal sequence of T attends to
// min(i, W) keys, so a causal kernel's attention FLOPs are proportional to
// sum_i min(i, W), counted here by a loop; a decode step of a local layer
// reads at most W cached keys; the layer pattern puts every k-th block
// global.
#include <catch2/catch.hpp>

#include <algorithm>

#include "model_lookup.h"
#include "models/transformer.h"

namespace test_sliding_window {

namespace {

using model_lookup::layer;
using model_lookup::matmul;

models::TransformerConfig small(std::uint64_t window, std::uint64_t pattern) {
  models::TransformerConfig c;
  c.layers = 6;
  c.d_model = 256;
  c.d_ff = 1024;
  c.heads = 4;
  c.kv_heads = 2;
  c.head_dim = 64;
  c.seq_len = 100;
  c.vocab = 512;
  c.attention = "flash";
  c.sliding_window = window;
  c.sliding_window_pattern = pattern;
  return c;
}

// Query-key pairs a causal window of w keys keeps over t tokens.
double band_pairs(double t, double w) {
  double n = 0;
  for (double i = 1; i <= t; ++i) n += std::min(i, w);
  return n;
}

}  // namespace

TEST_CASE("Sliding window: causal attention FLOPs follow sum_i min(i, W)", "[models][sliding_window]") {
  const std::uint64_t B = 3;
  const double T = 100, W = 16, N = 4, H = 64;
  const auto m = models::build_transformer(small(16, 0), B);
  for (const char* block : {"block0", "block5"}) {
    const auto& l = layer(m, block);
    const std::string a = std::string(block) + ".attn";
    // Forward: S = Q K^T and O = P V; backward: dP, dV, dQ, dK (and the
    // recomputed S, which is executed but not model work).
    CHECK(matmul(l, a + ".score").flops() == Approx(2 * B * N * H * band_pairs(T, W)).epsilon(1e-12));
    CHECK(matmul(l, a + ".context").flops() == Approx(2 * B * N * H * band_pairs(T, W)).epsilon(1e-12));
    for (const char* bwd : {".context.dP", ".context.dV", ".score.dQ", ".score.dK", ".score.recompute"})
      CHECK(matmul(l, a + bwd).flops() == Approx(2 * B * N * H * band_pairs(T, W)).epsilon(1e-12));
  }
  // A window at least as long as the sequence is plain causal attention.
  const auto full = models::build_transformer(small(100, 0), B);
  const auto plain = models::build_transformer(small(0, 0), B);
  CHECK(matmul(layer(full, "block0"), "block0.attn.score").flops() ==
        matmul(layer(plain, "block0"), "block0.attn.score").flops());
  CHECK(matmul(layer(plain, "block0"), "block0.attn.score").flops() ==
        Approx(2 * B * N * H * T * (T + 1) / 2).epsilon(1e-12));
}

TEST_CASE("Sliding window pattern: every k-th block global (Gemma 3's 5 local : 1 global)",
          "[models][sliding_window]") {
  auto c = small(16, 3);
  const auto m = models::build_transformer(c, 1);
  // (i + 1) % 3 == 0: blocks 2 and 5 global.
  for (std::uint64_t i = 0; i < 6; ++i) {
    const std::string b = "block" + std::to_string(i);
    const bool global = i == 2 || i == 5;
    CHECK(c.local_layer(i) == !global);
    CHECK(matmul(layer(m, b), b + ".attn.score").window == (global ? 0u : 16u));
  }
  // Gemma 3 12B: 48 layers, 5 local : 1 global = 40 local, 8 global.
  c.layers = 48;
  c.sliding_window = 1024;
  c.sliding_window_pattern = 6;
  int local = 0;
  for (std::uint64_t i = 0; i < 48; ++i) local += c.local_layer(i) ? 1 : 0;
  CHECK(local == 40);
}

TEST_CASE("Sliding window: materialized attention computes the whole square and masks it", "[models][sliding_window]") {
  auto c = small(16, 0);
  c.attention = "materialized";
  const auto m = models::build_transformer(c, 1);
  CHECK(matmul(layer(m, "block0"), "block0.attn.score").flops() == 2.0 * 4 * 100 * 64 * 100);
}

TEST_CASE("Sliding window: a local layer's decode step reads at most W cached keys", "[models][sliding_window]") {
  auto c = small(16, 2);  // blocks 1, 3, 5 global
  const std::uint64_t batch = 5, context = 40;
  const auto m = models::build_transformer_decode(c, batch, context);
  // scores per sequence and kv head: a group of heads / kv_heads queries
  // against the cached keys, H wide: n = batch x kv_heads x keys.
  CHECK(matmul(layer(m, "block0"), "block0.attn.score").n == batch * 2 * 16);
  CHECK(matmul(layer(m, "block0"), "block0.attn.context").k == 16);
  CHECK(matmul(layer(m, "block1"), "block1.attn.score").n == batch * 2 * context);
  CHECK(matmul(layer(m, "block1"), "block1.attn.context").k == context);
  // The local layer's cache reads (the B operands) are W / context of the global one's.
  CHECK(c.attended(0, context) == 16);
  CHECK(c.attended(1, context) == context);
  CHECK(c.attended(0, 10) == 10);
}

TEST_CASE("Sliding window: the KV cache of Gemma 3 12B's 40 local and 8 global layers", "[models][sliding_window]") {
  models::TransformerConfig c;
  c.layers = 48;
  c.heads = 16;
  c.kv_heads = 8;
  c.head_dim = 256;
  c.sliding_window = 1024;
  c.sliding_window_pattern = 6;
  // K and V of 8 heads of 256 per token and layer; at 32768 tokens the
  // local layers keep 1024 of them, the global ones all.
  const double per_token_layer = 2 * 8 * 256;
  CHECK(double(c.kv_cache_elements(32768)) == per_token_layer * (40 * 1024 + 8 * 32768));
  CHECK(double(c.kv_cache_elements(512)) == per_token_layer * 48 * 512);
  c.sliding_window = 0;
  c.sliding_window_pattern = 0;
  CHECK(double(c.kv_cache_elements(32768)) == per_token_layer * 48 * 32768);
}

}  // namespace test_sliding_window
