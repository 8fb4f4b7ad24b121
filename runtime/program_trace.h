#pragma once
// Puts one chip's executed program into a Perfetto trace: a track per
// engine instance, an event per op, with its energy (docs/mxu.md#energy).
#include <vector>

#include "hw/chip_config.h"
#include "hw/program.h"
#include "sim/trace.h"

namespace runtime {

void trace_program(sim::TraceWriter& trace, std::uint32_t chip, const hw::Program& program,
                   const std::vector<hw::OpTiming>& timings, const hw::EnergyParams& energy);

// An op's slice args: its hw::op_work (macs, vmem_bytes, hbm_bytes) and
// energy_j at `energy`'s figures; none for an op without such work.
std::vector<sim::TraceArg> op_energy_args(const hw::Op& op, const hw::EnergyParams& energy);

}  // namespace runtime
