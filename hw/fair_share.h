#pragma once
// A fluid processor-sharing server: flows, each with an amount of work left
// (bytes), share one capacity equally. Plain C++ with integer time ticks, so
// any SystemC unit (HBM channel, ICI link) can drive it from its own events.
//
// Equal sharing means every active flow receives the same service, so the
// server keeps one "virtual service" counter S (the work each active flow has
// received in the current busy period) and gives each flow a finish tag
// S_at_arrival + amount. Flows finish in tag order and nothing has to be
// updated per flow when the set of flows changes: an event only happens when
// a flow arrives or leaves, never per byte (docs/architecture.md, "Timing model").
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

namespace hw {

class FairShare {
 public:
  using FlowId = std::uint64_t;
  using Tick = std::uint64_t;

  // capacity_per_tick: work the server does per tick when busy (> 0).
  explicit FairShare(double capacity_per_tick);

  // Starts a flow of `amount` (> 0) at `now`; `id` is what finish() reports.
  void add(Tick now, double amount, FlowId id);

  // Moves the server to `now` and returns the flows that have completed since
  // the last call, in completion order.
  std::vector<FlowId> finish(Tick now);

  // True while a flow is in service or completed but not yet returned by
  // finish().
  bool pending() const { return !tags_.empty() || !completed_.empty(); }

  // Tick at which finish() next has something to return if no flow arrives
  // before: the next completion rounded up to a whole tick, or the last
  // add/finish tick if a completion is waiting. Requires pending(). One
  // beyond simulated time ends the run naming `server` (sim::checked_ps).
  Tick next_completion(const std::string& server = "a fair-share server") const;

  // Flows in service.
  std::size_t active() const { return tags_.size(); }
  // Ticks (fractional) during which at least one flow was in service, up to
  // the last add/finish.
  double busy_ticks() const { return busy_ticks_; }
  // Work of the flows that have completed.
  double served() const { return served_; }

 private:
  // Serves the flows up to `now`; a flow that completes inside the span
  // leaves at its exact (fractional) completion time, so the rate of the
  // others changes there, whatever the caller's event pattern.
  void advance(Tick now);
  // Ticks until the flow with the smallest tag completes, at the current rate.
  double ticks_to_first() const;

  using Tag = std::pair<double, FlowId>;  // (finish tag, id)
  struct Entry {
    Tag tag;
    double amount;
    bool operator>(const Entry& o) const { return tag > o.tag; }
  };

  double capacity_;
  double virtual_service_ = 0.0;  // S; rebased to 0 whenever the server idles
  Tick last_ = 0;
  double busy_ticks_ = 0.0;
  double served_ = 0.0;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> tags_;
  std::vector<FlowId> completed_;
};

}  // namespace hw
