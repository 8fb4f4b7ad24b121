#include "runtime/limits.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <systemc>

#include "sim/error.h"
#include "sim/host.h"
#include "sim/kernel.h"
#include "sim/output.h"

namespace runtime {

namespace {
// Slices stop growing at about this many events (a fraction of a second to
// a few seconds of host time at 0.4-4 M events per second), so that the
// progress lines come about on time in a long run. An event count, not host
// time, so that where a run stops stays deterministic.
constexpr std::uint64_t kSliceEvents = std::uint64_t{1} << 21;
}  // namespace

double memory_limit_bytes(const Limits& limits) {
  if (limits.max_memory_bytes) return *limits.max_memory_bytes;
  const double machine = double(sim::machine_memory_bytes());
  return machine > 0 ? machine / 2 : 8e9;  // ASSUMPTION: 8 GB when the machine does not say
}

std::string memory_limit_phrase(const Limits& limits) {
  const std::string limit = sim::si(memory_limit_bytes(limits), "B");
  return limits.max_memory_bytes ? "limits.max_memory (" + limit + ")"
                                 : "half the machine's memory (" + limit + "; raise it with limits.max_memory)";
}

std::string SimulationEnd::describe(const Limits& limits) const {
  switch (reason) {
    case Reason::memory_limit:
      return "memory: the simulation's host memory passed " + memory_limit_phrase(limits) + " at " +
             sim::si(sim_time_s, "s") + " of simulated time";
    case Reason::time_limit:
      return "runaway: simulated time reached limits.max_sim_time (" + sim::si(limits.max_sim_time_s, "s") + ")";
    case Reason::event_limit:
      return "runaway: " + std::to_string(events) + " events exceeded limits.max_events (" +
             std::to_string(limits.max_events) + ") at " + sim::si(sim_time_s, "s") + " of simulated time";
    case Reason::wall_limit:
      return "runaway: host time reached limits.max_wall_time (" + sim::si(limits.max_wall_time_s, "s") + ") at " +
             sim::si(sim_time_s, "s") + " of simulated time";
    case Reason::stopped: return "the simulation was stopped";
    case Reason::idle: break;
  }
  return "the simulation ran out of events";
}

SimulationEnd simulate_within(const Limits& limits, const std::function<std::uint64_t()>& extra_events) {
  using sc_core::sc_time;
  const sc_time end(limits.max_sim_time_s, sc_core::SC_SEC);
  auto events = [&extra_events] { return sim::kernel_events() + (extra_events ? extra_events() : 0); };
  // Slices start short and double while they use little of the event budget
  // (a few dozen sc_start calls for a whole run), and shrink as it runs out.
  sc_time slice(1, sc_core::SC_US);
  const sc_time min_slice = sc_core::sc_get_time_resolution();
  const sim::WallTimer wall;
  sim::arm_host_deadline(limits.max_wall_time_s);  // inside a slice too (sim/kernel.h)
  const double every_s = limits.progress_interval_s;
  double next_progress_s = every_s;
  const double memory_limit = memory_limit_bytes(limits);
  SimulationEnd r;
  for (;;) {
    const sc_time now = sc_core::sc_time_stamp();
    if (now >= end) {
      r.reason = sc_core::sc_pending_activity() ? SimulationEnd::Reason::time_limit : SimulationEnd::Reason::idle;
      break;
    }
    const std::uint64_t before = events();
    const double slice_started = wall.seconds();
    sc_core::sc_start(end - now < slice ? end - now : slice, sc_core::SC_RUN_TO_TIME);
    const std::uint64_t after = events();
    if (sc_core::sc_get_status() == sc_core::SC_STOPPED || sc_core::sc_end_of_simulation_invoked()) {
      r.reason = sim::host_deadline_tripped() ? SimulationEnd::Reason::wall_limit : SimulationEnd::Reason::stopped;
      break;
    }
    if (!sc_core::sc_pending_activity()) {
      r.reason = SimulationEnd::Reason::idle;
      break;
    }
    if (after > limits.max_events) {
      r.reason = SimulationEnd::Reason::event_limit;
      break;
    }
    if (double(sim::current_rss_bytes()) > memory_limit) {
      r.reason = SimulationEnd::Reason::memory_limit;
      break;
    }
    // Host time: a slice also halves when it took more than an eighth of
    // what is left, so the limit is met within about that.
    const double wall_s = wall.seconds(), wall_left = limits.max_wall_time_s - wall_s;
    if (wall_left <= 0) {
      r.reason = SimulationEnd::Reason::wall_limit;
      break;
    }
    if (every_s > 0 && wall_s >= next_progress_s) {
      spdlog::info("progress: {} of host time, {} simulated, {} events", sim::si(wall_s, "s"),
                   sim::si(sc_core::sc_time_stamp().to_seconds(), "s"), after);
      next_progress_s = wall_s + every_s;
    }
    const std::uint64_t used = after - before, left = limits.max_events - after;
    const bool slow = wall_s - slice_started > wall_left / 8;
    if (used <= left / 8 && used <= kSliceEvents / 2 && !slow) {
      if (slice < end) slice = slice * 2.0;
    } else if ((used > left / 2 || used > kSliceEvents || slow) && slice > min_slice) {
      slice = slice / 2.0;
      if (slice < min_slice) slice = min_slice;
    }
  }
  sim::disarm_host_deadline();
  r.events = events();
  r.sim_time_s = sc_core::sc_time_stamp().to_seconds();
  return r;
}

LoopGuard::LoopGuard(const Limits& limits, std::string what)
    : limits_(limits), what_(std::move(what)), next_progress_s_(limits.progress_interval_s) {}

void LoopGuard::check(double sim_time_s) {
  ++iterations_;
  if (sim_time_s >= 0 || std::isnan(sim_time_s)) {
    if (!(sim_time_s <= limits_.max_sim_time_s))
      throw sim::SimFailure("runaway: " + what_ + " reached " + sim::g3(sim_time_s, "s") +
                            " of simulated time, past limits.max_sim_time (" + sim::g3(limits_.max_sim_time_s, "s") +
                            ")");
  }
  const double wall_s = wall_.seconds();
  if (wall_s > limits_.max_wall_time_s)
    throw sim::SimFailure("runaway: host time reached limits.max_wall_time (" + sim::si(limits_.max_wall_time_s, "s") +
                          ") in " + what_ + " after " + std::to_string(iterations_) + " steps");
  // The resident size every 1024 steps (a /proc read costs microseconds).
  if (iterations_ % 1024 == 0 && double(sim::current_rss_bytes()) > memory_limit_bytes(limits_))
    throw sim::SimFailure("memory: " + what_ + "'s host memory passed " + memory_limit_phrase(limits_) + " after " +
                          std::to_string(iterations_) + " steps");
  if (limits_.progress_interval_s > 0 && wall_s >= next_progress_s_) {
    spdlog::info("progress: {} of host time, {}, {} steps{}", sim::si(wall_s, "s"), what_, iterations_,
                 sim_time_s >= 0 ? ", " + sim::si(sim_time_s, "s") + " simulated" : std::string());
    next_progress_s_ = wall_s + limits_.progress_interval_s;
  }
}

}  // namespace runtime
