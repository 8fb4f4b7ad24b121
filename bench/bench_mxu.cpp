// MXU engine speed: PE-cycles per second of the PE engine on a 128x128 and a
// 32x32 array, next to a baseline measured in the same process (a bare FP32
// multiply-add loop over the same number of PE-cycles), and the cost of the
// closed-form tile engine. Prints a table; scripts/bench runs it.
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "hw/mxu_timing.h"
#include "hw/systolic_array.h"
#include "sim/host.h"

// libsystemc.so needs one (main() is ours): in a unity build the MXU engine's
// batch also holds files that use SystemC, so the library is linked in.
extern "C" int sc_main(int, char**) { return 0; }

namespace {

std::vector<hw::bf16> random_bf16(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-4, 4);
  std::vector<hw::bf16> v(count);
  for (auto& x : v) x = hw::bf16::from_float(float(dist(rng)));
  return v;
}

// The cheapest thing a PE-cycle could cost: one multiply-add per PE per
// cycle over an R x C grid, no data movement between PEs.
double baseline_pe_cycles_per_s(std::uint32_t rows, std::uint32_t cols, std::uint64_t cycles) {
  std::vector<float> a(rows * cols, 1.0f), w(rows * cols, 0.5f), p(rows * cols, 0.0f);
  sim::WallTimer t;
  for (std::uint64_t c = 0; c < cycles; ++c) {
    for (std::size_t i = 0; i < p.size(); ++i) p[i] += a[i] * w[i];
    a[c % a.size()] += 1e-7f;  // keep the loop from being hoisted
  }
  volatile float sink = p[0];
  (void)sink;
  return double(rows) * cols * double(cycles) / t.seconds();
}

void pe_row(const char* label, std::uint32_t rows, std::uint32_t cols, std::uint64_t m, std::uint64_t k,
            std::uint64_t n) {
  hw::MxuConfig cfg;
  cfg.rows = rows;
  cfg.cols = cols;
  auto a = random_bf16(m * k, 1), b = random_bf16(k * n, 2);
  hw::SystolicArray array;
  sim::WallTimer t;
  auto res = array.run(cfg, {m, k, n}, a.data(), b.data());
  const double wall = t.seconds();
  const double pe_cycles = double(rows) * cols * double(res.cycles);
  const double base = baseline_pe_cycles_per_s(rows, cols, std::min<std::uint64_t>(res.cycles, 20000));
  std::printf("%-34s %10.3f %14llu %14.3e %10.2f\n", label, wall, (unsigned long long)res.cycles, pe_cycles / wall,
              (pe_cycles / wall) / base);
}

}  // namespace

int main() {
  std::printf("%-34s %10s %14s %14s %10s\n", "PE engine", "wall_s", "cycles", "PE-cycles/s", "vs_base");
  pe_row("128x128, 2048x512x512", 128, 128, 2048, 512, 512);
  pe_row("32x32, 1024^3 GEMM (anchor ~1 s)", 32, 32, 1024, 1024, 1024);

  hw::MxuConfig cfg;
  sim::WallTimer t;
  std::uint64_t sum = 0;
  const int reps = 100000;
  for (int i = 0; i < reps; ++i) sum += hw::mxu_tile_cycles(cfg, {8192 + std::uint64_t(i % 7), 8192, 8192});
  const double per_call = t.seconds() / reps;
  std::printf("\n%-34s %10.3e s per call (8192^3 on 128x128: %llu cycles)\n", "tile engine (closed form)", per_call,
              (unsigned long long)(sum / reps));
  std::printf("peak RSS %.1f MiB\n", double(sim::peak_rss_bytes()) / (1 << 20));
  return 0;
}
