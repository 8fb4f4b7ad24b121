#pragma once
// The chip's HBM as one fluid server (kernel fidelity, docs/hbm.md): whole
// kernels, DMA copies and collective reductions are flows that share HBM
// bandwidth max-min fairly (sim/fluid_share.h), each no faster than its own
// cap (a matmul cannot take bytes faster than its MXUs consume them). The
// chip's vector units are a second resource, so reductions and elementwise
// kernels share them too. One SC_METHOD wakes only when the earliest flow
// completes or the set of flows changed: a flow costs a few activations,
// whatever its size. The per-channel model (hbm.h) stays the reference.
#include <cstdint>
#include <queue>
#include <systemc>
#include <vector>

#include "hw/hbm_config.h"
#include "sim/calendar.h"
#include "sim/fluid_share.h"

namespace hw {

class HbmFluid : public sc_core::sc_module, private sim::Alarm::Listener {
 public:
  // Hears when its flows complete (from the server's method process).
  class Listener {
   public:
    virtual ~Listener() = default;
    virtual void flow_done(std::uint64_t token) = 0;
  };

  struct Demand {
    double amount = 0;                           // work units of the flow (>= 0)
    double hbm_per_unit = 0;                     // HBM bytes per unit (0: does not touch HBM)
    double vector_per_unit = 0;                  // vector-unit bytes per unit (0: does not touch the vector units)
    double cap_per_s = sim::FluidShare::kNoCap;  // units per second at most
    // A collective's reduction done on the chip's behalf (Chip::start_reduction),
    // not the chip's own work (kernels, stream ops, DMA).
    bool collective = false;
    // SparseCore bytes per unit: its HBM traffic through the SparseCores'
    // bandwidth, which their flows share (0: does not touch them).
    double sparsecore_per_unit = 0;
  };

  SC_HAS_PROCESS(HbmFluid);
  // vector_bytes_per_s: what the chip's vector units stream, all cores
  // together (0: no vector resource; flows must not ask for one);
  // sparsecore_bytes_per_s: what the SparseCores move to and from HBM, all
  // together (0: unbounded, flows' sparsecore_per_unit ignored); chip: the
  // index of the chip it serves, its rank at an instant (sim/calendar.h).
  HbmFluid(sc_core::sc_module_name name, const HbmConfig& config, double vector_bytes_per_s,
           double sparsecore_bytes_per_s = 0, std::uint32_t chip = 0);

  // A running flow, as start() names it.
  struct Handle {
    std::uint32_t flow = 0;
    std::uint64_t serial = 0;
  };
  // Starts a flow now; listener->flow_done(token) when its work is done.
  // A flow of no work completes at once (in the next delta cycle).
  Handle start(const Demand& demand, Listener* listener, std::uint64_t token);
  // Lifts the flow's cap from now on; false if it is no longer running.
  bool uncap(Handle flow);

  const HbmConfig& config() const { return config_; }
  // HBM bytes the flows moved (counted at start), and the time HBM had at
  // least one flow.
  double bytes() const { return bytes_; }
  sc_core::sc_time busy() const { return sc_core::sc_time::from_value(busy_ps_); }
  std::uint64_t flows() const { return started_; }
  std::size_t active() const { return share_.active_flows(); }
  // The chip's own flows (all but collective reductions): how many run now,
  // and how many have started so far. A reduction shared HBM and the vector
  // units with the chip's own work exactly when one ran as it started or one
  // started before it ended.
  std::size_t own_active() const { return own_active_; }
  std::uint64_t own_started() const { return own_started_; }

 private:
  struct Owner {
    Listener* listener = nullptr;
    std::uint64_t token = 0;
    std::uint32_t gen = 0;     // bumps invalidate the flow's queued completion
    std::uint64_t serial = 0;  // which start() the flow id now holds
    bool collective = false;   // Demand::collective
  };
  struct Due {
    std::uint64_t at;
    std::uint64_t seq;
    std::uint32_t flow, gen;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  void on_wake();
  void ring() override { on_wake(); }
  void settle(std::uint64_t now);
  void account_busy(std::uint64_t now);
  void schedule_wake(std::uint64_t now);
  void wake_this_delta(std::uint64_t now);  // rates settle once per delta cycle

  HbmConfig config_;
  sim::FluidShare share_;
  std::uint32_t hbm_ = 0, vector_ = 0, sparsecore_ = 0;
  bool has_vector_ = false, has_sparsecore_ = false;
  std::vector<Owner> owners_;  // by flow id
  // Scratch kept between calls, so that a flow's start and completion
  // allocate nothing: the uses of the flow start() builds, and the owners
  // of the flows on_wake() found done (the method never runs re-entered;
  // listeners only start flows, which do not touch it).
  std::vector<sim::FluidShare::Use> uses_;
  std::vector<Owner> done_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  std::uint64_t seq_ = 0;
  std::uint64_t wake_at_ = ~std::uint64_t{0};
  sc_core::sc_event wake_;  // in the next delta cycle
  sim::Alarm alarm_;        // at the earliest completion
  double bytes_ = 0;
  std::uint64_t started_ = 0;
  std::size_t own_active_ = 0;
  std::uint64_t own_started_ = 0;
  std::uint64_t busy_ps_ = 0, busy_since_ = 0;
  bool busy_ = false;
};

}  // namespace hw
