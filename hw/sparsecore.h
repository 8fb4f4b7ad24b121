#pragma once
// The chip's SparseCores (sparsecore.count of them, docs/reference/tpu-specs.md#v5p.sparsecores_per_chip):
// units beside the TensorCores that run what XLA places on the
// "sparsecore" execution thread (gathers, scatters, and the collectives
// --xla_tpu_enable_sparse_core_collective_offload_* moves off the
// TensorCore). Each is a DMA engine after the chip's own and the host
// link's: at kernel fidelity its op is a flow on the chip's fluid HBM no
// faster than sparsecore.hbm_bandwidth, concurrent with the TensorCore's
// engines and sharing HBM with them max-min fairly (docs/hlo.md#sparsecore).
#include <cstdint>

#include "hw/chip_config.h"
#include "hw/host_link.h"

namespace hw {

// The ICI queues of the collectives offloaded to the SparseCores: they drive
// the chip's own links, but never wait behind the TensorCore's collectives
// (the training builder's queues are small numbers). kind: hlo runs its
// offloaded collectives on the first, in schedule order; kind: train keeps
// weight gathers (the first) apart from gradient reductions (the next), as
// XLA's scheduler issues a gather a layer ahead of the reduction before it.
constexpr std::uint32_t kSparseCoreIciQueue = 64;
constexpr std::uint32_t kSparseCoreIciQueues = 16;
inline bool is_sparsecore_ici_queue(std::uint32_t queue) {
  return queue >= kSparseCoreIciQueue && queue < kSparseCoreIciQueue + kSparseCoreIciQueues;
}

inline std::uint32_t sparsecore_engine(const ChipConfig& c, std::uint32_t i) {
  return c.dma_engines + kHostDmaEngines + i;
}
inline bool is_sparsecore_engine(const ChipConfig& c, std::uint32_t engine) {
  return engine >= c.dma_engines + kHostDmaEngines;
}

}  // namespace hw
