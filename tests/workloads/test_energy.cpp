// result.energy (docs/mxu.md#energy): MACs x mac_pj + VMEM bytes x
// vmem_pj_per_byte + HBM bytes x hbm_pj_per_byte. Checked against counts
// worked by hand (a one-block matmul), against the layer arithmetic and the
// blocking's closed form (conv layers), and by moving one energy key.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "experiment_fixture.h"
#include "hw/chip_config.h"
#include "kernels/matmul_kernel.h"
#include "sim/yaml_node.h"
#include "workloads/workload.h"

namespace test_energy {

using testing_workloads::run;
using testing_workloads::write_yaml;

namespace {

// The shipped chips' figures (docs/reference/energy.md), in J.
constexpr double kMacJ = 2.0e-12, kVmemJ = 1.25e-12, kHbmJ = 31.76e-12;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The teaching chip inline (so a test can change its energy keys), with
// `mac_pj` as given.
std::string teach_chip(const std::string& mac_pj) {
  std::string chip = slurp(std::string(TPUSIM_SOURCE_DIR) + "/configs/chips/teach-8x8.yaml");
  const std::string key = "mac_pj: 2.0";
  const auto at = chip.find(key);
  REQUIRE(at != std::string::npos);
  chip.replace(at, key.size(), "mac_pj: " + mac_pj);
  std::string out = "chip:\n";
  std::istringstream lines(chip);
  for (std::string line; std::getline(lines, line);) out += "  " + line + "\n";
  return out;
}

nlohmann::json one_block_matmul(const std::string& fidelity, const std::string& mac_pj = "2.0") {
  return run(write_yaml("energy-matmul-" + fidelity + "-" + mac_pj,
                        teach_chip(mac_pj) + "fidelity: " + fidelity +
                            "\nworkload: {kind: matmul, m: 16, k: 24, n: 8, block: {bm: 16, bk: 24, bn: 8}}\n"));
}

}  // namespace

TEST_CASE("energy: a one-block matmul against its hand count", "[workloads][energy]") {
  // 16x24x8 on the teaching chip (one 8x8 MXU), one block, one k step, so
  // one MXU op of the whole shape. By hand:
  //   MACs 16*24*8 = 3,072
  //   VMEM: BF16 operands read once 2*(16*24 + 24*8) = 1,152, FP32
  //         accumulators read and written once 8*16*8 = 1,024: 2,176 B
  //   HBM: A 16*24*2 = 768, B 24*8*2 = 384, C 16*8*2 = 256 (stored as
  //        BF16): 1,408 B
  //   energy 3,072*2 + 2,176*1.25 + 1,408*31.76 pJ = 6,144 + 2,720 + 44,718.08 pJ
  for (const char* fidelity : {"kernel", "tile"}) {
    DYNAMIC_SECTION("fidelity " << fidelity) {
      const nlohmann::json rep = one_block_matmul(fidelity);
      const nlohmann::json& r = rep["result"];
      CHECK(r["hbm_bytes"] == 1408.0);
      const nlohmann::json& e = r["energy"];
      CHECK(e["mac_j"].get<double>() == Approx(6144e-12).epsilon(1e-12));
      CHECK(e["vmem_j"].get<double>() == Approx(2720e-12).epsilon(1e-12));
      CHECK(e["hbm_j"].get<double>() == Approx(44718.08e-12).epsilon(1e-12));
      CHECK(e["total_j"].get<double>() == Approx(53582.08e-12).epsilon(1e-12));
      REQUIRE(e["per_chip_j"].size() == 1);
      CHECK(e["per_chip_j"][0].get<double>() == Approx(53582.08e-12).epsilon(1e-12));
      CHECK(e["average_power_w"].get<double>() == Approx(53582.08e-12 / r["step_time_s"].get<double>()).epsilon(1e-12));
    }
  }
}

TEST_CASE("energy: doubling mac_pj doubles the MAC part and moves nothing else", "[workloads][energy]") {
  for (const char* fidelity : {"kernel", "tile"}) {
    DYNAMIC_SECTION("fidelity " << fidelity) {
      const nlohmann::json base = one_block_matmul(fidelity)["result"];
      const nlohmann::json twice = one_block_matmul(fidelity, "4.0")["result"];
      CHECK(twice["energy"]["mac_j"].get<double>() == Approx(2 * base["energy"]["mac_j"].get<double>()).epsilon(1e-12));
      CHECK(twice["energy"]["vmem_j"] == base["energy"]["vmem_j"]);
      CHECK(twice["energy"]["hbm_j"] == base["energy"]["hbm_j"]);
      CHECK(twice["step_time_s"] == base["step_time_s"]);
      CHECK(twice["hbm_bytes"] == base["hbm_bytes"]);
    }
  }
}

TEST_CASE("energy: conv layers against the layer arithmetic and the blocking", "[workloads][energy][conv]") {
  // conv-resnet18-head-v4 (batch 8) at kernel fidelity. A layer's kernel
  // is its im2col GEMM M x K x N in blocks bm x bk x bn; by the rules of
  // docs/mxu.md#energy it moves, whatever the split over cores,
  //   VMEM: A once per block column, B once per block row, the FP32
  //         accumulators read and written once per k step:
  //         2 M K ceil(N/bn) + 2 K N ceil(M/bm) + 8 M N ceil(K/bk)
  //   HBM:  the same operand loads at 2 B, C stored once at 2 B (BF16):
  //         2 M K ceil(N/bn) + 2 K N ceil(M/bm) + 2 M N
  // and does M K N MACs, Ho Wo Fh Fw C N per image (the layer arithmetic;
  // the MAC counts are checked by hand in test_conv_workload.cpp).
  const std::string path = std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/conv-resnet18-head-v4.yaml";
  const hw::ChipConfig chip =
      hw::load_chip(sim::YamlNode::load_file(std::string(TPUSIM_SOURCE_DIR) + "/configs/chips/tpu-v4.yaml"));
  const nlohmann::json rep = run(path, {"fidelity=kernel"});
  const nlohmann::json& layers = rep["result"]["conv"]["layers"];
  REQUIRE(layers.size() == 6);
  double sum = 0;
  for (const auto& l : layers) {
    const double m = l["m"], k = l["k"], n = l["n"];
    const kernels::MatmulBlocking b = kernels::choose_blocking(chip, l["m"], l["k"], l["n"]);
    const auto blocks = [](double extent, std::uint64_t block) { return std::ceil(extent / double(block)); };
    const double loads = 2 * m * k * blocks(n, b.bn) + 2 * k * n * blocks(m, b.bm);
    const double vmem = loads + 8 * m * n * blocks(k, b.bk);
    const double hbm = loads + 2 * m * n;
    INFO(l["name"] << ": " << b.bm << " x " << b.bk << " x " << b.bn);
    CHECK(l["energy_j"].get<double>() ==
          Approx(l["macs"].get<double>() * kMacJ + vmem * kVmemJ + hbm * kHbmJ).epsilon(1e-12));
    sum += l["energy_j"].get<double>();
  }
  // The layers' ops, walked one by one, add up to what the chip counted.
  CHECK(sum == Approx(rep["result"]["energy"]["total_j"].get<double>()).epsilon(1e-9));
  CHECK(rep["result"]["energy"]["mac_j"].get<double>() == Approx(4232445952.0 * kMacJ).epsilon(1e-12));
  CHECK(rep["result"]["energy"]["hbm_j"].get<double>() ==
        Approx(rep["result"]["hbm_bytes"].get<double>() * kHbmJ).epsilon(1e-12));
}

TEST_CASE("energy: conv layers add up to the run at tile fidelity", "[workloads][energy][conv]") {
  // The layers' energies come from their programs' ops; the run's from the
  // chip's counters as the ops execute: two counts of the same work.
  const std::string path = std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/conv-resnet18-head-v4.yaml";
  const nlohmann::json rep = run(path, {"fidelity=tile", "workload.batch=1"});
  double sum = 0;
  for (const auto& l : rep["result"]["conv"]["layers"]) sum += l["energy_j"].get<double>();
  CHECK(sum == Approx(rep["result"]["energy"]["total_j"].get<double>()).epsilon(1e-9));
}

namespace {

// The run's report and its Perfetto trace.
struct Traced {
  nlohmann::json report, trace;
};

Traced run_traced(const std::string& path, const std::vector<std::string>& sets = {}) {
  auto exp = workloads::load_experiment(path, sets);
  workloads::RunOptions opts;
  opts.trace = true;
  const workloads::RunOutput out = exp.workload->run(exp, opts);
  return {out.report, nlohmann::json::parse(out.trace_json)};
}

// The sum of energy_j over the trace's op slices.
double trace_energy_j(const nlohmann::json& trace) {
  double j = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e.contains("args") && e["args"].contains("energy_j"))
      j += e["args"]["energy_j"].get<double>();
  return j;
}

}  // namespace

TEST_CASE("energy per op: each op's slice in the trace, one by hand, adding up to the step", "[workloads][energy]") {
  // The one-block 16x24x8 matmul of the hand count above. At tile fidelity
  // its ops are the DMAs of A, B and C and one MXU op of the whole shape:
  // the MXU op 3,072 MACs and 2,176 VMEM bytes, 6,144 + 2,720 = 8,864 pJ;
  // the DMAs the 1,408 HBM bytes. At kernel fidelity one kernel op does it
  // all: 53,582.08 pJ.
  const std::string path = write_yaml("energy-trace-matmul", teach_chip("2.0") +
                                                                 "workload: {kind: matmul, m: 16, k: 24, n: 8, "
                                                                 "block: {bm: 16, bk: 24, bn: 8}}\n");
  for (const char* fidelity : {"kernel", "tile"}) {
    DYNAMIC_SECTION("fidelity " << fidelity) {
      const Traced t = run_traced(path, {std::string("fidelity=") + fidelity});
      const double total = t.report["result"]["energy"]["total_j"].get<double>();
      CHECK(total == Approx(53582.08e-12).epsilon(1e-12));
      CHECK(trace_energy_j(t.trace) == Approx(total).epsilon(1e-12));
      int mxu_ops = 0;
      double dma_bytes = 0;
      for (const auto& e : t.trace["traceEvents"]) {
        if (e["ph"] != "X") continue;
        if (e["cat"] == "mxu") {
          ++mxu_ops;
          const nlohmann::json& a = e["args"];
          CHECK(a["macs"] == 3072.0);
          CHECK(a["vmem_bytes"] == 2176.0);
          const bool kernel = std::string(fidelity) == "kernel";
          CHECK(a["hbm_bytes"] == (kernel ? 1408.0 : 0.0));
          CHECK(a["energy_j"].get<double>() == Approx(kernel ? 53582.08e-12 : 8864e-12).epsilon(1e-12));
        } else if (e["cat"] == "dma") {
          dma_bytes += e["args"]["hbm_bytes"].get<double>();
          CHECK(e["args"]["energy_j"].get<double>() ==
                Approx(e["args"]["hbm_bytes"].get<double>() * kHbmJ).epsilon(1e-12));
        } else {
          CHECK_FALSE(e.contains("args"));  // launches: no energy modelled
        }
      }
      CHECK(mxu_ops == 1);
      CHECK(dma_bytes == (std::string(fidelity) == "kernel" ? 0.0 : 1408.0));
    }
  }
}

TEST_CASE("energy per op: a conv run's ops add up to the step", "[workloads][energy][conv]") {
  // Many kernels, many blocks: the ops in the trace, each counted from its
  // own shape and bytes, against the chip's counters.
  const std::string path = std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/conv-resnet18-head-v4.yaml";
  for (const char* fidelity : {"kernel", "tile"}) {
    DYNAMIC_SECTION("fidelity " << fidelity) {
      const Traced t = run_traced(path, {std::string("fidelity=") + fidelity, "workload.batch=1"});
      CHECK(trace_energy_j(t.trace) == Approx(t.report["result"]["energy"]["total_j"].get<double>()).epsilon(1e-9));
    }
  }
}

}  // namespace test_energy
