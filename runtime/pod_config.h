#pragma once
// What a pod simulation is given: the chip, the network, the MXU engine's
// fidelity, the runaway limits, whether identical replicas may be simulated
// once, and what may watch it from outside.
#include <functional>

#include "hw/chip.h"
#include "hw/chip_config.h"
#include "interconnect/pod_config.h"
#include "runtime/limits.h"

namespace runtime {

// What the runtime needs of an experiment: the chip, the network, the MXU
// engine's fidelity, the runaway limits, and whether identical replicas
// may be simulated once.
struct PodConfig {
  hw::ChipConfig chip;
  interconnect::PodNetworkConfig network;
  hw::Fidelity fidelity = hw::Fidelity::kernel;
  Limits limits;
  bool simulate_every_chip = false;  // `replicas: all`
};

// What may watch a run from outside: called once chip 0 is built (in the
// kernel the run elaborates, so a watcher made there, such as a VCD file,
// belongs to it), e.g. to hook its MXU 0 cycle by cycle (`run --vcd`).
struct Observers {
  std::function<void(hw::Chip& chip0)> chip0;
};

}  // namespace runtime
