#include "hw/vector_unit.h"

#include <cmath>
#include <stdexcept>

#include "sim/error.h"

namespace hw {

VectorUnit::VectorUnit(sc_core::sc_module_name name, const VectorUnitConfig& config,
                       const sc_core::sc_time& clock_period)
    : sc_core::sc_module(name), config_(config), period_(clock_period) {
  if (!(config_.flops_per_cycle > 0.0) || !std::isfinite(config_.flops_per_cycle))
    throw sim::ConfigError({}, "vector_unit.flops_per_cycle", "must be a positive finite number");
  if (period_ == sc_core::SC_ZERO_TIME)
    throw std::logic_error("VectorUnit: the clock period rounds to zero at the kernel's time resolution");
}

std::uint64_t VectorUnit::cycles_for(std::uint64_t elements, double flops_per_element) const {
  if (!(flops_per_element >= 0.0) || !std::isfinite(flops_per_element))
    throw std::invalid_argument("VectorUnit: flops_per_element must be finite and >= 0");
  const double work = static_cast<double>(elements) * flops_per_element;
  return static_cast<std::uint64_t>(std::ceil(work / config_.flops_per_cycle));
}

std::uint64_t VectorUnit::begin(std::uint64_t elements, double flops_per_element) {
  const std::uint64_t cycles = cycles_for(elements, flops_per_element);
  ++operations_;
  busy_cycles_ += cycles;
  flops_ += static_cast<double>(elements) * flops_per_element;
  return cycles;
}

}  // namespace hw
