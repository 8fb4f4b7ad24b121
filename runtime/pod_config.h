#pragma once
// What a pod simulation is given: the chip, the network, the MXU engine's
// fidelity, the runaway limits, whether identical replicas may be simulated
// once, and what may watch it from outside.
#include <cstdint>
#include <functional>
#include <vector>

#include "hw/chip.h"
#include "hw/chip_config.h"
#include "interconnect/pod_config.h"
#include "runtime/limits.h"

namespace runtime {

// A chip slower than the rest (`stragglers`, docs/interface.md): its MXU
// and vector units run at `compute` x the chip's clock and its HBM serves
// `hbm` x the chip's bandwidth; each in (0, 1].
struct ChipScale {
  double compute = 1.0, hbm = 1.0;
  bool operator==(const ChipScale& o) const { return compute == o.compute && hbm == o.hbm; }
  bool operator!=(const ChipScale& o) const { return !(*this == o); }
};

// What the runtime needs of an experiment: the chip, the network, the MXU
// engine's fidelity, the runaway limits, and whether identical replicas
// may be simulated once.
struct PodConfig {
  hw::ChipConfig chip;
  // Per chip, or empty when every chip is `chip`: how far it is slowed.
  std::vector<ChipScale> scale;
  interconnect::PodNetworkConfig network;
  hw::Fidelity fidelity = hw::Fidelity::kernel;
  Limits limits;
  bool simulate_every_chip = false;  // `replicas: all`
  // Builds the chips from the last to the first: for a test, since nothing
  // simulated may depend on the order modules are built in (sim/calendar.h).
  bool elaborate_backwards = false;

  ChipScale scale_of(std::uint32_t c) const { return c < scale.size() ? scale[c] : ChipScale{}; }
  // Chip c as built: `chip` at its sustained clock (compute_efficiency;
  // kernel ops were worked out at it already), clock and HBM bandwidth
  // scaled further when it is a straggler (its kernel ops stretch by
  // 1 / compute, Chip's kernel_stretch).
  hw::ChipConfig chip_of(std::uint32_t c) const {
    hw::ChipConfig cc = chip;
    const ChipScale s = scale_of(c);
    cc.clock = chip.sustained_clock() * s.compute;
    cc.compute_efficiency = 1.0;  // applied: the built chip's clock is what it runs at
    cc.hbm.bandwidth_bytes_per_s *= s.hbm;
    return cc;
  }
};

// What may watch a run from outside: called once chip 0 is built (in the
// kernel the run elaborates, so a watcher made there, such as a VCD file,
// belongs to it), e.g. to hook its MXU 0 cycle by cycle (`run --vcd`).
struct Observers {
  std::function<void(hw::Chip& chip0)> chip0;
  bool link_rates = false;  // the network logs its links' rates (PodRunResult::link_rates); set by a trace
};

}  // namespace runtime
