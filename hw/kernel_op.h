#pragma once
// One whole kernel as one op (fidelity: kernel, docs/matmul.md): a flow of
// its HBM bytes on the chip's fluid HBM (hbm_fluid.h), never faster than its
// engine allows, after the fill of its first load and before the drain of
// its last store. The kernel's bytes are the exact bytes the blocked kernel
// moves, and its engine time the closed-form time of its steps, so the op
// costs the same few events whatever the tensor size.
#include <cstdint>
#include <vector>

namespace hw {

struct KernelOp {
  // HBM traffic: read before the engine can start (the first block's
  // operands), moved while it computes, and written after it has finished
  // (the last block's result). fill + body + drain = read + written.
  std::uint64_t fill_bytes = 0, body_bytes = 0, drain_bytes = 0;
  std::uint64_t read_bytes = 0, written_bytes = 0;
  // The least time the body can take, whatever HBM gives it (its engine
  // time, with the latency the kernel's buffering cannot hide), in ps; the
  // body's bytes are capped at body_bytes / min_body_ps.
  std::uint64_t min_body_ps = 0;
  // The body in parts run one after the other, each capped at its own
  // bytes / min_ps (empty: one part, body_bytes in min_body_ps). A kernel
  // split over TensorCores whose sibling cores finish first moves the rest
  // of its body at the larger share of HBM it then has; a matmul's last
  // part is its pipeline's tail (the last step's MXU work, after every
  // load). The parts add up to body_bytes and min_body_ps.
  struct Part {
    std::uint64_t bytes = 0, min_ps = 0;
  };
  std::vector<Part> body_parts;
  // HBM serves transfers, not kernels, in equal shares (docs/hbm.md): beside
  // other traffic a kernel's bytes get as many shares as it keeps transfers
  // in service, on average over its DMA engines (each idle during its
  // access latencies), in its fill and in its body. Its drain is one store.
  // Above 0; a fraction when its engines wait on latency more than they move bytes.
  double fill_transfers = 1, body_transfers = 1;
  // What the op's engine does, for its statistics: MXU cycles of the
  // busiest MXU of the core and the core's multiply-accumulates (a matmul),
  // or vector cycles and FLOPs (a stream op).
  std::uint64_t engine_cycles = 0;
  std::uint64_t macs = 0;
  double vmem_bytes = 0;  // a matmul's blocks' hw::mxu_vmem_bytes
  double vector_flops = 0;
};

}  // namespace hw
