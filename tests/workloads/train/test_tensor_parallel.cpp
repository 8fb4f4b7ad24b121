// Megatron-style tensor parallelism (Shoeybi et al. 2019, arXiv:1909.08053,
// s.3): two all-reduces of the block's activations in the forward pass and
// two in the backward pass, each rank computing 1/t of every matmul; the
// all-reduces take the ring's time (docs/reference/formulas.md §1-2).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_tensor_parallel {

namespace {

using testing_workloads::write_yaml;

namespace fs = std::filesystem;

// L 3, D 1024, F 4096, N 8 x H 128, T 512, V 8192 (divides by 4), untied;
// 4 v4 chips on a wrapping ring, 2 microbatches of 2 sequences.
constexpr double L = 3, D = 1024, F = 4096, NH = 1024, T = 512, V = 8192, B = 2, M = 2, TP = 4;

// `model_keys` and `workload_keys` are added to the model and workload
// mappings (", kv_heads: 1"; "  precision: ...\n").
nlohmann::json run_tp4(const std::string& name = "tp4", const std::string& model_keys = "",
                       const std::string& workload_keys = "") {
  const std::string path = write_yaml(name, R"(
chip: tpu-v4
pod: {topology: ring, shape: [4]}
mesh: {model: 4}
workload:
  kind: train
  model: {type: transformer, layers: 3, d_model: 1024, d_ff: 4096, heads: 8, head_dim: 128,
          seq_len: 512, vocab: 8192)" + model_keys +
                                                R"(}
  global_batch: 4
  parallelism: {tensor: model, microbatches: 2}
  optimizer: adam
)" + workload_keys);
  auto exp = workloads::load_experiment(path);
  return exp.workload->run(exp, {}).report;
}

}  // namespace

TEST_CASE("tensor parallel: 2 forward and 2 backward all-reduces of B T D per block, the ring's time",
          "[workloads][train]") {
  const auto r = run_tp4();
  const double activation = B * T * D * 2;  // one microbatch's block input/output, BF16
  int blocks_forward = 0, blocks_backward = 0;
  for (const auto& c : r["collectives"]) {
    const std::string name = c["name"];
    INFO(name);
    CHECK(c["purpose"] == "tensor_parallel");
    CHECK(c["participants"] == 4);
    CHECK(c["bytes"].get<double>() == activation);
    if (name.find("block") == std::string::npos) continue;
    (name.find(" F") != std::string::npos ? blocks_forward : blocks_backward) += 1;
    // Bidirectional ring of 4: 2 (n-1) steps of V/n over both directions plus
    // a hop, after tpu-v4.yaml's collective launch cost of 4 us
    // (docs/calibration.md#collective-launch).
    const double ring = 4.0e-6 + 2 * (TP - 1) * (activation / (TP * 2 * 4.5e10) + 1.0e-6);
    CHECK(c["time_s"].get<double>() == Approx(ring).epsilon(0.05));
  }
  CHECK(blocks_forward == 2 * L * M);
  CHECK(blocks_backward == 2 * L * M);
  // Besides the blocks: the vocabulary-parallel embedding's forward and the
  // column-parallel logits' input gradient, once per microbatch.
  CHECK(r["collectives"].size() == (4 * L + 2) * M);
}

TEST_CASE("tensor parallel: the collective summary is one entry of (4 L + 2) M all-reduces of B T D",
          "[workloads][train][report]") {
  const auto r = run_tp4();
  const double activation = B * T * D * 2, count = (4 * L + 2) * M;
  REQUIRE(r["collective_summary"].size() == 1);
  const auto& g = r["collective_summary"][0];
  CHECK(g["op"] == "all_reduce");
  CHECK(g["axes"] == nlohmann::json::array({"model"}));
  CHECK(g["purpose"] == "tensor_parallel");
  CHECK(g["participants"] == 4);
  CHECK(g["count"].get<double>() == count);
  CHECK(g["bytes"].get<double>() == activation);
  CHECK(g["total_bytes"].get<double>() == count * activation);
  // The full list, from the same run, sums to the same; no collective is
  // more exposed than it is long.
  double time = 0, exposed = 0;
  for (const auto& c : r["collectives"]) {
    time += c["time_s"].get<double>();
    exposed += c["exposed_s"].get<double>();
    CHECK(c["exposed_s"].get<double>() <= c["time_s"].get<double>() * (1 + 1e-12));
  }
  CHECK(g["time_s"].get<double>() == Approx(time).epsilon(1e-12));
  CHECK(g["exposed_s"].get<double>() == Approx(exposed).epsilon(1e-12));
}

TEST_CASE("tensor parallel: every rank does 1/t of the model's matmul FLOPs", "[workloads][train]") {
  const auto r = run_tp4();
  // Per block, B T tokens: 24 B T D N H + 12 B T^2 N H + 12 B T D F; logits
  // 6 B T D V (docs/models.md; PaLM appendix B).
  const double per_microbatch =
      L * (24 * B * T * D * NH + 12 * B * T * T * NH + 12 * B * T * D * F) + 6 * B * T * D * V;
  for (const auto& c : r["per_chip"]) CHECK(c["mxu_flops"].get<double>() == Approx(M * per_microbatch / TP));
  CHECK(r["result"]["model_flops"].get<double>() == Approx(M * per_microbatch));
  CHECK(r["result"]["tokens"].get<double>() == 4 * T);
  CHECK(r["result"]["tokens_per_s"].get<double>() == Approx(4 * T / r["result"]["step_time_s"].get<double>()));
  CHECK(r["result"]["mfu"].get<double>() ==
        Approx(M * per_microbatch / r["result"]["step_time_s"].get<double>() / (4 * 275.251e12)).epsilon(1e-3));
}

// Fewer key/value heads than ranks: each rank holds a replica of one head
// (models::MatmulSpec::tp_units). With one KV head over 4 ranks (multi-query,
// as PaLM) a rank's K and V projections are a whole head, the same work and
// parameters as 4 KV heads split one per rank; only the replicas' weight
// gradients differ, summed in one all-reduce of 2 x D x head_dim per block.
TEST_CASE("tensor parallel over more ranks than KV heads: each rank holds a replica of one head",
          "[workloads][train][gqa]") {
  const auto run_kv = [](int kv) {
    return run_tp4("tp4-kv" + std::to_string(kv), ", kv_heads: " + std::to_string(kv),
                   "  precision: {params: float32}\n");
  };
  const auto replicated = run_kv(1), split = run_kv(4);
  const auto& rm = replicated["result"]["memory"];
  const auto& sm = split["result"]["memory"];
  CHECK(rm["params_bytes"] == sm["params_bytes"]);
  CHECK(rm["activations_bytes"] == sm["activations_bytes"]);
  CHECK(replicated["result"]["phases"]["forward_s"] == split["result"]["phases"]["forward_s"]);

  double replica_time = 0;
  int replica_all_reduces = 0;
  for (const auto& c : replicated["collectives"]) {
    const std::string name = c["name"];
    if (name.find("replicated key/value gradients") == std::string::npos) continue;
    INFO(name);
    ++replica_all_reduces;
    CHECK(c["participants"] == 4);
    CHECK(c["bytes"].get<double>() == 2 * D * 128 * 4);  // W_k and W_v gradients, float32
    replica_time += c["time_s"].get<double>();
  }
  CHECK(replica_all_reduces == L);
  for (const auto& c : split["collectives"])
    CHECK(c["name"].get<std::string>().find("replicated key/value") == std::string::npos);
  const double extra = replicated["result"]["step_time_s"].get<double>() - split["result"]["step_time_s"].get<double>();
  CHECK(extra >= 0);
  CHECK(extra <= replica_time * (1 + 1e-9));
}

}  // namespace test_tensor_parallel
