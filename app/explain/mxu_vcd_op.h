#pragma once
// One MXU op in a simulation of its own, dumped cycle by cycle into a VCD
// file (`tpusim explain mxu --vcd FILE`): a fresh kernel, one hw::Mxu with pe
// fidelity hooked to an hw::MxuVcd, and a driver thread that issues the op
// at time 0, so cycle c of the op sits at time c * period in the file.
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "hw/bf16.h"
#include "hw/mxu_config.h"

namespace explain {

struct MxuVcdOpResult {
  std::uint64_t cycles = 0;
  std::vector<float> y;  // m x n, as the PE engine computed it
  std::size_t signals = 0;
};

// a: m x k, b: k x n, row-major. Resets the SystemC kernel (sim/kernel.h):
// call with no other simulation alive. Throws sim::ConfigError on a bad
// config or shape, an op too large for a VCD (hw::check_mxu_vcd_size) or a file
// that cannot be written.
MxuVcdOpResult run_mxu_op_to_vcd(const std::string& path, const hw::MxuConfig& config, const hw::MxuShape& shape,
                                 const std::vector<hw::bf16>& a, const std::vector<hw::bf16>& b,
                                 sc_core::sc_time period);

}  // namespace explain
