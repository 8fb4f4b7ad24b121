#include "workloads/cluster/spec.h"

#include <algorithm>
#include <map>
#include <set>

#include "sim/error.h"
#include "sim/text.h"
#include "sim/units.h"
#include "workloads/inference/workload.h"

namespace workloads::cluster {

namespace {

// The kinds whose report is a step with its collectives' times (the
// timeline replays those steps), and serving with a request stream (its KV
// transfers, docs/cluster.md#serving-jobs).
const std::vector<std::string>& job_kinds() {
  static const std::vector<std::string> kinds = {"train", "maxtext",        "collective",
                                                 "hlo",   "sharded_matmul", "inference"};
  return kinds;
}

const sim::ParamTable<PodOfSlices>& pod_of_slices_params() {
  static const sim::ParamTable<PodOfSlices> t = [] {
    sim::ParamTable<PodOfSlices> p("pod", "a pod of the data center: slices of one shape behind one uplink");
    p.text("name", &PodOfSlices::name, std::nullopt, "names the pod in the report")
        .informational("names the pod")
        .list("slice", &PodOfSlices::slice, sim::integer_item<std::uint32_t>("chips", sim::between(1, 65536)),
              {1, 3, false}, nullptr, "the shape of each slice (a job's pod.slice shape)")
        .list("slices", &PodOfSlices::slices, sim::text_item(), {1, 4096, false}, nullptr,
              "the slices' names, unique in the data center; jobs are placed on them")
        .real("uplink_bandwidth", &PodOfSlices::uplink_bandwidth, "B/s",
              "its hosts' NICs together over oversubscription", sim::positive(),
              "bytes/s each way between the pod and the fabric's core")
        .real("oversubscription", &PodOfSlices::oversubscription, "", 1.0, sim::at_least(1.0),
              "the pod's hosts' NIC bandwidth over its uplink (when uplink_bandwidth is not given); 1: "
              "non-blocking. ASSUMPTION: no TPU data-center figure is published (docs/reference/datacenter.md)");
    return p;
  }();
  return t;
}

const sim::ParamTable<Job>& job_params() {
  static const sim::ParamTable<Job> t = [] {
    sim::ParamTable<Job> p("job", "one experiment placed on named slices");
    p.text("name", &Job::name, std::nullopt, "names the job in the report")
        .informational("names the job")
        .custom(
            "experiment", {"experiment file name or mapping", "", "", ""},
            "the job: an experiment file (e.g. train-dp-v4, looked up in experiments/) or an inline experiment "
            "mapping; kinds train, maxtext, collective, hlo, sharded_matmul, and inference with a request stream",
            [](const sim::YamlNode& n, Job&) {
              if (!n.is_scalar() && !n.is_map())
                n.fail("expected an experiment file name or mapping, got " + sim::describe_yaml(n.raw()));
            },
            true)
        .list("slices", &Job::slices, sim::text_item(), {1, 4096, false}, nullptr,
              "the data center's slices it runs on, in the order of its pod's slices")
        .real("start", &Job::start_s, "s", 0.0, sim::at_least(0.0), "when its first step starts")
        .integer<std::uint32_t>("steps", &Job::steps, "", 1, sim::between(1, 100000), "steps it runs, back to back");
    return p;
  }();
  return t;
}

void load_pods(const sim::YamlNode& node, DataCenter& dc) {
  if (!node.is_sequence() || node.size() == 0)
    node.fail("expected a list of pods {name, slice, slices, ...}, got " + sim::describe_yaml(node.raw()));
  std::map<std::string, std::size_t> pod_names;
  std::map<std::string, std::string> slice_pod;
  for (std::size_t i = 0; i < node.size(); ++i) {
    PodOfSlices pod;
    pod_of_slices_params().load(node[i], pod);
    if (!pod_names.emplace(pod.name, i).second) node[i]["name"].fail("pod '" + pod.name + "' is named twice");
    for (std::size_t k = 0; k < pod.slices.size(); ++k) {
      const auto [it, fresh] = slice_pod.emplace(pod.slices[k], pod.name);
      if (!fresh) node[i]["slices"][k].fail("slice '" + pod.slices[k] + "' is already a slice of pod " + it->second);
    }
    dc.pods.push_back(std::move(pod));
  }
}

const sim::ParamTable<DataCenter>& datacenter_params() {
  static const sim::ParamTable<DataCenter> t = [] {
    sim::ParamTable<DataCenter> p("datacenter", "TPU pods joined by the data-center network's core");
    p.custom("pods", {"list of mappings", "", "", ""}, "the pods and their slices", load_pods, true,
             [] { return pod_of_slices_params().describe(); })
        .real("core_bandwidth", &DataCenter::core_bandwidth, "B/s", "the core never binds", sim::positive(),
              "bytes/s the core carries between pods, every pod's traffic together");
    return p;
  }();
  return t;
}

// The job's experiment, from a file or inline.
std::shared_ptr<const Experiment> load_job_experiment(const sim::YamlNode& ref, const Experiment& cluster,
                                                      const std::string& job) {
  auto e = std::make_shared<Experiment>(
      ref.is_map() ? load_experiment_node(ref, cluster.config_path)
                   : load_experiment(resolve_named_file(ref, cluster.config_path, "experiments", "experiment")));
  const std::string kind = e->workload->kind();
  if (std::find(job_kinds().begin(), job_kinds().end(), kind) == job_kinds().end())
    ref.fail("a job of kind " + kind +
             " cannot run in a cluster: its report is not a step or a request stream (kinds: train, maxtext, "
             "collective, hlo, sharded_matmul, inference)");
  const InferenceSpec* serving = inference_spec_of(*e->workload);
  if (serving && serving->requests.count == 0)
    ref.fail("a serving job in a cluster serves a request stream: give its workload.requests");
  if (e->chip_file.name != cluster.chip_file.name)
    ref.fail("the job's chip is " + e->chip_file.name + ", the data center's " + cluster.chip_file.name);
  if (ref.is_map()) e->name = job;
  return e;
}

// Names, then slices: each known, none taken twice, as many and of the
// shape the job's pod has.
void check_placement(const sim::YamlNode& node, const ClusterSpec& spec) {
  std::vector<std::string> known;
  std::map<std::string, std::size_t> pod_of;
  for (std::size_t p = 0; p < spec.datacenter.pods.size(); ++p)
    for (const auto& s : spec.datacenter.pods[p].slices) {
      known.push_back(s);
      pod_of[s] = p;
    }
  std::map<std::string, std::string> taken;  // slice -> job
  std::set<std::string> names;
  for (std::size_t j = 0; j < spec.jobs.size(); ++j) {
    const Job& job = spec.jobs[j];
    const sim::YamlNode at = node[j];
    if (!names.insert(job.name).second) at["name"].fail("job '" + job.name + "' is named twice");
    for (std::size_t k = 0; k < job.slices.size(); ++k) {
      const std::string& s = job.slices[k];
      if (!pod_of.count(s)) {
        const std::string hint = sim::did_you_mean(s, known);
        at["slices"][k].fail("no slice '" + s + "' in the data center" + (hint.empty() ? "" : "; " + hint));
      }
      const auto [it, fresh] = taken.emplace(s, job.name);
      if (!fresh)
        at["slices"][k].fail("slice '" + s + "' is " +
                             (it->second == job.name ? "given twice" : "job " + it->second + "'s") +
                             ": two jobs never share a slice's chips");
      const auto& shape = spec.datacenter.pods[pod_of[s]].slice;
      if (job.experiment->pod.shape != shape)
        at["slices"][k].fail("slice '" + s + "' is " + sim::shape_text(shape) + " chips, but the job's slices are " +
                             sim::shape_text(job.experiment->pod.shape));
    }
    if (job.slices.size() != job.experiment->pod.slices)
      at["slices"].fail("the job's pod is " + std::to_string(job.experiment->pod.slices) + " slice" +
                        (job.experiment->pod.slices == 1 ? "" : "s") + ", but it is placed on " +
                        std::to_string(job.slices.size()));
  }
}

void load_jobs(const sim::YamlNode& node, ClusterSpec& spec, const Experiment& cluster) {
  if (!node.is_sequence() || node.size() == 0)
    node.fail("expected a list of jobs {name, experiment, slices, ...}, got " + sim::describe_yaml(node.raw()));
  for (std::size_t j = 0; j < node.size(); ++j) {
    Job job;
    job_params().load(node[j], job);
    job.experiment = load_job_experiment(node[j]["experiment"], cluster, job.name);
    if (inference_spec_of(*job.experiment->workload) && job.steps != 1)
      node[j]["steps"].fail("a serving job runs its request stream once (workload.requests.count): leave steps out");
    spec.jobs.push_back(std::move(job));
  }
  check_placement(node, spec);
}

}  // namespace

const sim::ParamTable<ClusterSpec>& cluster_params() {
  static const sim::ParamTable<ClusterSpec> t = [] {
    sim::ParamTable<ClusterSpec> p("cluster", "jobs sharing a data center's network");
    p.group("datacenter", &ClusterSpec::datacenter, datacenter_params())
        .custom(
            "jobs", {"list of mappings", "", "", ""},
            "the jobs: {name, experiment, slices, start, steps}, each on slices of its own",
            [](const sim::YamlNode& n, ClusterSpec&) {
              if (!n.is_sequence()) n.fail("expected a list of jobs, got " + sim::describe_yaml(n.raw()));
            },
            true, [] { return job_params().describe(); })
        .allow("kind");
    return p;
  }();
  return t;
}

ClusterSpec load_cluster(const sim::YamlNode& node, const Experiment& exp) {
  if (exp.pod.chips() != 1 || exp.pod.slices != 1)
    node.fail(
        "a cluster's slices are its datacenter.pods and each job names its own pod: leave the experiment's "
        "pod out");
  ClusterSpec spec;
  cluster_params().load(node, spec);
  for (std::size_t p = 0; p < spec.datacenter.pods.size(); ++p)
    if (!spec.datacenter.pods[p].uplink_bandwidth && exp.chip_file.host.nic_bandwidth <= 0)
      node["datacenter"]["pods"][p].fail("give uplink_bandwidth: chip " + exp.chip_file.name +
                                         " has no host.nic_bandwidth to derive it from");
  load_jobs(node["jobs"], spec, exp);
  return spec;
}

std::vector<std::size_t> pods_of(const DataCenter& dc, const Job& job) {
  std::vector<std::size_t> out;
  for (const auto& s : job.slices)
    for (std::size_t p = 0; p < dc.pods.size(); ++p)
      if (std::find(dc.pods[p].slices.begin(), dc.pods[p].slices.end(), s) != dc.pods[p].slices.end()) out.push_back(p);
  return out;
}

}  // namespace workloads::cluster
