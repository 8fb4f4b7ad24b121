#include "interconnect/reduction.h"

#include <algorithm>

namespace interconnect {

VectorUnitReduction::VectorUnitReduction(int chips, const ReductionConfig& config, std::uint64_t packet_bytes)
    : config_(config),
      packet_bytes_(packet_bytes),
      ps_per_byte_(
          std::max(1.0 / config.vector_bytes_per_s, config.hbm_bytes_per_reduced_byte / config.hbm_bytes_per_s) *
          kPsPerSecond),
      booked_until_(chips, 0),
      vector_busy_s_(chips, 0.0),
      hbm_bytes_(chips, 0.0),
      reductions_(chips, 0) {}

Ps VectorUnitReduction::reduce(int chip, std::uint64_t bytes, Ps data_start, Ps data_end) {
  const Ps work = round_up_ps(static_cast<double>(bytes) * ps_per_byte_);
  Ps finish;
  if (config_.streaming) {
    const Ps start = std::max(booked_until_[chip], data_start);
    booked_until_[chip] = start + work;
    const Ps tail = round_up_ps(static_cast<double>(std::min(bytes, packet_bytes_)) * ps_per_byte_);
    finish = std::max(start + work, data_end + tail);
  } else {
    const Ps start = std::max(booked_until_[chip], data_end);
    booked_until_[chip] = start + work;
    finish = start + work;
  }
  vector_busy_s_[chip] += static_cast<double>(bytes) / config_.vector_bytes_per_s;
  hbm_bytes_[chip] += static_cast<double>(bytes) * config_.hbm_bytes_per_reduced_byte;
  ++reductions_[chip];
  return finish;
}

}  // namespace interconnect
