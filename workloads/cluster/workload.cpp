#include "workloads/cluster/workload.h"

#include <algorithm>
#include <cmath>

#include "sim/host.h"
#include "sim/mean.h"
#include "sim/output.h"
#include "workloads/cluster/fabric.h"
#include "workloads/cluster/profile.h"
#include "workloads/cluster/spec.h"
#include "workloads/cluster/timeline.h"
#include "workloads/report.h"

namespace workloads {

namespace {

using cluster::Ps;

double seconds(Ps ps) { return double(ps) * 1e-12; }
Ps to_ps(double s) { return static_cast<Ps>(std::llround(s * 1e12)); }

// The job's profile placed on the fabric: each flow between its slices
// routed over the shared links between their pods.
cluster::TimelineJob place(const cluster::JobProfile& profile, const cluster::Job& job,
                           const std::vector<std::size_t>& pods, const cluster::Fabric& fabric) {
  cluster::TimelineJob t;
  t.start = to_ps(job.start_s);
  t.steps = job.steps;
  t.step = profile.step;
  for (const auto& p : profile.phases) {
    cluster::Phase phase{p.start, p.time, {}};
    for (const auto& f : p.flows)
      phase.flows.push_back({f.bytes, fabric.route(pods.at(std::size_t(f.from)), pods.at(std::size_t(f.to)))});
    t.phases.push_back(std::move(phase));
  }
  return t;
}

// Per step: the DCN phases' spans summed.
std::vector<double> dcn_per_step(const cluster::JobRun& run, std::uint32_t steps) {
  std::vector<double> out(steps, 0.0);
  for (const auto& p : run.phases) out.at(p.step) += seconds(p.end - p.start);
  return out;
}

ClusterSection::Job job_section(const cluster::Job& job, const RunOutput& alone_run, const cluster::JobRun& alone,
                                const cluster::JobRun& together, std::uint32_t phases) {
  ClusterSection::Job j;
  j.name = job.name;
  j.kind = job.experiment->workload->kind();
  j.slices = job.slices;
  j.start_s = job.start_s;
  j.step_time_s = alone_run.report.at("result").at("step_time_s").get<double>();
  j.dcn_phases = phases;
  const std::vector<double> dcn_alone = dcn_per_step(alone, job.steps), dcn = dcn_per_step(together, job.steps);
  std::vector<double> t_alone, t;
  for (std::uint32_t k = 0; k < job.steps; ++k) {
    const auto& [s0, e0] = alone.steps.at(k);
    const auto& [s1, e1] = together.steps.at(k);
    j.steps.push_back({seconds(s1), seconds(e1 - s1), seconds(e0 - s0), dcn[k], dcn_alone[k]});
    t_alone.push_back(seconds(e0 - s0));
    t.push_back(seconds(e1 - s1));
  }
  j.step_alone_s = sim::mean(t_alone);
  j.step_s = sim::mean(t);
  j.slowdown = j.step_alone_s > 0 ? j.step_s / j.step_alone_s : 1.0;
  j.dcn_alone_s = sim::mean(dcn_alone);
  j.dcn_s = sim::mean(dcn);
  j.report = alone_run.report;
  return j;
}

ClusterSection::Link link_section(const cluster::FabricLink& link, const cluster::LinkRun& run,
                                  const std::vector<cluster::Job>& jobs, Ps makespan) {
  ClusterSection::Link l;
  l.name = link.name;
  l.bytes_per_s = link.bytes_per_s;
  l.bytes = run.bytes();
  l.utilization = makespan > 0 ? l.bytes / (link.bytes_per_s * seconds(makespan)) : 0.0;
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (run.bytes_by_job[j] > 0) l.by_job.emplace_back(jobs[j].name, run.bytes_by_job[j]);
  for (const auto& [t, r] : run.rate) l.rate.emplace_back(seconds(t), r);
  return l;
}

std::string table(const Experiment& exp, const ClusterSection& c, double wall_s) {
  sim::Table t("tpusim: " + exp.name + " (cluster of " + std::to_string(c.jobs.size()) + " jobs on " +
               exp.chip_file.name + ")");
  for (const auto& j : c.jobs) {
    t.section("job " + j.name + " (" + j.kind + ", " + std::to_string(j.steps.size()) + " steps from " +
              sim::si(j.start_s, "s") + ")");
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

  RunOutput run(const Experiment& exp, const RunOptions&) const override {
    sim::WallTimer wall;
    const cluster::Fabric fabric = cluster::make_fabric(spec_.datacenter, exp.chip_file);
    std::vector<RunOutput> runs;
    std::vector<cluster::TimelineJob> placed;
    std::vector<std::uint32_t> phases;
    for (const cluster::Job& job : spec_.jobs) {
      runs.push_back(job.experiment->workload->run(*job.experiment, RunOptions{}));
      const cluster::JobProfile profile = cluster::profile_of(runs.back().report);
      phases.push_back(static_cast<std::uint32_t>(profile.phases.size()));
      placed.push_back(place(profile, job, cluster::pods_of(spec_.datacenter, job), fabric));
    }
    const cluster::TimelineRun together = cluster::run_timeline(fabric.links, placed);
    Report rep = report_for(exp);
    ClusterSection c;
    for (std::size_t j = 0; j < placed.size(); ++j) {
      const cluster::TimelineRun alone = cluster::run_timeline(fabric.links, {placed[j]});
      c.jobs.push_back(job_section(spec_.jobs[j], runs[j], alone.jobs[0], together.jobs[j], phases[j]));
    }
    for (std::size_t l = 0; l < fabric.links.size(); ++l)
      c.links.push_back(link_section(fabric.links[l], together.links[l], spec_.jobs, together.end));
    c.makespan_s = seconds(together.end);
    rep.result.step_time_s = c.makespan_s;
    rep.simulator = simulator_for(exp, wall.seconds(), 0);
    rep.cluster = std::move(c);
    return RunOutput{to_json(rep), table(exp, *rep.cluster, rep.simulator.wall_time_s), ""};
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
