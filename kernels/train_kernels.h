#pragma once
// The per-chip program pieces of a training step, kept lean so that a step
// of a large model stays a modest number of ops:
//  - matmuls: plan_matmul's blocked kernel (matmul_kernel.h) for a slice of
//    the rows, every op then scaled by g to cover the whole (DMA bytes, MXU
//    rows, FLOPs): the kernel moves g row blocks per DMA, as many as fit
//    VMEM together. HBM bytes and FLOPs are exactly the unfolded kernel's;
//    it pays one DMA latency where the unfolded one pays g, so it is at most
//    as slow; its first load and last store, one step of the slice, which
//    keeps at least kMinStepsPerCore block steps per TensorCore, stay within
//    1/kMinStepsPerCore of the matmul. An MXU op that stands for g ops
//    streams extra rows for the weight reloads and array drains the g ops
//    would have paid between them, so MXU time matches to a row
//    (hw::mxu_tile_cycles); its FLOPs stay the true ones. A batch of `count`
//    same-shape matmuls (attention heads) is stacked along the rows, one
//    block row per instance row block.
//  - vector work (elementwise ops, the optimizer): per TensorCore, a few
//    chunks of load (DMA) -> vector unit -> store (DMA), pipelined.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hw/chip_config.h"
#include "hw/program.h"
#include "kernels/matmul_kernel.h"

namespace kernels {

inline constexpr std::uint64_t kMinStepsPerCore = 32;

// The matmuls of a training step whose model matmuls run in `format`
// (precision.matmul): quantized ones (get's `quantized`) take the format's
// MAC rate and read one-byte A and B, writing C in bf16; the others are
// bf16. The step runs on simulated_chip(), the chip as the format sees it
// (hw::ChipConfig::for_format: `rate` arrays for each of the chip's MXUs),
// on which a bf16 matmul uses each core's first mxus_per_core arrays,
// as many as the chip has: the bf16 peak. Operands in the 8-bit format are
// either stored so (serving's weights and KV cache) or quantized from bf16
// at every use (training: AQT's calibration and quantization passes on the
// vector unit ahead of the matmul). weight_only: B alone (serving's weights
// or KV cache) is stored in the format and read from HBM at its bytes, A
// (the activations) stays bf16, and the matmul runs in bf16 at the bf16
// rate, B converted as it enters the MXU (JetStream-PyTorch's int8
// serving, docs/serving.md#weight-only-8-bit-matmuls).
enum class OperandQuantization { stored, at_use, weight_only };

class MatmulPrograms {
 public:
  MatmulPrograms(hw::ChipConfig chip, hw::Fidelity fidelity, hw::NumberFormat format = hw::NumberFormat::bf16,
                 OperandQuantization operands = OperandQuantization::stored)
      : chip_(std::move(chip)), fidelity_(fidelity), format_(format), operands_(operands) {}
  // `count` independent m x k x n matmuls, as one program (cached).
  // A fused kernel's (`fusion`, matmul_kernel.h) on-chip operands and
  // causal skipping are modelled at kernel fidelity; at tile and pe
  // fidelity it runs as the plain matmul (every byte and block).
  const hw::Program& get(std::uint64_t count, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                         const MatmulFusion& fusion = {}, bool quantized = false);
  hw::ChipConfig simulated_chip() const { return chip_.for_format(format_); }

 private:
  hw::ChipConfig chip_;
  hw::Fidelity fidelity_;
  hw::NumberFormat format_;
  OperandQuantization operands_;
  std::map<std::pair<std::array<std::uint64_t, 5>, MatmulFusion>, hw::Program> cache_;
};

struct StreamWork {
  std::uint64_t load_bytes = 0, store_bytes = 0;  // HBM traffic
  std::uint64_t elements = 0;
  double flops_per_element = 0;
};

// Appends `work`, split evenly over the TensorCores, its first ops after
// `deps`; returns its last ops (the stores, or the vector ops).
std::vector<std::uint32_t> append_stream(hw::Program& prog, const hw::ChipConfig& chip, hw::Fidelity fidelity,
                                         const StreamWork& work, const std::vector<std::uint32_t>& deps,
                                         const std::string& name);

}  // namespace kernels
