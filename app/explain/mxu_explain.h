#pragma once
// One MXU op, explained: the numbers behind `tpusim explain mxu` (the CLI
// renders them).
#include <cstdint>

#include "hw/mxu_config.h"

namespace explain {

struct MxuExplainRequest {
  hw::MxuConfig config;
  hw::MxuShape shape;
  hw::Fidelity fidelity = hw::Fidelity::tile;
  std::uint64_t seed = 1;  // operands of a pe run
};

struct MxuExplainResult {
  std::uint64_t cycles = 0;
  std::uint64_t macs = 0;    // m * k * n
  double utilization = 0.0;  // macs / (rows * cols * cycles)
  double wall_time_s = 0.0;  // host time to compute the cycles (and values)
  bool checked = false;      // pe fidelity: results were compared
  bool matches_reference = false;
};

// pe fidelity draws A and B as small random integers (seeded), so every
// partial sum is an integer below 2^24 and exact in FP32 in any order; the
// PE engine's Y must then equal a plain host GEMM exactly. Throws
// sim::ConfigError on a bad request (pe fidelity also needs k < 2^24).
MxuExplainResult mxu_explain(const MxuExplainRequest& request);

}  // namespace explain
