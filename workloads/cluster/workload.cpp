#include "workloads/cluster/workload.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "sim/host.h"
#include "sim/mean.h"
#include "sim/output.h"
#include "sim/units.h"
#include "workloads/cluster/fabric.h"
#include "workloads/cluster/profile.h"
#include "workloads/cluster/serving.h"
#include "workloads/cluster/spec.h"
#include "workloads/cluster/timeline.h"
#include "workloads/cluster/trace.h"
#include "workloads/inference/workload.h"
#include "workloads/report.h"

namespace workloads {

namespace {

using cluster::Ps;
using cluster::to_ps;

// The job's profile placed on the fabric: each flow between its slices
// routed over the shared links between their pods.
cluster::TimelineJob place(const cluster::JobProfile& profile, const cluster::Job& job,
                           const std::vector<std::size_t>& pods, const cluster::Fabric& fabric) {
  cluster::TimelineJob t;
  t.start = to_ps(job.start_s);
  t.steps = job.steps;
  t.step = profile.step;
  t.queue = profile.queue;
  for (const auto& p : profile.phases) {
    cluster::Phase phase{p.start, p.time, {}};
    for (const auto& f : p.flows)
      phase.flows.push_back(
          {f.bytes, fabric.route(pods.at(std::size_t(f.from)), pods.at(std::size_t(f.to))), f.connections});
    t.phases.push_back(std::move(phase));
  }
  return t;
}

// A slice's hosts (its chips over chip.host.chips, at least one): each
// sends its chips' part of the slice's traffic to its counterpart.
std::uint32_t hosts_per_slice(const Experiment& exp) {
  const double per_host = double(exp.chip.host.chips) * exp.pod.devices_per_chip;
  return static_cast<std::uint32_t>(std::max(1.0, std::ceil(double(exp.pod.devices() / exp.pod.slices) / per_host)));
}

// Per step: the DCN phases' spans summed.
std::vector<double> dcn_per_step(const cluster::JobRun& run, std::uint32_t steps) {
  std::vector<double> out(steps, 0.0);
  for (const auto& p : run.phases) out.at(p.step) += sim::ps_to_seconds(p.end - p.start);
  return out;
}

// What every job's section says of it as given and as it ran alone.
ClusterSection::Job job_as_given(const cluster::Job& job, const RunOutput& alone_run, std::uint32_t phases) {
  ClusterSection::Job j;
  j.name = job.name;
  j.kind = job.experiment->workload->kind();
  j.slices = job.slices;
  j.start_s = job.start_s;
  j.step_time_s = alone_run.report.at("result").at("step_time_s").get<double>();
  j.dcn_phases = phases;
  j.report = alone_run.report;
  return j;
}

ClusterSection::Job job_section(const cluster::Job& job, const RunOutput& alone_run, const cluster::JobRun& alone,
                                const cluster::JobRun& together, std::uint32_t phases) {
  ClusterSection::Job j = job_as_given(job, alone_run, phases);
  const std::vector<double> dcn_alone = dcn_per_step(alone, job.steps), dcn = dcn_per_step(together, job.steps);
  std::vector<double> t_alone, t;
  for (std::uint32_t k = 0; k < job.steps; ++k) {
    const auto& [s0, e0] = alone.steps.at(k);
    const auto& [s1, e1] = together.steps.at(k);
    j.steps.push_back(
        {sim::ps_to_seconds(s1), sim::ps_to_seconds(e1 - s1), sim::ps_to_seconds(e0 - s0), dcn[k], dcn_alone[k]});
    t_alone.push_back(sim::ps_to_seconds(e0 - s0));
    t.push_back(sim::ps_to_seconds(e1 - s1));
  }
  j.step_alone_s = sim::mean(t_alone);
  j.step_s = sim::mean(t);
  j.slowdown = j.step_alone_s > 0 ? j.step_s / j.step_alone_s : 1.0;
  j.dcn_alone_s = sim::mean(dcn_alone);
  j.dcn_s = sim::mean(dcn);
  return j;
}

RequestStreamSection::Latency latency(const nlohmann::json& l) {
  return {l.at("mean").get<double>(), l.at("p50").get<double>(), l.at("p99").get<double>()};
}

// A serving job: its stream with the fabric to itself and in company.
ClusterSection::Job serving_section(const cluster::Job& job, const RunOutput& alone_run,
                                    const nlohmann::json& fabric_alone, const nlohmann::json& together,
                                    std::uint32_t transfers) {
  ClusterSection::Job j = job_as_given(job, alone_run, transfers);
  const auto& a = fabric_alone.at("result").at("inference").at("stream");
  const auto& c = together.at("result").at("inference").at("stream");
  j.step_alone_s = a.at("makespan_s").get<double>();
  j.step_s = c.at("makespan_s").get<double>();
  const auto kv = [](const nlohmann::json& st) {
    return st.at("disaggregated").is_null() ? 0.0 : st.at("disaggregated").at("kv_transfer_s_mean").get<double>();
  };
  j.dcn_alone_s = kv(a);
  j.dcn_s = kv(c);
  ClusterSection::Job::Serving sv;
  sv.ttft_alone_s = latency(a.at("ttft_s"));
  sv.ttft_s = latency(c.at("ttft_s"));
  sv.tpot_alone_s = latency(a.at("tpot_s"));
  sv.tpot_s = latency(c.at("tpot_s"));
  j.slowdown = sv.ttft_alone_s.p99 > 0 ? sv.ttft_s.p99 / sv.ttft_alone_s.p99 : 1.0;
  j.serving = sv;
  return j;
}

// owner[t]: the job of timeline job t (a serving job has one per decode replica).
ClusterSection::Link link_section(const cluster::FabricLink& link, const cluster::LinkRun& run,
                                  const std::vector<cluster::Job>& jobs, const std::vector<std::size_t>& owner,
                                  Ps makespan) {
  ClusterSection::Link l;
  l.name = link.name;
  l.bytes_per_s = link.bytes_per_s;
  l.bytes = run.bytes();
  l.utilization = makespan > 0 ? l.bytes / (link.bytes_per_s * sim::ps_to_seconds(makespan)) : 0.0;
  std::vector<double> by_job(jobs.size(), 0.0);
  for (std::size_t t = 0; t < owner.size(); ++t) by_job[owner[t]] += run.bytes_by_job[t];
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (by_job[j] > 0) l.by_job.emplace_back(jobs[j].name, by_job[j]);
  for (const auto& [t, r] : run.rate) l.rate.emplace_back(sim::ps_to_seconds(t), r);
  return l;
}

std::string table(const Experiment& exp, const ClusterSection& c, double wall_s) {
  sim::Table t("tpusim: " + exp.name + " (cluster of " + std::to_string(c.jobs.size()) + " jobs on " +
               exp.chip_file.name + ")");
  for (const auto& j : c.jobs) {
    const std::string what =
        j.serving
            ? std::to_string(j.report.at("result").at("inference").at("stream").at("requests").get<int>()) + " requests"
            : std::to_string(j.steps.size()) + " steps";
    t.section("job " + j.name + " (" + j.kind + ", " + what + " from " + sim::si(j.start_s, "s") + ")");
    if (j.serving) {
      t.row("TTFT p99 alone / in company",
            sim::si(j.serving->ttft_alone_s.p99, "s") + " / " + sim::si(j.serving->ttft_s.p99, "s"),
            "slowdown " + sim::fixed(j.slowdown, 3));
      t.row("TTFT p50 alone / in company",
            sim::si(j.serving->ttft_alone_s.p50, "s") + " / " + sim::si(j.serving->ttft_s.p50, "s"));
      t.row("KV transfer alone / in company", sim::si(j.dcn_alone_s, "s") + " / " + sim::si(j.dcn_s, "s"),
            "mean of " + std::to_string(j.dcn_phases) + " transfers");
      continue;
    }
    t.row("step alone / in company", sim::si(j.step_alone_s, "s") + " / " + sim::si(j.step_s, "s"),
          "slowdown " + sim::fixed(j.slowdown, 3));
    t.row("DCN per step alone / in company", sim::si(j.dcn_alone_s, "s") + " / " + sim::si(j.dcn_s, "s"),
          std::to_string(j.dcn_phases) + " phases");
  }
  t.section("fabric");
  for (const auto& l : c.links) {
    if (l.bytes <= 0) continue;
    std::string users;
    for (const auto& [name, bytes] : l.by_job) users += (users.empty() ? "" : ", ") + name + " " + sim::si(bytes, "B");
    t.row(l.name + " utilization", sim::fixed(100 * l.utilization, 1), "% (" + users + ")");
  }
  t.row("makespan", sim::si(c.makespan_s, "s"));
  t.row("wall time", sim::fixed(wall_s, 3), "s");
  return t.str();
}

class ClusterWorkload : public Workload {
 public:
  explicit ClusterWorkload(cluster::ClusterSpec spec) : spec_(std::move(spec)) {}
  std::string kind() const override { return "cluster"; }

  RunOutput run(const Experiment& exp, const RunOptions& opts) const override {
    sim::WallTimer wall;
    const cluster::Fabric fabric = cluster::make_fabric(spec_.datacenter, exp.chip_file);
    Placed p = place_jobs(fabric);
    const cluster::TimelineRun together = cluster::run_timeline(fabric.links, p.timeline);
    Report rep = report_for(exp);
    ClusterSection c;
    for (std::size_t j = 0; j < spec_.jobs.size(); ++j) {
      const std::size_t first = p.first[j], count = p.first[j + 1] - first;
      const std::vector<cluster::TimelineJob> own(p.timeline.begin() + long(first),
                                                  p.timeline.begin() + long(first + count));
      const cluster::TimelineRun alone = cluster::run_timeline(fabric.links, own);
      if (p.serving[j]) {
        const cluster::ServingJob& s = *p.serving[j];
        const std::size_t n = s.spec->requests.count;
        // A fleet whose caches stay in their slices (or one without a
        // prefill pool) has nothing on the fabric: its stream as alone.
        const bool apart = s.queues.queues.empty();
        c.jobs.push_back(serving_section(
            spec_.jobs[j], p.runs[j],
            apart ? s.alone.report
                  : cluster::serve_with(spec_.jobs[j], s, cluster::transfer_times(s.queues, alone, 0, n)),
            apart ? s.alone.report
                  : cluster::serve_with(spec_.jobs[j], s, cluster::transfer_times(s.queues, together, first, n)),
            p.phases[j]));
      } else {
        c.jobs.push_back(job_section(spec_.jobs[j], p.runs[j], alone.jobs[0], together.jobs[first], p.phases[j]));
      }
    }
    for (std::size_t l = 0; l < fabric.links.size(); ++l)
      c.links.push_back(link_section(fabric.links[l], together.links[l], spec_.jobs, p.owner, together.end));
    c.makespan_s = sim::ps_to_seconds(together.end);
    rep.result.step_time_s = c.makespan_s;
    rep.simulator = simulator_for(exp, wall.seconds(), 0);
    std::string trace;
    if (opts.trace) trace = cluster::cluster_trace(trace_jobs(p), together, fabric.links);
    rep.cluster = std::move(c);
    return RunOutput{to_json(rep), table(exp, *rep.cluster, rep.simulator.wall_time_s), trace};
  }

 private:
  // Every job run alone and its DCN use placed on the fabric: timeline jobs
  // first[j] .. first[j + 1] are job j's (one for a step, one per decode
  // replica for a serving fleet), owner[t] the job of timeline job t.
  struct Placed {
    std::vector<RunOutput> runs;
    std::vector<std::optional<cluster::ServingJob>> serving;
    std::vector<cluster::TimelineJob> timeline;
    std::vector<std::size_t> owner, first;
    std::vector<std::uint32_t> phases;
  };
  Placed place_jobs(const cluster::Fabric& fabric) const {
    Placed p;
    for (std::size_t j = 0; j < spec_.jobs.size(); ++j) {
      const cluster::Job& job = spec_.jobs[j];
      const std::vector<std::size_t> pods = cluster::pods_of(spec_.datacenter, job);
      p.first.push_back(p.timeline.size());
      std::vector<cluster::JobProfile> profiles;
      if (const InferenceSpec* serving = inference_spec_of(*job.experiment->workload)) {
        p.serving.push_back(cluster::serve_alone(job, *serving));
        p.runs.push_back(p.serving.back()->alone);
        profiles = p.serving.back()->queues.queues;
        std::uint32_t transfers = 0;
        for (const auto& q : profiles) transfers += static_cast<std::uint32_t>(q.phases.size());
        p.phases.push_back(transfers);
      } else {
        p.serving.emplace_back();
        p.runs.push_back(job.experiment->workload->run(*job.experiment, RunOptions{}));
        profiles.push_back(cluster::profile_of(p.runs.back().report, hosts_per_slice(*job.experiment)));
        p.phases.push_back(static_cast<std::uint32_t>(profiles.back().phases.size()));
      }
      for (const auto& profile : profiles) {
        p.timeline.push_back(place(profile, job, pods, fabric));
        p.owner.push_back(j);
      }
    }
    p.first.push_back(p.timeline.size());
    return p;
  }

  // What the trace names each timeline job's tracks and phases.
  std::vector<cluster::TraceJob> trace_jobs(const Placed& p) const {
    std::vector<cluster::TraceJob> out;
    for (std::size_t t = 0; t < p.timeline.size(); ++t) {
      const std::size_t j = p.owner[t];
      cluster::TraceJob tj;
      tj.job = j;
      tj.job_name = spec_.jobs[j].name + " (" + spec_.jobs[j].experiment->workload->kind() + ")";
      if (p.serving[j]) {
        tj.track = "KV into decode replica " + std::to_string(p.serving[j]->queues.replica[t - p.first[j]]);
        tj.phase_names = p.serving[j]->queues.request_of[t - p.first[j]];
      }
      out.push_back(std::move(tj));
    }
    return out;
  }

 private:
  cluster::ClusterSpec spec_;
};

}  // namespace

std::unique_ptr<Workload> load_cluster_workload(const sim::YamlNode& node, const Experiment& exp) {
  return std::make_unique<ClusterWorkload>(cluster::load_cluster(node, exp));
}

nlohmann::json cluster_workload_keys() { return cluster::cluster_params().describe(); }

}  // namespace workloads
