#include "workloads/train/spec.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "workloads/experiment.h"
#include "workloads/sharding/planner.h"
#include "workloads/train/stages.h"

namespace workloads {

namespace {

const std::vector<std::string> kKeys = {"kind",      "model",         "global_batch", "parallelism",
                                        "optimizer", "overlap",       "elementwise",  "simulate_anyway",
                                        "steps",     "learning_rate", "seed"};
const std::vector<std::string> kParallelismKeys = {"data",         "tensor",   "pipeline",
                                                   "microbatches", "schedule", "sync_gradients"};

// The three parallelisms, in the order they are reported.
struct ParallelismKey {
  const char* key;
  const char* what;  // for messages
  ParallelAxes TrainParallelism::*field;
};
const ParallelismKey kParallelisms[] = {{"data", "data parallelism", &TrainParallelism::data},
                                        {"tensor", "tensor parallelism", &TrainParallelism::tensor},
                                        {"pipeline", "pipeline parallelism", &TrainParallelism::pipeline}};

std::string mesh_list(const MeshAxes& mesh) {
  std::string s;
  for (const auto& [name, size] : mesh) s += (s.empty() ? "" : ", ") + name + " " + std::to_string(size);
  return s;
}

std::vector<std::string> mesh_names(const MeshAxes& mesh) {
  std::vector<std::string> names;
  for (const auto& a : mesh) names.push_back(a.first);
  return names;
}

std::uint32_t axis_size(const MeshAxes& mesh, const std::string& name) {
  for (const auto& [n, s] : mesh)
    if (n == name) return s;
  return 0;
}

// A scalar made of digits only is a degree; anything else names axes.
bool is_degree(const sim::YamlNode& n) {
  const std::string s = n.scalar();
  return n.is_scalar() && !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Mesh axes each parallelism runs over, every axis of more than one chip
// used exactly once (so the degrees multiply to the chip count).
void load_axes(const sim::YamlNode& par, const sim::YamlNode& where, const MeshAxes& mesh, TrainParallelism& out) {
  std::map<std::string, const char*> used_by;  // axis -> parallelism
  auto take = [&](const sim::YamlNode& at, const ParallelismKey& k, const std::string& axis) {
    if (axis_size(mesh, axis) == 0) {
      std::string msg = "'" + axis + "' is not a mesh axis; the mesh has " + mesh_list(mesh);
      const std::string hint = sim::did_you_mean(axis, mesh_names(mesh));
      at.fail(msg + (hint.empty() ? "" : " (" + hint + ")"));
    }
    if (used_by.count(axis)) at.fail("mesh axis '" + axis + "' is already used by " + used_by[axis]);
    used_by[axis] = k.what;
    ParallelAxes& p = out.*k.field;
    p.axes.push_back(axis);
    p.degree *= axis_size(mesh, axis);
  };
  if (!par.present()) {  // pure data parallelism over the whole mesh
    for (const auto& [name, size] : mesh)
      if (size > 1) take(where, kParallelisms[0], name);
    return;
  }
  for (const auto& k : kParallelisms) {  // axis names first, then degrees pick among the rest
    const sim::YamlNode n = par[k.key];
    if (!n.present() || is_degree(n)) continue;
    if (n.is_sequence()) {
      if (n.size() == 0) n.fail("expected mesh axis names, got an empty list");
      for (std::size_t i = 0; i < n.size(); ++i) take(n[i], k, n[i].as_string());
    } else {
      take(n, k, n.as_string());
    }
  }
  for (const auto& k : kParallelisms) {
    const sim::YamlNode n = par[k.key];
    if (!n.present() || !is_degree(n)) continue;
    const std::uint64_t d = n.as_uint();
    if (d == 0) n.fail("a degree is at least 1");
    if (d == 1) continue;
    std::vector<std::string> fits;
    for (const auto& [name, size] : mesh)
      if (size == d && !used_by.count(name)) fits.push_back(name);
    if (fits.empty())
      n.fail("no unused mesh axis has " + std::to_string(d) + " chips (mesh: " + mesh_list(mesh) +
             "); name the axes instead, e.g. " + k.key + ": [" + mesh.front().first + "]");
    if (fits.size() > 1)
      n.fail("ambiguous: mesh axes '" + fits[0] + "' and '" + fits[1] + "' both have " + std::to_string(d) +
             " chips; name the axis instead of the degree");
    take(n, k, fits.front());
  }
  std::uint64_t chips = 1;
  for (const auto& a : mesh) chips *= a.second;
  for (const auto& [name, size] : mesh) {
    if (size == 1 || used_by.count(name)) continue;
    where.fail("data x tensor x pipeline = " + std::to_string(out.data.degree) + " x " +
               std::to_string(out.tensor.degree) + " x " + std::to_string(out.pipeline.degree) + " = " +
               std::to_string(out.data.degree * out.tensor.degree * out.pipeline.degree) + " chips, but the pod has " +
               std::to_string(chips) + ": mesh axis '" + name + "' (" + std::to_string(size) +
               " chips) is used by no parallelism");
  }
}

template <class T>
const T& pick(const sim::YamlNode& n, const std::vector<T>& table, std::string T::*name_of) {
  const std::string v = n.as_string();
  std::vector<std::string> names;
  for (const auto& e : table) {
    if (e.*name_of == v) return e;
    names.push_back(e.*name_of);
  }
  std::string msg = "'" + v + "' is not one of:";
  for (const auto& s : names) msg += " " + s;
  const std::string hint = sim::did_you_mean(v, names);
  n.fail(msg + (hint.empty() ? "" : " (" + hint + ")"));
}

PipelineSchedule pick_schedule(const sim::YamlNode& n) {
  const std::string v = n.as_string();
  std::vector<std::string> names;
  for (const auto& e : pipeline_schedule_names()) {
    if (v == e.name) return e.schedule;
    names.push_back(e.name);
  }
  const std::string hint = sim::did_you_mean(v, names);
  n.fail("'" + v + "' is not a pipeline schedule; expected gpipe or 1f1b" + (hint.empty() ? "" : " (" + hint + ")"));
}

// Tensor parallelism splits these model sizes (Megatron-LM: heads and the
// MLP's hidden width; the MLP model's hidden widths). The vocabulary and the
// MLP's output width are padded instead, as Megatron pads the vocabulary.
void check_tensor_split(const sim::YamlNode& model, const models::ModelConfig& cfg, std::uint32_t tp) {
  if (tp == 1) return;
  std::vector<std::pair<sim::YamlNode, std::uint64_t>> split;
  if (cfg.type == "transformer") {
    split = {{model["heads"], cfg.transformer.heads}, {model["d_ff"], cfg.transformer.d_ff}};
  } else {
    for (std::size_t i = 1; i + 1 < cfg.mlp.widths.size(); ++i)
      split.push_back({model["widths"][i], cfg.mlp.widths[i]});
  }
  for (const auto& [node, size] : split)
    if (size % tp != 0)
      node.fail(std::to_string(size) + " does not split evenly over tensor parallelism of " + std::to_string(tp));
}

}  // namespace

TrainSpec load_train_spec(const sim::YamlNode& node, const Experiment& exp) {
  node.reject_unknown_keys(kKeys);
  TrainSpec spec;
  spec.model = models::load_model(node["model"]);

  const sim::YamlNode gb = node["global_batch"];
  if (!gb.present()) gb.fail("missing required key (samples or sequences per step, e.g. 256)");
  spec.global_batch = gb.as_uint();
  if (spec.global_batch < 1 || spec.global_batch > (1u << 24))
    gb.fail("expected an integer between 1 and 16777216, got " + gb.scalar());

  const sim::YamlNode par = node["parallelism"];
  if (par.present()) {
    if (!par.is_map()) par.fail("expected a mapping, e.g. {data: data, tensor: model, pipeline: pipe}");
    par.reject_unknown_keys(kParallelismKeys);
  }
  TrainParallelism& p = spec.parallelism;
  load_axes(par, par.present() ? par : node, exp.mesh, p);
  if (par.present() && par["microbatches"].present()) {
    const sim::YamlNode mb = par["microbatches"];
    const std::uint64_t m = mb.as_uint();
    if (m < 1 || m > 65536) mb.fail("expected an integer between 1 and 65536, got " + mb.scalar());
    p.microbatches = static_cast<std::uint32_t>(m);
  }
  if (par.present() && par["schedule"].present()) p.schedule = pick_schedule(par["schedule"]);
  if (par.present() && par["sync_gradients"].present()) p.sync_gradients = par["sync_gradients"].as_bool();
  if (node["optimizer"].present()) {
    spec.optimizer = pick(node["optimizer"], optimizer_costs(), &OptimizerCost::name);
  } else {
    spec.optimizer = optimizer_costs().front();
  }
  if (node["overlap"].present()) spec.overlap = node["overlap"].as_bool();
  if (node["elementwise"].present()) {
    static const std::vector<std::pair<std::string, bool>> kElementwise = {{"fused", true}, {"unfused", false}};
    const std::string v = node["elementwise"].as_string();
    auto it = std::find_if(kElementwise.begin(), kElementwise.end(), [&](const auto& e) { return e.first == v; });
    if (it == kElementwise.end()) node["elementwise"].fail("'" + v + "' is not one of: fused unfused");
    spec.fuse_elementwise = it->second;
  }
  if (node["simulate_anyway"].present()) spec.simulate_anyway = node["simulate_anyway"].as_bool();

  if (spec.global_batch % p.data.degree != 0)
    gb.fail("global_batch " + std::to_string(spec.global_batch) + " does not divide over data parallelism of " +
            std::to_string(p.data.degree));
  if (spec.replica_batch() % p.microbatches != 0)
    par["microbatches"].fail(std::to_string(p.microbatches) + " microbatches do not divide the per-replica batch of " +
                             std::to_string(spec.replica_batch()) + " (global_batch " +
                             std::to_string(spec.global_batch) + " / data parallelism " +
                             std::to_string(p.data.degree) + ")");
  check_tensor_split(node["model"], spec.model, p.tensor.degree);

  models::ModelSpec micro;
  try {
    micro = models::build_model(spec.model, spec.microbatch_size());
  } catch (const std::invalid_argument& e) {
    node["model"].fail(e.what());
  }
  const std::size_t repeated = repeated_layers(micro);
  if (repeated % p.pipeline.degree != 0) {
    const std::string what =
        spec.model.type == "transformer" ? "Transformer blocks (model.layers)" : "dense layers (model.widths)";
    par["pipeline"].fail(std::to_string(p.pipeline.degree) + " pipeline stages do not divide the " +
                         std::to_string(repeated) + " " + what + "; stages must hold equal numbers of layers");
  }
  return spec;
}

}  // namespace workloads
