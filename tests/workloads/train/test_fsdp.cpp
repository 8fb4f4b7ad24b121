// Sharded data parallelism against hand formulas: FSDP (ZeRO-3) keeps 1/N
// of the parameters, gradients and Adam state plus the layers it gathers,
// and moves 3 W (N-1)/N bytes per chip and step (all-gather forward,
// all-gather backward, reduce-scatter; Rajbhandari et al. 2020,
// arXiv:1910.02054 s.7.2.2: "3 Psi"); ZeRO-1 keeps 1/N of the Adam state and
// moves the bytes of the all-reduce it replaces (s.7.2.1: "2 Psi").
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "nominal_chip.h"
#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_fsdp {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// The small GPT of test_memory.cpp: L 2, D 512, F 2048, N 8 x H 64, T 256,
// V 4096, tied embeddings. Every layer's parameters divide by 4, so no
// shard is padded.
constexpr double L = 2, D = 512, F = 2048, NH = 512, V = 4096;
constexpr double kBlock = 4 * D * NH + 2 * D * F + 4 * D;  // attention, MLP, two LayerNorms
constexpr double kParams = L * kBlock + V * D + 2 * D;     // blocks, the tied table, the final LayerNorm
constexpr double kWeightBytes = 2 * kParams;               // BF16

// On a ring of 4, or a 2 x 2 torus for meshes of two axes.
std::string small_gpt(const std::string& name, const std::string& mesh, const std::string& parallelism,
                      int global_batch = 8) {
  const std::string pod = mesh.find(',') == std::string::npos ? "{topology: ring, shape: [4], wraparound: true}"
                                                              : "{topology: torus2d, shape: [2, 2], wraparound: false}";
  return write_yaml(name, "chip: " + nominal_chip::chip("tpu-v4") + "\npod: " + pod + "\nmesh: " + mesh + R"(
workload:
  kind: train
  model: {type: transformer, layers: 2, d_model: 512, d_ff: 2048, heads: 8, head_dim: 64,
          seq_len: 256, vocab: 4096, tied_embeddings: true}
  global_batch: )" + std::to_string(global_batch) +
                              "\n  parallelism: " + parallelism + "\n  optimizer: adam\n");
}

double bytes_of(const nlohmann::json& report, const std::string& purpose, const std::string& op) {
  double sum = 0;
  for (const auto& c : report["collectives"])
    if (c["purpose"] == purpose && c["op"] == op) sum += c["bytes"].get<double>();
  return sum;
}

}  // namespace

TEST_CASE(
    "fsdp: a quarter of the weights, gradients and Adam state per chip, plus two gathered weights and two gradients",
    "[workloads][train][fsdp]") {
  const auto r = run(small_gpt("fsdp4", "{fsdp: 4}", "{fsdp: fsdp}"));
  const auto& m = r["result"]["memory"];
  CHECK(m["params_bytes"].get<double>() == 2 * kParams / 4);
  CHECK(m["grads_bytes"].get<double>() == 2 * kParams / 4);
  CHECK(m["optimizer_bytes"].get<double>() == 12 * kParams / 4);
  // Weight by weight, as XLA gathers and reduce-scatters them (memory.cpp):
  // at the peak, the last block's backward, its up projection's instant
  // holds up (read by its data gradient), O (prefetched), up's full
  // gradient and down's (being reduce-scattered): 3 F D + D NH elements,
  // more than at down (3 F D + a norm vector) or O (3 D NH + F D), or the
  // embedding's backward, with only its stash kept. Before 2026-12-07:
  // three whole blocks, 3 x 3.1 M elements.
  CHECK(m["peak_pass"] == "backward of block1");
  CHECK(m["gathered_weights_bytes"].get<double>() == 2 * (3 * F * D + D * NH));
  CHECK(m["per_chip_bytes"].get<double>() == m["params_bytes"].get<double>() + m["grads_bytes"].get<double>() +
                                                 m["optimizer_bytes"].get<double>() +
                                                 m["activations_bytes"].get<double>() + 2 * (3 * F * D + D * NH));
  // The batch splits over the fsdp ranks as over data-parallel replicas:
  // the same activations per chip as data parallelism of 4.
  const auto dp = run(small_gpt("dp4", "{data: 4}", "{data: data}"));
  CHECK(m["activations_per_microbatch_bytes"] == dp["result"]["memory"]["activations_per_microbatch_bytes"]);
  CHECK(r["result"]["parallelism"]["fsdp"]["degree"] == 4);
  CHECK(r["result"]["tokens"] == dp["result"]["tokens"]);
}

TEST_CASE("fsdp: 3 W (N-1)/N bytes per chip and step: two all-gathers and a reduce-scatter",
          "[workloads][train][fsdp]") {
  const double n = 4;
  const auto r = run(small_gpt("fsdp4-traffic", "{fsdp: 4}", "{fsdp: fsdp}"));
  CHECK(bytes_of(r, "weights", "all_gather") == 2 * kWeightBytes);
  CHECK(bytes_of(r, "gradients", "reduce_scatter") == kWeightBytes);
  CHECK(bytes_of(r, "gradients", "all_reduce") == 0);
  for (const auto& c : r["per_chip"]) CHECK(c["ici_bytes_out"].get<double>() == 3 * kWeightBytes * (n - 1) / n);
  // Against data parallelism's all-reduce, 2 W (N-1)/N: FSDP moves 1.5x.
  const auto dp = run(small_gpt("dp4-traffic", "{data: 4}", "{data: data}"));
  CHECK(dp["per_chip"][0]["ici_bytes_out"].get<double>() == 2 * kWeightBytes * (n - 1) / n);
  // Each microbatch gathers the weights for its forward and backward and
  // reduce-scatters its gradients: twice the traffic with two.
  const auto two = run(small_gpt("fsdp4-micro2", "{fsdp: 4}", "{fsdp: fsdp, microbatches: 2}"));
  CHECK(two["per_chip"][0]["ici_bytes_out"].get<double>() == 2 * 3 * kWeightBytes * (n - 1) / n);
}

TEST_CASE("fsdp: the gathers run a layer ahead, under the previous layer's compute", "[workloads][train][fsdp]") {
  // Large enough microbatches that a layer's compute outlasts the next
  // layer's gather.
  const auto r = run(small_gpt("fsdp4-overlap", "{fsdp: 4}", "{fsdp: fsdp}", 64));
  const auto& comm = r["result"]["communication"];
  // The first layer's gather and the last reduce-scatter have nothing to
  // hide under; every other one does.
  CHECK(comm["overlap_fraction"].get<double>() > 0.6);
  CHECK(comm["exposed_time_s"].get<double>() < 0.4 * comm["collective_time_s"].get<double>());
}

TEST_CASE("fsdp x data (hybrid sharding): shards over fsdp, their all-reduce over data", "[workloads][train][fsdp]") {
  // 2 x 2: W/2 per chip; fsdp moves 3 (W) (1/2); the all-reduce of the W/2
  // shard over 2 replicas moves 2 (W/2) (1/2).
  const auto r = run(small_gpt("hsdp", "{data: 2, fsdp: 2}", "{data: data, fsdp: fsdp}"));
  CHECK(r["result"]["memory"]["params_bytes"].get<double>() == kWeightBytes / 2);
  CHECK(bytes_of(r, "gradients", "all_reduce") == kWeightBytes / 2);
  CHECK(r["per_chip"][0]["ici_bytes_out"].get<double>() == 3 * kWeightBytes / 2 + kWeightBytes / 2);
}

TEST_CASE("fsdp x data over DCN, overlap: false: the shards' all-reduces after the backward, whole",
          "[workloads][train][fsdp][dcn]") {
  // Two slices of a 4-chip v4 ring (one host of 4 chips each), fsdp inside
  // a slice, data parallelism across the slices. With the all-reduces of
  // the shards after the whole backward (XLA's all-reduce sunk out of the
  // layer loop) nothing hides them: they start when the last
  // reduce-scatter ends and run back to back, each a two-slice ring
  // all-reduce of its W_l/4 shard with the host's four chips sharing its
  // NIC (2(N-1)/N S / (B_nic / 4) + 2(N-1) latency, test_dcn.cpp) after
  // the collective's launch.
  constexpr double kNic = 2.5e10;       // tpu-v4 host.nic_bandwidth (docs/reference/dcn.md#v4)
  constexpr double kDcnLatency = 1e-5;  // pod.dcn.latency default (docs/reference/dcn.md#latency)
  constexpr double kLaunch = 4e-6;      // tpu-v4 ici.collective_launch
  const std::string path = small_gpt("hsdp-dcn", "{fsdp: 4}", "{fsdp: fsdp}", 32);
  const std::vector<std::string> two_slices = {
      "pod={slices: 2, slice: {topology: ring, shape: [4], wraparound: true}, dcn_axes: [replica]}",
      "mesh={fsdp: 4, replica: 2}", "workload.parallelism={data: replica, fsdp: fsdp}", "workload.global_batch=64"};
  std::vector<std::string> after_sets = two_slices;
  after_sets.push_back("workload.overlap=false");
  const auto after = run(path, after_sets);
  CHECK(bytes_of(after, "gradients", "all_reduce") == kWeightBytes / 4);
  double expected = 0, first_start = 1e9, last_end = 0, scatter_end = 0;
  int count = 0;
  for (const auto& c : after["collectives"]) {
    const double start = c["start_s"].get<double>(), end = start + c["time_s"].get<double>();
    if (c["op"] == "reduce_scatter") scatter_end = std::max(scatter_end, end);
    if (c["purpose"] != "gradients" || c["op"] != "all_reduce") continue;
    expected += kLaunch + c["bytes"].get<double>() / (kNic / 4) + 2 * kDcnLatency;
    first_start = std::min(first_start, start);
    last_end = std::max(last_end, end);
    ++count;
  }
  CHECK(count == 4);  // the table, two blocks, the final LayerNorm
  CHECK(first_start >= scatter_end);
  CHECK(last_end - first_start == Approx(expected).epsilon(0.02));
  CHECK(after["result"]["dcn"]["exposed_time_s"].get<double>() ==
        Approx(after["result"]["dcn"]["time_s"].get<double>()).epsilon(1e-6));
  // Under the backward (the default) part of them hides: a shorter step.
  const auto under = run(path, two_slices);
  CHECK(under["result"]["dcn"]["exposed_time_s"].get<double>() <
        0.9 * after["result"]["dcn"]["exposed_time_s"].get<double>());
  CHECK(under["result"]["step_time_s"].get<double>() < after["result"]["step_time_s"].get<double>());
}

TEST_CASE("fsdp x data over DCN, overlap: false: the step pays the DCN latency layers x 2(N-1) times",
          "[workloads][train][fsdp][dcn]") {
  // The count the slice-decline analysis rests on (docs/calibration.md
  // #slice-decline): one ring all-reduce per layer holding parameters (the
  // table, two blocks, the final LayerNorm), each of 2(N-1) messages across
  // N slices that each pay pod.dcn.latency, back to back after the
  // backward. So the step's derivative in the latency is 4 x 2(N-1), its
  // bandwidth and compute unchanged.
  constexpr double kLayers = 4, kLo = 1e-5, kHi = 1e-3;
  const std::string path = small_gpt("hsdp-dcn-latency", "{fsdp: 4}", "{fsdp: fsdp}", 32);
  for (const int n : {2, 4}) {
    auto step = [&](double latency) {
      const auto r = run(path, {"pod={slices: " + std::to_string(n) +
                                    ", slice: {topology: ring, shape: [4], wraparound: true}, dcn_axes: [replica]"
                                    ", dcn: {latency: " +
                                    std::to_string(latency) + "}}",
                                "mesh={fsdp: 4, replica: " + std::to_string(n) + "}",
                                "workload.parallelism={data: replica, fsdp: fsdp}",
                                "workload.global_batch=" + std::to_string(32 * n), "workload.overlap=false"});
      return r["result"]["step_time_s"].get<double>();
    };
    const double lo = step(kLo), hi = step(kHi);
    INFO(n << " slices: step " << lo << " s at " << kLo << " s per message, " << hi << " s at " << kHi);
    CHECK(hi - lo == Approx(kLayers * 2 * (n - 1) * (kHi - kLo)).epsilon(0.01));
  }
}

TEST_CASE("zero 1: a quarter of the Adam state, the all-reduce's bytes as a reduce-scatter and an all-gather",
          "[workloads][train][fsdp]") {
  const double n = 4;
  const auto z = run(small_gpt("zero1", "{data: 4}", "{data: data, zero: 1}"));
  const auto dp = run(small_gpt("zero0", "{data: 4}", "{data: data}"));
  const auto& m = z["result"]["memory"];
  CHECK(m["optimizer_bytes"].get<double>() == 12 * kParams / 4);
  CHECK(m["params_bytes"].get<double>() == 2 * kParams);  // replicated, as the gradients
  CHECK(m["grads_bytes"].get<double>() == 2 * kParams);
  CHECK(bytes_of(z, "gradients", "reduce_scatter") == kWeightBytes);
  CHECK(bytes_of(z, "weights", "all_gather") == kWeightBytes);
  CHECK(z["per_chip"][0]["ici_bytes_out"] == dp["per_chip"][0]["ici_bytes_out"]);
  CHECK(z["per_chip"][0]["ici_bytes_out"].get<double>() == 2 * kWeightBytes * (n - 1) / n);
  // The update works on a quarter of the parameters.
  CHECK(z["result"]["phases"]["optimizer_s"].get<double>() < dp["result"]["phases"]["optimizer_s"].get<double>());
}

TEST_CASE("fsdp and zero: bad input is located", "[workloads][train][fsdp][bad-input]") {
  CHECK_THROWS_WITH(run(small_gpt("bad-fsdp-axis", "{fsdp: 4}", "{fsdp: fdsp}")),
                    Catch::Contains("'fdsp' is not a mesh axis") && Catch::Contains("did you mean 'fsdp'"));
  CHECK_THROWS_WITH(run(small_gpt("bad-zero-fsdp", "{data: 2, fsdp: 2}", "{data: data, fsdp: fsdp, zero: 1}")),
                    Catch::Contains("parallelism.zero") && Catch::Contains("fsdp already shards it"));
  CHECK_THROWS_WITH(run(small_gpt("bad-zero-nodata", "{fsdp: 4}", "{fsdp: fsdp, zero: 1}")),
                    Catch::Contains("parallelism.zero"));
  CHECK_THROWS_WITH(run(small_gpt("bad-zero-2", "{data: 4}", "{data: data, zero: 2}")),
                    Catch::Contains("parallelism.zero") && Catch::Contains("out of range"));
  CHECK_THROWS_WITH(run(small_gpt("bad-batch", "{fsdp: 4}", "{fsdp: fsdp}", 6)),
                    Catch::Contains("does not divide over data x fsdp parallelism of 1 x 4"));
}

TEST_CASE("MaxText 16B on one v5e-256 fits in HBM with fsdp and full remat, as MaxText ran it",
          "[workloads][train][fsdp][remat]") {
  // configs/experiments/train-maxtext-16b-v5e-256.yaml: L 32, D 5120, 32
  // heads of 256 (NH 8192), F 32768 (ReLU, two matrices), V 32768 tied,
  // 6 sequences of 2048 per chip, FSDP over 256, float32 parameters.
  const double L = 32, D = 5120, NH = 8192, F = 32768, V = 32768, B = 6, T = 2048, n = 256;
  const double block = 4 * D * NH + 2 * D * F + 4 * D;
  const double params = L * block + V * D + 2 * D;
  const auto r = run(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/train-maxtext-16b-v5e-256.yaml");
  const auto& m = r["result"]["memory"];
  CHECK(m["fits"] == true);
  CHECK(m["capacity_bytes"].get<double>() == 16.0 * (1ull << 30));
  // MaxText's float32 parameters (no master copy): 4 + 4 + 8 bytes.
  CHECK(m["params_bytes"].get<double>() == Approx(4 * params / n).epsilon(1e-4));  // padded shards
  CHECK(m["optimizer_bytes"].get<double>() == Approx(8 * params / n).epsilon(1e-4));
  // Per weight (memory.cpp): at a block's up projection, up twice (the
  // weight and its gradient), O and down.
  CHECK(m["gathered_weights_bytes"].get<double>() == 2 * (3 * F * D + D * NH));
  // Each block keeps its input (2 B T D bytes); the embedding, output and
  // loss layers keep what they keep without remat.
  CHECK(m["activations_bytes"].get<double>() > L * 2 * B * T * D);
  CHECK(r["result"]["hfu"].get<double>() > r["result"]["mfu"].get<double>());
}

TEST_CASE("fsdp moves BF16 whatever the weights are stored in, data parallelism all-reduces them as stored",
          "[workloads][train][fsdp]") {
  const auto bf16 = run(small_gpt("fsdp-bf16", "{fsdp: 4}", "{fsdp: fsdp}"));
  const auto fp32 = run(small_gpt("fsdp-fp32", "{fsdp: 4}", "{fsdp: fsdp}"), {"workload.precision={params: float32}"});
  CHECK(fp32["per_chip"][0]["ici_bytes_out"] == bf16["per_chip"][0]["ici_bytes_out"]);
  CHECK(fp32["result"]["memory"]["gathered_weights_bytes"].get<double>() == 2 * (3 * F * D + D * NH));
  CHECK(fp32["result"]["memory"]["params_bytes"].get<double>() == 4 * kParams / 4);
  CHECK(fp32["result"]["precision"]["params"] == "float32");
  const auto dp = run(small_gpt("dp-fp32", "{data: 4}", "{data: data}"), {"workload.precision={params: float32}"});
  CHECK(dp["per_chip"][0]["ici_bytes_out"].get<double>() == 2 * 4 * kParams * 3 / 4);  // 2 W (N-1)/N, W in float32
}

TEST_CASE("PaLM 540B on two v4 pods of 3072 fits in HBM and folds to one chip's messages per x row",
          "[workloads][train][fsdp][dcn]") {
  // configs/experiments/train-palm-540b-v4-2x3072.yaml (issue 15): PaLM's
  // 540.35 B parameters (Chowdhery et al. 2022, Table 1), 12-way model x
  // 256-way fsdp inside each pod, data parallelism over DCN.
  const auto r = run(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/train-palm-540b-v4-2x3072.yaml");
  CHECK(r["result"]["model"]["params"].get<double>() == Approx(540.35e9).epsilon(1e-4));
  CHECK(r["pod"]["chips"] == 6144);
  CHECK(r["pod"]["slices"] == 2);
  CHECK(r["result"]["memory"]["fits"] == true);
  // Folded along y, z and the pods (x holds a v4 host's 4 chips): one chip
  // simulated, every message standing for its 512 images.
  CHECK(r["simulator"]["symmetric_axes"].get<std::vector<std::string>>() == std::vector<std::string>{"y", "z", "dcn0"});
  CHECK(r["simulator"]["chips_simulated"] == 1);
  CHECK(r["simulator"]["replicas"] == "one per group");
  CHECK(r["result"]["dcn"]["bytes"].get<double>() > 0);
}

}  // namespace test_fsdp
