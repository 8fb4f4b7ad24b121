// Mixture of experts under expert parallelism (docs/training.md#mixture-of-experts),
// against hand counts: a uniform-routing step is the dense model of the
// same active FLOPs plus its four all-to-alls per block, each timed by a
// collective run of its own; a skewed one grows by the busiest chip's
// extra expert work (its matmuls timed by matmul runs of their own) and
// its all-to-alls; memory, dropped tokens and the busiest expert by hand;
// the same seed gives the same report.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "app/host_fields.h"
#include "models/routing.h"
#include "workloads/experiment_fixture.h"

namespace test_moe {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// 8 TPU v4 chips on a ring, one expert each: 2 blocks of d_model 1024, 8
// experts of d_ff 16384 (ReLU), top 1; 4 sequences of 512 tokens per
// chip. Gradients are not all-reduced (sync_gradients: false), so the step
// is compute and all-to-alls.
constexpr double kD = 1024, kF = 16384, kLayers = 2, kTokens = 2048, kTopK = 1, kExperts = 8;

std::string moe_yaml(const std::string& model_extra, const std::string& optimizer = "sgd") {
  return R"(
chip: tpu-v4
pod: {topology: ring, shape: [8]}
mesh: {expert: 8}
workload:
  kind: train
  model: {type: transformer, layers: 2, d_model: 1024, d_ff: 16384, heads: 8, head_dim: 128, seq_len: 512,
          vocab: 4096, mlp: relu, experts: 8, top_k: 1)" +
         model_extra + R"(}
  global_batch: 32
  parallelism: {expert: expert, sync_gradients: false}
  optimizer: )" +
         optimizer + "\n";
}

// One expert's forward and backward on m tokens: six matmuls of m x D x
// F multiply-adds (up and down forward, their input and weight
// gradients), each timed by a `kind: matmul` run of its own, and ReLU's
// forward and backward on the vector units (1 FLOP per element each,
// models/elementwise_spec.cpp; tpu-v4.yaml: 2 cores x 4096 FLOPs per
// cycle at 1.05 GHz).
double expert_s(double m) {
  const nlohmann::json mm = run(write_yaml("moe-expert-matmul-" + std::to_string(int(m)), R"(
chip: tpu-v4
workload: {kind: matmul, m: )" + std::to_string(int(m)) + ", k: 1024, n: 16384}\n"));
  return 6 * mm["result"]["step_time_s"].get<double>() + 2 * m * kF / (2 * 4096 * 1.05e9);
}

double step_s(const nlohmann::json& r) { return r["result"]["step_time_s"].get<double>(); }

// An all-to-all of `bytes` per chip alone on the 8 chips' ring.
double all_to_all_alone_s(const std::string& name, double bytes) {
  return step_s(run(write_yaml(name, R"(
chip: tpu-v4
pod: {topology: ring, shape: [8]}
workload: {kind: collective, op: all_to_all, bytes: )" +
                                         std::to_string(std::uint64_t(bytes)) + "}\n")));
}

// The all-to-alls' own time (what each took once its last chip joined).
double all_to_all_s(const nlohmann::json& r) {
  double s = 0;
  for (const auto& c : r["collectives"])
    if (c["op"] == "all_to_all") s += c["time_s"].get<double>() - c.value("wait_s", 0.0);
  return s;
}

}  // namespace

TEST_CASE("moe: a uniform-routing step is the dense model of the same active FLOPs plus its all-to-alls",
          "[workloads][train][moe]") {
  const nlohmann::json moe = run(write_yaml("moe-uniform", moe_yaml("")));
  // The dense twin: every token through one MLP of 16384, the same
  // matmuls on every chip as its one expert on the 2048 tokens uniform
  // routing sends it.
  const nlohmann::json dense = run(write_yaml("moe-dense-twin", R"(
chip: tpu-v4
pod: {topology: ring, shape: [8]}
mesh: {expert: 8}
workload:
  kind: train
  model: {type: transformer, layers: 2, d_model: 1024, d_ff: 16384, heads: 8, head_dim: 128, seq_len: 512,
          vocab: 4096, mlp: relu}
  global_batch: 32
  parallelism: {data: expert, sync_gradients: false}
  optimizer: sgd
)"));
  // Each chip's buffer: its 2048 tokens x top 1 x d_model 1024 in BF16.
  const double bytes = kTokens * kTopK * kD * 2;
  const double one = all_to_all_alone_s("moe-a2a", bytes);
  // Dispatch and combine forward, their gradients backward: 4 per block.
  const double predicted = step_s(dense) + 4 * kLayers * one;
  INFO("moe " << step_s(moe) << " s, dense " << step_s(dense) << " s, all-to-all " << one << " s");
  CHECK(std::abs(step_s(moe) - predicted) / predicted < 0.03);
  // The forward pass has nothing to run under its all-to-alls: the dense
  // forward plus two per block. The backward's return of the input
  // gradients runs under the experts' weight gradients (both wait only
  // for the output gradient), so the step lies below the sum by at most
  // one all-to-all per block.
  const auto forward = [](const nlohmann::json& r) { return r["result"]["phases"]["forward_s"].get<double>(); };
  const double forward_predicted = forward(dense) + 2 * kLayers * one;
  CHECK(std::abs(forward(moe) - forward_predicted) / forward_predicted < 0.03);
  CHECK(step_s(moe) <= predicted);
  CHECK(step_s(moe) >= predicted - kLayers * one);
  CHECK(moe["result"]["experts"]["busiest_share"].get<double>() == Approx(1 / kExperts));
  CHECK(moe["result"]["experts"]["dropped_tokens"] == 0);
  // The same matmul FLOPs per token, the router's 2 D E (x 3, forward and backward) aside.
  const double router = 3 * 2 * kD * kExperts * kTokens * 8 * kLayers;
  CHECK(moe["result"]["model_flops"].get<double>() - router == Approx(dense["result"]["model_flops"].get<double>()));
}

TEST_CASE("moe: with skew the step grows by the busiest chip's extra expert work and its all-to-alls",
          "[workloads][train][moe]") {
  const nlohmann::json uniform = run(write_yaml("moe-uniform-2", moe_yaml("")));
  // Expert 0 (on chip 0) gets 42 of every 112 assignments (0.375), the
  // others 10: of each chip's 2048 tokens, 768 go to expert 0, so chip 0's
  // expert works on 8 x 768 = 6144 tokens, 3 times the balanced 2048.
  const std::string skew = ", routing: {distribution: measured, loads: [42, 10, 10, 10, 10, 10, 10, 10]}";
  const nlohmann::json skewed = run(write_yaml("moe-skewed", moe_yaml(skew)));
  const double busiest = 8 * 768, balanced = kTokens * kTopK;
  CHECK(skewed["result"]["experts"]["busiest_share"].get<double>() == Approx(0.375));
  CHECK(skewed["result"]["experts"]["busiest_expert"] == 0);
  CHECK(skewed["result"]["experts"]["chip_imbalance"].get<double>() == Approx(busiest / balanced));
  // The step follows chip 0: every block's expert work grows by its extra
  // tokens' worth, and the all-to-alls by what their unequal blocks cost.
  const double predicted = step_s(uniform) + kLayers * (expert_s(busiest) - expert_s(balanced)) + all_to_all_s(skewed) -
                           all_to_all_s(uniform);
  INFO("uniform " << step_s(uniform) << " s, skewed " << step_s(skewed) << " s, predicted " << predicted << " s");
  const double growth = step_s(skewed) - step_s(uniform);
  CHECK(growth > 0);
  // 5% of the growth: the backward all-to-all's overlap with the weight
  // gradients differs between the two steps.
  CHECK(std::abs(step_s(skewed) - predicted) < 0.05 * growth);
  // The other chips wait for chip 0 at each combine (and the return of its
  // input gradients): the report names it.
  const auto& waiting = skewed["result"]["communication"]["waiting"];
  REQUIRE(waiting.size() == 1);
  CHECK(waiting[0]["op"] == "all_to_all");
  CHECK(waiting[0]["gated_by"][0]["chip"] == 0);
}

TEST_CASE("moe: parallelism.expert_all_to_all picks the all-to-alls' algorithm", "[workloads][train][moe]") {
  // The uniform step on a 2 x 4 pod (expert = x and y): each of its 4 x 2
  // all-to-alls takes what a collective run of its own with that algorithm
  // takes (docs/interconnect.md: dimension_ordered, one phase per axis).
  const std::string pod = "pod: {topology: torus2d, shape: [2, 4], wraparound: [false, true]}\n";
  const auto moe = [&](const std::string& algorithm) {
    std::string yaml = moe_yaml("");
    const std::string ring = "pod: {topology: ring, shape: [8]}\n", sync = "sync_gradients: false}";
    yaml.replace(yaml.find(ring), ring.size(), pod);
    yaml.replace(yaml.find(sync), sync.size(), "sync_gradients: false, expert_all_to_all: " + algorithm + "}");
    return run(write_yaml("moe-a2a-" + algorithm, yaml));
  };
  const double bytes = kTokens * kTopK * kD * 2;
  const auto one = [&](const std::string& algorithm) {
    return run(write_yaml("moe-a2a-one-" + algorithm, "chip: tpu-v4\n" + pod +
                                                          "workload: {kind: collective, op: all_to_all, bytes: " +
                                                          std::to_string(std::uint64_t(bytes)) +
                                                          ", algorithm: " + algorithm + "}\n"))["result"]["step_time_s"]
        .get<double>();
  };
  for (const std::string algorithm : {"direct", "dimension_ordered"}) {
    INFO(algorithm);
    const nlohmann::json r = moe(algorithm);
    int n = 0;
    for (const auto& c : r["collectives"])
      if (c["op"] == "all_to_all") {
        CHECK(c["algorithm"] == algorithm);
        ++n;
      }
    CHECK(n == 4 * kLayers);
    CHECK(all_to_all_s(r) == Approx(4 * kLayers * one(algorithm)).epsilon(0.03));
  }
}

TEST_CASE("moe: memory per chip holds its own experts' weights and their optimizer state", "[workloads][train][moe]") {
  const nlohmann::json r = run(write_yaml("moe-memory", moe_yaml("", "adam")));
  // Per chip: embedding and unembedding V x D, the final norm 2D; per
  // block: Q, K, V, O 4 D^2, two layer norms 4D, the router D x 8 and one
  // expert (8 over 8 chips) of up and down, 2 D F.
  const double V = 4096;
  const double block = 4 * kD * kD + 4 * kD + kD * kExperts + 2 * kD * kF;
  const double params = 2 * V * kD + 2 * kD + kLayers * block;
  const auto& m = r["result"]["memory"];
  CHECK(m["params_bytes"].get<double>() == 2 * params);  // BF16
  CHECK(m["grads_bytes"].get<double>() == 2 * params);
  // Adam with FP32 state and BF16 weights: two moments and a master copy, 12 bytes.
  CHECK(m["optimizer_bytes"].get<double>() == 12 * params);
  // The model's parameters count all 8 experts.
  CHECK(r["result"]["model"]["params"].get<double>() == params + kLayers * 7 * 2 * kD * kF);
}

TEST_CASE("moe: tokens above an expert's capacity are dropped, counted by hand", "[workloads][train][moe]") {
  // A small case of the router alone: 2 chips of 8 tokens, 4 experts,
  // top 2, loads 4:2:1:1: each chip's 16 assignments split 8, 4, 2, 2;
  // capacity ceil(1.0 x 16 / 4) = 4 keeps 4, 4, 2, 2: 4 dropped per chip.
  models::RoutingConfig cfg;
  cfg.distribution = "measured";
  cfg.loads = {4, 2, 1, 1};
  const models::LayerRouting r = models::route_layer(cfg, 4, 2, 1.0, 2, 8, 0);
  CHECK(r.capacity == 4);
  CHECK(r.routed_to(0) == 16);
  CHECK(r.kept_by(0) == 8);
  CHECK(r.dropped() == 8);
  // And through a step: expert 0's 768 of each chip's 2048 against a
  // capacity of ceil(1.0 x 2048 / 8) = 256: 512 dropped per chip, 8 chips,
  // 2 blocks (the others' 182 or 183 fit).
  const nlohmann::json step = run(write_yaml(
      "moe-dropped",
      moe_yaml(", capacity_factor: 1.0, routing: {distribution: measured, loads: [42, 10, 10, 10, 10, 10, 10, 10]}")));
  CHECK(step["result"]["experts"]["dropped_tokens"] == 512 * 8 * 2);
  CHECK(step["result"]["experts"]["routed_tokens"] == 2048 * 8 * 2);
}

TEST_CASE("moe: einsum dispatch under expert parallelism moves and computes capacity-padded buffers, by hand",
          "[workloads][train][moe]") {
  // GShard's one-hot einsums (MaxText's dense_matmul): each of a chip's 4
  // sequences of 512 tokens fills C = max(ceil(512 x 1 / 8) x 2, 2) = 128
  // rows per expert at capacity_factor 2, filled or not. Each all-to-all
  // moves a chip's 4 x 128 rows for each of the 8 experts, 1024 BF16 wide:
  // 8 MiB, twice the 2048 routed tokens a dropless dispatch moves.
  const std::string einsum = ", expert_matmul: einsum, capacity_factor: 2.0";
  const nlohmann::json ep = run(write_yaml("moe-einsum-ep", moe_yaml(einsum)));
  const double bytes = 4 * 128 * kExperts * kD * 2;
  CHECK(bytes == 2 * kTokens * kTopK * kD * 2);
  const nlohmann::json& summary = ep["collective_summary"];
  REQUIRE(summary.size() == 1);
  CHECK(summary[0]["op"] == "all_to_all");
  CHECK(summary[0]["bytes"].get<double>() == bytes);
  CHECK(summary[0]["count"] == 4 * kLayers);
  // Each takes what the same all-to-all takes alone.
  const double one = all_to_all_alone_s("moe-einsum-a2a", bytes);
  CHECK(summary[0]["time_s"].get<double>() / summary[0]["count"].get<double>() == Approx(one).epsilon(0.01));
  // Where the buffers are computed moves, not how many rows: the data-
  // parallel twin (every expert on every chip, its own buffers only)
  // executes the same FLOPs per chip.
  std::string dp = moe_yaml(einsum);
  dp.replace(dp.find("{expert: expert,"), 16, "{data: expert,");
  const nlohmann::json twin = run(write_yaml("moe-einsum-dp", dp));
  CHECK(twin["collective_summary"].empty());
  CHECK(ep["result"]["flops"].get<double>() == twin["result"]["flops"].get<double>());
}

TEST_CASE("moe: zipf routing is drawn from the seed: the same seed, the same report", "[workloads][train][moe]") {
  const auto simulated = [](nlohmann::json r) {
    for (const char* f : testing_cli::kHostFields) r["simulator"].erase(f);
    return r;
  };
  const std::string zipf = ", routing: {distribution: zipf, skew: 1.2, seed: ";
  const nlohmann::json a = simulated(run(write_yaml("moe-zipf-a", moe_yaml(zipf + "7}"))));
  const nlohmann::json b = simulated(run(write_yaml("moe-zipf-b", moe_yaml(zipf + "7}"))));
  const nlohmann::json c = simulated(run(write_yaml("moe-zipf-c", moe_yaml(zipf + "8}"))));
  CHECK(a["result"] == b["result"]);
  CHECK(a["result"]["experts"] != c["result"]["experts"]);
  CHECK(a["result"]["step_time_s"] != c["result"]["step_time_s"]);
  // Zipf 1.2 over 8 experts: the hottest expects 1 / H(8, 1.2) = 0.37 of
  // the assignments (top 1), well above a balanced 1/8.
  CHECK(a["result"]["experts"]["busiest_share"].get<double>() > 1.5 / kExperts);
}

TEST_CASE("moe: the shipped Mixtral-8x7B experiment has the paper's parameters and fits a v5p",
          "[workloads][train][moe][examples]") {
  const nlohmann::json r = run(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/train-mixtral-8x7b-v5p-32.yaml");
  // Jiang et al. 2024 (docs/reference/model-shapes.md#mixtral-8x7b.params): 46.7B parameters.
  CHECK(r["result"]["model"]["params"].get<double>() == Approx(46.7e9).epsilon(0.001));
  CHECK(r["result"]["memory"]["fits"] == true);
  CHECK(r["result"]["parallelism"]["expert"]["degree"] == 8);
  CHECK(r["result"]["experts"]["busiest_share"].get<double>() == Approx(1.0 / 8));
  CHECK(r["result"]["mfu"].get<double>() > 0);
}

}  // namespace test_moe
