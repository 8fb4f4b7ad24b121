#pragma once
// SystemC kernel lifetime. The kernel is a process-wide global; every
// simulation starts from reset_kernel() after the previous one's modules are
// destroyed (docs/architecture.md, "Several simulations in one process").
#include <cstdint>

#include "sim/units.h"  // kPsPerSecond, the kernel's time resolution

namespace sim {

// Fresh simulation context, report handler and TLM global quantum; time
// resolution 1 ps. Call before constructing any module of a new simulation.
void reset_kernel();

// Events the kernel processed since the last reset (delta cycles + timed
// notifications), for the report's simulator.events.
std::uint64_t kernel_events();

}  // namespace sim
