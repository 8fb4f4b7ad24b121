#include "interconnect/ici_network.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace interconnect {

IciNetwork::IciNetwork(const sc_core::sc_module_name& name, const Topology& topology, const LinkConfig& link)
    : Network(name, topology, link), ports_(topology.link_slots()), latency_ps_(ceil_ps(link.latency)) {
  for (Port& p : ports_) p.bytes_per_ps = link.bandwidth / kPsPerSecond;
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
  bool alone = true;
  double rate = std::numeric_limits<double>::infinity();
  for (int l : route) {
    const Port& p = ports_[l];
    add_busy(l, round_up_ps(bytes / p.bytes_per_ps));
    if (!p.fluid.empty() || p.alone_until > t) alone = false;
    rate = std::min(rate, p.bytes_per_ps);
  }
  if (alone) {
    f.rate = rate;
    f.tx_end = t + round_up_ps(bytes / rate);
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
  f.fluid = true;  // make_fluid touches other flows only, so f is still valid
  f.remaining = bytes;
  f.rate = 0.0;
  f.last = t;
  for (int l : route) {
    ports_[l].fluid.push_back(id);
    seeds_.push_back(l);
  }
  mark_dirty();
}

void IciNetwork::make_fluid(int id) {
  Flow& f = flows_[id];
  const Ps t = now();
  f.remaining = static_cast<double>(f.tx_end - t) * f.rate;
  f.last = t;
  f.fluid = true;
  ++f.gen;
  for (int l : path(id)) {
    Port& p = ports_[l];
    if (p.alone_flow == id) {
      p.alone_flow = -1;
      p.alone_until = 0;
    }
    p.fluid.push_back(id);
    seeds_.push_back(l);
  }
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
  if (flows_[id].fluid) {
    for (int l : route) {
      auto& v = ports_[l].fluid;
      auto it = std::find(v.begin(), v.end(), id);
      *it = v.back();
      v.pop_back();
      seeds_.push_back(l);
    }
    mark_dirty();
  } else {
    for (int l : route) {
      if (ports_[l].alone_flow == id) ports_[l].alone_flow = -1;
    }
  }
  const Ps hops = route.size();
  Ps tail = hops * latency_ps_;
  if (link_config().switching == Switching::store_and_forward && hops > 1) {
    const double packet = static_cast<double>(std::min<std::uint64_t>(link_config().packet_bytes, bytes_of(id)));
    tail += (hops - 1) * round_up_ps(packet / ports_[route.front()].bytes_per_ps);
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

void IciNetwork::end_of_instant() {
  if (!dirty_) return;
  dirty_ = false;
  recompute_rates();
}

void IciNetwork::recompute_rates() {
  ++epoch_;
  const Ps t = now();
  // The component of sharing flows connected to the links that changed.
  comp_links_.clear();
  comp_flows_.clear();
  std::vector<int>& stack = seeds_;
  for (std::size_t i = 0; i < stack.size(); ++i) {
    Port& p = ports_[stack[i]];
    if (p.mark == epoch_) continue;
    p.mark = epoch_;
    comp_links_.push_back(stack[i]);
    for (int f : p.fluid) {
      if (flows_[f].mark == epoch_) continue;
      flows_[f].mark = epoch_;
      comp_flows_.push_back(f);
      for (int l : path(f)) {
        if (ports_[l].mark != epoch_) stack.push_back(l);
      }
    }
  }
  seeds_.clear();
  if (comp_flows_.empty()) return;

  for (int f : comp_flows_) {
    Flow& fl = flows_[f];
    fl.remaining = std::max(0.0, fl.remaining - fl.rate * static_cast<double>(t - fl.last));
    fl.last = t;
  }
  // Progressive filling: the link offering the smallest equal share fixes
  // the rate of every flow still unfixed on it; repeat with what is left.
  for (int l : comp_links_) {
    ports_[l].cap = ports_[l].bytes_per_ps;
    ports_[l].unfrozen = static_cast<int>(ports_[l].fluid.size());
  }
  if (new_rate_.size() < flows_.size()) new_rate_.resize(flows_.size());
  for (int f : comp_flows_) new_rate_[f] = -1.0;
  std::size_t left = comp_flows_.size();
  while (left > 0) {
    double share = std::numeric_limits<double>::infinity();
    for (int l : comp_links_) {
      const Port& p = ports_[l];
      if (p.unfrozen > 0) share = std::min(share, p.cap / p.unfrozen);
    }
    const double limit = share * (1.0 + 1e-12);
    for (int l : comp_links_) {
      Port& p = ports_[l];
      if (p.unfrozen == 0 || p.cap / p.unfrozen > limit) continue;
      for (int f : p.fluid) {
        if (new_rate_[f] >= 0.0) continue;
        new_rate_[f] = share;
        --left;
        for (int m : path(f)) {
          ports_[m].cap = std::max(0.0, ports_[m].cap - share);
          --ports_[m].unfrozen;
        }
      }
    }
  }
  for (int f : comp_flows_) {
    Flow& fl = flows_[f];
    const double r = new_rate_[f];
    if (fl.rate > 0.0 && std::abs(r - fl.rate) <= 1e-12 * r) continue;  // its end event still holds
    fl.rate = r;
    ++fl.gen;
    fl.tx_end = t + round_up_ps(fl.remaining / r);
    push(fl.tx_end, kTxEnd, static_cast<std::uint32_t>(f), fl.gen);
  }
}

}  // namespace interconnect
