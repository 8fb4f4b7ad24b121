#pragma once
// The TensorCore's vector unit (VPU): elementwise work at a fixed number of
// FLOPs per cycle. Its operands reach it through VMEM, moved by the caller's
// DMA, so only the arithmetic takes time here.
#include <cstdint>
#include <systemc>

namespace hw {

struct VectorUnitConfig {
  // v5p: 8 sublanes x 128 lanes x 4 ALUs = 4096 per core per cycle
  // (docs/reference/tpu-specs.md#common.vpu_shape, v5p.vpu_flops SB-site26 per-core entry).
  double flops_per_cycle = 0.0;
};

class VectorUnit : public sc_core::sc_module {
 public:
  VectorUnit(sc_core::sc_module_name name, const VectorUnitConfig& config, const sc_core::sc_time& clock_period);

  // Accounts one operation starting now and returns its cycles,
  // ceil(elements * flops_per_element / flops_per_cycle) whole ones; the
  // caller (hw::Chip, for a sequencer that runs one op per engine at a
  // time) completes it after cycles * period.
  std::uint64_t begin(std::uint64_t elements, double flops_per_element);

  // A kernel-fidelity op (hw/kernel_op.h) kept the unit busy for `cycles`
  // doing `flops`: counted as one operation.
  void account(std::uint64_t cycles, double flops) {
    ++operations_;
    busy_cycles_ += cycles;
    flops_ += flops;
  }

  // Cycles an operation of this size occupies the unit.
  std::uint64_t cycles_for(std::uint64_t elements, double flops_per_element) const;

  std::uint64_t operations() const { return operations_; }
  std::uint64_t busy_cycles() const { return busy_cycles_; }
  double flops() const { return flops_; }
  sc_core::sc_time period() const { return period_; }
  sc_core::sc_time busy() const { return static_cast<double>(busy_cycles_) * period_; }

 private:
  VectorUnitConfig config_;
  sc_core::sc_time period_;
  std::uint64_t operations_ = 0;
  std::uint64_t busy_cycles_ = 0;
  double flops_ = 0.0;
};

}  // namespace hw
