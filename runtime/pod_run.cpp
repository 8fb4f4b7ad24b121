#include "runtime/pod_run.h"

#include <cstdio>

#include "runtime/pod_simulation.h"
#include "sim/log.h"
#include "sim/units.h"

namespace runtime {

namespace {

// Why every chip must be simulated, or "" when one per group of replicas may do.
std::string replicas_blocker(const PodConfig& config, const PodProgram& pp) {
  if (config.simulate_every_chip) return "replicas: all";
  if (!pp.collective_data.empty() || pp.buffers) return "functional run";
  if (pp.programs.size() == pp.program_of.size()) return "no two chips share a program";
  // A reduction is a flow on its chip's HBM (ChipReduction): a chip that is
  // not simulated has none, and how a collective runs depends on what else
  // the chip streams then, so neither a replica nor a replay stands for it.
  if (config.fidelity == hw::Fidelity::kernel)
    for (const auto& spec : pp.collectives)
      if (spec.op == interconnect::CollectiveOp::all_reduce || spec.op == interconnect::CollectiveOp::reduce_scatter)
        return "kernel fidelity: reductions share each chip's HBM";
  for (const auto& prog : pp.programs)
    for (const auto& op : prog.ops)
      if (std::holds_alternative<hw::SendOp>(op.payload) || std::holds_alternative<hw::RecvOp>(op.payload))
        return "point-to-point messages";
  return "";
}

// How far apart replicas' collectives may end (summed over collectives, as
// a fraction of the step) for one chip per group to stand for all.
constexpr double kReplicaSpreadTolerance = 1e-2;

}  // namespace

const sim::StatGroup& PodRunResult::chip_stats(std::uint32_t c) const {
  return stats.child("chip" + std::to_string(representative.at(c)));
}

PodRunResult run_pod(const PodConfig& config, const PodProgram& pp, bool trace, const Observers& observers) {
  std::string why = replicas_blocker(config, pp);
  if (why.empty()) {
    for (bool replays : {true, false}) {
      PodSimulation sim(config, pp, {true, replays});
      sim.elaborate(observers);
      sim.run();
      const PodSimulation::ReplicaCheck check = sim.check_replicas();
      if (check.replay_conflict) {
        spdlog::debug("pod: a collective started while a replayed one ran; simulating every collective");
        continue;
      }
      PodRunResult r = sim.collect(trace);
      r.replica_spread_s = sim::ps_to_seconds(check.spread_ps);
      std::string inexact = check.inexact;
      if (inexact.empty() && r.replica_spread_s > kReplicaSpreadTolerance * r.step_time_s) {
        char text[160];
        std::snprintf(text, sizeof text, "collectives ended up to %.3g s apart on replicas, over %.0e of the step",
                      r.replica_spread_s, kReplicaSpreadTolerance);
        inexact = text;
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
  PodSimulation sim(config, pp, {});
  sim.elaborate(observers);
  sim.run();
  PodRunResult r = sim.collect(trace);
  r.replicas = "all (" + why + ")";
  return r;
}

}  // namespace runtime
