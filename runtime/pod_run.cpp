#include "runtime/pod_run.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <variant>

#include "runtime/pod_simulation.h"
#include "runtime/run_budget.h"
#include "sim/log.h"
#include "sim/units.h"

namespace runtime {

namespace {

// With point-to-point messages, the lowest chip of each group of replicas
// (its representative, pod_simulation.h) stands for the others only if the
// groups line up: every peer-table entry that a program's messages name
// takes the members of its group one to one onto the members of one other
// group, and its representative onto that group's representative. Then the
// replicas' messages pair up as their representatives' do. Returns why not,
// or "".
std::string peers_blocker(const PodProgram& pp) {
  const std::uint32_t n = pp.chip_count();
  constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::vector<std::vector<std::uint32_t>> slots(pp.programs.size());  // per program: the entries it names
  bool any = false;
  for (std::size_t p = 0; p < pp.programs.size(); ++p)
    for (const auto& op : pp.programs[p].ops) {
      std::uint32_t slot = kNone;
      if (const auto* send = std::get_if<hw::SendOp>(&op.payload)) slot = send->peer;
      if (const auto* recv = std::get_if<hw::RecvOp>(&op.payload)) slot = recv->peer;
      if (slot == kNone || std::find(slots[p].begin(), slots[p].end(), slot) != slots[p].end()) continue;
      slots[p].push_back(slot);
      any = true;
    }
  if (!any) return "";
  std::vector<std::vector<std::uint32_t>> members(pp.programs.size());
  for (std::uint32_t c = 0; c < n; ++c) members[pp.program_of[c]].push_back(c);
  const auto peer = [&](std::uint32_t c, std::uint32_t slot) {
    return c < pp.peers.size() && slot < pp.peers[c].size() ? pp.peers[c][slot] : PodProgram::kNoPeer;
  };
  std::vector<std::uint32_t> seen(n, kNone);  // the last (program, entry) check that reached each chip
  std::uint32_t check = 0;
  for (std::size_t p = 0; p < pp.programs.size(); ++p) {
    if (members[p].empty()) continue;
    const std::uint32_t rep = members[p].front();
    for (const std::uint32_t slot : slots[p]) {
      const std::string entry = "peer " + std::to_string(slot) + " of chip ";
      const std::uint32_t rep_peer = peer(rep, slot);
      if (rep_peer >= n) return "point-to-point messages: " + entry + std::to_string(rep) + " names no chip";
      const std::uint32_t group = pp.program_of[rep_peer];
      if (members[group].front() != rep_peer)
        return "point-to-point messages: " + entry + std::to_string(rep) + " is not its group's lowest chip";
      ++check;
      for (const std::uint32_t c : members[p]) {
        const std::uint32_t d = peer(c, slot);
        if (d >= n || pp.program_of[d] != group || seen[d] == check)
          return "point-to-point messages: " + entry + std::to_string(c) + " does not line up with " + entry +
                 std::to_string(rep);
        seen[d] = check;
      }
    }
  }
  return "";
}

// Why every chip must be simulated, or "" when one per group of replicas may do.
std::string replicas_blocker(const PodConfig& config, const PodProgram& pp) {
  if (config.simulate_every_chip) return "replicas: all";
  if (!pp.collective_data.empty() || pp.buffers) return "functional run";
  if (pp.programs.size() == pp.program_of.size()) return "no two chips share a program";
  return peers_blocker(pp);
}

// Whether a recorded collective may be replayed: not at kernel fidelity when
// it reduces, since its reductions are flows on the chips' HBM that a replay
// would skip (their bytes, and their contention with the chips' kernels).
bool replays_valid(const PodConfig& config, const PodProgram& pp) {
  if (config.fidelity != hw::Fidelity::kernel) return true;
  for (const auto& spec : pp.collectives)
    if (spec.op == interconnect::CollectiveOp::all_reduce || spec.op == interconnect::CollectiveOp::reduce_scatter)
      return false;
  return true;
}

// What a simulation of `pp` holds in host memory and, at pe fidelity, how
// many PE cycles it runs, checked before it is built: with replicas, one
// chip per program (the groups), else every chip; a trace records the ops
// of the chips it writes (by default the simulated ones).
void check_budget(const PodConfig& config, const PodProgram& pp, bool replicas, const sim::TraceRequest& trace,
                  bool translations = true) {
  std::vector<const hw::Program*> simulated;
  if (replicas) {
    std::vector<bool> used(pp.programs.size(), false);
    for (const std::uint32_t p : pp.program_of) used[p] = true;
    for (std::size_t p = 0; p < pp.programs.size(); ++p)
      if (used[p]) simulated.push_back(&pp.programs[p]);
  } else {
    for (std::uint32_t c = 0; c < pp.chip_count(); ++c) simulated.push_back(&pp.chip(c));
  }
  // Each program's distinct collectives, once per chip that runs it.
  std::vector<double> collectives_of(pp.programs.size(), 0);
  for (std::size_t p = 0; p < pp.programs.size(); ++p) {
    std::set<std::uint32_t> seen;
    for (const hw::Op& op : pp.programs[p].ops)
      if (const auto* comm = std::get_if<hw::CommOp>(&op.payload)) seen.insert(comm->collective);
    collectives_of[p] = double(seen.size());
  }
  PodRunSize size;
  size.pod_chips = static_cast<int>(pp.chip_count());
  const PlanCover cover = plan_cover(config, pp, {replicas, false, translations});
  size.planned_fraction = cover.planned_fraction;
  for (const std::uint32_t p : pp.program_of) size.collective_chips += collectives_of[p];
  size.collective_chips /= cover.chips_per_end;
  if (trace.on && trace.chips.empty()) {
    for (const hw::Program* p : simulated) size.trace_events += double(p->ops.size());
  } else if (trace.on) {
    for (const std::uint32_t c : trace.chips)
      if (c < pp.chip_count()) size.trace_events += double(pp.chip(c).ops.size());
  }
  check_pod_budget(config.limits, config.chip, config.fidelity, simulated, size);
}

// A straggler (PodConfig::scale) runs its replicas' program on a slower
// chip, so it cannot share their simulation: the chips of each program
// with each scale other than 1 get a copy of the program of their own.
// Replica groups, symmetric axes and the point-to-point check then see them
// as the different chips they are. `pp` itself when no chip is slowed.
const PodProgram& with_stragglers(const PodConfig& config, const PodProgram& pp, PodProgram& owned) {
  if (std::all_of(config.scale.begin(), config.scale.end(), [](const ChipScale& s) { return s == ChipScale{}; }))
    return pp;
  owned = pp;
  std::map<std::tuple<std::uint32_t, double, double>, std::uint32_t> copy_of;  // (program, compute, hbm) -> copy
  for (std::uint32_t c = 0; c < pp.chip_count(); ++c) {
    const ChipScale s = config.scale_of(c);
    if (s == ChipScale{}) continue;
    const auto key = std::make_tuple(pp.program_of[c], s.compute, s.hbm);
    auto it = copy_of.find(key);
    if (it == copy_of.end()) it = copy_of.emplace(key, owned.add_program(pp.programs[pp.program_of[c]])).first;
    owned.program_of[c] = it->second;
  }
  return owned;
}

// How far apart replicas' collectives may end (summed over collectives, as
// a fraction of the step) for one chip per group to stand for all.
constexpr double kReplicaSpreadTolerance = 1e-2;

}  // namespace

double PodRunResult::chip_end_s(const CollectiveTiming& collective, std::uint32_t chip) const {
  if (!orbit_chip.empty()) chip = orbit_chip.at(chip);
  const auto& ends = collective.chip_ends;
  const auto it = std::lower_bound(ends.begin(), ends.end(), std::make_pair(chip, 0.0));
  return it != ends.end() && it->first == chip ? it->second : 0.0;
}

const sim::StatGroup& PodRunResult::chip_stats(std::uint32_t c) const {
  return stats.child("chip" + std::to_string(representative.at(c)));
}

PodRunResult run_pod(const PodConfig& config, const PodProgram& given, const sim::TraceRequest& trace,
                     const Observers& watchers) {
  Observers observers = watchers;
  observers.link_rates = observers.link_rates || trace.on;
  PodProgram owned;
  const PodProgram& pp = with_stragglers(config, given, owned);
  std::string why = replicas_blocker(config, pp);
  bool spread_rejected = false;
  if (why.empty()) {
    // Shortcuts from the most to the least: each attempt that finds its
    // premise broken during the run leaves the next to run.
    bool replays = replays_valid(config, pp), translations = true;
    for (;;) {
      check_budget(config, pp, true, trace, translations);
      PodSimulation sim(config, pp, {true, replays, translations});
      sim.elaborate(observers);
      sim.run();
      const PodSimulation::ReplicaCheck check = sim.check_replicas();
      if (check.asymmetric) {
        spdlog::debug("pod: a route was not invariant under the pod's translations; simulating every orbit");
        translations = false;
        continue;
      }
      if (check.replay_conflict) {
        spdlog::debug("pod: a collective started while a replayed one ran; simulating every collective");
        replays = false;
        continue;
      }
      PodRunResult r = sim.collect(trace);
      r.replica_spread_s = sim::ps_to_seconds(check.spread_ps);
      r.replica_drift_s = sim::ps_to_seconds(check.drift_ps);
      std::string inexact = check.inexact;
      if (inexact.empty() && r.replica_spread_s > kReplicaSpreadTolerance * r.step_time_s) {
        char text[160];
        std::snprintf(text, sizeof text, "collectives ended up to %.3g s apart on replicas, over %.0e of the step",
                      r.replica_spread_s, kReplicaSpreadTolerance);
        inexact = text;
        spread_rejected = true;
      }
      if (inexact.empty()) {
        r.replicas = "one per group";
        return r;
      }
      spdlog::debug("pod: one chip per group of replicas is not exact ({}); simulating every chip", inexact);
      why = "not exact: " + inexact;
      break;
    }
  }
  check_budget(config, pp, false, trace);
  PodSimulation sim(config, pp, {});
  sim.elaborate(observers);
  sim.run();
  PodRunResult r = sim.collect(trace);
  r.replicas = "all (" + why + ")";
  r.spread_rejected = spread_rejected;
  return r;
}

void check_pod_run_budget(const PodConfig& config, const PodProgram& given, bool every_chip) {
  PodProgram owned;
  const PodProgram& pp = with_stragglers(config, given, owned);
  check_budget(config, pp, !every_chip && replicas_blocker(config, pp).empty(), {});
}

}  // namespace runtime
