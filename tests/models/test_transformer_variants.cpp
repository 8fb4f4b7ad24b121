// The Transformer as real models run it, against hand formulas: grouped-
// and multi-query attention (parameters 2DNH + 2DKH per block, K and V
// stashed at K x H), flash attention (no T x T tensor kept or moved, causal
// work (T + 1) / 2T of the square, S recomputed once in backward), parallel
// blocks (one layer norm, one summed branch) and the ReLU MLP.
#include <catch2/catch.hpp>

#include "model_lookup.h"
#include "models/transformer.h"

namespace test_transformer_variants {

using model_lookup::layer;
using model_lookup::matmul;

namespace {

models::TransformerConfig small() {
  models::TransformerConfig c;
  c.layers = 2;
  c.d_model = 512;
  c.d_ff = 2048;
  c.heads = 8;
  c.head_dim = 64;
  c.seq_len = 256;
  c.vocab = 1000;
  return c;
}

}  // namespace

TEST_CASE("grouped-query attention: K and V projections of kv_heads x head_dim", "[models][transformer][gqa]") {
  const double D = 512, N = 8, H = 64, F = 2048, norms = 4 * D;
  for (std::uint64_t kv : {8u, 4u, 2u, 1u}) {
    auto c = small();
    c.kv_heads = kv;
    const auto m = models::build_transformer(c, 1);
    INFO("kv_heads " << kv);
    // Q and O: D x NH each; K and V: D x KH each.
    CHECK(double(layer(m, "block0").param_count()) == 2 * D * N * H + 2 * D * double(kv) * H + 2 * D * F + norms);
    CHECK(matmul(layer(m, "block0"), "block0.attn.k").n == kv * 64);
    // Every query head attends with its group's K and V: batch x heads
    // attention matmuls whatever kv_heads is, so their FLOPs do not change.
    CHECK(matmul(layer(m, "block0"), "block0.attn.score").count == 8);
  }
  // kv_heads = heads is multi-head attention, and 0 means the same.
  auto c = small();
  const auto mha = models::build_transformer(c, 2);
  c.kv_heads = 8;
  CHECK(models::build_transformer(c, 2).activation_bytes() == mha.activation_bytes());
  // Multi-query: K and V stashed at 1 x H instead of N x H per token.
  c.kv_heads = 1;
  const auto mqa = models::build_transformer(c, 2);
  const double tokens = 2 * 256;
  CHECK(double(layer(mha, "block0").activation_bytes() - layer(mqa, "block0").activation_bytes()) ==
        2 * (2 * tokens * (N - 1) * H));
}

TEST_CASE("flash attention keeps no T x T tensor and skips the causal half", "[models][transformer][flash]") {
  auto c = small();
  const double B = 2, N = 8, T = 256, H = 64;
  const auto mat = models::build_transformer(c, 2);
  c.attention = "flash";
  const auto fl = models::build_transformer(c, 2);
  // Stash: the B N T^2 BF16 probabilities are replaced by B N T FP32
  // log-sum-exp values.
  CHECK(double(layer(mat, "block0").activation_bytes() - layer(fl, "block0").activation_bytes()) ==
        2 * B * N * T * T - 4 * B * N * T);
  // Attention matmuls: forward S = Q K^T and O = P V, each 2 B N T^2 H on
  // the full square; a causal kernel computes (T + 1) / 2T of it.
  const double frac = (T + 1) / (2 * T);
  const auto& blk = layer(fl, "block0");
  CHECK(matmul(blk, "block0.attn.score").flops() == Approx(2 * B * N * T * T * H * frac));
  CHECK(matmul(blk, "block0.attn.context").flops() == Approx(2 * B * N * T * T * H * frac));
  // Model FLOPs of the attention core: 2 forward + 4 backward matmuls; the
  // backward's recomputed S is executed work on top.
  const double core = 6 * 2 * B * N * T * T * H;
  const double mat_core = 6 * 2 * B * N * T * T * H;  // materialized: the full square
  const auto attention_model_flops = [](const models::LayerSpec& l) {
    double f = 0;
    for (const auto* list : {&l.forward, &l.backward})
      for (const auto& mm : *list)
        if (mm.kind != models::MatmulKind::linear && !mm.recompute) f += mm.flops();
    return f;
  };
  CHECK(attention_model_flops(blk) == Approx(core * frac));
  CHECK(attention_model_flops(layer(mat, "block0")) == Approx(mat_core));
  CHECK(blk.extra_matmul_flops() == Approx(2 * B * N * T * T * H * frac));
  CHECK(layer(mat, "block0").extra_matmul_flops() == 0);
  // What stays in VMEM: S and dP (outputs), P and dS (inputs).
  CHECK(matmul(blk, "block0.attn.score").out_on_chip);
  CHECK(matmul(blk, "block0.attn.context").a_on_chip);
  CHECK(matmul(blk, "block0.attn.context.dP").out_on_chip);
  for (const char* name : {"block0.attn.context.dV", "block0.attn.score.dQ", "block0.attn.score.dK"})
    CHECK(matmul(blk, name).a_on_chip);
  // Softmax and its backward are in the kernel: no HBM bytes of their own.
  for (const auto& e : blk.elementwise_fwd)
    if (e.op == models::ElementwiseOp::softmax) CHECK(e.bytes == 0);
  for (const auto& e : blk.elementwise_bwd)
    if (e.op == models::ElementwiseOp::softmax) CHECK(e.bytes == 0);
}

TEST_CASE("parallel blocks: one layer norm, attention and MLP summed into one tensor",
          "[models][transformer][parallel]") {
  auto c = small();
  const auto serial = models::build_transformer(c, 1);
  c.block = "parallel";
  const auto par = models::build_transformer(c, 1);
  const double D = 512, T = 256;
  // One LayerNorm (scale + bias) fewer per block.
  CHECK(double(layer(serial, "block0").param_count() - layer(par, "block0").param_count()) == 2 * D);
  // O and down write the same tensor (one tensor-parallel all-reduce); the
  // input gradients of Q, K, V and up land in one tensor too.
  const auto& blk = layer(par, "block0");
  CHECK(matmul(blk, "block0.attn.o").output == matmul(blk, "block0.mlp.down").output);
  CHECK(matmul(blk, "block0.attn.q.dX").output == matmul(blk, "block0.mlp.up.dX").output);
  // Two D-wide tensors fewer stashed per token: the second norm's input and output.
  CHECK(double(layer(serial, "block0").activation_bytes() - blk.activation_bytes()) == 2 * (2 * T * D));
  // The same matmul FLOPs.
  CHECK(par.matmul_flops_per_step() == serial.matmul_flops_per_step());
}

TEST_CASE("the ReLU MLP: two matrices and a ReLU", "[models][transformer][mlp]") {
  auto c = small();
  c.mlp = "relu";
  const auto m = models::build_transformer(c, 1);
  const auto& blk = layer(m, "block0");
  bool relu = false;
  for (const auto& e : blk.elementwise_fwd) relu = relu || e.op == models::ElementwiseOp::relu;
  CHECK(relu);
  CHECK(double(blk.param_count()) == 4 * 512.0 * 512 + 2 * 512.0 * 2048 + 4 * 512);
}

}  // namespace test_transformer_variants
