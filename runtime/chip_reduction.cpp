#include "runtime/chip_reduction.h"

#include <stdexcept>
#include <string>

namespace runtime {

ChipReduction::ChipReduction(const std::vector<std::unique_ptr<hw::Chip>>& chips, int n,
                             const interconnect::ReductionConfig& config, interconnect::ReductionModel& unsimulated)
    : chips_(chips),
      unsimulated_(unsimulated),
      hbm_per_byte_(config.hbm_bytes_per_reduced_byte),
      operand_bytes_(n, 0.0),
      hbm_bytes_(n, 0.0) {}

void ChipReduction::reduce(int chip, std::uint64_t bytes, interconnect::Ps data_start, interconnect::Ps data_end,
                           interconnect::ReductionListener& listener, std::uint64_t token) {
  hw::Chip* c = static_cast<std::size_t>(chip) < chips_.size() ? chips_[chip].get() : nullptr;
  if (!c) {
    unsimulated_.reduce(chip, bytes, data_start, data_end, listener, token);
    return;
  }
  operand_bytes_[chip] += double(bytes);
  hbm_bytes_[chip] += double(bytes) * hbm_per_byte_;
  c->start_reduction(bytes, hbm_per_byte_, *this, pending_.hold(listener, token));
}

double ChipReduction::vector_busy_s(int chip) const {
  return chips_[chip] ? operand_bytes_[chip] / chips_[chip]->vector_bytes_per_s() : unsimulated_.vector_busy_s(chip);
}

double ChipReduction::hbm_bytes(int chip) const {
  return chips_[chip] ? hbm_bytes_[chip] : unsimulated_.hbm_bytes(chip);
}

void ChipReduction::flow_done(std::uint64_t slot) { pending_.answer(slot); }

}  // namespace runtime
