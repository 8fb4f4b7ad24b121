#include "plan/spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "hw/chip_config.h"
#include "models/model_config.h"
#include "workloads/experiment.h"
#include "workloads/maxtext/spec.h"
#include "workloads/train/remat_policy.h"

namespace plan {

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kMaxChips = 65536;

// MaxText's model files (configs/maxtext/models/<name>.yml), as kind:
// maxtext looks them up from the plan's folder.
std::vector<std::string> maxtext_models(const std::string& plan_path) {
  std::vector<std::string> names;
  for (const auto& d : workloads::config_search_dirs(plan_path, "maxtext/models")) {
    std::error_code ec;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".yml") names.push_back(it->path().stem().string());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

void load_model(const sim::YamlNode& n, PlanSpec& spec) {
  if (n.is_scalar()) {
    const std::string name = n.as_string();
    const std::vector<std::string> known = maxtext_models(spec.path);
    if (!std::binary_search(known.begin(), known.end(), name)) {
      const std::string hint = sim::did_you_mean(name, known);
      n.fail("unknown MaxText model_name '" + name + "'" + (hint.empty() ? "" : "; " + hint) +
             " (configs/maxtext/models/; or give a tpusim model mapping {type: transformer, ...})");
    }
    spec.maxtext_model = name;
    return;
  }
  if (!n.is_map()) n.fail("expected a MaxText model_name or a model mapping {type: transformer, ...}");
  const models::ModelConfig cfg = models::load_model(n);  // located errors, as kind: train gives them
  if (cfg.type != "transformer") n["type"].fail("the planner plans Transformers (it splits sequences and heads)");
  spec.model_yaml = sim::flow_yaml(n.raw());
  if (spec.seq_len == 0) spec.seq_len = cfg.transformer.seq_len;
}

void load_chip(const sim::YamlNode& n, PlanSpec& spec) {
  spec.chip_file = workloads::resolve_named_file(n, spec.path, "chips", "chip");
  const hw::ChipConfig chip = hw::load_chip(sim::YamlNode::load_file(spec.chip_file));
  if (chip.devices > 1)
    n.fail(chip.name + " has " + std::to_string(chip.devices) +
           " JAX devices per chip; the planner counts one device per chip (v4, v5e, v5p, v6e)");
  spec.chip = n.as_string();
}

// One slice's mapping, or {slices, slice: mapping} (the planner places the
// slices' mesh axis itself, so a plan's pod gives no dcn_axes).
void load_pod(const sim::YamlNode& n, PlanSpec& spec) {
  if (!n.is_map()) n.fail("expected a pod mapping {topology, shape, wraparound} (tpusim explain pod)");
  workloads::PodSpec pod;
  if (n["slices"].present() || n["slice"].present()) {
    const sim::YamlNode slice = n["slice"];
    if (!slice.present() || !slice.is_map()) slice.fail("expected the mapping every slice is {topology, shape, ...}");
    if (n["dcn_axes"].present()) n["dcn_axes"].fail("the planner chooses the axis across the slices; leave it out");
    workloads::pod_params().load(slice, pod);
    workloads::multislice_params().load(n, pod);
    spec.pod_yaml = sim::flow_yaml(slice.raw());
    spec.slices = pod.slices;
    if (n["dcn"].present()) spec.dcn_yaml = sim::flow_yaml(n["dcn"].raw());
  } else {
    workloads::pod_params().load(n, pod);
    spec.pod_yaml = sim::flow_yaml(n.raw());
  }
  spec.chips = pod.slice_chips();
}

void load_axes(const sim::YamlNode& n, PlanSpec& spec) {
  const YAML::Node& raw = n.raw();
  if (!n.is_sequence() || raw.size() == 0) n.fail("expected a non-empty list of parallelisms, e.g. [data, fsdp]");
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const Axis a = axis_names().parse(n[i]);
    if (std::find(spec.axes.begin(), spec.axes.end(), a) != spec.axes.end()) n[i].fail("listed twice");
    spec.axes.push_back(a);
  }
}

void load_fixed(const sim::YamlNode& n, PlanSpec& spec) {
  if (!n.is_map()) n.fail("expected a mapping of parallelism to degree, e.g. {tensor: 4}");
  for (const auto& key : n.keys()) {
    const sim::YamlNode v = n[key];
    const auto a = axis_names().find(key);
    if (!a) v.fail(axis_names().unknown(key));
    spec.fixed[*a] = sim::read_integer_as<std::uint32_t>(v, sim::between(1, kMaxChips), "chips");
  }
}

void load_remat(const sim::YamlNode& n, PlanSpec& spec) {
  if (!n.is_sequence() || n.size() == 0) n.fail("expected a non-empty list of remat policies");
  for (std::size_t i = 0; i < n.size(); ++i) {
    // The model's kind says which words: tpusim's remat (kind: train) or
    // MaxText's remat_policy (kind: maxtext).
    const std::string word = spec.is_maxtext()
                                 ? workloads::remat_policy_names().name(workloads::remat_policy_names().parse(n[i]))
                                 : workloads::remat_names().name(workloads::remat_names().parse(n[i]));
    // MaxText's custom policy takes its per-tensor keys from `maxtext:`;
    // kind: train's needs remat_tensors, which a plan does not give.
    if (word == std::string("custom") && !spec.is_maxtext())
      n[i].fail("a custom policy needs its per-tensor places; name a fixed policy");
    if (std::find(spec.remat.begin(), spec.remat.end(), word) != spec.remat.end()) n[i].fail("listed twice");
    spec.remat.push_back(word);
  }
}

void load_microbatches(const sim::YamlNode& n, PlanSpec& spec) {
  if (!n.is_sequence() || n.size() == 0) n.fail("expected a non-empty list of microbatch counts, e.g. [1, 2, 4]");
  for (std::size_t i = 0; i < n.size(); ++i)
    spec.microbatches.push_back(sim::read_integer_as<std::uint32_t>(n[i], sim::between(1, 65536), ""));
}

// The MaxText keys a planner's candidate sets itself.
bool planner_key(const std::string& key) {
  static const char* const kOwn[] = {"model_name", "per_device_batch_size", "max_target_length",
                                     "gradient_accumulation_steps", "remat_policy"};
  for (const char* k : kOwn)
    if (key == k) return true;
  return key.rfind("ici_", 0) == 0 || key.rfind("dcn_", 0) == 0;
}

void load_maxtext_keys(const sim::YamlNode& n, PlanSpec& spec) {
  if (!spec.is_maxtext()) n.fail("MaxText keys need a MaxText model (model: <model_name>)");
  if (!n.is_map()) n.fail("expected a mapping of MaxText keys, e.g. {weight_dtype: float32}");
  for (const auto& key : n.keys())
    if (planner_key(key))
      n[key].fail("the planner chooses " + key + " for each candidate; leave it out (fixed: fixes a mesh degree)");
  spec.maxtext_keys = sim::flow_yaml(n.raw());
}

// What needs several keys: the chips, the batch and the sequence.
void check(const sim::YamlNode& root, PlanSpec& spec) {
  if (spec.pod_yaml.empty() && spec.chips == 0) root.fail("give the chips: chips: N, or pod: {topology, shape}");
  if (!spec.pod_yaml.empty() && root["chips"].present() && spec.chips != root["chips"].as_uint())
    root["chips"].fail("the pod has " + std::to_string(spec.chips) + " chips; give chips or pod, not both");
  if (root["slices"].present() && root["pod"]["slices"].present())
    root["slices"].fail("the pod gives its slices; give slices or pod.slices, not both");
  if (spec.slices > 1 && !spec.is_maxtext())
    (root["slices"].present() ? root["slices"] : root["pod"]["slices"])
        .fail("several slices need a MaxText model (its dcn_data or dcn_fsdp parallelism across them)");
  if (spec.is_maxtext() && spec.seq_len == 0) root.fail("missing required key 'seq_len' (MaxText's max_target_length)");
  if ((spec.global_batch == 0) == (spec.tokens == 0))
    root.fail("give the batch once: global_batch (sequences per step) or tokens (per step)");
  if (spec.tokens && spec.tokens % spec.seq_len != 0)
    root["tokens"].fail(std::to_string(spec.tokens) + " tokens are not whole sequences of " +
                        std::to_string(spec.seq_len));
  for (const auto& [axis, degree] : spec.fixed)
    if (spec.chips % degree != 0)
      root["fixed"][to_string(axis)].fail("degree " + std::to_string(degree) + " does not divide the " +
                                          std::to_string(spec.chips) + " chips");
}

}  // namespace

const sim::EnumNames<Axis>& axis_names() {
  static const sim::EnumNames<Axis> names(
      "parallelism", {{Axis::data, "data", "data parallelism: replicas, gradients all-reduced"},
                      {Axis::fsdp, "fsdp", "fully sharded data parallelism (ZeRO-3)"},
                      {Axis::tensor, "tensor", "tensor parallelism (Megatron), with sequence parallelism"},
                      {Axis::pipeline, "pipeline", "pipeline stages, 1F1B"},
                      {Axis::context, "context", "context parallelism (ring attention)"},
                      {Axis::expert, "expert", "expert parallelism (models with experts)"}});
  return names;
}

const char* to_string(Axis a) { return axis_names().name(a); }

const sim::EnumNames<Objective>& objective_names() {
  static const sim::EnumNames<Objective> names(
      "objective", {{Objective::step_time, "step_time", "the shortest simulated step"},
                    {Objective::tokens_per_s_per_chip, "tokens_per_s_per_chip", "the most tokens per second and chip"},
                    {Objective::mfu, "mfu", "the highest model FLOPs utilization"}});
  return names;
}

const char* to_string(Objective o) { return objective_names().name(o); }

const sim::ParamTable<PlanSpec>& plan_params() {
  static const sim::ParamTable<PlanSpec> t = [] {
    sim::ParamTable<PlanSpec> p("plan", "which parallelism, remat and microbatches train a model fastest on a pod");
    p.text("name", &PlanSpec::name, "", "names the plan and its output folder runs/<name>/ (default: the file name)")
        .informational("names the plan; no simulated figure depends on it")
        .custom("model", {"string or mapping", "", "", ""},
                "a MaxText model_name (configs/maxtext/models/, run as kind: maxtext) or a tpusim Transformer "
                "mapping (run as kind: train)",
                load_model, true)
        .integer<std::uint64_t>("seq_len", &PlanSpec::seq_len, "tokens", 0, sim::between(0, 1 << 24),
                                "tokens per sequence (0: the model mapping's seq_len; required for MaxText)")
        .custom("chip", {"string", "", "", ""}, "the chip, as an experiment's chip: names it", load_chip, true)
        .integer<std::uint32_t>("chips", &PlanSpec::chips, "chips", 0, sim::between(0, kMaxChips),
                                "chips of one slice (the planner lays them out as the chip's slices are)")
        .integer<std::uint32_t>("slices", &PlanSpec::slices, "slices", 1, sim::between(1, 64),
                                "slices joined by DCN (MaxText models; each candidate takes data or fsdp across them)")
        .custom("pod", {"mapping", "", "from chips", ""},
                "the slice itself, as an experiment's pod: mapping, or {slices: N, slice: mapping}", load_pod)
        .integer<std::uint64_t>("global_batch", &PlanSpec::global_batch, "sequences", 0, sim::between(0, 1 << 24),
                                "sequences per step")
        .integer<std::uint64_t>("tokens", &PlanSpec::tokens, "tokens", 0, sim::between(0, 1ull << 40),
                                "tokens per step, instead of global_batch")
        .custom("axes", {"list of parallelism", "", "all the model allows", ""},
                "the parallelisms candidates may use: data, fsdp, tensor, pipeline, context, expert", load_axes)
        .custom("fixed", {"mapping of parallelism to degree", "", "nothing", ""},
                "degrees every candidate keeps, e.g. {tensor: 4}", load_fixed)
        .integer<std::uint32_t>("max_axis_splits", &PlanSpec::max_axis_splits, "", 0, sim::between(0, 8),
                                "cuts of physical axes a mesh may make, a parallelism taking a factor of one (16 = "
                                "4 x 4; MaxText's allow_split_physical_axes): 0 whole axes only, 1 one axis in two "
                                "(such a candidate simulates every chip: minutes on 256 chips)")
        .custom("remat",
                {"list of policies", "",
                 "none, minimal, full, offload (MaxText: full, minimal, "
                 "minimal_offloaded)",
                 ""},
                "the remat policies tried: tpusim's remat words, or MaxText's remat_policy for a MaxText model",
                load_remat)
        .custom("microbatches", {"list of integer", "", "1, 2, 4, 8", ""},
                "microbatch counts tried per replica; with a pipeline of p stages, p times each", load_microbatches)
        .real("max_memory_fraction", &PlanSpec::max_memory_fraction, "", 1.0, sim::above(0, 1),
              "share of HBM a candidate may fill")
        .enumeration("objective", &PlanSpec::objective, objective_names(), Objective::step_time,
                     "what ranks the candidates (at a fixed model, batch and chip count the three agree)")
        .integer<std::uint32_t>("top", &PlanSpec::top, "", 3, sim::between(1, 100),
                                "best candidates written as runnable experiment files best-<k>.yaml")
        .text("xla_flags", &PlanSpec::xla_flags, "",
              "the libtpu flags a MaxText model's candidates run with (kind: maxtext's xla_flags)")
        .custom("maxtext", {"mapping", "", "none", ""},
                "further MaxText keys every candidate of a MaxText model runs with (not the mesh, batch, sequence, "
                "remat_policy or accumulation, which the planner chooses)",
                load_maxtext_keys)
        .integer<std::uint32_t>("max_simulations", &PlanSpec::max_simulations, "", 0, sim::between(0, 100000),
                                "simulate at most this many candidates, lowest bound first (0: no cap)")
        .real("candidate_wall_time", &PlanSpec::candidate_wall_time, "s", 0, sim::between(0, 1e7),
              "host seconds each candidate's simulation may take, its limits.max_wall_time (0: the run's default); "
              "one that takes longer is reported failed, with the runaway message")
        .informational("a host-time guard: it stops a simulation, it changes no simulated figure")
        .flag("exhaustive", &PlanSpec::exhaustive, false,
              "simulate every candidate that fits, with no bound pruning (the brute-force check)")
        .then(check);
    return p;
  }();
  return t;
}

namespace {

PlanSpec load_plan(const sim::YamlNode& root, const std::string& path) {
  if (!root.is_map()) root.fail("a plan file is a mapping with model, chip, chips and global_batch");
  PlanSpec spec;
  spec.path = path;
  plan_params().load(root, spec);
  if (spec.name.empty()) spec.name = fs::path(path).stem().string();
  if (spec.name.empty() || spec.name.find('/') != std::string::npos)
    root["name"].fail("a plan name is a folder name under runs/; no '/' and not empty");
  return spec;
}

}  // namespace

PlanSpec load_plan_text(const std::string& text, const std::string& origin) {
  return load_plan(sim::YamlNode::load_string(text, origin), origin);
}

PlanSpec load_plan_file(const std::string& path) { return load_plan(sim::YamlNode::load_file(path), path); }

}  // namespace plan
