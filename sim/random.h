#pragma once
// Draws that are the same on every platform. std::mt19937_64's outputs are
// fixed by the C++ standard, but std::uniform_real_distribution's (and every
// other distribution's) algorithm is the library's; so seeded draws go
// through these instead.
#include <cstdint>
#include <random>

namespace sim {

// A uniform in [0, 1) from the top 53 bits of one draw.
inline double uniform01(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

}  // namespace sim
