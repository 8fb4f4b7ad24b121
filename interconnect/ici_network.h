#pragma once
// The fast ICI model. A message is a flow over its route; cut-through means
// it occupies every link of the route while it is being serialized and then
// needs hops x latency for its tail to land (plus, store-and-forward, one
// packet's serialization per extra hop). Uncontended, that is
//   delivery = start + bytes / bandwidth + hops x latency,
// computed once. When flows share a link direction, every link serves its
// flows round-robin, whose fluid limit is max-min fair sharing: rates are
// recomputed (progressive filling) only for the flows connected to a change,
// and only when a flow starts or ends (sim/fluid_share.h), so a message
// costs a few events whatever its size (docs/architecture.md, "Timing model").
#include <cstdint>
#include <vector>

#include "interconnect/network.h"
#include "sim/fluid_share.h"

namespace interconnect {

class IciNetwork : public Network {
 public:
  IciNetwork(const sc_core::sc_module_name& name, const Topology& topology, const LinkConfig& link);
  const char* model() const override { return "fluid"; }

 protected:
  void transmit(int id) override;
  bool on_model_event(std::uint32_t kind, std::uint32_t id, std::uint64_t arg) override;
  void end_of_instant() override;

 private:
  enum Kind : std::uint32_t { kTxEnd = kFirstModelKind, kDeliver, kSettle };
  struct Flow {
    double rate = 0.0;  // bytes per ps while alone
    Ps tx_end = 0;
    std::uint32_t gen = 0;    // bumps invalidate the flow's queued kTxEnd
    std::uint32_t share = 0;  // its flow in shares_ while fluid
    bool fluid = false;       // shares a link (else alone on its whole route)
  };
  struct Port {  // one link direction
    double bytes_per_ps = 0.0;
    Ps latency = 0;      // a message's tail pays it after crossing
    Ps alone_until = 0;  // a lone flow owns the link until then
    int alone_flow = -1;
    std::uint32_t fluid = 0;  // sharing flows on it (its flows in shares_)
  };

  // A lone flow starts sharing: from now on its rate is recomputed.
  void make_fluid(int id);
  // Puts flow `id`, with `bytes` left to serialize, into the fluid share.
  void share(int id, double bytes);
  void mark_dirty();
  void recompute_rates();
  void finish_serializing(int id);
  // Whether a route starts on an ICI link or on-die path (not a DCN server).
  bool ici_route(const std::vector<int>& route) const;

  std::vector<Flow> flows_;  // indexed by in-flight id
  std::vector<Port> ports_;  // indexed by link id
  // Sharing flows: one resource per link direction (resource id = link id).
  sim::FluidShare shares_;
  std::vector<int> flow_of_share_;          // in-flight id of each fluid flow
  std::vector<sim::FluidShare::Use> uses_;  // scratch of share(), kept so that it allocates nothing
  bool dirty_ = false;
};

}  // namespace interconnect
