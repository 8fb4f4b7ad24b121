#pragma once
// A serving fleet in a cluster (docs/cluster.md#serving-jobs): a `kind:
// inference` job whose request stream is disaggregated over whole slices
// (workload.requests.prefill_chips), so that each request's KV cache
// crosses the data-center network from its prefill replica's slice to its
// decode replica's. The stream runs alone once; its transfers, as it ran
// them, become one queue per decode replica on the fabric's timeline (each
// transfer a phase, workloads/cluster/timeline.h); the stream then runs
// again with each transfer taking the time it took there, which gives its
// latencies in company.
#include <cstddef>
#include <memory>
#include <vector>

#include "workloads/cluster/profile.h"
#include "workloads/cluster/spec.h"
#include "workloads/cluster/timeline.h"
#include "workloads/inference/spec.h"
#include "workloads/inference/workload.h"
#include "workloads/workload.h"

namespace workloads::cluster {

// Where a disaggregated stream's replicas sit among the job's slices: the
// prefill pool takes the first prefill_chips / slice chips slices, the
// decode pool the rest, and a pool's replica k the slice its chips
// (k x replica chips from the pool's first) fall in. Each replica's KV
// cache leaves from its hosts (its chips over chip.host.chips, at least
// one), each a connection of its own.
struct ServingLayout {
  std::uint64_t slice_devices = 1, replica_devices = 1, prefill_devices = 0;
  std::uint32_t connections = 1;
  std::uint64_t kv_bytes_per_token = 0;  // over the replica's chips
  int prefill_slice(std::uint64_t replica) const;
  int decode_slice(std::uint64_t replica) const;
};
ServingLayout serving_layout(const Experiment& exp, const InferenceSpec& spec);

// The KV transfers as queues, one per decode replica that received any
// (ascending), each transfer a phase of one flow of its request's bytes
// from its prefill slice to its decode slice, at the time it started
// alone; request_of names each phase's request. None when the transfers
// stay in a slice (one slice, or no prefill pool).
struct ServingQueues {
  std::vector<JobProfile> queues;
  std::vector<std::uint64_t> replica;                // per queue: its decode replica
  std::vector<std::vector<std::size_t>> request_of;  // per queue, per phase
};
ServingQueues serving_queues(const std::vector<KvTransfer>& transfers, const std::vector<Request>& requests,
                             const ServingLayout& layout);

// Each request's transfer time on the fabric: its phase's span in `run`,
// whose jobs `first`, first + 1, ... are the queues.
std::vector<double> transfer_times(const ServingQueues& q, const TimelineRun& run, std::size_t first,
                                   std::size_t requests);

// A serving job as the cluster runs it.
struct ServingJob {
  const InferenceSpec* spec = nullptr;
  RunOutput alone;  // the stream with the DCN to itself
  ServingQueues queues;
  std::shared_ptr<StreamStepTimes> steps;  // its steps' pod runs, for the runs in company
};
ServingJob serve_alone(const Job& job, const InferenceSpec& spec);
// The stream again, request r's transfer taking times[r].
nlohmann::json serve_with(const Job& job, const ServingJob& s, const std::vector<double>& times);

}  // namespace workloads::cluster
