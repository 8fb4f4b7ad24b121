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

// A host-time deadline that holds inside one slice of simulated time, where
// runtime::simulate_within cannot look: a loop that can run long within one
// instant (the ICI network's drain: a 65,536-chip collective ran minutes
// past limits.max_wall_time in one slice) polls host_deadline_passed(),
// which past the deadline calls sc_stop() once and returns true; the caller
// stops its loop. simulate_within arms it for each run and reads
// host_deadline_tripped() to tell this stop from an op's failure.
void arm_host_deadline(double seconds_from_now);
void disarm_host_deadline();
bool host_deadline_passed();
bool host_deadline_tripped();

}  // namespace sim
