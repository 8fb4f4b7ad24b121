#pragma once
// The fixed cost of issuing a kernel: one hw::LaunchOp on core 0's scalar
// unit ahead of the kernel's first ops, which takes the chip's
// kernel_launch (docs/calibration.md#kernel-launch). A chip without a
// launch cost gets no op, so its programs are as they were.
#include <string>
#include <vector>

#include "hw/chip_config.h"
#include "hw/program.h"

namespace kernels {

// `kernel` with a launch op first, which its dependency-free ops wait for.
hw::Program launched(const hw::Program& kernel, const hw::ChipConfig& chip);

// Appends a kernel's launch op after `deps`; returns what the kernel's first
// ops wait for: the launch op, or `deps` when the chip has no launch cost.
std::vector<std::uint32_t> append_launch(hw::Program& prog, const hw::ChipConfig& chip,
                                         const std::vector<std::uint32_t>& deps, const std::string& name);

}  // namespace kernels
