#pragma once
// What a pod simulation is given: the chip, the network, the MXU engine's
// fidelity, the runaway limits, whether identical replicas may be simulated
// once, and what may watch it from outside.
#include "hw/chip_config.h"
#include "hw/mxu.h"
#include "interconnect/pod_config.h"
#include "runtime/limits.h"

namespace runtime {

// What the runtime needs of an experiment: the chip, the network, the MXU
// engine's fidelity, the runaway limits, and whether identical replicas
// may be simulated once.
struct PodConfig {
  hw::ChipConfig chip;
  interconnect::PodNetworkConfig network;
  hw::Fidelity fidelity = hw::Fidelity::tile;
  Limits limits;
  bool simulate_every_chip = false;  // `replicas: all`
};

// What a run may watch from outside: MXU 0 of chip 0 cycle by cycle
// (`run --vcd` on a one-chip matmul at pe fidelity).
struct Observers {
  hw::MxuCycleHook* chip0_mxu0 = nullptr;
};

}  // namespace runtime
