#pragma once
// The chip's link to its host's memory (host.pcie_bandwidth each way) as a
// DMA engine after the chip's own (dma_engines of them): at kernel fidelity
// a DmaOp on it moves its bytes from or to HBM no faster than the host
// link allows (remat: offload, docs/training.md).
#include <cstdint>

#include "hw/chip_config.h"

namespace hw {

inline std::uint32_t host_dma_engine(const ChipConfig& c) { return c.dma_engines; }

}  // namespace hw
