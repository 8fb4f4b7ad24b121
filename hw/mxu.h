#pragma once
// hw::Mxu: one matrix unit as a SystemC module. An op's cycles come from
// the tile fidelity's closed form or the pe fidelity's PE engine. hw::Chip
// starts ops with begin(), which does the op's work at once and returns its
// cycles; the chip completes it that many periods later. execute() is the
// blocking form, for a thread: it advances time once by the whole span, or
// cycle by cycle while a cycle hook watches (the VCD; the chip then gives
// the op a thread of its own).
#include <cstdint>
#include <systemc>

#include "hw/bf16.h"
#include "hw/mxu_config.h"
#include "hw/systolic_array.h"

namespace hw {

struct MxuStats {
  std::uint64_t ops = 0;
  std::uint64_t macs = 0;         // useful multiply-accumulates, m * k * n per op
  std::uint64_t busy_cycles = 0;  // sum of the ops' cycles
  double vmem_bytes = 0;          // moved between VMEM and the array, mxu_vmem_bytes per op
};

// Sees every cycle of an MXU's pe-fidelity ops at the simulated time of
// that cycle, so that signal dumps line up with the rest of the simulation.
class MxuCycleHook {
 public:
  virtual ~MxuCycleHook() = default;
  // Cycle view.cycle of the current op, at op start + view.cycle * period.
  virtual void on_cycle(const ArrayStateView& view) = 0;
  // At op start + cycles * period: the op has drained, the array is idle.
  virtual void on_idle() = 0;
};

class Mxu : public sc_core::sc_module {
 public:
  // period: one cycle of the MXU clock. Throws sim::ConfigError on a bad
  // config or a non-positive period.
  Mxu(sc_core::sc_module_name name, const MxuConfig& config, sc_core::sc_time period,
      Fidelity fidelity = Fidelity::tile);

  // Runs Y (m x n) = A (m x k) x B (k x n); blocks the calling SC_THREAD for
  // the op's cycles. One op at a time: concurrent callers queue (no overlap
  // between consecutive ops is modelled). Values: with pe fidelity the PE
  // engine computes Y (missing operands read as zeros); with tile fidelity
  // Y is computed by mxu_functional_matmul when a, b and y are all given.
  // y, if given, receives m * n floats.
  void execute(const MxuShape& shape, const bf16* a = nullptr, const bf16* b = nullptr, float* y = nullptr);

  // Non-blocking entry for hw::Chip: does what execute()
  // does (checks, values, stats) for an op starting now, without waiting,
  // and returns its cycles; the caller completes the op after
  // cycles * period and runs one op per MXU at a time. Not available while
  // a cycle hook needs the op to advance cycle by cycle (needs_thread()):
  // throws std::logic_error then.
  std::uint64_t begin(const MxuShape& shape, const bf16* a = nullptr, const bf16* b = nullptr, float* y = nullptr);
  // A kernel-fidelity op (hw/kernel_op.h) kept this MXU busy for `cycles`
  // and did `macs` on it, moving `vmem_bytes`: counted as one op, as if it had run here.
  void account(std::uint64_t macs, std::uint64_t cycles, double vmem_bytes) { count(macs, cycles, vmem_bytes); }
  // True when ops must go through the blocking execute() (a cycle hook on a
  // pe-fidelity MXU pauses after every cycle).
  bool needs_thread() const { return fidelity_ == Fidelity::pe && cycle_hook_ != nullptr; }

  const MxuConfig& config() const { return config_; }
  Fidelity fidelity() const { return fidelity_; }
  sc_core::sc_time period() const { return period_; }
  const MxuStats& stats() const { return stats_; }

  // Optional per-cycle hook for pe-fidelity ops (the VCD writer); the
  // caller keeps it alive while the MXU runs. nullptr (the default)
  // detaches. Ignored with tile fidelity, which has no cycles to show. With
  // a hook an op costs one wait per cycle instead of one per op: for small
  // arrays only.
  void set_cycle_hook(MxuCycleHook* hook) { cycle_hook_ = hook; }

 private:
  // What execute() and begin() share, none of which changes the MXU's
  // state: an op's checks (they throw sim::ConfigError), values, cycles and
  // duration.
  struct Prepared {
    std::uint64_t macs = 0;
    std::uint64_t cycles = 0;
    sc_core::sc_time span;
  };
  std::uint64_t checked_macs(const MxuShape& shape) const;
  Prepared prepare(const MxuShape& shape, const bf16* a, const bf16* b, float* y);
  void count(std::uint64_t macs, std::uint64_t cycles, double vmem_bytes);
  std::uint64_t run_pe(const MxuShape& shape, const bf16* a, const bf16* b, float* y, const MxuObserver& observer = {});

  const MxuConfig config_;
  const sc_core::sc_time period_;
  const Fidelity fidelity_;
  MxuStats stats_;
  sc_core::sc_mutex busy_;
  SystolicArray array_;
  MxuCycleHook* cycle_hook_ = nullptr;
};

}  // namespace hw
