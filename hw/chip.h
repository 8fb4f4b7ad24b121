#pragma once
// One TPU chip: TensorCores with their MXUs and vector unit, DMA engines and
// HBM behind a TLM-2.0 socket. It executes program ops on the right engine;
// the Sequencer decides when.
#include <systemc>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <queue>
#include <vector>

#include "hw/chip_config.h"
#include "hw/dma.h"
#include "hw/hbm.h"
#include "hw/mxu.h"
#include "hw/program.h"
#include "hw/vector_unit.h"
#include "sim/stats.h"

namespace hw {

class Chip : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Chip);
  Chip(sc_core::sc_module_name name, const ChipConfig& config, Fidelity fidelity);

  // Blocking: runs one op on its engine (call from an SC_THREAD).
  void execute(const Op& op);

  // Non-blocking, from any process after elaboration: starts one op on its
  // engine now and returns; `done` runs (from a method process, never
  // inside start) when it completes, at the time execute() would have
  // returned. The caller runs one op per engine instance at a time (an
  // event-driven sequencer; hw::Sequencer still uses execute()). Errors found at start (bad shapes, a
  // range outside HBM) are thrown from start.
  void start(const Op& op, std::function<void()> done);
  // An exception thrown by an op that start() had to run in a thread of its
  // own stops the simulation (its `done` never runs); the caller rethrows it
  // after sc_start() returns, next to Sequencer::rethrow_failure().
  void rethrow_failure() const {
    if (failure_) std::rethrow_exception(failure_);
  }

  const ChipConfig& config() const { return config_; }
  sc_core::sc_time clock_period() const { return period_; }
  const Hbm& hbm() const { return *hbm_; }
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
  void run_matmul(Mxu& mxu, const MatmulOp& op);
  // The non-blocking MXU path: values and cycles now; wraps `done` with the
  // accumulation that belongs to the op's completion.
  std::uint64_t begin_matmul(Mxu& mxu, const MatmulOp& op, std::function<void()>& done);
  // Runs `done` after `cycles` clock periods.
  void after_cycles(std::uint64_t cycles, std::function<void()> done);
  // Ops that must block (a CustomOp, an MXU with a cycle hook) get a thread
  // of their own for their duration; rare, so the stack is paid only then.
  void run_in_thread(std::function<void()> body, std::function<void()> done);
  void on_timer();

  // Timed completions of this chip's MXU and vector ops: one event and one
  // method for the whole chip, a heap ordered by (due tick, issue order) so
  // that completions at the same time keep their start order.
  struct Timed {
    std::uint64_t due;
    std::uint64_t seq;
    std::function<void()> done;
    bool operator>(const Timed& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };
  std::priority_queue<Timed, std::vector<Timed>, std::greater<Timed>> timed_;
  std::uint64_t timed_seq_ = 0;
  sc_core::sc_event timer_;
  std::exception_ptr failure_;

  ChipConfig config_;
  sc_core::sc_time period_;
  std::unique_ptr<Hbm> hbm_;
  std::vector<std::unique_ptr<DmaEngine>> dmas_;
  std::vector<std::unique_ptr<Mxu>> mxus_;
  std::vector<std::unique_ptr<VectorUnit>> vpus_;
};

}  // namespace hw
