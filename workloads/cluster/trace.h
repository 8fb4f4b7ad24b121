#pragma once
// A cluster run as a Perfetto trace (docs/cluster.md#trace), written by the
// one trace writer (sim::TraceWriter): each job a process of its own (its
// track group), with its steps and its DCN phases in company on two tracks
// (a serving fleet: one track of KV transfers per decode replica, each
// transfer named by its request); and a "fabric" process with each shared
// link's carried bytes/s as a counter.
#include <cstddef>
#include <string>
#include <vector>

#include "workloads/cluster/timeline.h"

namespace workloads::cluster {

// How the trace names one job of the timeline.
struct TraceJob {
  std::size_t job = 0;   // the cluster's job it belongs to (its process)
  std::string job_name;  // the process's name
  // A serving fleet's queue: its track, and each phase's request; empty:
  // a job's steps ("steps" and "DCN" tracks, "DCN phase i" slices).
  std::string track;
  std::vector<std::size_t> phase_names;
};

std::string cluster_trace(const std::vector<TraceJob>& jobs, const TimelineRun& run,
                          const std::vector<FabricLink>& links);

}  // namespace workloads::cluster
