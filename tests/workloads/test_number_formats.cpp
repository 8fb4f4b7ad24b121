// Matmuls in bf16, int8 and fp8 against the published peak of each format
// (docs/reference/tpu-specs.md, peak_*_per_chip: figures read from Google's
// and the scaling book's tables, not from the chip files) and against hand
// counts of the bytes an 8-bit element moves.
#include <algorithm>
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "nominal_chip.h"
#include "workloads/experiment.h"
#include "workloads/matmul_crossover.h"

namespace test_number_formats {

using workloads::load_experiment;

namespace {

nlohmann::json run(const std::string& chip, const std::string& dtype, std::uint64_t m, std::uint64_t k,
                   std::uint64_t n) {
  auto exp = load_experiment(
      std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/matmul-v5e.yaml",
      {nominal_chip::set(chip), "fidelity=tile", "workload.dtype=" + dtype, "workload.m=" + std::to_string(m),
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
// TFLOP/s; v6e.peak_int8_ops_per_chip 1836 TOP/s; v6e.peak_fp8_flops_per_chip
// 9.20e14 (JAX's table); tpu7x.peak_fp8 4614 TFLOP/s per chip of 2 devices.
// HBM as the chip files have it: v5e 8.1e11, v5p 2.46e12 (JAX's table,
// tpu-specs.md#runtime-table), v6e 1.6e12, 7x 7.4e12 x 0.865 sustained
// (calibration.md#hbm-efficiency), 7x's per device.
const Published kFormats[] = {
    {"tpu-v5e", "int8", 3.94e14, 8.1e11}, {"tpu-v5p", "int8", 9.18e14, 2.46e12},
    {"tpu-v5p", "fp8", 4.59e14, 2.46e12}, {"tpu-v6e", "int8", 1.836e15, 1.6e12},
    {"tpu-v6e", "fp8", 9.20e14, 1.6e12},  {"tpu-7x", "fp8", 4.614e15 / 2, 7.4e12 * 0.865 / 2},
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

namespace {

// Every shipped chip in every format it has, with the published peak and
// HBM bandwidth per chip (docs/reference/tpu-specs.md: peak_bf16_flops_per_chip
// (GCD), peak_int8_ops_per_chip, peak_fp8_flops_per_chip, hbm_bw: JAX's
// table for v2, v3 and v5p, tpu-specs.md#runtime-table) and MXU
// rows (common.mxu_size: 128, 256 on v6e; 7x's taken as v6e's), MXUs per
// core (mxu_per_tensorcore: 1 on v2, 2 on v3, 4 after; v6e's and 7x's 4 as
// their chip files assume) and devices per chip (common.devices_per_chip).
// v4's int8 runs at the bf16 rate (GCD v4: "275 TFLOP/s bf16 or int8"),
// v6e's fp8 too (JAX's table: 9.20e14 for both); v3 has bf16 only
// (tpu-specs.md#runtime-table). 7x's HBM is its sustained
// bandwidth, 0.865 of the peak (calibration.md#hbm-efficiency: the measured
// copy).
struct Ridge {
  const char* chip;
  const char* dtype;
  double peak;     // OP/s per chip
  double hbm;      // B/s per chip
  double rows;     // of an MXU (and its columns: square arrays)
  double bytes;    // per element
  double arrays;   // per core as the format sees it: MXUs per core x the format's rate
  double devices;  // JAX devices per chip (2 on v2, v3 and 7x, whose cores are devices)
};
const Ridge kRidges[] = {
    {"tpu-v2", "bf16", 45e12, 7.16e11, 128, 2, 1, 2},          {"tpu-v3", "bf16", 123e12, 8.25e11, 128, 2, 2, 2},
    {"tpu-v4", "bf16", 275e12, 1.2e12, 128, 2, 4, 1},          {"tpu-v4", "int8", 275e12, 1.2e12, 128, 1, 4, 1},
    {"tpu-v5e", "bf16", 197e12, 8.1e11, 128, 2, 4, 1},         {"tpu-v5e", "int8", 394e12, 8.1e11, 128, 1, 8, 1},
    {"tpu-v5p", "bf16", 459e12, 2.46e12, 128, 2, 4, 1},        {"tpu-v5p", "int8", 918e12, 2.46e12, 128, 1, 8, 1},
    {"tpu-v5p", "fp8", 459e12, 2.46e12, 128, 1, 4, 1},         {"tpu-v6e", "bf16", 918e12, 1.6e12, 256, 2, 4, 1},
    {"tpu-v6e", "int8", 1836e12, 1.6e12, 256, 1, 8, 1},        {"tpu-v6e", "fp8", 920e12, 1.6e12, 256, 1, 4, 1},
    {"tpu-7x", "bf16", 2307e12, 7.4e12 * 0.865, 256, 2, 4, 2}, {"tpu-7x", "fp8", 4614e12, 7.4e12 * 0.865, 256, 1, 8, 2},
};

// `tpusim run` of matmul-v5e.yaml on `chip` in `dtype` at the default fidelity.
nlohmann::json run_default(const std::string& chip, const std::string& dtype, std::uint64_t m, std::uint64_t k,
                           std::uint64_t n) {
  auto exp = load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/matmul-v5e.yaml",
                             {nominal_chip::set(chip), "workload.dtype=" + dtype, "workload.m=" + std::to_string(m),
                              "workload.k=" + std::to_string(k), "workload.n=" + std::to_string(n)});
  return exp.workload->run(exp, {}).report["result"];
}

// Where an m = 8 matmul is memory-bound. A weight-stationary array loads a
// weight tile in R cycles whatever m, so below m = R rows it runs at m / R
// of its peak and its time is that of m = R: 2 R k n / peak. HBM's is
// e k n / bandwidth (B dominates). HBM is the bound iff the ridge (peak /
// bandwidth) lies above 2 R / e, the intensity of an m = R matmul: 128
// FLOP/B for bf16 on 128-row arrays, 256 for an 8-bit format. Where the
// ridge lies less than 15% above it, the fill and drain each block step's
// op pays on top of the weight loads (f below) bring the MXUs level with
// HBM at m = 8, and which is the bound turns on a few percent: balanced
// (v6e fp8, ridge 575 against 512).
enum class M8 { weight_load, balanced, memory };
M8 m8_side(const Ridge& c) {
  const double ridge = c.peak / c.hbm, m_r = 2 * c.rows / c.bytes;
  return ridge <= m_r ? M8::weight_load : ridge <= 1.15 * m_r ? M8::balanced : M8::memory;
}
bool m8_memory_bound(const Ridge& c) { return m8_side(c) == M8::memory; }

// The MXUs' busy time over HBM's at its sustained rate, measured in a
// report: above 1 the MXUs are the bound.
double mxu_over_hbm(const Ridge& c, const nlohmann::json& r) {
  return r["roofline"]["busy_fraction"]["mxu"].get<double>() * r["step_time_s"].get<double>() /
         (r["hbm_bytes"].get<double>() / (c.hbm / c.devices));
}

}  // namespace

TEST_CASE("every chip in every format: 8192^3 compute-bound, m = 8 memory-bound unless weight loading bounds it",
          "[workloads][matmul][formats][roofline]") {
  for (const Ridge& c : kRidges) {
    INFO(c.chip << " " << c.dtype << ": ridge " << c.peak / c.hbm << ", m = R at " << 2 * c.rows / c.bytes);
    CHECK(run_default(c.chip, c.dtype, 8192, 8192, 8192)["roofline"]["bound"] == "compute");
    const auto r8 = run_default(c.chip, c.dtype, 8, 8192, 8192);
    if (m8_side(c) == M8::balanced) {
      // Neither label is asserted: the two units' times are within 15%.
      INFO("m = 8: MXU / HBM time " << mxu_over_hbm(c, r8));
      CHECK(mxu_over_hbm(c, r8) == Approx(1).epsilon(0.15));
    } else {
      CHECK(r8["roofline"]["bound"] == (m8_memory_bound(c) ? "memory" : "compute"));
    }
  }
}

namespace {

// The share of an m-row block step's MXU time that is fill and drain, by
// docs/mxu.md's closed form: an op of t weight tiles on one array takes
// (t - 1) max(m, R) + 2R + m + C - 2 cycles (square R x C array, full
// columns), t max(m, R) of them the steady stream, and consecutive ops do
// not overlap. The kernel splits a bk x bn block's columns over the core's
// arrays (whole C-column chunks), so an array's op has
// t = ceil(bk / R) x ceil(ceil(bn / arrays) / C) tiles.
double fill_drain_share(const Ridge& c, double m, double bk, double bn) {
  const double R = c.rows, C = c.rows;
  const double t = std::ceil(bk / R) * std::ceil(std::ceil(bn / c.arrays) / C);
  return (R + m + C - 2) / (t * std::max(m, R));
}

// The share of the clock a chip's MXUs sustain (its chip file's
// compute_efficiency: 0.942 on v5e from measured XLA matmuls,
// docs/calibration.md#compute-efficiency; 1 elsewhere).
double compute_efficiency(const Ridge& c) { return std::string(c.chip) == "tpu-v5e" ? 0.942 : 1.0; }

}  // namespace

TEST_CASE(
    "every chip in every format: the m = 8 plateau's MXU/HBM time by the closed form, crossover at the ridge "
    "within 15% where the plateau leaves the MXUs 15% below HBM",
    "[workloads][matmul][formats][roofline]") {
  for (const Ridge& c : kRidges) {
    if (!m8_memory_bound(c)) continue;
    const double ridge = c.peak / c.hbm;
    // Below m = R the MXUs' time is flat (weight loading) at (1 + f) 2 R k
    // n / peak, f the fill-and-drain share; HBM's is e k n / bandwidth.
    // Their ratio, (1 + f) (2 R / e) / ridge over the share of the clock the
    // MXUs sustain, is checked against the
    // measured busy times at m = 8 (MXU busy against HBM bytes over the
    // sustained bandwidth, within 3%).
    auto r8 = run_default(c.chip, c.dtype, 8, 8192, 8192);
    const double f = fill_drain_share(c, 8, r8["kernel"]["bk"], r8["kernel"]["bn"]);
    const double predicted = (1 + f) * (2 * c.rows / c.bytes) / ridge / compute_efficiency(c);
    const double measured = mxu_over_hbm(c, r8);
    const double crossover = testing_workloads::crossover_intensity(
        [&](std::uint64_t m) { return run_default(c.chip, c.dtype, m, 8192, 8192); }, 8, 8192);
    INFO(c.chip << " " << c.dtype << ": crossover at intensity " << crossover << ", ridge " << ridge
                << "; m = 8: fill and drain " << f << " of the MXU time, MXU / HBM time " << measured
                << " (closed form " << predicted << ")");
    CHECK(measured == Approx(predicted).epsilon(0.03));
    if (predicted <= 0.85) {
      // The MXUs stay more than 15% below HBM up to m = R: the bound flips
      // where the MXU time 2 m k n / peak (plus the fill and drain of the
      // longer period) meets HBM's, at the ridge.
      CHECK(crossover >= 0.85 * ridge);
      CHECK(crossover <= 1.15 * ridge);
    } else {
      // Balanced: below m = R the MXUs' flat time is within 15% of HBM's
      // (v3 bf16 0.91, 7x fp8 0.89): the fill and
      // drain each block step's op pays (docs/mxu.md: consecutive ops do not
      // overlap) bring the MXUs level with HBM before m reaches the ridge, so
      // the label flips on a few percent (the m in the drain, DMA latencies,
      // the blocking) anywhere from the plateau up. With the blocking that
      // counts the load engines' latency per step (docs/matmul.md) every
      // balanced pair flips within 15% of its ridge, v3 bf16 at intensity
      // 139 and 7x fp8 at 635 against ridges of 149 and 721
      // (docs/calibration.md#number-formats, "Crossover").
      CHECK(crossover >= 0.85 * ridge);
      CHECK(crossover <= 1.15 * ridge);
    }
  }
}

TEST_CASE("an int8 functional matmul equals the host's exact integer sums (int32 accumulation), tile and pe",
          "[workloads][matmul][formats][functional]") {
  // k = 1024, the deepest the FP32 datapath sums exactly (128 x 128 x 1024 =
  // 2^24); ragged m and n, so blocks and weight tiles are padded.
  for (const char* fidelity : {"tile", "pe"}) {
    INFO(fidelity);
    auto exp = load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/matmul-v5e.yaml",
                               {"functional=true", std::string("fidelity=") + fidelity, "workload.dtype=int8",
                                "workload.m=24", "workload.k=1024", "workload.n=136"});
    auto f = exp.workload->run(exp, {}).report["result"]["functional"];
    CHECK(f["matches_reference"] == true);
    CHECK(f["mismatches"] == 0);
    CHECK(f["max_abs_error"].get<double>() == 0.0);
  }
}

}  // namespace test_number_formats
