// The two front ends on one run: MaxText's configuration (kind: maxtext)
// against what XLA compiled from it (kind: hlo, tests/data/hlo/README.md:
// llama3-8b, base_num_decoder_layers 4, per_device_batch_size 1,
// max_target_length 128, v6e-4). The dump holds one forward decoder layer.
#include <catch2/catch.hpp>

#include <string>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_maxtext_vs_hlo {

namespace {

using testing_workloads::write_yaml;

nlohmann::json run(const std::string& path) {
  auto exp = workloads::load_experiment(path, {});
  return exp.workload->run(exp, {}).report;
}

double model_flops(std::uint32_t layers) {
  const auto r = run(write_yaml("mt-vs-hlo-" + std::to_string(layers), R"(chip: tpu-v6e
pod: {topology: torus2d, shape: [2, 2], wraparound: false}
workload:
  kind: maxtext
  config: {model_name: llama3-8b, override_model_config: true, per_device_batch_size: 1, max_target_length: 128,
           ici_fsdp_parallelism: -1, base_num_decoder_layers: )" + std::to_string(layers) +
                                                                           "}\n"));
  return r["result"]["model_flops"].get<double>();
}

}  // namespace

TEST_CASE("maxtext vs hlo: a Llama 3 8B decoder layer's forward matmuls have XLA's dot FLOPs exactly",
          "[workloads][maxtext][hlo]") {
  const std::string data = std::string(TPUSIM_SOURCE_DIR) + "/tests/data/hlo/";
  const auto hlo = run(data + "llama3_8b-layer-v6e-2x2.yaml");
  const double dots = hlo["result"]["hlo"]["flops_per_device"].get<double>();
  // tpusim's step, per layer and device: two more layers' model FLOPs
  // (forward and backward, 3 forward passes) over 2 layers, 4 devices, 3.
  const double per_layer = (model_flops(4) - model_flops(2)) / 2 / 4 / 3;
  // Less attention's own products, which XLA runs in the splash-attention
  // custom call, not as dots: causal, T (T + 1) / 2 query-key pairs of a
  // 128-token sequence, 4 FLOPs per pair and model dimension (QK^T and PV).
  const double T = 128, D = 4096;
  const double attention = 4 * D * T * (T + 1) / 2;
  CHECK(per_layer - attention == dots);
  CHECK(dots == 2 * T * 218103808.0);  // 2 x tokens x the layer's weights (test_hlo.cpp)
}

}  // namespace test_maxtext_vs_hlo
