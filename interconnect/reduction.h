#pragma once
// What a reduction costs the chip that does it. Collectives call the hook for
// every arrived message they reduce into their buffer; the chip model (or the
// default below) answers when the sum is complete and keeps its own account
// of vector-unit time and HBM traffic.
#include <cstdint>
#include <vector>

#include "interconnect/pod_config.h"
#include "interconnect/time.h"

namespace interconnect {

class ReductionModel {
 public:
  virtual ~ReductionModel() = default;
  // Chip `chip` adds `bytes` of arrived data into its own buffer. The data
  // is available from data_start (its head landed, or the receive was posted
  // if later) to data_end (the tail landed; data_end is now). Returns when
  // the sum is complete (>= data_end).
  virtual Ps reduce(int chip, std::uint64_t bytes, Ps data_start, Ps data_end) = 0;
};

// The default hook: a per-chip reducer whose speed is the slower of the
// vector unit and the HBM traffic a reduction needs (ReductionConfig). Work
// is booked on a per-chip calendar, so reductions that arrive together share
// the reducer; with streaming, a reduction keeps pace with its data and ends
// one packet's worth of work after the data does.
class VectorUnitReduction : public ReductionModel {
 public:
  VectorUnitReduction(int chips, const ReductionConfig& config, std::uint64_t packet_bytes);

  Ps reduce(int chip, std::uint64_t bytes, Ps data_start, Ps data_end) override;

  double vector_busy_s(int chip) const { return vector_busy_s_[chip]; }
  double hbm_bytes(int chip) const { return hbm_bytes_[chip]; }
  std::uint64_t reductions(int chip) const { return reductions_[chip]; }

 private:
  ReductionConfig config_;
  std::uint64_t packet_bytes_;
  double ps_per_byte_;
  std::vector<Ps> booked_until_;
  std::vector<double> vector_busy_s_;
  std::vector<double> hbm_bytes_;
  std::vector<std::uint64_t> reductions_;
};

}  // namespace interconnect
