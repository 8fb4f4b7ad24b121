#include "hw/mxu.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/mxu_functional.h"
#include "hw/mxu_timing.h"
#include "sim/error.h"
#include "sim/sim_time.h"

namespace hw {

Mxu::Mxu(sc_core::sc_module_name name, const MxuConfig& config, sc_core::sc_time period, Fidelity fidelity)
    : sc_core::sc_module(name), config_(config), period_(period), fidelity_(fidelity), busy_("busy") {
  validate(config_);
  // chip.clock's range (hw/chip_config.cpp) keeps the period positive.
  if (period_ <= sc_core::SC_ZERO_TIME) throw std::logic_error("Mxu: the clock period must be positive");
}

std::uint64_t Mxu::checked_macs(const MxuShape& shape) const {
  validate(shape);
  std::uint64_t macs = 0;
  if (__builtin_mul_overflow(shape.m, shape.k, &macs) || __builtin_mul_overflow(macs, shape.n, &macs)) {
    throw sim::ConfigError({}, "mxu", "op too large: m * k * n does not fit in 64 bits");
  }
  return macs;
}

Mxu::Prepared Mxu::prepare(const MxuShape& shape, const bf16* a, const bf16* b, float* y) {
  Prepared op;
  op.macs = checked_macs(shape);
  if (fidelity_ == Fidelity::pe) {
    op.cycles = run_pe(shape, a, b, y);
  } else {
    op.cycles = mxu_tile_cycles(config_, shape);
    if (a != nullptr && b != nullptr && y != nullptr) {
      const std::vector<float> values = mxu_functional_matmul(config_, shape, a, b);
      std::copy(values.begin(), values.end(), y);
    }
  }
  sc_core::sc_time::value_type span = 0;
  if (__builtin_mul_overflow(period_.value(), op.cycles, &span) || span > sim::kMaxDurationPs) {
    sim::duration_overflow(double(period_.value()) * double(op.cycles),
                           std::string(name()) + ": a " + std::to_string(shape.m) + "x" + std::to_string(shape.k) +
                               "x" + std::to_string(shape.n) + " matmul of " + std::to_string(op.cycles) + " cycles");
  }
  op.span = sc_core::sc_time::from_value(span);
  return op;
}

void Mxu::count(std::uint64_t macs, std::uint64_t cycles, double vmem_bytes) {
  ++stats_.ops;
  stats_.vmem_bytes += vmem_bytes;
  stats_.macs += macs;
  stats_.busy_cycles += cycles;
}

void Mxu::execute(const MxuShape& shape, const bf16* a, const bf16* b, float* y) {
  // Everything that can throw runs before the MXU is taken. The values do
  // not depend on when the op runs, and no other process can interleave
  // with this plain C++ (SystemC processes switch only in wait). The stats
  // count the op when it ends (begin() counts it when it starts).
  if (fidelity_ == Fidelity::pe && cycle_hook_) {
    // The PE engine runs while the MXU is held, pausing one period after
    // each cycle, so the hook sees cycle c at op start + c * period.
    const std::uint64_t macs = checked_macs(shape);
    busy_.lock();
    std::uint64_t cycles = 0;
    try {
      cycles = run_pe(shape, a, b, y, [this](const ArrayStateView& view) {
        cycle_hook_->on_cycle(view);
        wait(period_);
      });
      cycle_hook_->on_idle();
    } catch (...) {
      busy_.unlock();
      throw;
    }
    count(macs, cycles, mxu_vmem_bytes(shape));
    busy_.unlock();
    return;
  }
  const Prepared op = prepare(shape, a, b, y);
  busy_.lock();
  wait(op.span);
  count(op.macs, op.cycles, mxu_vmem_bytes(shape));
  busy_.unlock();
}

std::uint64_t Mxu::begin(const MxuShape& shape, const bf16* a, const bf16* b, float* y) {
  if (needs_thread()) throw std::logic_error(std::string(name()) + ": begin() with a cycle hook; use execute()");
  // The same checks, values and stats as execute(), in the same order.
  const Prepared op = prepare(shape, a, b, y);
  count(op.macs, op.cycles, mxu_vmem_bytes(shape));
  return op.cycles;
}

std::uint64_t Mxu::run_pe(const MxuShape& shape, const bf16* a, const bf16* b, float* y, const MxuObserver& observer) {
  validate(shape);
  std::vector<bf16> zeros;
  if (a == nullptr || b == nullptr) zeros.resize(std::max(shape.m * shape.k, shape.k * shape.n));
  MxuPeResult result =
      array_.run(config_, shape, a != nullptr ? a : zeros.data(), b != nullptr ? b : zeros.data(), observer);
  if (y != nullptr) std::copy(result.y.begin(), result.y.end(), y);
  return result.cycles;
}

}  // namespace hw
