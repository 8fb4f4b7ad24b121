#pragma once
// Interconnect time is kept as integer picoseconds, the kernel's resolution
// (sim/units.h); sc_time appears only where a SystemC process waits.
#include <cstdint>

#include "sim/sim_time.h"
#include "sim/units.h"

namespace interconnect {

using Ps = std::uint64_t;

using sim::kPsPerSecond;

inline double to_seconds(Ps t) { return sim::ps_to_seconds(t); }

// Durations computed in floating point become Ps through sim::duration_ps
// (sim/sim_time.h), range-checked, as hw's do.

}  // namespace interconnect
