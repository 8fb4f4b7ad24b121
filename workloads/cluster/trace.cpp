#include "workloads/cluster/trace.h"

#include <map>

#include "sim/trace.h"

namespace workloads::cluster {

std::string cluster_trace(const std::vector<TraceJob>& jobs, const TimelineRun& run,
                          const std::vector<FabricLink>& links) {
  sim::TraceWriter w;
  std::map<std::size_t, std::uint32_t> tracks;  // job -> tracks named so far
  std::uint32_t fabric = 1;
  for (std::size_t t = 0; t < jobs.size(); ++t) {
    const TraceJob& tj = jobs[t];
    const auto pid = static_cast<std::uint32_t>(tj.job + 1);
    fabric = std::max(fabric, pid + 1);
    const auto [next, fresh] = tracks.try_emplace(tj.job, 0);
    if (fresh) w.name_process(pid, tj.job_name);
    const JobRun& jr = run.jobs.at(t);
    if (tj.track.empty()) {
      const std::uint32_t steps = ++next->second, dcn = ++next->second;
      w.name_track(pid, steps, "steps");
      w.name_track(pid, dcn, "DCN");
      for (std::size_t k = 0; k < jr.steps.size(); ++k)
        w.op(pid, steps, "step " + std::to_string(k), jr.steps[k].first, jr.steps[k].second, "step");
      for (const PhaseRun& p : jr.phases)
        w.op(pid, dcn, "DCN phase " + std::to_string(p.phase), p.start, p.end, "dcn", {{"step", double(p.step)}});
    } else {
      const std::uint32_t kv = ++next->second;
      w.name_track(pid, kv, tj.track);
      for (const PhaseRun& p : jr.phases)
        w.op(pid, kv, "KV request " + std::to_string(tj.phase_names.at(p.phase)), p.start, p.end, "dcn");
    }
  }
  w.name_process(fabric, "fabric");
  for (std::size_t l = 0; l < links.size(); ++l) {
    bool used = false;
    for (const auto& [at, rate] : run.links.at(l).rate) used = used || rate > 0;
    if (!used) continue;
    for (const auto& [at, rate] : run.links[l].rate) w.counter(fabric, links[l].name + " B/s", at, rate);
  }
  return w.json();
}

}  // namespace workloads::cluster
