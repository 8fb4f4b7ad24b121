#pragma once
// A job's step as it ran alone, reduced to what the shared fabric needs
// (docs/cluster.md): the step's length and its DCN phases, each the span of
// one or more collectives across slices (overlapping ones merged) and the
// bytes they sent from each of the job's slices to each other.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "workloads/cluster/timeline.h"

namespace workloads::cluster {

struct SliceFlow {
  int from = 0, to = 0;  // the job's slice indices
  std::uint64_t bytes = 0;
  std::uint32_t connections = 1;  // host pairs carrying it (timeline.h, PhaseFlow)
};

struct ProfilePhase {
  Ps start = 0, time = 1;
  std::vector<SliceFlow> flows;  // (from, to) ascending, each pair once
};

struct JobProfile {
  Ps step = 0;
  std::vector<ProfilePhase> phases;  // in order, disjoint
  bool queue = false;                // a queue of transfers (timeline.h, TimelineJob)
};

// From the job's report.json alone: result.step_time_s and every collective
// with dcn_traffic (workloads/report.h, CollectiveRecord). Each slice's
// traffic to another leaves from its hosts, each to its counterpart:
// `connections` (the slice's hosts) flows.
JobProfile profile_of(const nlohmann::json& report, std::uint32_t connections = 1);

}  // namespace workloads::cluster
