#pragma once
// Model ops as kernel-fidelity ops (hw/kernel_op.h): one op per TensorCore
// that takes part, whatever the tensor size. Each op carries the exact HBM
// bytes its core's share of the blocked kernel moves, and the least time its
// engine needs for them, computed in closed form from the same blocking and
// the same per-step MXU timing the tile-fidelity program uses
// (matmul_kernel.h), so that the two fidelities can be checked against each
// other (tests/kernels/test_kernel_ops.cpp).
#include <cstdint>
#include <vector>

#include "hw/chip_config.h"
#include "hw/kernel_op.h"
#include "hw/mxu_config.h"
#include "hw/program.h"
#include "kernels/matmul_kernel.h"

namespace kernels {

struct CoreKernel {
  std::uint32_t core = 0;
  hw::KernelOp op;
};

// C (m x n) = A (m x k) x B (k x n) blocked as `blocking`, output blocks
// round-robin over the TensorCores as plan_matmul deals them: one op per
// core that gets a block. The ops' bytes add up to matmul_traffic(); a
// fused kernel (`fusion`) skips the transfers and blocks matmul_kernel.h says.
std::vector<CoreKernel> matmul_kernel_ops(const hw::ChipConfig& chip, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                                          const MatmulBlocking& blocking, const MatmulFusion& fusion = {});

// Streamed elementwise work (elementwise layers, optimizer updates): HBM
// bytes in and out and vector-unit work, split evenly over the cores, in
// chunks that fit VMEM as append_stream (train_kernels.h) moves them.
struct StreamShape {
  std::uint64_t load_bytes = 0, store_bytes = 0;  // whole op, all cores
  std::uint64_t elements = 0;
  double flops_per_element = 0;
};
std::vector<CoreKernel> stream_kernel_ops(const hw::ChipConfig& chip, const StreamShape& work);

// A matmul as the program of its fidelity: at kernel fidelity one op per
// TensorCore that gets a block (on the core's first MXU, standing for all of
// them), else plan_matmul's blocked program. Functional operands (`data`)
// need the blocked program, a fused kernel the kernel ops: either at the
// other fidelity is a logic error.
hw::Program matmul_program(const hw::ChipConfig& chip, hw::Fidelity fidelity, std::uint64_t m, std::uint64_t k,
                           std::uint64_t n, const MatmulBlocking& blocking, const MatmulData& data = {},
                           const MatmulFusion& fusion = {});

// The chunks append_stream cuts one core's share of a stream into.
std::uint64_t stream_chunks(const hw::ChipConfig& chip, std::uint64_t load_bytes, std::uint64_t store_bytes);

}  // namespace kernels
