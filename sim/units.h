#pragma once
// Numbers every layer agrees on: the simulation's time resolution, the size
// of a stored BF16 value, and rounding-up division. One definition each, in
// the lowest layer, so that no layer writes its own.
#include <cstdint>

namespace sim {

// Picoseconds per second: SystemC runs at a 1 ps resolution (reset_kernel),
// and the ICI network counts time in whole picoseconds.
constexpr double kPsPerSecond = 1e12;

inline double ps_to_seconds(std::uint64_t ps) { return static_cast<double>(ps) / kPsPerSecond; }

// Bytes of one BF16 value: the storage type of activations, weights and
// gradients (hw::bf16 holds one; hw/bf16.h checks the two agree). Here
// rather than in hw because models, which counts bytes, sits beside hw.
constexpr std::uint64_t kBf16Bytes = 2;

// a / b rounded up, for b > 0.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

}  // namespace sim
