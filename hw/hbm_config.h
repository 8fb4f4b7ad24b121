#pragma once
// Parameters of one chip's HBM. The numbers come from the chip's YAML
// (configs/chips/, sourced from docs/reference/tpu-specs.md#<gen>.hbm_capacity / hbm_bw);
// channel count and interleave are modelling choices the specs do not publish.
#include <cmath>
#include <cstdint>
#include <string>

#include "sim/error.h"

namespace hw {

struct HbmConfig {
  std::uint64_t capacity_bytes = 0;
  std::uint32_t channels = 1;
  double bandwidth_bytes_per_s = 0.0;  // whole device; each channel gets 1/channels of it
  double latency_s = 0.0;              // paid once per transfer
  std::uint64_t interleave_bytes = 0;  // consecutive blocks of this size go to consecutive channels
  // Share of the peak the DRAM sustains under streaming traffic (refresh,
  // read/write turnarounds, row misses): docs/calibration.md#hbm-efficiency.
  double efficiency = 1.0;

  // What the channels serve, all together: timing uses this, reports
  // measure against the peak (bandwidth_bytes_per_s).
  double sustained_bytes_per_s() const { return bandwidth_bytes_per_s * efficiency; }
};

// Throws sim::ConfigError naming the first bad field.
inline void validate(const HbmConfig& c) {
  auto fail = [](const char* key, const char* what) { throw sim::ConfigError({}, std::string("hbm.") + key, what); };
  if (c.capacity_bytes == 0) fail("capacity_bytes", "must be > 0");
  if (c.channels == 0) fail("channels", "must be > 0");
  if (!(c.bandwidth_bytes_per_s > 0.0) || !std::isfinite(c.bandwidth_bytes_per_s))
    fail("bandwidth_bytes_per_s", "must be a positive finite number");
  if (!(c.latency_s >= 0.0) || !std::isfinite(c.latency_s)) fail("latency_s", "must be a finite number >= 0");
  if (c.interleave_bytes == 0) fail("interleave_bytes", "must be > 0");
  if (!(c.efficiency > 0.0 && c.efficiency <= 1.0)) fail("efficiency", "must be in (0, 1]");
}

}  // namespace hw
