#pragma once
// Runaway protection: a simulation runs in slices of simulated time, and
// between slices its event count and simulated time are checked against
// the experiment's `limits:`.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "sim/host.h"

namespace runtime {

// Runaway protection (`limits:` in an experiment). A run that reaches either
// limit with work left fails with exit 3, naming what was still pending.
struct Limits {
  double max_sim_time_s = 3600.0;         // simulated seconds
  std::uint64_t max_events = 1000000000;  // SystemC delta cycles + ICI network events
  double max_wall_time_s = 3600.0;        // host seconds the simulation may take
  // Host memory the run may need, as estimated before it is built
  // (runtime/run_budget.h); nullopt: half the machine's memory.
  std::optional<double> max_memory_bytes;
  // PE-array cycles a `fidelity: pe` run may simulate, summed over the
  // MXUs of the simulated chips (cycles x rows x cols): about 3e9 per host
  // second, so the default is some ten minutes.
  double max_pe_cycles = 2e12;
  // Host seconds between the progress lines of a long run (0: none).
  double progress_interval_s = 10.0;
};

// limits.max_memory, or half the machine's memory when it is not given.
double memory_limit_bytes(const Limits& limits);
// That limit as the messages name it: "limits.max_memory (2 GB)" or "half the
// machine's memory (16 GB; raise it with limits.max_memory)".
std::string memory_limit_phrase(const Limits& limits);

// How a bounded simulation (simulate_within) ended.
struct SimulationEnd {
  enum class Reason { idle, stopped, time_limit, event_limit, wall_limit, memory_limit };
  Reason reason = Reason::idle;  // idle: nothing left to happen; stopped: sc_stop() (an op failed)
  std::uint64_t events = 0;      // as counted against limits.max_events
  double sim_time_s = 0;
  bool runaway() const {
    return reason == Reason::time_limit || reason == Reason::event_limit || reason == Reason::wall_limit ||
           reason == Reason::memory_limit;
  }
  // "runaway: ..." naming the limit that was reached (for runaway ends).
  std::string describe(const Limits& limits) const;
};

// Runs the elaborated simulation in slices of simulated time until nothing
// is pending, an op stops it, or a limit is reached; `extra_events` counts
// events the kernel does not see (the ICI network's). The limits are
// checked between slices (memory too: the process's resident size against
// memory_limit_bytes, so a run its estimate let through still stops at the
// limit), so a run may overshoot max_events by part of one
// slice (slices shrink as the budget runs out); the outcome is deterministic,
// except where max_wall_time (host time) or max_memory (host memory) ends a
// run.
//
// A long run says it is alive: every limits.progress_interval of host time
// a line on stderr (spdlog info) gives the host time, the simulated time
// reached and the events so far, at the end of the slice that passes it
// (slices stop growing at about 2 M events). Nothing of it reaches a
// result.
SimulationEnd simulate_within(const Limits& limits, const std::function<std::uint64_t()>& extra_events = nullptr);

// The same limits for a long host loop outside SystemC (the request-stream
// scheduler, statistics over the chips of a big pod): check() on each
// iteration throws sim::SimFailure (exit 3, "runaway: ...") once the
// simulated time the loop reached passes limits.max_sim_time (or is not a
// number), its host time passes limits.max_wall_time or (checked every
// 1024 iterations) its resident memory passes max_memory, and logs a progress
// line every limits.progress_interval, as simulate_within does. `what`
// names the loop in those lines ("the request stream").
class LoopGuard {
 public:
  LoopGuard(const Limits& limits, std::string what);
  // `sim_time_s`: the loop's simulated time; negative when it has none.
  void check(double sim_time_s = -1.0);

 private:
  const Limits& limits_;
  std::string what_;
  sim::WallTimer wall_;
  double next_progress_s_;
  std::uint64_t iterations_ = 0;
};

}  // namespace runtime
