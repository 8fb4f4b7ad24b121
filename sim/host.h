#pragma once
// Host-side measurements for the report's `simulator` section.
#include <chrono>
#include <cstdint>

namespace sim {

// Peak resident set size of this process (VmHWM), in bytes; 0 if unknown.
std::uint64_t peak_rss_bytes();

// Resident set size of this process now (VmRSS), in bytes; 0 if unknown.
std::uint64_t current_rss_bytes();

// Physical memory of the machine (sysconf), in bytes; 0 if unknown.
std::uint64_t machine_memory_bytes();

class WallTimer {
 public:
  WallTimer() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace sim
