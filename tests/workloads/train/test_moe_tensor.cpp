// Tensor parallelism of a mixture of experts (models::TransformerConfig::
// expert_tensor_split; docs/reference/maxtext-moe-tensor.md): each tensor
// rank holds and computes its slice of every expert's MLP width, and the
// experts' partial sums are all-reduced over the tensor axis. Against hand
// counts: the experts' FLOPs and weight bytes per chip (isolated by
// changing only the experts' width, so that everything else cancels) are
// the whole experts' over the tensor degree, with and without expert
// parallelism; the experts' all-reduces move their rows x d_model in BF16
// and take what that all-reduce takes alone.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <tuple>

#include "workloads/experiment_fixture.h"

namespace test_moe_tensor {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// 2 blocks of d_model 1024, 8 experts (ReLU, top 2), 4 sequences of 512
// tokens per tensor group; every chip of a tensor group runs its group's
// 2048 tokens, so its experts compute 2048 x 2 = 4096 rows a block.
constexpr double kD = 1024, kLayers = 2, kExperts = 8, kRows = 4096;

struct Mesh {
  std::string name;
  std::uint32_t tensor, expert;
};

// The pod and parallelism of `m` (2 chips on a line, or 2 x 2), the
// experts `width` wide, each expert group taking 4 sequences.
std::string moe_yaml(const Mesh& m, int width, const std::string& optimizer = "sgd") {
  const std::uint32_t chips = m.tensor * m.expert;
  std::string pod, mesh, par = "sync_gradients: false";
  if (chips == 2) pod = "pod: {topology: ring, shape: [2], wraparound: false}\n";
  if (chips == 4) pod = "pod: {topology: torus2d, shape: [2, 2], wraparound: false}\n";
  if (m.tensor > 1 && m.expert > 1) mesh = "mesh: {expert: 2, tensor: 2}\n";
  if (m.tensor > 1 && m.expert == 1) mesh = "mesh: {tensor: 2}\n";
  if (m.tensor == 1 && m.expert > 1) mesh = "mesh: {expert: 2}\n";
  if (m.tensor > 1) par += ", tensor: tensor";
  if (m.expert > 1) par += ", expert: expert";
  return "chip: tpu-v4\n" + pod + mesh + R"(workload:
  kind: train
  model: {type: transformer, layers: 2, d_model: 1024, d_ff: 4096, heads: 8, head_dim: 128, seq_len: 512,
          vocab: 4096, mlp: relu, experts: 8, top_k: 2, expert_matmul: grouped, expert_d_ff: )" +
         std::to_string(width) + "}\n  global_batch: " + std::to_string(4 * m.expert) + "\n  parallelism: {" + par +
         "}\n  optimizer: " + optimizer + "\n";
}

nlohmann::json run_moe(const Mesh& m, int width, const std::string& optimizer = "sgd") {
  return run(
      write_yaml("moe-tp-" + m.name + "-" + std::to_string(width) + "-" + optimizer, moe_yaml(m, width, optimizer)));
}

double chip0_mxu_flops(const nlohmann::json& r) { return r["per_chip"][0]["mxu_flops"].get<double>(); }

const Mesh kWhole{"tp1", 1, 1}, kTp2{"tp2", 2, 1}, kEp2{"ep2", 1, 2}, kEp2Tp2{"ep2tp2", 2, 2};

}  // namespace

TEST_CASE("moe tensor: each rank computes its slice of every expert, the whole experts' FLOPs over the degree",
          "[workloads][train][moe]") {
  // Widening every expert from 1024 to 2048 adds, per block, six matmuls
  // (up and down: forward, input and weight gradients) of rows x D x 1024
  // multiply-adds on the chip holding whole experts; everything else of
  // the step is unchanged, so the difference is the experts' own work.
  // The grouped kernel computes whole tiles of 512 rows, one per (tile,
  // expert) pair that overlap (docs/models.md#grouped-matmul-tiles): the
  // 4096 rows are 8 tiles, and each expert after the first starts inside
  // one. Expert parallelism of 2 gives each chip 4 of the 8 experts and
  // the same 4096 rows (its 2048 tokens x top 2, uniform routing).
  for (const auto& [whole, split, groups] : {std::make_tuple(kWhole, kTp2, 8.0), std::make_tuple(kEp2, kEp2Tp2, 4.0)}) {
    INFO(whole.name << " against " << split.name);
    const double whole_added = kLayers * 6 * 2 * (512 * (kRows / 512 + groups - 1)) * kD * 1024;
    const double added_whole = chip0_mxu_flops(run_moe(whole, 2048)) - chip0_mxu_flops(run_moe(whole, 1024));
    const double added_split = chip0_mxu_flops(run_moe(split, 2048)) - chip0_mxu_flops(run_moe(split, 1024));
    CHECK(added_whole == Approx(whole_added));
    CHECK(added_split == Approx(whole_added / 2));
  }
}

TEST_CASE("moe tensor: the experts' partial sums are all-reduced over tensor, rows x d_model in BF16",
          "[workloads][train][moe]") {
  for (const Mesh& m : {kTp2, kEp2Tp2}) {
    INFO(m.name);
    const nlohmann::json r = run(write_yaml("moe-tp-full-" + m.name, moe_yaml(m, 2048)));
    // Per block: the down projection's output forward, the up projection's
    // input gradient backward (before the combine and the dispatch's
    // return), 4096 rows x 1024 x 2 B each.
    const double bytes = kRows * kD * 2;
    const nlohmann::json one = run(write_yaml("moe-tp-ar-" + m.name, std::string("chip: tpu-v4\n") +
                                                                         "pod: {topology: ring, shape: [2], "
                                                                         "wraparound: false}\n" +
                                                                         "workload: {kind: collective, op: all_reduce, "
                                                                         "bytes: " +
                                                                         std::to_string(std::uint64_t(bytes)) + "}\n"));
    const double alone = one["result"]["step_time_s"].get<double>();
    int forward = 0, backward = 0;
    for (const auto& c : r["collectives"]) {
      const std::string name = c["name"];
      const bool fwd = name.find("experts.down.out all-reduce") != std::string::npos;
      const bool bwd = name.find("dispatched.grad all-reduce") != std::string::npos;
      if (!fwd && !bwd) continue;
      (fwd ? forward : backward) += 1;
      CHECK(c["op"] == "all_reduce");
      CHECK(c["axes"] == nlohmann::json::array({"tensor"}));
      CHECK(c["bytes"].get<double>() == bytes);
      CHECK(c["time_s"].get<double>() - c.value("wait_s", 0.0) == Approx(alone).epsilon(0.01));
    }
    CHECK(forward == kLayers);
    CHECK(backward == kLayers);
  }
}

TEST_CASE("moe tensor: a chip holds its slice of its experts' weights, gradients and optimizer state",
          "[workloads][train][moe]") {
  // Widening the experts by 1024 adds to each chip its experts' (8 / expert
  // degree) up and down slices, 2 x D x 1024 / tensor each, in every block:
  // BF16 weights and gradients, Adam's 12 bytes (two FP32 moments and a
  // master copy) per parameter.
  for (const Mesh& m : {kWhole, kTp2, kEp2Tp2}) {
    INFO(m.name);
    const double added = kLayers * (kExperts / m.expert) * 2 * kD * 1024 / m.tensor;
    const nlohmann::json wide = run_moe(m, 2048, "adam"), narrow = run_moe(m, 1024, "adam");
    const auto delta = [&](const char* field) {
      return wide["result"]["memory"][field].get<double>() - narrow["result"]["memory"][field].get<double>();
    };
    CHECK(delta("params_bytes") == 2 * added);
    CHECK(delta("grads_bytes") == 2 * added);
    CHECK(delta("optimizer_bytes") == 12 * added);
  }
}

TEST_CASE("moe tensor: an expert width the tensor degree does not divide is refused at the key",
          "[workloads][train][moe]") {
  CHECK_THROWS_WITH(workloads::load_experiment(write_yaml("moe-tp-odd", moe_yaml(kTp2, 1025)), {}),
                    Catch::Contains("model.expert_d_ff") && Catch::Contains("does not split evenly"));
}

}  // namespace test_moe_tensor
