#include "interconnect/ici_network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace interconnect {

IciNetwork::IciNetwork(const sc_core::sc_module_name& name, const Topology& topology, const LinkConfig& link)
    : Network(name, topology, link), ports_(topology.link_slots()) {
  for (int l = 0; l < topology.link_slots(); ++l) {
    Port& p = ports_[l];
    p.bytes_per_ps = link_bytes_per_s(l) / kPsPerSecond;
    p.latency = sim::duration_from_seconds(link_latency_s(l), [] { return std::string("a link latency"); });
    // A failed link (pod.links) carries no flow, routes go round it; its
    // resource keeps the nominal rate so that resource ids stay link ids.
    shares_.add_resource(p.bytes_per_ps > 0 ? p.bytes_per_ps : link.bandwidth / kPsPerSecond);
  }
}

void IciNetwork::transmit(int id) {
  if (id >= static_cast<int>(flows_.size())) flows_.resize(static_cast<std::size_t>(id) + 1);
  const Ps t = now();
  const std::vector<int>& route = path(id);
  const double bytes = static_cast<double>(bytes_of(id));
  Flow& f = flows_[id];
  ++f.gen;
  f.fluid = false;
  if (route.empty()) {  // to itself: nothing crosses a link
    f.tx_end = t;
    push(t, kTxEnd, static_cast<std::uint32_t>(id), f.gen);
    return;
  }
  // A folded route shares a link with its own images: never alone.
  bool alone = !folded(id);
  double rate = std::numeric_limits<double>::infinity();
  // The links of a route mostly share rate and weight: their busy time is
  // worked out once per (rate, weight) met in a row, and reused below as
  // the transfer's when the slowest rate is that one at weight 1.
  double busy_rate = 0;
  int busy_weight = 0;
  Ps busy = 0;
  for (int l : route) {
    const Port& p = ports_[l];
    const int w = weight(l);
    if (p.bytes_per_ps != busy_rate || w != busy_weight) {
      busy_rate = p.bytes_per_ps;
      busy_weight = w;
      busy = transfer_ps(id, w * bytes / p.bytes_per_ps);
    }
    add_busy(l, busy);
    if (p.fluid != 0 || p.alone_until > t) alone = false;
    rate = std::min(rate, p.bytes_per_ps);
  }
  if (alone) {
    f.rate = rate;
    set_rate(id, rate);
    f.tx_end = t + (rate == busy_rate && busy_weight == 1 ? busy : transfer_ps(id, bytes / rate));
    for (int l : route) {
      ports_[l].alone_until = f.tx_end;
      ports_[l].alone_flow = id;
    }
    push(f.tx_end, kTxEnd, static_cast<std::uint32_t>(id), f.gen);
    return;
  }
  for (int l : route) {
    if (ports_[l].alone_until > t && ports_[l].alone_flow >= 0) make_fluid(ports_[l].alone_flow);
  }
  share(id, bytes);  // make_fluid touches other flows only, so f is still valid
}

void IciNetwork::share(int id, double bytes) {
  Flow& f = flows_[id];
  f.fluid = true;
  std::vector<sim::FluidShare::Use>& uses = uses_;
  uses.clear();
  for (int l : path(id)) {
    ++ports_[l].fluid;
    // A link the route crosses twice (folded) carries two of its images; a
    // fabric share under ICI translations all of them (Network::weight).
    const double w = weight(l);
    auto it = std::find_if(uses.begin(), uses.end(),
                           [&](const sim::FluidShare::Use& u) { return u.resource == static_cast<std::uint32_t>(l); });
    if (it != uses.end()) {
      it->weight += w;
    } else {
      uses.push_back({static_cast<std::uint32_t>(l), w});
    }
  }
  f.share = shares_.start(now(), bytes, uses);
  if (f.share >= flow_of_share_.size()) flow_of_share_.resize(f.share + 1);
  flow_of_share_[f.share] = id;
  mark_dirty();
}

void IciNetwork::make_fluid(int id) {
  Flow& f = flows_[id];
  const Ps t = now();
  ++f.gen;
  for (int l : path(id)) {
    Port& p = ports_[l];
    if (p.alone_flow == id) {
      p.alone_flow = -1;
      p.alone_until = 0;
    }
  }
  share(id, static_cast<double>(f.tx_end - t) * f.rate);
}

void IciNetwork::mark_dirty() {
  if (dirty_) return;
  dirty_ = true;
  // Makes sure the instant is drained (and end_of_instant runs) even when
  // the send came from another process.
  push(now(), kSettle, 0, 0);
}

bool IciNetwork::on_model_event(std::uint32_t kind, std::uint32_t id, std::uint64_t arg) {
  switch (kind) {
    case kTxEnd:
      if (flows_[id].gen != arg) return false;
      finish_serializing(static_cast<int>(id));
      return true;
    case kDeliver: delivered(static_cast<int>(id), arg); return true;
    case kSettle: return false;
    default: return false;
  }
}

void IciNetwork::finish_serializing(int id) {
  const Ps t = now();
  const std::vector<int>& route = path(id);
  set_rate(id, 0);
  if (flows_[id].fluid) {
    shares_.finish(flows_[id].share, t);
    for (int l : route) --ports_[l].fluid;
    flows_[id].fluid = false;
    mark_dirty();
  } else {
    for (int l : route) {
      if (ports_[l].alone_flow == id) ports_[l].alone_flow = -1;
    }
  }
  const Ps hops = route.size();
  Ps tail = 0;
  for (int l : route) tail += ports_[l].latency;
  if (link_config().switching == Switching::store_and_forward && hops > 1 && ici_route(route)) {
    const double packet = static_cast<double>(std::min<std::uint64_t>(link_config().packet_bytes, bytes_of(id)));
    const Ps per_hop = transfer_ps(id, packet / ports_[route.front()].bytes_per_ps);
    tail += transfer_ps(id, static_cast<double>(hops - 1) * static_cast<double>(per_hop));
  }
  const Ps first_byte = started(id) + tail;
  if (hops == 0) {
    source_done(id);
    delivered(id, first_byte);
    return;
  }
  push(t + tail, kDeliver, static_cast<std::uint32_t>(id), first_byte);
  source_done(id);  // last: the client may send at once
}

bool IciNetwork::ici_route(const std::vector<int>& route) const {
  const LinkClass first = topology().link_class(route.front());
  return first == LinkClass::ici || first == LinkClass::on_die;
}

void IciNetwork::end_of_instant() {
  if (!dirty_) return;
  dirty_ = false;
  recompute_rates();
}

void IciNetwork::recompute_rates() {
  const Ps t = now();
  for (std::uint32_t sf : shares_.settle(t)) {
    const int id = flow_of_share_[sf];
    Flow& fl = flows_[id];
    ++fl.gen;
    set_rate(id, shares_.rate(sf));
    fl.tx_end = t + transfer_ps(id, shares_.remaining(sf) / shares_.rate(sf));
    push(fl.tx_end, kTxEnd, static_cast<std::uint32_t>(id), fl.gen);
  }
}

}  // namespace interconnect
