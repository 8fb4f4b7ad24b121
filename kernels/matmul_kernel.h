#pragma once
// The single-chip matmul kernel: C (m x n) = A (m x k) x B (k x n), BF16 or an
// 8-bit format (MatmulBlocking::element_bytes).
// Output blocks are spread over the TensorCores; each block step DMAs an A
// and a B block into VMEM (double-buffered, so the next step's loads overlap
// this step's MXU work) and splits the block over the core's MXUs. HBM bytes
// (and so arithmetic intensity) are what this blocking really moves.
#include <cstdint>
#include <string>

#include "hw/chip_config.h"
#include "hw/program.h"
#include "models/matmul_spec.h"

namespace kernels {

struct MatmulBlocking {
  std::uint64_t bm = 0, bk = 0, bn = 0;
  std::uint32_t buffers = 2;       // VMEM slots per operand (2 = double-buffered)
  std::uint32_t accumulators = 2;  // FP32 (or int32) output blocks in VMEM
  // Bytes of an element of A, of B (in HBM and VMEM) and of C (in HBM): the
  // matmul's number format (hw::element_bytes), at every fidelity (the
  // blocked program's DMAs, kernel_ops' bytes and transfer times). C is
  // written in the input format by kind: matmul (as jnp.matmul returns two
  // int8 operands' product) and in bf16 by a training step's quantized
  // matmuls (AQT dequantizes the int32 accumulator: docs/calibration.md#number-formats).
  // A weight-only matmul reads bf16 activations (A) beside 8-bit weights or
  // KV cache (B) and multiplies in bf16 (train_kernels.h).
  std::uint64_t element_bytes = hw::kBf16Bytes;
  std::uint64_t out_element_bytes = hw::kBf16Bytes;
  std::uint64_t b_element_bytes = hw::kBf16Bytes;
  std::uint64_t vmem_bytes() const {
    return buffers * (bm * bk * element_bytes + bk * bn * b_element_bytes) + accumulators * bm * bn * 4;
  }
};

struct MatmulTraffic {
  std::uint64_t hbm_read = 0, hbm_written = 0;
  std::uint64_t total() const { return hbm_read + hbm_written; }
};

// The DMA engines the matmul kernel gives TensorCore `core`: chip.dma_engines
// / tensorcores of them (at least one), two as load engines, A and B of a
// step on different ones (their access latencies overlap) and swapped every
// step, and the third (or the last) as the store engine, so a store never
// sits in front of the next prefetch. Every kernel that moves a core's data
// uses these engines.
struct CoreDmaEngines {
  std::uint32_t first = 0;  // the core's first engine (not yet wrapped to the chip's count)
  std::uint32_t loads = 1;  // load engines: 1 or 2
  std::uint32_t engines = 1;
  std::uint32_t store = 0;
  std::uint32_t load(std::size_t step) const { return (first + static_cast<std::uint32_t>(step % loads)) % engines; }
};
CoreDmaEngines core_dma_engines(const hw::ChipConfig& chip, std::uint32_t core);

// The time per block step that a core's load engines leave HBM idle while
// they wait on access latency, `latency` per transfer: a DMA engine runs
// one transfer at a time, its service and then its latency. `la` and `lb`
// are the step's A and B loads' service times. Two load engines (A and B
// of a step on different ones, swapped every step, so each carries one
// small and one large load per two steps) in lockstep leave one latency
// per two steps when the large load outlasts the small one by more than a
// latency, else up to two; one engine, A then B, leaves two per step.
// Steady state of the blocked program (kernel_ops' closed form, which
// subtracts the drift three slots allow), and a term of choose_blocking's
// estimate: per-step latency is why a memory-bound kernel wants few, large
// steps.
double load_latency_idle(std::uint32_t load_engines, double latency, double la, double lb);

// MXU cycles of one block step (bm x bk by bk x bn) on the busiest MXU of a
// core, the block's columns (or, for narrow blocks, rows) split over the
// core's MXUs as the kernel splits them.
std::uint64_t block_step_cycles(const hw::ChipConfig& chip, std::uint64_t bm, std::uint64_t bk, std::uint64_t bn);

// A matmul fused into a larger kernel (flash attention, Dao et al. 2022,
// arXiv:2205.14135): A produced in VMEM by the same kernel (P = softmax(S))
// is never loaded from HBM, C consumed in VMEM (S, dP) is never stored, and
// with causal masking the kernel skips every block wholly above the
// diagonal of each seq x seq instance (the `count` instances are stacked
// along the rows, `seq` rows each). Blocks the diagonal crosses are
// computed whole and masked, as the kernel does: a causal kernel executes
// more than the exact triangle's FLOPs (models::MatmulSpec::flops). With
// a sliding window (models::MatmulSpec::window) it also skips every block
// wholly outside the band of the window's keys before each query.
struct MatmulFusion {
  bool a_on_chip = false, out_on_chip = false;
  models::Causal causal = models::Causal::none;
  std::uint64_t seq = 0;     // rows per instance; with causal, also its other sequence axis (k or n)
  std::uint64_t window = 0;  // with causal: keys per query, 0: all earlier ones
  bool fused() const { return a_on_chip || out_on_chip || causal != models::Causal::none; }
  bool operator<(const MatmulFusion& o) const;
};

// One block row of a kernel (rows bi * bm onward): the output blocks it
// computes (contiguous columns, from 0 unless a window starts them later;
// the last `last_cols` wide) and the contraction depth each walks (whole
// bk steps but the last).
struct BlockRow {
  std::uint64_t rows = 0, blocks = 0, last_cols = 0, depth = 0;
};
BlockRow block_row(std::uint64_t m, std::uint64_t k, std::uint64_t n, const MatmulBlocking& b,
                   const MatmulFusion& fusion, std::uint64_t bi);

// The bytes of A's, B's and C's elements (MatmulBlocking).
struct ElementBytes {
  std::uint64_t a = hw::kBf16Bytes, b = hw::kBf16Bytes, out = hw::kBf16Bytes;
};

// Chooses the blocking with the lowest estimated time that fits VMEM, for
// elements of `bytes`.
MatmulBlocking choose_blocking(const hw::ChipConfig& chip, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                               const MatmulFusion& fusion = {}, ElementBytes bytes = {});

// HBM traffic of a blocking, by counting block loads and stores.
MatmulTraffic matmul_traffic(std::uint64_t m, std::uint64_t k, std::uint64_t n, const MatmulBlocking& b,
                             const MatmulFusion& fusion = {});

// Operands for functional runs (row-major, BF16 in, FP32 accumulator out).
struct MatmulData {
  const hw::bf16* a = nullptr;
  const hw::bf16* b = nullptr;
  float* y = nullptr;
  std::uint64_t lda = 0, ldb = 0, ldy = 0;  // row strides; 0 = dense (k, n, n)
};

struct MatmulPlan {
  MatmulBlocking blocking;
  MatmulTraffic traffic;
  hw::Program program;
  double flops = 0;
  std::uint64_t hbm_footprint = 0;  // bytes of A, B and C resident in HBM
};

MatmulPlan plan_matmul(const hw::ChipConfig& chip, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                       const MatmulBlocking& blocking, const MatmulData& data = {});

}  // namespace kernels
