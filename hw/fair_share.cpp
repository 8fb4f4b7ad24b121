#include "hw/fair_share.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/sim_time.h"

namespace hw {

namespace {
// A flow counts as complete when less than this many ticks of service are
// left. It absorbs floating-point noise in the tags (tags of flows meant to
// end together can differ in the last bits) without moving any completion by
// a visible amount: a thousandth of a tick.
constexpr double kCompletionSlackTicks = 1e-3;
}  // namespace

FairShare::FairShare(double capacity_per_tick) : capacity_(capacity_per_tick) {
  if (!(capacity_per_tick > 0.0) || !std::isfinite(capacity_per_tick))
    throw std::invalid_argument("FairShare: capacity must be positive and finite");
}

double FairShare::ticks_to_first() const {
  const double left = tags_.top().tag.first - virtual_service_;
  return left * static_cast<double>(tags_.size()) / capacity_;
}

void FairShare::advance(Tick now) {
  if (now < last_) throw std::logic_error("FairShare: time went backwards");
  double span = static_cast<double>(now - last_);
  while (!tags_.empty()) {
    const double to_first = std::max(0.0, ticks_to_first());
    if (to_first > span + kCompletionSlackTicks) {
      virtual_service_ += span * capacity_ / static_cast<double>(tags_.size());
      busy_ticks_ += span;
      break;
    }
    const Entry first = tags_.top();
    tags_.pop();
    // Jump to the tag itself, not to a recomputed S: rounding must never
    // leave the remaining flows with less service than they are owed.
    virtual_service_ = std::max(virtual_service_, first.tag.first);
    const double used = std::min(to_first, span);
    busy_ticks_ += used;
    span -= used;
    served_ += first.amount;
    completed_.push_back(first.tag.second);
  }
  if (tags_.empty()) virtual_service_ = 0.0;  // keeps tags small: no drift over long runs
  last_ = now;
}

void FairShare::add(Tick now, double amount, FlowId id) {
  if (!(amount > 0.0) || !std::isfinite(amount))
    throw std::invalid_argument("FairShare: flow amount must be positive and finite");
  advance(now);
  tags_.push(Entry{{virtual_service_ + amount, id}, amount});
}

std::vector<FairShare::FlowId> FairShare::finish(Tick now) {
  advance(now);
  std::vector<FlowId> done;
  done.swap(completed_);
  return done;
}

FairShare::Tick FairShare::next_completion(const std::string& server) const {
  if (!completed_.empty()) return last_;
  if (tags_.empty()) throw std::logic_error("FairShare: nothing pending");
  const double ticks = std::max(0.0, ticks_to_first() - kCompletionSlackTicks);
  return last_ + sim::checked_ps(std::ceil(ticks), [&] {
           return server + ": the next of its " + std::to_string(tags_.size()) + " transfers in service";
         });
}

}  // namespace hw
