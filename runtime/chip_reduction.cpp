#include "runtime/chip_reduction.h"

#include <stdexcept>
#include <string>

namespace runtime {

ChipReduction::ChipReduction(const std::vector<std::unique_ptr<hw::Chip>>& chips, int n,
                             const interconnect::ReductionConfig& config)
    : chips_(chips), hbm_per_byte_(config.hbm_bytes_per_reduced_byte), operand_bytes_(n, 0.0), hbm_bytes_(n, 0.0) {}

void ChipReduction::reduce(int chip, std::uint64_t bytes, interconnect::Ps /*data_start*/,
                           interconnect::Ps /*data_end*/, interconnect::ReductionListener& listener,
                           std::uint64_t token) {
  hw::Chip* c = static_cast<std::size_t>(chip) < chips_.size() ? chips_[chip].get() : nullptr;
  if (!c) throw std::logic_error("chip " + std::to_string(chip) + " reduces but is not simulated");
  std::uint64_t slot;
  if (free_.empty()) {
    slot = waiting_.size();
    waiting_.emplace_back();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  waiting_[slot] = {&listener, token};
  operand_bytes_[chip] += double(bytes);
  hbm_bytes_[chip] += double(bytes) * hbm_per_byte_;
  c->start_reduction(bytes, hbm_per_byte_, *this, slot);
}

double ChipReduction::vector_busy_s(int chip) const {
  return chips_[chip] ? operand_bytes_[chip] / chips_[chip]->vector_bytes_per_s() : 0.0;
}

void ChipReduction::flow_done(std::uint64_t slot) {
  const Waiting w = waiting_[slot];
  free_.push_back(slot);
  w.listener->reduced(w.token);
}

}  // namespace runtime
