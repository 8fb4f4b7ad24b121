#include "app/explain/mxu_explain.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "hw/bf16.h"
#include "hw/mxu_timing.h"
#include "hw/systolic_array.h"
#include "runtime/run_budget.h"
#include "sim/error.h"

namespace explain {

namespace {

// FP32 has a 24-bit significand: integers of magnitude below 2^24 are exact.
constexpr double kExactIntegerLimit = 16777216.0;

// Largest operand magnitude v with k * v^2 < 2^24, capped at 8 to keep the
// numbers readable.
int operand_bound(std::uint64_t k) {
  const double v = std::floor(std::sqrt((kExactIntegerLimit - 1.0) / static_cast<double>(k)));
  return static_cast<int>(std::clamp(v, 1.0, 8.0));
}

std::vector<hw::bf16> random_integers(std::size_t count, int bound, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(-bound, bound);
  std::vector<hw::bf16> v(count);
  for (hw::bf16& x : v) x = hw::bf16::from_float(static_cast<float>(pick(rng)));
  return v;
}

// Row by row in i-p-j order, so B is read along its rows (the i-j-p dot
// products read it down a column, stride n, and took 3.7 of the 4.1 s of a
// 1024^3 run, issue 23). Each entry still sums over p in order; the sums of
// these integer operands are exact in double either way.
bool matches_host_gemm(const hw::MxuShape& s, const std::vector<hw::bf16>& a, const std::vector<hw::bf16>& b,
                       const std::vector<float>& y) {
  std::vector<double> row(s.n);
  for (std::size_t i = 0; i < s.m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (std::size_t p = 0; p < s.k; ++p) {
      const double a_ip = a[i * s.k + p].to_float();
      const hw::bf16* b_p = &b[p * s.n];
      for (std::size_t j = 0; j < s.n; ++j) row[j] += a_ip * b_p[j].to_float();
    }
    for (std::size_t j = 0; j < s.n; ++j)
      if (static_cast<double>(y[i * s.n + j]) != row[j]) return false;
  }
  return true;
}

}  // namespace

MxuExplainResult mxu_explain(const MxuExplainRequest& request) {
  const hw::MxuConfig& config = request.config;
  const hw::MxuShape& shape = request.shape;
  validate(config);
  validate(shape);
  MxuExplainResult result;
  result.macs = shape.m * shape.k * shape.n;
  const auto start = std::chrono::steady_clock::now();
  if (request.fidelity == hw::Fidelity::tile) {
    result.cycles = hw::mxu_tile_cycles(config, shape);
    result.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } else {
    if (static_cast<double>(shape.k) >= kExactIntegerLimit) {
      throw sim::ConfigError({}, "mxu.k", "pe explain needs k < 2^24 for exact integer sums");
    }
    // Refused before anything is allocated: the operands (m x k and k x n
    // BF16, m x n FP32) against the default memory limit (half the
    // machine's), the PE cycles against the default PE budget
    // (runtime/run_budget.h).
    const runtime::Limits limits;
    runtime::MemoryEstimate memory;
    memory.add("A, B and C", runtime::pe_operand_bytes(shape));
    runtime::check_memory(limits, memory, "explain mxu --fidelity pe");
    runtime::check_pe_cycles(limits, runtime::pe_cycles(config, shape), "explain mxu --fidelity pe");
    std::mt19937_64 rng(request.seed);
    const int bound = operand_bound(shape.k);
    const std::vector<hw::bf16> a = random_integers(shape.m * shape.k, bound, rng);
    const std::vector<hw::bf16> b = random_integers(shape.k * shape.n, bound, rng);
    hw::SystolicArray array;
    const hw::MxuPeResult pe = array.run(config, shape, a.data(), b.data());
    result.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.cycles = pe.cycles;
    result.checked = true;
    result.matches_reference = matches_host_gemm(shape, a, b, pe.y);
  }
  result.utilization = static_cast<double>(result.macs) /
                       (static_cast<double>(config.rows) * config.cols * static_cast<double>(result.cycles));
  return result;
}

}  // namespace explain
