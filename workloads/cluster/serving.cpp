#include "workloads/cluster/serving.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/units.h"
#include "workloads/inference/workload.h"

namespace workloads::cluster {

int ServingLayout::prefill_slice(std::uint64_t replica) const { return int(replica * replica_devices / slice_devices); }

int ServingLayout::decode_slice(std::uint64_t replica) const {
  return int((prefill_devices + replica * replica_devices) / slice_devices);
}

ServingLayout serving_layout(const Experiment& exp, const InferenceSpec& spec) {
  ServingLayout l;
  const std::uint64_t devices = exp.pod.devices();
  l.slice_devices = devices / exp.pod.slices;
  l.replica_devices = devices / spec.parallelism.batch_shards();
  l.prefill_devices = spec.requests.prefill_chips;
  const double per_host = double(exp.chip.host.chips) * exp.pod.devices_per_chip;
  l.connections = static_cast<std::uint32_t>(std::max(1.0, std::ceil(double(l.replica_devices) / per_host)));
  const std::uint32_t tp = spec.parallelism.tensor.degree;
  l.kv_bytes_per_token = kv_bytes_per_token(spec.model.transformer, spec.dtype.kv_cache, tp) * tp;
  return l;
}

ServingQueues serving_queues(const std::vector<KvTransfer>& transfers, const std::vector<Request>& requests,
                             const ServingLayout& layout) {
  ServingQueues out;
  if (layout.prefill_devices == 0) return out;
  std::map<std::uint64_t, std::size_t> queue_of;  // decode replica -> queue
  for (const KvTransfer& t : transfers) queue_of.emplace(t.decode_server, 0);
  for (auto& [replica, q] : queue_of) {
    q = out.queues.size();
    out.queues.emplace_back().queue = true;
    out.replica.push_back(replica);
    out.request_of.emplace_back();
  }
  for (const KvTransfer& t : transfers) {
    const int from = layout.prefill_slice(t.prefill_server), to = layout.decode_slice(t.decode_server);
    if (from == to) continue;  // in one slice: over ICI, its own
    const std::size_t q = queue_of.at(t.decode_server);
    ProfilePhase p;
    p.start = to_ps(t.start_s);
    p.time = std::max<Ps>(1, to_ps(t.start_s + t.time_s) - p.start);
    p.flows.push_back({from, to, layout.kv_bytes_per_token * requests.at(t.request).prompt_len, layout.connections});
    out.queues[q].phases.push_back(std::move(p));
    out.queues[q].step =
        std::max(out.queues[q].step, out.queues[q].phases.back().start + out.queues[q].phases.back().time);
    out.request_of[q].push_back(t.request);
  }
  return out;
}

std::vector<double> transfer_times(const ServingQueues& q, const TimelineRun& run, std::size_t first,
                                   std::size_t requests) {
  // -1: its time alone stands (not on the fabric, or not slowed there; so a
  // stream that shares nothing runs exactly as alone, not to the nearest ps).
  std::vector<double> out(requests, -1.0);
  for (std::size_t k = 0; k < q.queues.size(); ++k)
    for (const PhaseRun& p : run.jobs.at(first + k).phases)
      if (p.end - p.start != q.queues[k].phases.at(p.phase).time)
        out.at(q.request_of[k].at(p.phase)) = sim::ps_to_seconds(p.end - p.start);
  return out;
}

ServingJob serve_alone(const Job& job, const InferenceSpec& spec) {
  ServingJob s;
  s.spec = &spec;
  std::vector<KvTransfer> transfers;
  s.steps = make_stream_step_times();
  KvTransferHook hook;
  hook.ran = &transfers;
  hook.steps = s.steps;
  s.alone = run_inference(*job.experiment, spec, RunOptions{}, hook);
  s.queues = serving_queues(transfers, generate_requests(spec.requests), serving_layout(*job.experiment, spec));
  return s;
}

nlohmann::json serve_with(const Job& job, const ServingJob& s, const std::vector<double>& times) {
  KvTransferHook hook;
  hook.time_s = [&times](std::size_t r, double alone_s) { return times.at(r) >= 0 ? times[r] : alone_s; };
  hook.steps = s.steps;
  return run_inference(*job.experiment, *s.spec, RunOptions{}, hook).report;
}

}  // namespace workloads::cluster
