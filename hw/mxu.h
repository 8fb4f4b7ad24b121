#pragma once
// hw::Mxu: one matrix unit as a SystemC module. Callers (the TensorCore
// sequencer) call execute() from their SC_THREAD; the MXU computes the op's
// cycles (tile fidelity: closed form; pe fidelity: the PE engine) and
// advances time once by the whole span.
#include <cstdint>
#include <systemc>

#include "hw/bf16.h"
#include "hw/mxu_config.h"
#include "hw/systolic_array.h"

namespace hw {

struct MxuStats {
  std::uint64_t ops = 0;
  std::uint64_t macs = 0;         // useful multiply-accumulates, m * k * n per op
  std::uint64_t busy_cycles = 0;  // sum of the ops' cycles
};

class Mxu : public sc_core::sc_module {
 public:
  // period: one cycle of the MXU clock. Throws sim::ConfigError on a bad
  // config or a non-positive period.
  Mxu(sc_core::sc_module_name name, const MxuConfig& config, sc_core::sc_time period,
      Fidelity fidelity = Fidelity::tile);

  // Runs Y (m x n) = A (m x k) x B (k x n); blocks the calling SC_THREAD for
  // the op's cycles. One op at a time: concurrent callers queue (no overlap
  // between consecutive ops is modelled). Values: with pe fidelity the PE
  // engine computes Y (missing operands read as zeros); with tile fidelity
  // Y is computed by mxu_functional_matmul when a, b and y are all given.
  // y, if given, receives m * n floats.
  void execute(const MxuShape& shape, const bf16* a = nullptr, const bf16* b = nullptr,
               float* y = nullptr);

  const MxuConfig& config() const { return config_; }
  Fidelity fidelity() const { return fidelity_; }
  sc_core::sc_time period() const { return period_; }
  const MxuStats& stats() const { return stats_; }

 private:
  std::uint64_t run_pe(const MxuShape& shape, const bf16* a, const bf16* b, float* y);

  const MxuConfig config_;
  const sc_core::sc_time period_;
  const Fidelity fidelity_;
  MxuStats stats_;
  sc_core::sc_mutex busy_;
  SystolicArray array_;
};

}  // namespace hw
