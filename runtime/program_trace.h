#pragma once
// Puts one chip's executed program into a Perfetto trace: a track per
// engine instance, an event per op.
#include "hw/program.h"
#include "sim/trace.h"

namespace runtime {

void trace_program(sim::TraceWriter& trace, std::uint32_t chip, const hw::Program& program,
                   const std::vector<hw::OpTiming>& timings);

}  // namespace runtime
