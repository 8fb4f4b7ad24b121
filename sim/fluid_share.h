#pragma once
// Max-min fair sharing of capacity among flows, the fluid limit of
// round-robin service: the one fluid library that ICI links and a chip's
// HBM (and vector units) share.
//
// Resources have a capacity (work per tick). A flow has an amount of work
// and crosses some resources; with weight w it takes w units of a
// resource's capacity per unit of its own rate (an ICI message takes 1 byte
// of each link per byte; a reduction takes 3 bytes of HBM per byte reduced).
// A flow may also have a cap on its rate (a kernel cannot move bytes faster
// than its compute consumes them). Rates follow progressive filling: the
// rates of all flows not yet fixed rise together until a resource runs out
// (every unfixed flow on it is fixed at that rate) or a flow reaches its cap
// (it is fixed there); then again with what is left. Only the component of
// flows and resources connected to a change is recomputed, and only when a
// flow starts or ends, so a flow costs a few recomputations whatever its
// size (docs/architecture.md, "Timing model").
//
// The solver keeps no clock and schedules nothing: the caller passes the
// current tick and schedules the completions it reports.
#include <cstdint>
#include <limits>
#include <vector>

namespace sim {

class FluidShare {
 public:
  using Tick = std::uint64_t;
  static constexpr double kNoCap = std::numeric_limits<double>::infinity();

  struct Use {
    std::uint32_t resource = 0;
    double weight = 1.0;  // > 0
  };

  // A resource of `capacity` work per tick (> 0); ids count up from 0.
  std::uint32_t add_resource(double capacity);
  std::size_t resources() const { return resources_.size(); }
  double capacity(std::uint32_t resource) const { return resources_[resource].capacity; }

  // A flow of `amount` (>= 0) work over `uses` (each resource at most once),
  // at most `cap` work per tick, from `now`. Its rate is 0 until the next
  // settle(). Returns its id (ids of finished flows are reused). The uses
  // are copied into the flow's record, whose storage a finished flow hands
  // on to the next one that takes its id: starting a flow allocates nothing
  // once the solver has seen as many flows at once as it holds now.
  std::uint32_t start(Tick now, double amount, const std::vector<Use>& uses, double cap = kNoCap);
  // The flow leaves (it completed, or its owner ends it) at `now`; the rest
  // of its component is recomputed at the next settle().
  void finish(std::uint32_t flow, Tick now);

  // The flow's cap becomes `cap` (> 0) from `now` (a stream whose data has
  // all arrived is no longer held to the rate it arrived at); its rate is
  // recomputed at the next settle().
  void set_cap(std::uint32_t flow, Tick now, double cap);

  // True when a start or finish since the last settle() may change rates.
  bool dirty() const { return !seeds_.empty(); }
  // Recomputes the rates of every flow connected to a change, at `now`, and
  // returns the flows whose rate changed (so their completion moved). The
  // list is valid until the next call.
  const std::vector<std::uint32_t>& settle(Tick now);

  // Work per tick the flow gets, and work left as of its last update.
  double rate(std::uint32_t flow) const { return flows_[flow].rate; }
  double remaining(std::uint32_t flow) const { return flows_[flow].remaining; }
  // Work left at `now` (>= its last update) at the current rate.
  double remaining_at(std::uint32_t flow, Tick now) const;
  double cap(std::uint32_t flow) const { return flows_[flow].cap; }
  bool active(std::uint32_t flow) const { return flow < flows_.size() && flows_[flow].live; }
  std::size_t active_flows() const { return live_; }
  // Flows on a resource right now.
  const std::vector<std::uint32_t>& flows_on(std::uint32_t resource) const { return resources_[resource].flows; }

 private:
  struct Flow {
    double remaining = 0;
    double rate = 0;
    double cap = kNoCap;
    Tick last = 0;  // when `remaining` was brought up to date
    std::vector<Use> uses;
    std::uint32_t mark = 0;
    bool live = false;
  };
  struct Resource {
    double capacity = 0;
    std::vector<std::uint32_t> flows;
    std::vector<double> weights;  // of each of `flows` on this resource, in the same order
    std::uint32_t mark = 0;
    double left = 0;                  // scratch for progressive filling: capacity not yet given out
    double unfixed = 0;               // scratch: summed weights of the flows not yet fixed
    std::uint32_t unfixed_flows = 0;  // scratch: how many they are
  };

  std::vector<Flow> flows_;
  std::vector<Resource> resources_;
  std::vector<std::uint32_t> free_;
  std::size_t live_ = 0;
  std::vector<std::uint32_t> seeds_;    // resources whose set of flows changed
  std::vector<std::uint32_t> orphans_;  // started flows that use no resource (only a cap)
  std::uint32_t epoch_ = 0;
  std::vector<std::uint32_t> comp_resources_, comp_flows_, changed_;
  std::vector<std::uint32_t> filling_;  // scratch: the component's resources with flows still unfixed
  std::vector<double> new_rate_;
};

}  // namespace sim
