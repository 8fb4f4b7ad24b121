// Today's model shapes (docs/models.md) served by kind: inference on one
// TPU v5e. Hand counts of the attention FLOPs a sliding window removes
// from the prefill (causal pairs sum_i i against sum_i min(i, W)) and from
// a decode step (the context against the window's W keys), and of a
// decode step's latent attention (per sequence, heads x (nope + rope)
// FLOP pairs per cached key for the scores, heads x v_head_dim for P V);
// and every other mechanism runs both phases.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "workloads/experiment_fixture.h"

namespace test_model_shapes_serving {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// 2 blocks, D 512, F 2048, 8 heads (2 KV heads) of 64; 4 prompts of 256,
// 32 tokens generated.
constexpr double kBatch = 4, kPrompt = 256, kHeads = 8, kHeadDim = 64;
// The mean decode step's context: prompt + (decode + 1) / 2 (docs/serving.md).
constexpr double kContext = 256 + 16;

nlohmann::json serve(const std::string& name, const std::string& extra, const std::string& phase) {
  return run(write_yaml("serve-shapes-" + name, R"(chip: tpu-v5e
workload:
  kind: inference
  model: {type: transformer, layers: 2, d_model: 512, d_ff: 2048, heads: 8, seq_len: 512, vocab: 4096,
          attention: flash, )" + extra + R"(}
  batch: 4
  prompt_len: 256
  decode_len: 32
  phase: )" + phase + "\n"))["result"]["inference"];
}

}  // namespace

TEST_CASE("serving: a sliding window cuts the local block's attention FLOPs by hand", "[inference][shapes]") {
  const std::string gqa = "kv_heads: 2, head_dim: 64";
  const std::string window = gqa + ", sliding_window: 64, sliding_window_pattern: 2";  // block 0 local
  double removed_pairs = 0;
  for (double i = 1; i <= kPrompt; ++i) removed_pairs += i - std::min(i, 64.0);
  // S = Q K^T and O = P V: 2 FLOPs per pair and head dimension each, for every query head.
  const double per_pair = 2 * 2 * kBatch * kHeads * kHeadDim;
  const auto full = serve("full-prefill", gqa, "prefill"), local = serve("window-prefill", window, "prefill");
  CHECK(full["prefill"]["flops"].get<double>() - local["prefill"]["flops"].get<double>() ==
        Approx(per_pair * removed_pairs).epsilon(1e-9));
  const auto full_d = serve("full-decode", gqa, "decode"), local_d = serve("window-decode", window, "decode");
  // A decode step: the same two matmuls per cached key, and the softmax's
  // 5 FLOPs per score (ELECTRA's count, models/elementwise_spec.cpp).
  CHECK(full_d["decode"]["flops"].get<double>() - local_d["decode"]["flops"].get<double>() ==
        Approx((per_pair + 5 * kBatch * kHeads) * (kContext - 64)).epsilon(1e-9));
}

// The cache is sized by models::TransformerConfig::kv_width() (latent
// attention has no head_dim).
TEST_CASE("serving: a decode step of latent attention by hand", "[inference][shapes][mla]") {
  const std::string mla = "kv_lora_rank: 64, qk_nope_head_dim: 32, qk_rope_head_dim: 16, v_head_dim: 48";
  const auto a = serve("mla-decode", mla, "decode");
  const auto b = serve("mla-decode-q", mla + ", q_lora_rank: 128", "decode");
  // The query latent adds D x 128 and swaps D x N(n + r) for 128 x N(n + r)
  // in each block's weight matmuls, per sequence: 2 FLOPs per multiply-add;
  // and its norm, 5 FLOPs per element (ELECTRA's count).
  const double delta = 2 * (2 * kBatch * (512 * 128 + 128 * kHeads * 48 - 512 * kHeads * 48) + 5 * kBatch * 128);
  CHECK(b["decode"]["flops"].get<double>() - a["decode"]["flops"].get<double>() == Approx(delta).epsilon(1e-9));
  CHECK(a["tpot_s"].get<double>() > 0);
}

TEST_CASE("serving: every mechanism runs prefill and decode", "[inference][shapes]") {
  for (const std::string extra :
       {"kv_heads: 2, head_dim: 64, mlp: geglu, qk_norm: true, post_norms: true",
        "kv_heads: 2, head_dim: 64, mlp: swiglu, experts: 4, top_k: 1, shared_experts: 1, expert_d_ff: 512, "
        "first_dense_layers: 1, expert_matmul: grouped",
        "kv_heads: 2, head_dim: 64, vocab_tiles: 4"}) {
    INFO(extra);
    const auto r = serve("both-" + std::to_string(std::hash<std::string>{}(extra) % 100000), extra, "both");
    CHECK(r["ttft_s"].get<double>() > 0);
    CHECK(r["tpot_s"].get<double>() > 0);
  }
}

}  // namespace test_model_shapes_serving
