#include "sim/fluid_share.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sim {

std::uint32_t FluidShare::add_resource(double capacity) {
  if (!(capacity > 0) || !std::isfinite(capacity))
    throw std::invalid_argument("FluidShare: a resource's capacity must be a positive finite number");
  Resource r;
  r.capacity = capacity;
  resources_.push_back(std::move(r));
  return static_cast<std::uint32_t>(resources_.size() - 1);
}

std::uint32_t FluidShare::start(Tick now, double amount, const std::vector<Use>& uses, double cap) {
  if (!(amount >= 0)) throw std::invalid_argument("FluidShare: a flow needs work >= 0");
  if (!(cap > 0)) throw std::invalid_argument("FluidShare: a flow's cap must be > 0");
  if (uses.empty() && !std::isfinite(cap))
    throw std::invalid_argument("FluidShare: a flow that crosses no resource needs a finite cap");
  std::uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f.remaining = amount;
  f.rate = 0;
  f.cap = cap;
  f.last = now;
  f.uses.assign(uses.begin(), uses.end());  // keeps the capacity of the id's last flow
  f.live = true;
  ++live_;
  for (const Use& u : f.uses) {
    if (u.resource >= resources_.size() || !(u.weight > 0))
      throw std::invalid_argument("FluidShare: a flow uses an unknown resource or a weight <= 0");
    resources_[u.resource].flows.push_back(id);
    resources_[u.resource].weights.push_back(u.weight);
    seeds_.push_back(u.resource);
  }
  if (f.uses.empty()) orphans_.push_back(id);
  return id;
}

void FluidShare::finish(std::uint32_t flow, Tick now) {
  Flow& f = flows_[flow];
  if (!f.live) throw std::logic_error("FluidShare: finish of a flow that is not running");
  f.remaining = remaining_at(flow, now);
  f.last = now;
  for (const Use& u : f.uses) {
    Resource& r = resources_[u.resource];
    const auto at = static_cast<std::size_t>(std::find(r.flows.begin(), r.flows.end(), flow) - r.flows.begin());
    r.flows[at] = r.flows.back();
    r.flows.pop_back();
    r.weights[at] = r.weights.back();
    r.weights.pop_back();
    seeds_.push_back(u.resource);
  }
  f.live = false;
  f.uses.clear();  // keeps its capacity for the next flow of this id
  --live_;
  free_.push_back(flow);
}

void FluidShare::set_cap(std::uint32_t flow, Tick now, double cap) {
  Flow& f = flows_[flow];
  if (!f.live) throw std::logic_error("FluidShare: set_cap of a flow that is not running");
  if (!(cap > 0)) throw std::invalid_argument("FluidShare: a flow's cap must be > 0");
  if (f.uses.empty() && !std::isfinite(cap))
    throw std::invalid_argument("FluidShare: a flow that crosses no resource needs a finite cap");
  f.remaining = remaining_at(flow, now);
  f.last = now;
  f.cap = cap;
  for (const Use& u : f.uses) seeds_.push_back(u.resource);
  if (f.uses.empty()) orphans_.push_back(flow);
}

double FluidShare::remaining_at(std::uint32_t flow, Tick now) const {
  const Flow& f = flows_[flow];
  return std::max(0.0, f.remaining - f.rate * static_cast<double>(now - f.last));
}

const std::vector<std::uint32_t>& FluidShare::settle(Tick now) {
  ++epoch_;
  changed_.clear();
  comp_resources_.clear();
  comp_flows_.clear();
  // The component of flows connected to the resources that changed.
  std::vector<std::uint32_t>& stack = seeds_;
  for (std::size_t i = 0; i < stack.size(); ++i) {
    Resource& r = resources_[stack[i]];
    if (r.mark == epoch_) continue;
    r.mark = epoch_;
    comp_resources_.push_back(stack[i]);
    for (std::uint32_t f : r.flows) {
      if (flows_[f].mark == epoch_) continue;
      flows_[f].mark = epoch_;
      comp_flows_.push_back(f);
      for (const Use& u : flows_[f].uses)
        if (resources_[u.resource].mark != epoch_) stack.push_back(u.resource);
    }
  }
  seeds_.clear();
  for (std::uint32_t f : orphans_) {
    if (!flows_[f].live || flows_[f].mark == epoch_) continue;
    flows_[f].mark = epoch_;
    comp_flows_.push_back(f);
  }
  orphans_.clear();
  if (comp_flows_.empty()) return changed_;

  bool capped = false;
  for (std::uint32_t f : comp_flows_) {
    Flow& fl = flows_[f];
    fl.remaining = std::max(0.0, fl.remaining - fl.rate * static_cast<double>(now - fl.last));
    fl.last = now;
    capped = capped || std::isfinite(fl.cap);
  }
  for (std::uint32_t id : comp_resources_) {
    Resource& r = resources_[id];
    r.left = r.capacity;
    r.unfixed = 0;
    r.unfixed_flows = static_cast<std::uint32_t>(r.flows.size());
    for (const double w : r.weights) r.unfixed += w;
  }
  if (new_rate_.size() < flows_.size()) new_rate_.resize(flows_.size());
  for (std::uint32_t f : comp_flows_) new_rate_[f] = -1.0;
  auto fix = [this](std::uint32_t f, double rate) {
    new_rate_[f] = rate;
    for (const Use& u : flows_[f].uses) {
      Resource& m = resources_[u.resource];
      m.left = std::max(0.0, m.left - rate * u.weight);
      m.unfixed -= u.weight;
      --m.unfixed_flows;
    }
  };
  std::size_t left = comp_flows_.size();
  // Each round scans only the resources with flows still unfixed, in the
  // component's order (so flows are fixed in the same order as over all).
  filling_.assign(comp_resources_.begin(), comp_resources_.end());
  while (left > 0) {
    filling_.erase(std::remove_if(filling_.begin(), filling_.end(),
                                  [this](std::uint32_t id) { return resources_[id].unfixed_flows == 0; }),
                   filling_.end());
    double share = std::numeric_limits<double>::infinity();
    for (std::uint32_t id : filling_) {
      const Resource& r = resources_[id];
      share = std::min(share, r.left / r.unfixed);
    }
    if (capped) {
      // A flow whose cap lies below the common rise stops at its cap first.
      double lowest = std::numeric_limits<double>::infinity();
      for (std::uint32_t f : comp_flows_)
        if (new_rate_[f] < 0) lowest = std::min(lowest, flows_[f].cap);
      if (lowest < share) {
        const double limit = lowest * (1.0 + 1e-12);
        for (std::uint32_t f : comp_flows_) {
          if (new_rate_[f] >= 0 || flows_[f].cap > limit) continue;
          fix(f, flows_[f].cap);
          --left;
        }
        continue;
      }
    }
    // The resources offering the smallest equal share fix every flow still
    // unfixed on them at that share.
    const double limit = share * (1.0 + 1e-12);
    for (std::uint32_t id : filling_) {
      Resource& r = resources_[id];
      if (r.unfixed_flows == 0 || r.left / r.unfixed > limit) continue;
      for (std::uint32_t f : r.flows) {
        if (new_rate_[f] >= 0) continue;
        fix(f, share);
        --left;
      }
    }
  }
  for (std::uint32_t f : comp_flows_) {
    Flow& fl = flows_[f];
    const double r = new_rate_[f];
    if (fl.rate > 0.0 && std::abs(r - fl.rate) <= 1e-12 * r) continue;  // its completion still holds
    fl.rate = r;
    changed_.push_back(f);
  }
  return changed_;
}

}  // namespace sim
