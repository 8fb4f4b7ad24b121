// A training step's energy by layer (result.energy.layers, optimizer_j,
// collective_reductions_j; docs/training.md#energy): one layer against a
// hand count of its matmuls (MACs = the layer's matmul FLOPs / 2, VMEM and
// HBM bytes by the blocking's closed form, docs/mxu.md#energy), the parts
// adding up to the step on one chip, on a data-parallel pod and on a
// pipeline, and the trace's ops adding up to the step.
#include <catch2/catch.hpp>

#include <cmath>

#include "hw/chip_config.h"
#include "kernels/matmul_kernel.h"
#include "models/mlp.h"
#include "sim/yaml_node.h"
#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"
#include "workloads/workload.h"

namespace test_energy_layers {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// The shipped chips' figures (docs/reference/energy.md), in J.
constexpr double kMacJ = 2.0e-12, kVmemJ = 1.25e-12, kHbmJ = 31.76e-12;

// An MLP 256 -> 512 -> 256 with a loss, 128 samples per chip, SGD, on
// v5e chips (kernel fidelity, elementwise ops fused: the matmul kernels
// are the layers' only HBM traffic).
std::string mlp(const std::string& name, const std::string& pod, std::uint32_t chips) {
  return write_yaml(name, "chip: tpu-v5e\n" + pod +
                              "workload:\n  kind: train\n  model: {type: mlp, widths: [256, 512, 256]}\n"
                              "  global_batch: " +
                              std::to_string(128 * chips) + "\n  optimizer: sgd\n" +
                              (chips > 1 ? "  parallelism: {data: data}\n" : ""));
}

// One m x k x n matmul kernel's energy by the closed form of
// docs/mxu.md#energy: in blocks bm x bk x bn it loads A once per block
// column and B once per block row (2-byte elements, from HBM into VMEM),
// reads and writes its FP32 accumulators once per k step, and stores C
// once as BF16.
double matmul_j(const hw::ChipConfig& chip, double m, double k, double n) {
  const kernels::MatmulBlocking b =
      kernels::choose_blocking(chip, std::uint64_t(m), std::uint64_t(k), std::uint64_t(n));
  const auto blocks = [](double extent, std::uint64_t block) { return std::ceil(extent / double(block)); };
  const double loads = 2 * m * k * blocks(n, b.bn) + 2 * k * n * blocks(m, b.bm);
  const double vmem = loads + 8 * m * n * blocks(k, b.bk);
  const double hbm = loads + 2 * m * n;
  return m * k * n * kMacJ + vmem * kVmemJ + hbm * kHbmJ;
}

// Layers, optimizer and collective reductions: what result.energy's parts add up to.
double parts_j(const nlohmann::json& e) {
  double j = e["optimizer_j"].get<double>() + e["collective_reductions_j"].get<double>();
  for (const auto& l : e["layers"]) j += l["forward_j"].get<double>() + l["backward_j"].get<double>();
  return j;
}

}  // namespace

TEST_CASE("train energy: a layer against its hand count, the parts and the ops adding up to the step",
          "[workloads][train][energy]") {
  const hw::ChipConfig chip =
      hw::load_chip(sim::YamlNode::load_file(std::string(TPUSIM_SOURCE_DIR) + "/configs/chips/tpu-v5e.yaml"));
  auto exp = workloads::load_experiment(mlp("energy-mlp-1", "", 1));
  workloads::RunOptions opts;
  opts.trace = true;
  const workloads::RunOutput out = exp.workload->run(exp, opts);
  const nlohmann::json& e = out.report["result"]["energy"];
  REQUIRE(e["layers"].size() == 3);
  CHECK(e["layers"][0]["name"] == "dense0");
  CHECK(e["layers"][1]["name"] == "dense1");
  CHECK(e["layers"][2]["name"] == "loss");

  // dense1, 512 -> 256 on B = 128 samples. Forward Y = X W: 128 x 512 x 256,
  // 2 B 512 256 FLOPs; backward dX = dY W^T (128 x 256 x 512) and dW = X^T dY
  // (512 x 128 x 256), twice that. MACs are the model's FLOPs / 2.
  const models::ModelSpec model = models::build_mlp({{256, 512, 256}, "relu"}, 128);
  CHECK(model.layers[1].forward_matmul_flops() / 2 == 128.0 * 512 * 256);
  CHECK(model.layers[1].backward_matmul_flops() / 2 == 2 * 128.0 * 512 * 256);
  CHECK(e["layers"][1]["forward_j"].get<double>() == Approx(matmul_j(chip, 128, 512, 256)).epsilon(1e-9));
  CHECK(e["layers"][1]["backward_j"].get<double>() ==
        Approx(matmul_j(chip, 128, 256, 512) + matmul_j(chip, 512, 128, 256)).epsilon(1e-9));
  // dense0's input is data: no dX, its backward is dW = X^T dY (256 x 128 x 512) alone.
  CHECK(e["layers"][0]["backward_j"].get<double>() == Approx(matmul_j(chip, 256, 128, 512)).epsilon(1e-9));
  // The loss is elementwise work only, fused: no MAC, VMEM or HBM byte counted.
  CHECK(e["layers"][2]["forward_j"] == 0.0);
  CHECK(e["layers"][2]["backward_j"] == 0.0);

  // SGD reads each parameter and its gradient and writes the parameter:
  // the optimizer's is all HBM energy. One chip: no collective.
  CHECK(e["optimizer_j"].get<double>() > 0);
  CHECK(e["collective_reductions_j"] == 0.0);
  const double total = e["total_j"].get<double>();
  CHECK(parts_j(e) == Approx(total).epsilon(1e-9));

  // Every op's slice in the trace carries its energy; they add up to the step.
  const nlohmann::json trace = nlohmann::json::parse(out.trace_json);
  double ops_j = 0;
  for (const auto& ev : trace["traceEvents"])
    if (ev["ph"] == "X" && ev.contains("args") && ev["args"].contains("energy_j"))
      ops_j += ev["args"]["energy_j"].get<double>();
  CHECK(ops_j == Approx(total).epsilon(1e-9));
}

TEST_CASE("train energy: data parallelism, each chip's layers as one chip's and the reductions on top",
          "[workloads][train][energy]") {
  // 4 v5e chips, 128 samples each: every chip runs the one-chip step's
  // layers and optimizer; the gradient all-reduces add their reductions'
  // HBM bytes (kernel fidelity: the chips reduce in their HBM).
  const nlohmann::json one = run(mlp("energy-mlp-1b", "", 1))["result"]["energy"];
  const nlohmann::json four =
      run(mlp("energy-mlp-4", "pod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\nmesh: {data: 4}\n",
              4))["result"]["energy"];
  REQUIRE(four["layers"].size() == one["layers"].size());
  for (std::size_t l = 0; l < one["layers"].size(); ++l) {
    INFO(one["layers"][l]["name"]);
    CHECK(four["layers"][l]["forward_j"].get<double>() ==
          Approx(4 * one["layers"][l]["forward_j"].get<double>()).epsilon(1e-12));
    CHECK(four["layers"][l]["backward_j"].get<double>() ==
          Approx(4 * one["layers"][l]["backward_j"].get<double>()).epsilon(1e-12));
  }
  CHECK(four["optimizer_j"].get<double>() == Approx(4 * one["optimizer_j"].get<double>()).epsilon(1e-12));
  CHECK(four["collective_reductions_j"].get<double>() > 0);
  CHECK(parts_j(four) == Approx(four["total_j"].get<double>()).epsilon(1e-9));
}

TEST_CASE("train energy: on a pipeline the stages' layers add up to the step", "[workloads][train][energy]") {
  // Two stages, each its own program and layers, two microbatches.
  const nlohmann::json e = run(write_yaml("energy-pipeline", R"(
chip: tpu-v4
pod: {topology: ring, shape: [2], wraparound: [false]}
mesh: {pipe: 2}
workload:
  kind: train
  model: {type: mlp, widths: [256, 512, 512, 512, 256]}
  global_batch: 256
  parallelism: {pipeline: pipe, microbatches: 2, schedule: gpipe}
  optimizer: sgd
)"))["result"]["energy"];
  REQUIRE(e["layers"].size() == 5);
  for (int l = 0; l < 4; ++l) {
    INFO(e["layers"][l]["name"]);
    CHECK(e["layers"][l]["forward_j"].get<double>() > 0);
    CHECK(e["layers"][l]["backward_j"].get<double>() > 0);
  }
  CHECK(parts_j(e) == Approx(e["total_j"].get<double>()).epsilon(1e-9));
}

}  // namespace test_energy_layers
