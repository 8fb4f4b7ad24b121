#pragma once
// Simulated time is a 64-bit count of picoseconds (SystemC at 1 ps,
// sim/units.h; the ICI network's Ps), which wraps after 2^64 ps (213 days).
// Every duration computed in floating point (bytes / bandwidth, a latency,
// a clock period) becomes ticks here, range-checked: 64 MiB at 0.1 B/s used
// to wrap to a few microseconds and report a time shorter than the bytes
// can take.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/units.h"

namespace sim {

// The longest duration one event may be scheduled ahead: 2^62 ps (53 days).
// Far beyond limits.max_sim_time (at most 1e6 s, 2^59.8 ps), so a run that
// stays within its limits never meets it, and `now + duration` cannot wrap
// while now is within the limits (at most one slice past them).
constexpr std::uint64_t kMaxDurationPs = std::uint64_t{1} << 62;

// Throws SimFailure (exit 3): "<what> takes <ps>, beyond what simulated
// time can hold".
[[noreturn]] void duration_overflow(double ps, const std::string& what);

// A whole number of picoseconds computed in floating point, as ticks. One
// that is not a number or beyond kMaxDurationPs ends the run naming
// `what()`, the transfer or op it belongs to (called only then, so hot
// paths build no string); a negative one is 0.
template <class What>
std::uint64_t checked_ps(double whole_ps, const What& what) {
  if (!(whole_ps < static_cast<double>(kMaxDurationPs))) duration_overflow(whole_ps, what());
  return whole_ps <= 0.0 ? 0 : static_cast<std::uint64_t>(whole_ps);
}

// A transfer's duration: `ps` rounded up (it never ends early). The slack
// keeps exact quotients such as 4096 B / 4.096e9 B/s from gaining a
// picosecond to floating-point noise.
template <class What>
std::uint64_t duration_ps(double ps, const What& what) {
  return checked_ps(std::ceil(ps - 1e-6), what);
}
template <class What>
std::uint64_t duration_from_seconds(double seconds, const What& what) {
  return duration_ps(seconds * kPsPerSecond, what);
}

// Ticks from `now` until a wake-up at `at`. A wake before now cannot
// advance time (a sum that wrapped, or a livelock in the making): an
// internal error, caught here instead of spinning in one instant.
inline std::uint64_t ps_until(std::uint64_t at, std::uint64_t now) {
  if (at < now) throw std::logic_error("a wake-up scheduled before now: simulated time would not advance");
  return at - now;
}

}  // namespace sim
