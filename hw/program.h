#pragma once
// A per-chip program: a DAG of ops, each bound to one engine instance
// (an MXU, a core's vector unit, a DMA engine, the chip's ICI port), with
// explicit dependencies. The sequencer issues each engine's ops in program
// order as soon as their dependencies are done, so engines overlap exactly
// as far as the dependencies allow.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "hw/bf16.h"
#include "hw/kernel_op.h"

namespace hw {

// scalar: a TensorCore's scalar unit, which issues kernels (LaunchOp).
enum class EngineKind : std::uint8_t { mxu, vector, dma, ici, scalar };
const char* engine_kind_name(EngineKind k);

struct EngineRef {
  EngineKind kind = EngineKind::mxu;
  std::uint32_t index = 0;  // mxu: core*mxus_per_core + i; vector, scalar: core; dma: engine; ici: queue (0 unless a
                            // program uses several)
  bool operator==(const EngineRef& o) const { return kind == o.kind && index == o.index; }
};

// Y (m x n, FP32, accumulated into) += A (m x k) x B (k x n), BF16 operands.
// Operand pointers are set only in functional runs; ld* are row strides.
struct MatmulOp {
  std::uint64_t m = 0, k = 0, n = 0;
  const bf16* a = nullptr;
  std::uint64_t lda = 0;
  const bf16* b = nullptr;
  std::uint64_t ldb = 0;
  float* y = nullptr;
  std::uint64_t ldy = 0;
};

struct VectorOp {
  std::uint64_t elements = 0;
  double flops_per_element = 1.0;
};

// HBM <-> VMEM copy of a contiguous HBM range.
struct DmaOp {
  std::uint64_t hbm_addr = 0;
  std::uint64_t bytes = 0;
  bool write = false;  // true: VMEM -> HBM
};

// The chip's part in a pod-wide communication (collective or permute),
// identified by its index in the pod's list; run on the ICI engine.
struct CommOp {
  std::uint32_t collective = 0;
  // Time the unit that drives the collective holds before joining it (after
  // ici.collective_launch): a SparseCore's wait on the hosts' handshake of a
  // collective across slices, which a TensorCore's collective spends on its
  // scalar unit instead (workloads/train/pass_context.h, DcnSync).
  std::uint64_t hold_ps = 0;
};

// A point-to-point message over the pod's network (pipeline activations and
// gradients), run on an ICI engine. The peer is named relative to the chip:
// an entry of the chip's peer table, which the pod's runtime resolves
// (runtime::PodProgram::peers), so chips that run one program may talk to
// different peers. The receiver matches it by (sender, tag);
// tags are the program's own, below 2^40, and unique per sender and receiver
// among messages in flight. A send is done when its last byte has left the
// chip (the network holds a message until its receive is posted); a receive
// when the whole message has arrived, so its duration is time spent waiting.
struct SendOp {
  std::uint32_t peer = 0;  // destination: an entry of the chip's peer table
  std::uint64_t tag = 0;
  std::uint64_t bytes = 0;
};

struct RecvOp {
  std::uint32_t peer = 0;  // source: an entry of the chip's peer table
  std::uint64_t tag = 0;
};

// The launch of one kernel, on a core's scalar unit, before the kernel's
// first ops: it takes the chip's kernel_launch (ChipConfig), the fixed cost
// of issuing a kernel (docs/calibration.md#kernel-launch), plus `hold_ps`
// during which the unit issues nothing else: a collective across slices
// synchronising with the hosts (docs/calibration.md#dcn-sync).
struct LaunchOp {
  std::uint64_t hold_ps = 0;
};

using OpPayload = std::variant<MatmulOp, VectorOp, DmaOp, CommOp, SendOp, RecvOp, KernelOp, LaunchOp>;

struct Op {
  std::string name;  // shown in traces
  EngineRef engine;
  OpPayload payload;
  std::vector<std::uint32_t> deps;  // indices of earlier ops in the same program
  double flops = 0;                 // useful FLOPs, for reports
};

struct Program {
  std::vector<Op> ops;
  std::uint32_t add(Op op) {
    ops.push_back(std::move(op));
    return static_cast<std::uint32_t>(ops.size() - 1);
  }
};

// What an op does that costs energy (docs/mxu.md#energy), as the chip
// counts it when the op runs: a matmul's MACs (m k n) and
// hw::mxu_vmem_bytes, a DMA's HBM bytes, a whole-kernel op's MACs, VMEM
// bytes and HBM bytes read and written. Other ops (vector, ICI, launch):
// none. A chip's collective reductions are not ops: their HBM bytes are
// counted apart (runtime::PodRunResult::reduce_hbm_bytes).
struct OpWork {
  double macs = 0, vmem_bytes = 0, hbm_bytes = 0;
  bool any() const { return macs > 0 || vmem_bytes > 0 || hbm_bytes > 0; }
};
OpWork op_work(const Op& op);

// When an op ran, in picoseconds of simulated time.
struct OpTiming {
  std::uint64_t start_ps = 0;
  std::uint64_t end_ps = 0;
};

}  // namespace hw
