// Today's model shapes (docs/models.md) run through kind: train on one
// TPU v4: multi-head latent attention, sliding-window attention, GeGLU,
// dense layers before experts and a grouped expert matmul, vocabulary
// tiling, query/key and post norms. Each run's MFU numerator
// (result.model_flops: forward + backward matmul FLOPs, 3x the forward)
// against a hand count from the mechanism's definition, and its memory
// where the mechanism changes it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "workloads/experiment_fixture.h"

namespace test_model_shapes {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// 2 blocks, B 2 sequences of T 256, D 512, F 2048, N 8 heads, V 4096.
constexpr double L = 2, B = 2, T = 256, D = 512, F = 2048, N = 8, V = 4096;
constexpr double BT = B * T;

nlohmann::json report(const std::string& name, const std::string& extra) {
  return run(write_yaml("shapes-" + name, R"(chip: tpu-v4
workload:
  kind: train
  model: {type: transformer, layers: 2, d_model: 512, d_ff: 2048, heads: 8, seq_len: 256, vocab: 4096, )" +
                                              extra + R"(}
  global_batch: 2
)"));
}

nlohmann::json train(const std::string& name, const std::string& extra) { return report(name, extra)["result"]; }

double model_flops(const nlohmann::json& r) { return r["model_flops"].get<double>(); }

// Forward matmul FLOPs of the logits (untied), 2 BT D V.
constexpr double kLogits = 2 * BT * D * V;

// Forward FLOPs of grouped-query attention's four projections with H-wide
// heads and K key/value heads.
double gqa_projections(double H, double K) { return 2 * BT * (D * N * H + 2 * D * K * H + N * H * D); }

}  // namespace

TEST_CASE("train: multi-head latent attention, MFU's FLOPs by hand", "[workloads][train][shapes]") {
  const auto r = train("mla",
                       "q_lora_rank: 128, kv_lora_rank: 64, qk_nope_head_dim: 32, qk_rope_head_dim: 16, "
                       "v_head_dim: 48");
  const double ql = 128, kvl = 64, n = 32, rope = 16, v = 48;
  // DeepSeek-V2 s.2.1: W_DQ, W_UQ, W_DKV (with the rotary key), W_UKV, W_O;
  // the materialized core over the whole T x T on n + r query/key and v
  // value widths; a GELU MLP.
  const double projections = 2 * BT * (D * ql + ql * N * (n + rope) + D * (kvl + rope) + kvl * N * (n + v) + N * v * D);
  const double core = 2 * B * N * T * T * ((n + rope) + v);
  const double block = projections + core + 2 * BT * 2 * D * F;
  CHECK(model_flops(r) == Approx(3 * (L * block + kLogits)).epsilon(1e-12));
  CHECK(r["step_time_s"].get<double>() > 0);
}

TEST_CASE("train: sliding window on every other block, MFU's FLOPs by hand", "[workloads][train][shapes]") {
  const auto r = train("window", "head_dim: 64, attention: flash, sliding_window: 32, sliding_window_pattern: 2");
  const auto full = train("window-none", "head_dim: 64, attention: flash");
  double band = 0, causal = 0;  // query-key pairs, sum over queries i of min(i, W) and of i
  for (double i = 1; i <= T; ++i) {
    band += std::min(i, 32.0);
    causal += i;
  }
  // Block 0 local, block 1 global: S = Q K^T and O = P V, 2 B N H per pair each.
  const double dense = gqa_projections(64, N) + 2 * BT * 2 * D * F;
  const auto attention = [&](double pairs) { return 2 * 2 * B * N * 64 * pairs; };
  CHECK(model_flops(r) == Approx(3 * (2 * dense + attention(band) + attention(causal) + kLogits)).epsilon(1e-12));
  CHECK(model_flops(full) == Approx(3 * (2 * dense + 2 * attention(causal) + kLogits)).epsilon(1e-12));
}

TEST_CASE("train: GeGLU, 3 matmuls of 2 BT D F forward", "[workloads][train][shapes]") {
  const auto r = train("geglu", "head_dim: 64, mlp: geglu");
  const double block = gqa_projections(64, N) + 2 * 2 * B * N * 64 * T * T + 3 * 2 * BT * D * F;
  CHECK(model_flops(r) == Approx(3 * (L * block + kLogits)).epsilon(1e-12));
}

TEST_CASE("train: a dense block before a mixture of experts with a shared expert, batched or grouped",
          "[workloads][train][shapes]") {
  const std::string moe =
      "head_dim: 64, mlp: swiglu, experts: 4, top_k: 1, shared_experts: 1, expert_d_ff: 512, "
      "first_dense_layers: 1";
  const auto batched = train("moe-batched", moe);
  const auto grouped = train("moe-grouped", moe + ", expert_matmul: grouped");
  const double attention = gqa_projections(64, N) + 2 * 2 * B * N * 64 * T * T;
  // Block 0: a SwiGLU MLP of d_ff. Block 1: the router (D x 4), each
  // token's one routed expert and the shared one, SwiGLU of 512 each.
  const double dense = attention + 3 * 2 * BT * D * F;
  const double experts = attention + 2 * BT * D * 4 + 2 * 3 * 2 * BT * D * 512;
  CHECK(model_flops(batched) == Approx(3 * (dense + experts + kLogits)).epsilon(1e-12));
  CHECK(model_flops(grouped) == model_flops(batched));
}

// megablox's grid (jax/experimental/pallas/ops/tpu/megablox/gmm.py,
// make_group_metadata) visits one tile of `tile` rows per (tile, group)
// pair that overlap. The 512 rows of the block with experts (B T, top 1)
// sorted into 4 experts whose per-step counts are no multiples of the tile
// (e.g. 97, 140, 131, 144): with tile 512 each of the 4 groups visits the
// one tile, 4 visits; with tile 128, 4 tiles and the 3 groups after the
// first each start inside one, 7 visits. Every expert matmul (up, gate,
// down) in each pass (forward, input and weight gradient) computes those
// visits' rows in place of 512; model FLOPs do not move.
TEST_CASE("train: a grouped expert matmul computes whole tiles and a group starting inside one costs it again",
          "[workloads][train][shapes]") {
  const std::string moe =
      "head_dim: 64, mlp: swiglu, experts: 4, top_k: 1, expert_d_ff: 512, first_dense_layers: 1, "
      "expert_matmul: grouped, grouped_tile: ";
  const auto mxu = [](const nlohmann::json& r) { return r["per_chip"][0]["mxu_flops"].get<double>(); };
  const auto exact = report("tiles-exact", moe + "0");
  for (const auto& [tile, visits] : {std::pair{512.0, 4.0}, std::pair{128.0, 7.0}}) {
    INFO("tile " << tile);
    const auto tiled = report("tiles-" + std::to_string(int(tile)), moe + std::to_string(int(tile)));
    const double extra_rows = tile * visits - BT;
    CHECK(mxu(tiled) - mxu(exact) == Approx(3 * 3 * 2 * extra_rows * D * 512).epsilon(1e-9));
    CHECK(model_flops(tiled["result"]) == model_flops(exact["result"]));
  }
}

TEST_CASE("train: vocabulary tiling keeps 1/k of the logits, recomputes them, model FLOPs unchanged",
          "[workloads][train][shapes]") {
  const auto whole = train("vocab-whole", "head_dim: 64");
  const auto tiled = train("vocab-tiled", "head_dim: 64, vocab_tiles: 8");
  CHECK(model_flops(tiled) == model_flops(whole));
  // The loss layer's stash: B T V BF16 probabilities, 1/8 of them tiled.
  const double saved = 2 * BT * V * (1 - 1.0 / 8);
  CHECK(whole["memory"]["activations_bytes"].get<double>() - tiled["memory"]["activations_bytes"].get<double>() ==
        saved);
  // HFU counts the recomputed logits, 2 BT D V more executed FLOPs.
  const double ratio = tiled["hfu"].get<double>() / tiled["mfu"].get<double>();
  CHECK(ratio == Approx((model_flops(whole) + kLogits) / model_flops(whole)).epsilon(1e-9));
}

TEST_CASE("train: query/key and post norms change the stash, not the model FLOPs", "[workloads][train][shapes]") {
  const auto plain = train("norms-plain", "head_dim: 64, kv_heads: 2");
  const auto normed = train("norms", "head_dim: 64, kv_heads: 2, qk_norm: true, post_norms: true");
  CHECK(model_flops(normed) == model_flops(plain));
  // Per block: pre-norm Q (N H) and K (2 H) beside the normed ones, and the
  // attention and MLP outputs (D each), BF16 per token.
  const double extra = L * 2 * BT * (N * 64 + 2 * 64 + 2 * D);
  CHECK(normed["memory"]["activations_bytes"].get<double>() - plain["memory"]["activations_bytes"].get<double>() ==
        extra);
}

}  // namespace test_model_shapes
