// Serving a mixture of experts (docs/serving.md#mixture-of-experts)
// against hand counts: a decode step reads the weights of the experts its
// tokens go to and no others, so at batch 1 with top-2 of 8 experts it
// reads 2 experts' weights a block, at a large batch all 8; with random
// routing the experts a block's B tokens touch are, in expectation,
// E (1 - (1 - k/E)^B) (each token's k distinct picks miss a given expert
// with probability 1 - k/E); expert parallelism's dispatch all-to-all
// sends each chip's tokens x top_k rows of d_model; and one expert of
// top 1 is the dense model plus its router.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>

#include "models/routing.h"
#include "serving_model.h"
#include "workloads/experiment_fixture.h"

namespace test_moe_serving {

using namespace testing_serving;
using testing_workloads::run;
using testing_workloads::write_yaml;

namespace {

// Two Mixtral-8x7B blocks (docs/reference/model-shapes.md#mixtral-8x7b):
// d_model 4096, 32 query and 8 KV heads of 128, 8 SwiGLU experts of
// 14336, top 2, a 32000-token vocabulary, untied embeddings.
constexpr double kLayers = 2, kD = 4096, kF = 14336, kHeads = 32, kKvHeads = 8, kHeadDim = 128, kVocab = 32000;
constexpr double kExperts = 8, kTopK = 2;
constexpr std::uint64_t kPrompt = 112, kDecode = 32;
constexpr double kContext = kPrompt + (kDecode + 1) / 2;  // the mean decode step's (docs/serving.md)

// Parameters a decode step reads whole when `touched` experts of each
// block get tokens: Q, K, V, O, two layer norms' scale and bias and the
// router (d_model x experts) per block, each touched expert's up, gate
// and down, the final norm and the unembedding (the embedding table is
// gathered, a row per sequence, not read whole).
double params_read(double touched_per_block) {
  const double attention = kD * kHeads * kHeadDim * 2 + 2 * kD * kKvHeads * kHeadDim;
  const double block = attention + 4 * kD + kD * kExperts;
  return kLayers * (block + touched_per_block * 3 * kD * kF) + 2 * kD + kD * kVocab;
}
// KV-cache bytes a decode step of `batch` sequences reads, bf16.
double kv_read(double batch) { return batch * kContext * 2 * kLayers * kKvHeads * kHeadDim * 2; }

std::string moe_model(const std::string& routing, const std::string& experts = "experts: 8, top_k: 2") {
  return "{type: transformer, layers: 2, d_model: 4096, d_ff: 14336, heads: 32, kv_heads: 8, head_dim: 128, "
         "seq_len: 256, vocab: 32000, mlp: swiglu, attention: flash, " +
         experts + (routing.empty() ? "" : ", routing: " + routing) + "}";
}

nlohmann::json decode(const std::string& name, const std::string& model, std::uint64_t batch,
                      const std::string& pod = "", const std::string& parallelism = "") {
  return run(write_yaml(name, "name: " + name + "\nchip: tpu-v5e\n" + pod +
                                  "workload:\n  kind: inference\n  model: " + model +
                                  "\n  batch: " + std::to_string(batch) + "\n  prompt_len: " + std::to_string(kPrompt) +
                                  "\n  decode_len: " + std::to_string(kDecode) + "\n  phase: decode\n" + parallelism));
}

// The distinct experts block `layer`'s `tokens` tokens go to, drawn as the
// router draws them (models/routing.h), on one chip.
std::uint64_t distinct(const models::RoutingConfig& cfg, std::uint64_t tokens, std::uint64_t layer) {
  const models::LayerRouting r = models::route_layer(cfg, 8, 2, 0, 1, tokens, layer);
  std::uint64_t n = 0;
  for (std::uint32_t e = 0; e < 8; ++e) n += r.routed_to(e) > 0;
  return n;
}

}  // namespace

TEST_CASE("MoE decode at batch 1 reads top_k experts' weights, the non-expert weights and the KV cache",
          "[inference][moe]") {
  // Uniform routing splits the step's 2 assignments over 2 experts.
  const nlohmann::json r = decode("moe-decode-1", moe_model(""), 1)["result"]["inference"];
  CHECK(r["decode"]["experts_read"].get<double>() == 2);
  CHECK(r["decode"]["weights_bytes"].get<double>() == Approx(2 * params_read(kTopK)));
  // Memory-bound: weights and KV bytes over HBM bandwidth (the FLOPs,
  // 2 per weight read, are 0.4% of the chip's for that time).
  const double hand = (2 * params_read(kTopK) + kv_read(1)) / kV5eHbmBandwidth;
  CHECK(r["tpot_s"].get<double>() == Approx(hand).epsilon(0.05));
  // A quarter of the experts' bytes: the step is well under the one that reads all 8.
  CHECK(r["tpot_s"].get<double>() < 0.5 * 2 * params_read(kExperts) / kV5eHbmBandwidth);
}

TEST_CASE("MoE decode at a large batch reads every expert", "[inference][moe]") {
  const nlohmann::json r = decode("moe-decode-64", moe_model(""), 64)["result"]["inference"];
  CHECK(r["decode"]["experts_read"].get<double>() == 8);
  CHECK(r["decode"]["weights_bytes"].get<double>() == Approx(2 * params_read(kExperts)));
  // Each expert's 16 tokens keep it memory-bound.
  const double hand = (2 * params_read(kExperts) + kv_read(64)) / kV5eHbmBandwidth;
  CHECK(r["tpot_s"].get<double>() == Approx(hand).epsilon(0.05));
  // The experts' FLOPs: 64 tokens x top 2 x 3 matmuls of 2 D F.
  // The other weights' (all but the layer norms'), and attention's two
  // matmuls over the context for each query head; the vector units' work
  // is under 1% more.
  const double other =
      2 * 64 * (params_read(0) - 4 * kD * kLayers - 2 * kD) + 2 * 2 * 64 * kHeads * kHeadDim * kContext * kLayers;
  const double expert = 64 * kTopK * 3 * 2 * kD * kF * kLayers;
  CHECK(r["decode"]["flops"].get<double>() == Approx(other + expert).epsilon(0.01));
}

TEST_CASE("random routing touches E (1 - (1 - k/E)^B) experts in expectation", "[inference][moe]") {
  // zipf with skew 0: every expert equally likely, k distinct per token.
  models::RoutingConfig cfg;
  cfg.distribution = "zipf";
  cfg.skew = 0;
  for (std::uint64_t batch : {1, 2, 4, 8, 16}) {
    INFO("batch " << batch);
    double sum = 0;
    constexpr int kSeeds = 4000;
    for (int s = 1; s <= kSeeds; ++s) {
      cfg.seed = std::uint64_t(s);
      sum += double(distinct(cfg, batch, 0));
    }
    const double expected = kExperts * (1 - std::pow(1 - kTopK / kExperts, double(batch)));
    CHECK(sum / kSeeds == Approx(expected).epsilon(0.02));
  }
}

TEST_CASE("a randomly routed decode step reads exactly the experts its draws touch", "[inference][moe]") {
  models::RoutingConfig cfg;
  cfg.distribution = "zipf";
  cfg.skew = 0;
  cfg.seed = 5;
  const double touched = double(distinct(cfg, 4, 0) + distinct(cfg, 4, 1)) / kLayers;  // per block, the host's count
  const nlohmann::json r =
      decode("moe-decode-random", moe_model("{distribution: zipf, skew: 0, seed: 5}"), 4)["result"]["inference"];
  CHECK(r["decode"]["experts_read"].get<double>() == touched);
  CHECK(r["decode"]["weights_bytes"].get<double>() == Approx(2 * params_read(touched)));
  CHECK(r["tpot_s"].get<double>() == Approx((2 * params_read(touched) + kv_read(4)) / kV5eHbmBandwidth).epsilon(0.05));
}

TEST_CASE("expert parallelism's dispatch and combine move tokens x top_k x d_model bf16 per chip", "[inference][moe]") {
  // 8 chips, one expert each, 4 sequences a chip.
  const nlohmann::json rep = decode("moe-decode-ep", moe_model(""), 32,
                                    "pod: {topology: ring, shape: [8], wraparound: [true]}\nmesh: {expert: 8}\n",
                                    "  parallelism: {expert: expert}\n");
  int dispatches = 0, combines = 0;
  for (const auto& c : rep["collectives"]) {
    const std::string name = c["name"];
    const bool dispatch = name.find(".dispatch all-to-all") != std::string::npos;
    const bool combine = name.find(".combine all-to-all") != std::string::npos;
    if (!dispatch && !combine) continue;
    (dispatch ? dispatches : combines) += 1;
    INFO(name);
    CHECK(c["op"] == "all_to_all");
    CHECK(c["bytes"].get<double>() == 4 * kTopK * kD * 2);
  }
  CHECK(dispatches == kLayers);
  CHECK(combines == kLayers);
  const nlohmann::json& r = rep["result"]["inference"];
  CHECK(r["parallelism"]["expert"]["degree"] == 8);
  // Each chip holds the non-expert weights and one expert a block.
  CHECK(rep["result"]["memory"]["params_bytes"].get<double>() == 2 * (params_read(1) + kD * kVocab));
}

TEST_CASE("one expert of top 1 serves as the dense model plus its router", "[inference][moe]") {
  const std::string dense =
      "{type: transformer, layers: 2, d_model: 4096, d_ff: 14336, heads: 32, kv_heads: 8, "
      "head_dim: 128, seq_len: 256, vocab: 32000, mlp: swiglu, attention: flash}";
  for (std::uint64_t batch : {1, 16}) {
    INFO("batch " << batch);
    const nlohmann::json d = decode("dense-twin-" + std::to_string(batch), dense, batch)["result"]["inference"];
    const nlohmann::json m =
        decode("moe-one-" + std::to_string(batch), moe_model("", "experts: 1, top_k: 1"), batch)["result"]["inference"];
    // The router's d_model x 1 weights per block are all that is added.
    CHECK(m["decode"]["weights_bytes"].get<double>() - d["decode"]["weights_bytes"].get<double>() == 2 * kD * kLayers);
    // Its matmul and softmax are a few microseconds a block.
    CHECK(m["tpot_s"].get<double>() == Approx(d["tpot_s"].get<double>()).epsilon(0.01));
  }
}

}  // namespace test_moe_serving
