// Matmuls in bf16, int8 and fp8 against the published peak of each format
// (docs/reference/tpu-specs.md, peak_*_per_chip: figures read from Google's
// and the scaling book's tables, not from the chip files) and against hand
// counts of the bytes an 8-bit element moves.
#include <catch2/catch.hpp>

#include "workloads/experiment.h"

using workloads::load_experiment;

namespace {

nlohmann::json run(const std::string& chip, const std::string& dtype, std::uint64_t m, std::uint64_t k,
                   std::uint64_t n) {
  auto exp =
      load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/matmul-v5e.yaml",
                      {"chip=" + chip, "fidelity=tile", "workload.dtype=" + dtype, "workload.m=" + std::to_string(m),
                       "workload.k=" + std::to_string(k), "workload.n=" + std::to_string(n)});
  return exp.workload->run(exp, {}).report["result"];
}

struct Published {
  const char* chip;
  const char* dtype;
  double peak_per_device;  // OP/s
  double hbm_per_device;   // B/s, sustained
};

// tpu-specs.md: v5e.peak_int8_ops_per_chip 3.94e14 (SB) / 393 TOP/s (GCD);
// v5p.peak_int8_ops_per_chip 9.18e14; v5p.peak_fp8_flops_per_chip 459
// TFLOP/s; v6e.peak_int8_ops_per_chip 1836 TOP/s; tpu7x.peak_fp8 4614
// TFLOP/s per chip of 2 devices. HBM as the chip files have it: v5e 8.1e11,
// v5p 2.8e12, v6e 1.6e12, 7x 7.4e12 x 0.865 sustained
// (calibration.md#hbm-efficiency), 7x's per device.
const Published kFormats[] = {
    {"tpu-v5e", "int8", 3.94e14, 8.1e11},
    {"tpu-v5p", "int8", 9.18e14, 2.8e12},
    {"tpu-v5p", "fp8", 4.59e14, 2.8e12},
    {"tpu-v6e", "int8", 1.836e15, 1.6e12},
    {"tpu-7x", "fp8", 4.614e15 / 2, 7.4e12 * 0.865 / 2},
};

}  // namespace

TEST_CASE("8-bit peaks are the published figures, and an 8192^3 matmul reaches them", "[workloads][matmul][formats]") {
  for (const Published& p : kFormats) {
    INFO(p.chip << " " << p.dtype);
    auto r = run(p.chip, p.dtype, 8192, 8192, 8192);
    // The published figures are rounded to 3 or 4 digits.
    CHECK(r["roofline"]["peak_flops_per_s"].get<double>() == Approx(p.peak_per_device).epsilon(0.005));
    CHECK(r["roofline"]["bound"] == "compute");
    CHECK(r["achieved_flops_per_s"].get<double>() >= 0.9 * p.peak_per_device);
  }
}

TEST_CASE("an 8-bit m = 8 matmul moves one byte per element and, memory-bound, takes half bf16's time",
          "[workloads][matmul][formats]") {
  const std::uint64_t k = 8192, n = 8192;
  for (const Published& p : kFormats) {
    INFO(p.chip << " " << p.dtype);
    auto r = run(p.chip, p.dtype, 8, k, n);
    auto kern = r["kernel"];
    const double bm = kern["bm"], bn = kern["bn"];
    // One byte per element: each output block reads its row of A blocks and
    // its column of B blocks, and C is written once.
    const double bytes = 8.0 * k * std::ceil(n / bn) + double(k * n) * std::ceil(8 / bm) + 8.0 * n;
    CHECK(r["hbm_bytes"].get<double>() == bytes);
    CHECK(r["step_time_s"].get<double>() >= bytes / p.hbm_per_device);  // the roofline's floor
  }
  // Where the 8-bit MXU is twice as fast as bf16's, m = 8 stays memory-bound
  // and the roofline's time is bytes / bandwidth: half of bf16's (on a B
  // large enough that the fixed costs, a kernel launch and an HBM access,
  // are far below 5%).
  for (const char* chip : {"tpu-v5e", "tpu-v5p", "tpu-v6e"}) {
    INFO(chip);
    auto int8 = run(chip, "int8", 8, 2 * k, n), bf16 = run(chip, "bf16", 8, 2 * k, n);
    CHECK(int8["roofline"]["bound"] == "memory");
    CHECK(bf16["roofline"]["bound"] == "memory");
    CHECK(int8["step_time_s"].get<double>() == Approx(0.5 * bf16["step_time_s"].get<double>()).epsilon(0.05));
  }
}

TEST_CASE("an int8 matmul holds one byte per element of A, B and C", "[workloads][matmul][formats]") {
  const std::uint64_t m = 300, k = 200, n = 500;
  auto bf16 = run("tpu-v5e", "bf16", m, k, n), int8 = run("tpu-v5e", "int8", m, k, n);
  CHECK(int8["memory"]["per_chip_bytes"].get<double>() == double(m * k + k * n + m * n));
  CHECK(bf16["memory"]["per_chip_bytes"].get<double>() == 2.0 * double(m * k + k * n + m * n));
}

TEST_CASE("v5e int8, k = n = 8192: memory/compute crossover within 15% of the int8 ridge",
          "[workloads][matmul][formats]") {
  const double ridge = 3.94e14 / 8.1e11;  // published int8 peak / HBM bandwidth: 486 OP/B
  double crossover = 0;
  std::string previous = "memory";
  for (std::uint64_t m = 64; m <= 2048; m += 32) {
    auto r = run("tpu-v5e", "int8", m, 8192, 8192);
    const std::string bound = r["roofline"]["bound"];
    if (bound == "compute" && previous == "memory") {
      crossover = r["arithmetic_intensity"].get<double>();
      break;
    }
    previous = bound;
  }
  INFO("crossover at intensity " << crossover << ", ridge " << ridge);
  CHECK(crossover >= 0.85 * ridge);
  CHECK(crossover <= 1.15 * ridge);
}
