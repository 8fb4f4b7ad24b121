#include "hw/mxu.h"

#include <algorithm>
#include <vector>

#include "hw/mxu_functional.h"
#include "hw/mxu_timing.h"
#include "sim/error.h"

namespace hw {

Mxu::Mxu(sc_core::sc_module_name name, const MxuConfig& config, sc_core::sc_time period,
         Fidelity fidelity)
    : sc_core::sc_module(name),
      config_(config),
      period_(period),
      fidelity_(fidelity),
      busy_("busy") {
  validate(config_);
  if (period_ <= sc_core::SC_ZERO_TIME) {
    throw sim::ConfigError({}, "mxu.period", "clock period must be positive");
  }
}

void Mxu::execute(const MxuShape& shape, const bf16* a, const bf16* b, float* y) {
  // Everything that can throw runs before the MXU is taken. The values do
  // not depend on when the op runs, and no other process can interleave
  // with this plain C++ (SystemC processes switch only in wait).
  validate(shape);
  std::uint64_t macs = 0;
  if (__builtin_mul_overflow(shape.m, shape.k, &macs) ||
      __builtin_mul_overflow(macs, shape.n, &macs)) {
    throw sim::ConfigError({}, "mxu", "op too large: m * k * n does not fit in 64 bits");
  }
  std::uint64_t cycles = 0;
  if (fidelity_ == Fidelity::pe) {
    cycles = run_pe(shape, a, b, y);
  } else {
    cycles = mxu_tile_cycles(config_, shape);
    if (a != nullptr && b != nullptr && y != nullptr) {
      const std::vector<float> values = mxu_functional_matmul(config_, shape, a, b);
      std::copy(values.begin(), values.end(), y);
    }
  }
  sc_core::sc_time::value_type span = 0;
  if (__builtin_mul_overflow(period_.value(), cycles, &span)) {
    throw sim::ConfigError({}, "mxu", "op too long: its duration overflows simulated time");
  }

  busy_.lock();
  wait(sc_core::sc_time::from_value(span));
  ++stats_.ops;
  stats_.macs += macs;
  stats_.busy_cycles += cycles;
  busy_.unlock();
}

std::uint64_t Mxu::run_pe(const MxuShape& shape, const bf16* a, const bf16* b, float* y) {
  validate(shape);
  std::vector<bf16> zeros;
  if (a == nullptr || b == nullptr) zeros.resize(std::max(shape.m * shape.k, shape.k * shape.n));
  MxuPeResult result =
      array_.run(config_, shape, a != nullptr ? a : zeros.data(), b != nullptr ? b : zeros.data());
  if (y != nullptr) std::copy(result.y.begin(), result.y.end(), y);
  return result.cycles;
}

}  // namespace hw
