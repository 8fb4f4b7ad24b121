#pragma once
// The shared data-center fabric over time (docs/cluster.md): jobs run their
// steps one after another from their start; each step holds the DCN phases
// the job's step had alone (when in the step each starts, how long it took,
// the bytes it sent between which slices). A phase's bytes are flows on the
// fabric's shared links, sharing them max-min fairly (sim::FluidShare,
// progressive filling, recomputed at every flow start and end) with every
// other job's flows active at the time, each flow no faster than it ran
// alone. A phase that ends later than alone delays the rest of its step by
// as much (every phase is taken to be on its step's critical path: exact for
// exposed DCN time, an upper bound for DCN time the step hid).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace workloads::cluster {

using Ps = std::uint64_t;  // picoseconds, the kernel's resolution

// Seconds to the nearest picosecond (negative: 0), as the cluster's
// profiles, transfers and starts enter the timeline (back:
// sim::ps_to_seconds).
Ps to_ps(double s);

// One shared link of the fabric, one way.
struct FabricLink {
  std::string name;
  double bytes_per_s = 0;  // > 0
};

struct PhaseFlow {
  std::uint64_t bytes = 0;
  std::vector<std::uint32_t> links;  // fabric links it crosses; empty: none shared (it runs as alone)
  // The host pairs that carry it (each NIC's connections), as that many
  // equal flows: max-min fairness holds per connection, so a job whose
  // slices have more hosts sending takes more of a shared link.
  std::uint32_t connections = 1;
};

// A DCN phase of the step, as the job ran alone.
struct Phase {
  Ps start = 0;  // from the step's start
  Ps time = 1;   // its span alone, >= 1
  std::vector<PhaseFlow> flows;
};

struct TimelineJob {
  Ps start = 0;
  std::uint32_t steps = 1;
  Ps step = 0;                // the step alone
  std::vector<Phase> phases;  // in order, disjoint, each inside the step
  // A queue of transfers (a serving fleet's KV caches into one decode
  // replica) rather than a step: a phase starts at its time alone, or when
  // the one before it ends if that is later, so a late phase delays the
  // next only by what it overran the gap between them.
  bool queue = false;
};

struct PhaseRun {
  std::uint32_t step = 0, phase = 0;
  Ps start = 0, end = 0;
};

struct JobRun {
  std::vector<std::pair<Ps, Ps>> steps;  // start, end
  std::vector<PhaseRun> phases;          // in the order they ended
};

struct LinkRun {
  std::vector<double> bytes_by_job;         // per job
  std::vector<std::pair<Ps, double>> rate;  // bytes/s carried, from each change on
  double bytes() const;
};

struct TimelineRun {
  std::vector<JobRun> jobs;
  std::vector<LinkRun> links;
  Ps end = 0;  // when the last job's last step ended
};

TimelineRun run_timeline(const std::vector<FabricLink>& links, const std::vector<TimelineJob>& jobs);

}  // namespace workloads::cluster
