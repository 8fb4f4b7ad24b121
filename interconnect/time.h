#pragma once
// Interconnect time is kept as integer picoseconds, the kernel's resolution
// (sim/units.h); sc_time appears only where a SystemC process waits.
#include <cmath>
#include <cstdint>

#include "sim/units.h"

namespace interconnect {

using Ps = std::uint64_t;

using sim::kPsPerSecond;

inline double to_seconds(Ps t) { return sim::ps_to_seconds(t); }

// Whole picoseconds covering `seconds`, rounded up (a transfer never ends
// early). The small slack keeps exact products such as 4096 B / 4.096e9 B/s
// from gaining a picosecond to floating-point noise.
inline Ps round_up_ps(double ps) { return ps <= 0.0 ? 0 : static_cast<Ps>(std::ceil(ps - 1e-6)); }
inline Ps ceil_ps(double seconds) { return round_up_ps(seconds * kPsPerSecond); }

}  // namespace interconnect
