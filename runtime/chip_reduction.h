#pragma once
// Collective reductions done by the chips themselves (kernel fidelity): the
// pod's ReductionModel when every reducing chip has a fluid HBM. Each
// reduced message is a flow on its chip's HBM and vector units
// (hw::Chip::start_reduction), so an all-reduce and the chip's own
// HBM-bound kernels share the bandwidth max-min fairly and slow each other
// down, and the reduction's bytes count in the chip's hbm_bytes.
//
// A chip that is not simulated (a replica its group's representative stands
// for) has no HBM here: it reduces on `unsimulated`, the calendar model at
// the chip's rates, so its reductions do not see the contention its
// representative's do. Where that moves a collective's end on replicas,
// the replica check (runtime::run_pod) sees the spread and simulates every
// chip.
//
// The flow starts when the message's tail has landed (store, then reduce):
// the network tells a collective of a message only once all of it is in,
// and a flow cannot start in the past, so ReductionConfig::streaming does
// not apply here. HBM and vector rates are the chip's own (ChipConfig); of
// ReductionConfig only hbm_bytes_per_reduced_byte is used.
#include <cstdint>
#include <memory>
#include <vector>

#include "hw/chip.h"
#include "interconnect/pod_config.h"
#include "interconnect/reduction.h"

namespace runtime {

class ChipReduction final : public interconnect::ReductionModel, private hw::HbmFluid::Listener {
 public:
  // chips[c]: chip c of `n`, read when it reduces (the vector may be filled
  // after construction); every chip that reduces must be there.
  ChipReduction(const std::vector<std::unique_ptr<hw::Chip>>& chips, int n, const interconnect::ReductionConfig& config,
                interconnect::ReductionModel& unsimulated);

  void reduce(int chip, std::uint64_t bytes, interconnect::Ps data_start, interconnect::Ps data_end,
              interconnect::ReductionListener& listener, std::uint64_t token) override;

  double vector_busy_s(int chip) const override;  // operand bytes / the chip's vector rate
  double hbm_bytes(int chip) const override;

 private:
  void flow_done(std::uint64_t slot) override;

  const std::vector<std::unique_ptr<hw::Chip>>& chips_;
  interconnect::ReductionModel& unsimulated_;
  double hbm_per_byte_;
  std::vector<double> operand_bytes_, hbm_bytes_;  // per chip
  interconnect::PendingReductions pending_;        // their flows running
};

}  // namespace runtime
