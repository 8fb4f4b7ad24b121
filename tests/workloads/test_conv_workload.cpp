// `kind: conv` on the chip: each layer is its im2col GEMM through the
// matmul path. Checked against the layer arithmetic Ho Wo Fh Fw C N per
// image, worked by hand, and against kind: matmul on the same GEMM (an
// independent run of the path a layer must take).
#include <catch2/catch.hpp>

#include "workloads/experiment.h"

namespace test_conv_workload {

namespace {

nlohmann::json run(const std::string& path, const std::vector<std::string>& sets = {}) {
  auto exp = workloads::load_experiment(path, sets);
  return exp.workload->run(exp, {}).report;
}

const std::string kConv = std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/conv-resnet18-head-v4.yaml";

}  // namespace

TEST_CASE("conv kind: the MXUs' MAC count equals the layer arithmetic", "[workloads][conv]") {
  // Batch 8. By hand, Ho = ceil((H - F) / S) + 1 (exact divisions here):
  //   conv1      229, 7x7x3, 64 filters, s2: Ho = 112; 112*112*7*7*3*64   = 118,013,952 per image
  //   conv2_1a/b 58, 3x3x64, 64, s1:         Ho = 56;  56*56*3*3*64*64    = 115,605,504
  //   conv3_1a   57, 3x3x64, 128, s2:        Ho = 28;  28*28*3*3*64*128   =  57,802,752
  //   conv3_1b   30, 3x3x128, 128, s1:       Ho = 28;  28*28*3*3*128*128  = 115,605,504
  //   conv3_down 55, 1x1x64, 128, s2:        Ho = 28;  28*28*64*128       =   6,422,528
  // Sum per image 529,055,744; batch 8: 4,232,445,952.
  const std::uint64_t per_image[] = {118013952, 115605504, 115605504, 57802752, 115605504, 6422528};
  for (const char* fidelity : {"kernel", "tile"}) {
    DYNAMIC_SECTION("fidelity " << fidelity) {
      const nlohmann::json rep = run(kConv, {std::string("fidelity=") + fidelity});
      const nlohmann::json& conv = rep["result"]["conv"];
      CHECK(conv["batch"] == 8);
      CHECK(conv["macs"] == 4232445952ull);  // counted by the MXUs (their stats)
      REQUIRE(conv["layers"].size() == 6);
      for (std::size_t i = 0; i < 6; ++i) CHECK(conv["layers"][i]["macs"] == 8 * per_image[i]);
      CHECK(conv["layers"][0]["m"] == 8 * 112 * 112);
      CHECK(conv["layers"][0]["k"] == 147);
      CHECK(conv["layers"][0]["n"] == 64);
      CHECK(rep["result"]["flops"] == 2.0 * 4232445952.0);
      CHECK(rep["result"]["step_time_s"].get<double>() > 0);
    }
  }
}

TEST_CASE("conv kind: one layer takes the time of kind: matmul on its im2col GEMM", "[workloads][conv]") {
  // conv3_1b at batch 2: M = 2*28*28 = 1568, K = 1152, N = 128.
  const std::string layer =
      "workload.layers=[{ifmap_height: 30, ifmap_width: 30, filter_height: 3, filter_width: 3, channels: 128, "
      "filters: 128}]";
  for (const char* fidelity : {"kernel", "tile"}) {
    DYNAMIC_SECTION("fidelity " << fidelity) {
      const std::string f = std::string("fidelity=") + fidelity;
      const double conv = run(kConv, {"workload.batch=2", layer, f})["result"]["step_time_s"];
      const double matmul = run(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/matmul-v4.yaml",
                                {"workload.m=1568", "workload.k=1152", "workload.n=128", f})["result"]["step_time_s"];
      CHECK(conv == Approx(matmul).epsilon(1e-12));
    }
  }
}

}  // namespace test_conv_workload
