#pragma once
// One TPU chip: TensorCores with their MXUs and vector unit, DMA engines and
// HBM behind a TLM-2.0 socket. It executes program ops on the right engine;
// the Sequencer decides when.
#include <systemc>

#include <memory>
#include <vector>

#include "hw/chip_config.h"
#include "hw/dma.h"
#include "hw/hbm.h"
#include "hw/mxu.h"
#include "hw/program.h"
#include "hw/vector_unit.h"
#include "sim/stats.h"

namespace hw {

class Chip : public sc_core::sc_module {
 public:
  Chip(sc_core::sc_module_name name, const ChipConfig& config, Fidelity fidelity);

  // Blocking: runs one op on its engine (called from the sequencer's thread
  // for that engine).
  void execute(const Op& op);

  const ChipConfig& config() const { return config_; }
  sc_core::sc_time clock_period() const { return period_; }
  const Hbm& hbm() const { return *hbm_; }
  const std::vector<std::unique_ptr<Mxu>>& mxus() const { return mxus_; }
  const std::vector<std::unique_ptr<VectorUnit>>& vector_units() const { return vpus_; }
  const std::vector<std::unique_ptr<DmaEngine>>& dma_engines() const { return dmas_; }

  // Busy seconds per engine kind, summed over instances.
  double mxu_busy_s() const;
  double vector_busy_s() const;
  double dma_busy_s() const;

  // Counters into stats groups named like the module hierarchy; rates are
  // formulas over `elapsed_s`.
  void dump_stats(sim::StatGroup& group, double elapsed_s) const;

 private:
  void run_matmul(Mxu& mxu, const MatmulOp& op);

  ChipConfig config_;
  sc_core::sc_time period_;
  std::unique_ptr<Hbm> hbm_;
  std::vector<std::unique_ptr<DmaEngine>> dmas_;
  std::vector<std::unique_ptr<Mxu>> mxus_;
  std::vector<std::unique_ptr<VectorUnit>> vpus_;
};

}  // namespace hw
