#include "runtime/chip_reduction.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <systemc>

namespace runtime {

ChipReduction::ChipReduction(const std::vector<std::unique_ptr<hw::Chip>>& chips, int n,
                             const interconnect::ReductionConfig& config, std::uint64_t packet_bytes,
                             interconnect::ReductionModel& unsimulated,
                             interconnect::ReductionModel* sparsecore_unsimulated,
                             const interconnect::ReductionConfig* sparsecore_config)
    : chips_(chips),
      tensorcore_{&unsimulated, interconnect::reducer_ps_per_byte(config)},
      sparsecore_unit_{sparsecore_unsimulated,
                       sparsecore_config ? interconnect::reducer_ps_per_byte(*sparsecore_config) : 0.0},
      hbm_per_byte_(config.hbm_bytes_per_reduced_byte),
      packet_bytes_(std::max<std::uint64_t>(packet_bytes, 1)),
      contention_ps_(n, 0),
      late_span_ps_(n, 0),
      late_spans_(n),
      coupled_(n, 0),
      operand_bytes_(n, 0.0),
      hbm_bytes_(n, 0.0),
      sparsecore_operand_bytes_(n, 0.0) {}

const ChipReduction::Unit& ChipReduction::unit(bool sparsecore) const {
  if (sparsecore && !sparsecore_unit_.unsimulated)
    throw std::logic_error("a collective offloaded to the SparseCores, but no SparseCore reduction was set up");
  return sparsecore ? sparsecore_unit_ : tensorcore_;
}

hw::Chip* ChipReduction::simulated(int chip) const {
  return static_cast<std::size_t>(chip) < chips_.size() ? chips_[chip].get() : nullptr;
}

void ChipReduction::expect(int chip, std::uint64_t bytes, double max_bytes_per_s,
                           interconnect::ReductionListener& listener, std::uint64_t token) {
  expect_on(false, chip, bytes, max_bytes_per_s, listener, token);
}

void ChipReduction::expect_on(bool sparsecore, int chip, std::uint64_t bytes, double max_bytes_per_s,
                              interconnect::ReductionListener& listener, std::uint64_t token) {
  if (!simulated(chip)) {
    unit(sparsecore).unsimulated->expect(chip, bytes, max_bytes_per_s, listener, token);
    return;
  }
  std::uint64_t slot;
  if (free_.empty()) {
    slot = expected_.size();
    expected_.emplace_back();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  const std::uint64_t tail = std::min(bytes, packet_bytes_);
  Expected& e = expected_[slot];
  e = Expected{};
  e.listener = &listener;
  e.token = token;
  e.chip = chip;
  e.tail_bytes = tail;
  e.sparsecore = sparsecore;
  e.own_active = simulated(chip)->hbm_fluid().own_active();
  e.own_started = simulated(chip)->hbm_fluid().own_started();
  if (!slot_of_.emplace(Key{&listener, token}, slot).second)
    throw std::logic_error("chip " + std::to_string(chip) + ": a reduction expected twice under one token");
  (sparsecore ? sparsecore_operand_bytes_ : operand_bytes_)[chip] += double(bytes);
  hbm_bytes_[chip] += double(bytes) * hbm_per_byte_;
  if (bytes > tail) {
    e.streaming = start_part(slot, bytes - tail, max_bytes_per_s, 0);
  } else {
    e.streamed = true;
  }
}

void ChipReduction::reduce(int chip, std::uint64_t bytes, interconnect::Ps data_start, interconnect::Ps data_end,
                           interconnect::ReductionListener& listener, std::uint64_t token) {
  reduce_on(false, chip, bytes, data_start, data_end, listener, token);
}

void ChipReduction::reduce_on(bool sparsecore, int chip, std::uint64_t bytes, interconnect::Ps data_start,
                              interconnect::Ps data_end, interconnect::ReductionListener& listener,
                              std::uint64_t token) {
  if (!simulated(chip)) {
    unit(sparsecore).unsimulated->reduce(chip, bytes, data_start, data_end, listener, token);
    return;
  }
  const auto it = slot_of_.find(Key{&listener, token});
  if (it == slot_of_.end())
    throw std::logic_error("chip " + std::to_string(chip) + ": a reduction landed that was never expected");
  const std::uint64_t slot = it->second;
  slot_of_.erase(it);
  Expected& e = expected_[slot];
  e.landed = true;
  e.landed_at = data_end;
  if (!e.streamed) simulated(chip)->uncap_reduction(e.streaming);
  start_tail_if_ready(slot);
}

hw::HbmFluid::Handle ChipReduction::start_part(std::uint64_t slot, std::uint64_t bytes, double cap_per_s, int part) {
  const Expected& e = expected_[slot];
  return simulated(e.chip)->start_reduction(bytes, hbm_per_byte_, cap_per_s, *this, slot * 2 + part, e.sparsecore);
}

void ChipReduction::start_tail_if_ready(std::uint64_t slot) {
  const Expected& e = expected_[slot];
  if (e.streamed && e.landed) start_part(slot, e.tail_bytes, sim::FluidShare::kNoCap, 1);
}

void ChipReduction::flow_done(std::uint64_t flow) {
  const std::uint64_t slot = flow / 2;
  if (flow % 2 == 0) {
    expected_[slot].streamed = true;
    start_tail_if_ready(slot);
    return;
  }
  const Expected e = expected_[slot];
  free_.push_back(slot);
  const interconnect::Ps now = sc_core::sc_time_stamp().value();
  const interconnect::Ps calendar =
      e.landed_at + sim::duration_ps(double(e.tail_bytes) * unit(e.sparsecore).ps_per_byte, [&] {
        return "the reduction tail of " + std::to_string(e.tail_bytes) + " bytes on chip " + std::to_string(e.chip);
      });
  if (now > calendar) {
    contention_ps_[e.chip] += now - calendar;
    add_late_span(e.chip, calendar, now);
  }
  const hw::HbmFluid& hbm = simulated(e.chip)->hbm_fluid();
  if (e.own_active > 0 || hbm.own_started() != e.own_started) coupled_[e.chip] = 1;
  e.listener->reduced(e.token);
}

void ChipReduction::add_late_span(int chip, interconnect::Ps from, interconnect::Ps to) {
  // Spans end now, so those the new one overlaps are the last ones kept.
  auto& spans = late_spans_[chip];
  interconnect::Ps covered = 0, lo = from;
  while (!spans.empty() && spans.back().second >= from) {
    covered += spans.back().second - std::max(spans.back().first, from);
    lo = std::min(lo, spans.back().first);
    spans.pop_back();
  }
  late_span_ps_[chip] += to - from - covered;
  spans.emplace_back(lo, to);
  if (spans.size() > kLateSpansKept) spans.erase(spans.begin());
}

double ChipReduction::vector_busy_s(int chip) const {
  return simulated(chip) ? operand_bytes_[chip] / chips_[chip]->vector_bytes_per_s()
                         : tensorcore_.unsimulated->vector_busy_s(chip);
}

interconnect::Ps ChipReduction::alone_ps(int chip) const {
  return sim::duration_ps(
      operand_bytes_[chip] * tensorcore_.ps_per_byte + sparsecore_operand_bytes_[chip] * sparsecore_unit_.ps_per_byte,
      [&] { return "the collective reductions of chip " + std::to_string(chip); });
}

double ChipReduction::hbm_bytes(int chip) const {
  if (simulated(chip)) return hbm_bytes_[chip];
  return tensorcore_.unsimulated->hbm_bytes(chip) +
         (sparsecore_unit_.unsimulated ? sparsecore_unit_.unsimulated->hbm_bytes(chip) : 0.0);
}

}  // namespace runtime
