#pragma once
// One TPU chip: TensorCores with their MXUs and vector unit, DMA engines and
// HBM. It starts program ops on the right engine, without blocking; the
// Sequencer decides when. At tile and pe fidelity HBM is the per-channel
// model behind a TLM-2.0 socket, driven by DMA engines; at kernel fidelity
// it is one fluid server (hbm_fluid.h) on which whole kernels (kernel_op.h)
// and DMA copies are flows.
#include <systemc>

#include <cstdint>
#include <memory>
#include <queue>
#include <vector>

#include "hw/chip_config.h"
#include "hw/completion.h"
#include "hw/dma.h"
#include "hw/hbm.h"
#include "hw/hbm_fluid.h"
#include "hw/mxu.h"
#include "hw/program.h"
#include "hw/sequencer.h"
#include "hw/vector_unit.h"
#include "sim/calendar.h"
#include "sim/stats.h"

namespace hw {

class Chip : public sc_core::sc_module,
             public OpExecutor,
             private HbmFluid::Listener,
             private CompletionListener,
             private sim::Alarm::Listener {
 public:
  SC_HAS_PROCESS(Chip);
  // The chip runs at config.sustained_clock() (compute_efficiency,
  // docs/calibration.md#compute-efficiency). Kernel ops carry engine times
  // worked out for the chip file's sustained clock (KernelOp::min_body_ps);
  // a chip whose clock was scaled down from it (a straggler's) stretches
  // them by `kernel_stretch`, the file's clock over config.clock. `index`
  // is the chip's place in its pod: its timer and HBM server ring at an
  // instant in that order (sim/calendar.h).
  Chip(sc_core::sc_module_name name, const ChipConfig& config, Fidelity fidelity, double kernel_stretch = 1.0,
       std::uint32_t index = 0);

  // Starts one op on its engine now and returns, from any process after
  // elaboration (the DMA sockets are complete only then). `done` is called
  // when the op completes, from the chip's timer (MXU, vector unit) or the
  // HBM's response (DMA); from inside start() only for a vector op of no
  // cycles, which takes no time. One op per engine instance at a time (the
  // sequencer's rule). Errors found at start (bad shapes, a range outside
  // HBM) are thrown from start. The one op that must advance cycle by cycle,
  // an MXU op at pe fidelity with a cycle hook (--vcd), runs in a thread of
  // its own for its duration and reports an exception through done.fail.
  // ICI ops need the pod's network: a pod runtime runs those itself.
  void start(const Op& op, Completion done) override;

  // Kernel fidelity: `bytes` of arrived operand added into a buffer in HBM
  // on behalf of a collective (runtime's ChipReduction), as a flow through
  // the vector units that moves hbm_per_byte HBM bytes per operand byte:
  // the sum is written once, the rest is read. It shares HBM and the vector
  // units with the chip's kernels and copies, and its bytes count in the
  // chip's HBM totals. listener.flow_done(token) when it is done, never
  // from inside this call.
  // Operand bytes per second the vector units stream, all cores together.
  double vector_bytes_per_s() const;
  // cap_per_s: operand bytes per second at most (the rate its data lands
  // at while it streams; sim::FluidShare::kNoCap once all of it is in).
  // sparsecore: a collective offloaded to the SparseCores (hw/sparsecore.h)
  // reduces there: the same HBM bytes, no TensorCore vector work, through
  // the SparseCores' HBM bandwidth, which its flows share
  // (sparsecore.count x sparsecore.hbm_bandwidth; 0: unbounded).
  HbmFluid::Handle start_reduction(std::uint64_t bytes, double hbm_per_byte, double cap_per_s,
                                   HbmFluid::Listener& listener, std::uint64_t token, bool sparsecore = false);
  // Lifts a reduction's cap (its data has all landed); false once it is done.
  bool uncap_reduction(HbmFluid::Handle flow) { return hbm_fluid_->uncap(flow); }

  // Calls `done` `span_ps` from now on the chip's timer, never from inside
  // this call: a fixed cost an engine pays before its op's work (the
  // runtime's collective launch, ici.collective_launch).
  void delay(std::uint64_t span_ps, Completion done) { after_ps(span_ps, done); }

  const ChipConfig& config() const { return config_; }
  Fidelity fidelity() const { return fidelity_; }
  sc_core::sc_time clock_period() const { return period_; }
  // The per-channel HBM (tile and pe fidelity) or the fluid one (kernel).
  const Hbm& hbm() const;
  const HbmFluid& hbm_fluid() const;
  std::uint64_t hbm_bytes_read() const;
  std::uint64_t hbm_bytes_written() const;
  const std::vector<std::unique_ptr<Mxu>>& mxus() const { return mxus_; }
  const std::vector<std::unique_ptr<VectorUnit>>& vector_units() const { return vpus_; }
  const std::vector<std::unique_ptr<DmaEngine>>& dma_engines() const { return dmas_; }

  // Busy seconds per engine kind, summed over instances.
  double mxu_busy_s() const;
  double vector_busy_s() const;
  double dma_busy_s() const;

  // Counters into stats groups named like the module hierarchy; rates are
  // formulas over `elapsed_s`.
  void dump_stats(sim::StatGroup& group, double elapsed_s) const;

 private:
  static constexpr std::uint32_t kNoMxu = ~std::uint32_t{0};

  // Values and cycles of an MXU op starting now. A functional op's product
  // is kept for the accumulation that belongs to its completion.
  std::uint64_t begin_matmul(std::uint32_t mxu, const MatmulOp& op);
  // Calls `done` after `cycles` clock periods, first adding MXU `mxu`'s
  // product into its accumulators (unless kNoMxu).
  void after_cycles(std::uint64_t cycles, Completion done, std::uint32_t mxu = kNoMxu);
  // The MXU op with a cycle hook, blocking in a thread of its own; rare, so
  // the stack is paid only then.
  void run_in_thread(Mxu& mxu, const MatmulOp& op, Completion done);
  void on_timer();
  void ring() override { on_timer(); }
  // The timer's next wake, `span_ps` from now (as sc_event::notify: a
  // pending one no later stands).
  void wake_timer(std::uint64_t now, std::uint64_t span_ps);
  // Calls `done` `span_ps` from now (the chip's timer).
  void after_ps(std::uint64_t span_ps, Completion done, std::uint32_t mxu = kNoMxu);

  // Kernel fidelity: a kernel op walks fill -> latency -> body -> drain ->
  // latency, each phase a flow on the fluid HBM or a wait on the timer; a
  // DMA op is a flow and a latency.
  enum class Phase : std::uint8_t { start, fill, fill_latency, body, drain, drain_latency, done };
  struct Fluid {
    const Op* op = nullptr;
    Completion done;
    Phase phase = Phase::start;
    std::uint32_t part = 0;  // of the body (KernelOp::body_parts)
    std::uint64_t started_ps = 0;
  };
  void start_fluid(const Op& op, Completion done);
  void advance(std::uint32_t slot);
  void finish_fluid(std::uint32_t slot);
  void flow_done(std::uint64_t token) override { advance(static_cast<std::uint32_t>(token)); }
  void completed(std::uint64_t token) override { advance(static_cast<std::uint32_t>(token)); }
  void failed(std::uint64_t, std::exception_ptr error) override { std::rethrow_exception(error); }
  std::vector<Fluid> fluid_ops_;
  std::vector<std::uint32_t> free_fluid_;
  struct FluidDma {  // a DMA engine at kernel fidelity: what it moved
    std::uint64_t transfers = 0, bytes = 0, busy_ps = 0;
  };
  std::vector<FluidDma> fluid_dmas_;
  std::uint64_t fluid_read_ = 0, fluid_written_ = 0;
  std::uint64_t reductions_ = 0;   // collective reductions started (start_reduction)
  double sparsecore_reduced_ = 0;  // HBM bytes of the reductions the SparseCores did
  std::uint64_t latency_ps_ = 0;

  // Timed completions of this chip's MXU and vector ops: one event and one
  // method for the whole chip, a heap ordered by (due tick, issue order) so
  // that completions at the same time keep their start order.
  struct Timed {
    std::uint64_t due;
    std::uint64_t seq;
    Completion done;
    std::uint32_t mxu;  // whose product to accumulate first, or kNoMxu
    bool operator>(const Timed& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };
  std::priority_queue<Timed, std::vector<Timed>, std::greater<Timed>> timed_;
  std::uint64_t timed_seq_ = 0;
  sc_core::sc_event timer_;   // a completion due now, in the next delta cycle
  bool timer_delta_ = false;  // timer_ is notified
  sim::Alarm alarm_;          // the earliest completion after now
  // Per MXU: the functional op in flight and its product, added into the
  // VMEM accumulators when it completes.
  struct Accumulation {
    const MatmulOp* op = nullptr;
    std::vector<float> y;
  };
  std::vector<Accumulation> accumulations_;

  ChipConfig config_;
  Fidelity fidelity_;
  sc_core::sc_time period_;
  const std::uint64_t launch_ps_;        // config_.kernel_launch, the time of a LaunchOp
  const double kernel_stretch_;          // of kernel ops' engine times (the constructor's)
  std::unique_ptr<Hbm> hbm_;             // tile and pe fidelity
  std::unique_ptr<HbmFluid> hbm_fluid_;  // kernel fidelity
  std::vector<std::unique_ptr<DmaEngine>> dmas_;
  std::vector<std::unique_ptr<Mxu>> mxus_;
  std::vector<std::unique_ptr<VectorUnit>> vpus_;
};

}  // namespace hw
