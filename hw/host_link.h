#pragma once
// The chip's link to its host's memory as two DMA engines after the chip's
// own (dma_engines of them), one per direction: PCIe is dual-simplex, a
// lane a transmit and a receive pair, so copies to the host and from it
// run at once, each at host.pcie_bandwidth (docs/reference/dcn.md). At
// kernel fidelity a DmaOp on either moves its bytes from or to HBM no
// faster than that (remat: offload, docs/training.md).
#include <cstdint>

#include "hw/chip_config.h"

namespace hw {

inline std::uint32_t host_dma_engine(const ChipConfig& c, bool from_host) {
  return c.dma_engines + (from_host ? 1 : 0);
}
constexpr std::uint32_t kHostDmaEngines = 2;
inline bool is_host_dma_engine(const ChipConfig& c, std::uint32_t engine) {
  return engine >= c.dma_engines && engine < c.dma_engines + kHostDmaEngines;
}

}  // namespace hw
