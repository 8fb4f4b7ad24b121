#include "plan/experiment_text.h"

#include <yaml-cpp/yaml.h>

#include <sstream>

#include "sim/yaml_node.h"

namespace plan {

namespace {

// MaxText's mesh key of each parallelism (workloads/maxtext/mesh.h).
const char* maxtext_key(Axis a) {
  switch (a) {
    case Axis::data: return "ici_data_parallelism";
    case Axis::fsdp: return "ici_fsdp_parallelism";
    case Axis::tensor: return "ici_tensor_parallelism";
    case Axis::pipeline: return "ici_pipeline_parallelism";
    case Axis::context: return "ici_context_parallelism";
    case Axis::expert: return "ici_expert_parallelism";
  }
  return "";
}

// The plan's model mapping with the plan's seq_len.
std::string model_text(const PlanSpec& spec) {
  YAML::Node model = YAML::Load(spec.model_yaml);
  model["seq_len"] = spec.seq_len;
  return sim::flow_yaml(model);
}

// per_device_batch_size: the batch per chip and microbatch, as MaxText
// multiplies it back (int(chips x it) x gradient_accumulation_steps).
std::string per_device_batch(const PlanSpec& spec, std::uint32_t m) {
  std::ostringstream s;
  s.precision(17);
  s << double(spec.batch()) / double(spec.total_chips()) / double(m);
  return s.str();
}

void train_workload(std::ostringstream& y, const PlanSpec& spec, const Family& f, const Candidate& c) {
  y << "workload:\n  kind: train\n  model: " << model_text(spec) << "\n  global_batch: " << spec.batch()
    << "\n  parallelism: {";
  for (const MeshPart& m : f.mesh) y << to_string(m.axis) << ": " << to_string(m.axis) << ", ";
  if (f.degree(Axis::tensor) > 1) y << "sequence: true, ";
  y << "microbatches: " << c.microbatches << "}\n  remat: " << c.remat << "\n";
}

void maxtext_workload(std::ostringstream& y, const PlanSpec& spec, const Family& f, const Candidate& c) {
  y << "workload:\n  kind: maxtext\n  config:\n    model_name: " << spec.maxtext_model
    << "\n    max_target_length: " << spec.seq_len
    << "\n    per_device_batch_size: " << per_device_batch(spec, c.microbatches)
    << "\n    gradient_accumulation_steps: " << c.microbatches << "\n    remat_policy: " << c.remat << "\n";
  for (std::size_t i = 0; i < kAxes; ++i)
    y << "    " << maxtext_key(static_cast<Axis>(i)) << ": " << f.degree(static_cast<Axis>(i)) << "\n";
  // Across slices: the family's axis takes them all, the other is 1 (over
  // base.yml's dcn_data_parallelism: -1; tpusim's reader takes one axis
  // across slices, docs/maxtext.md).
  if (f.slices > 1)
    for (Axis a : {Axis::data, Axis::fsdp})
      y << "    dcn_" << to_string(a) << "_parallelism: " << (a == f.dcn ? f.slices : 1) << "\n";
  const YAML::Node keys = spec.maxtext_keys.empty() ? YAML::Node() : YAML::Load(spec.maxtext_keys);
  // A mesh over part of a physical axis needs MaxText's leave (unless the
  // plan's own keys say, and then as they say).
  if (f.split && !keys["allow_split_physical_axes"]) y << "    allow_split_physical_axes: true\n";
  for (const auto& kv : keys) y << "    " << kv.first.Scalar() << ": " << sim::flow_yaml(kv.second) << "\n";
  if (!spec.xla_flags.empty()) y << "  xla_flags: " << sim::flow_yaml(YAML::Node(spec.xla_flags)) << "\n";
}

}  // namespace

std::string experiment_text(const PlanSpec& spec, const Slice& slice, const std::string& chip, const Family& f,
                            const Candidate& c) {
  std::ostringstream y;
  y << "# tpusim plan " << spec.name << ", candidate " << c.id << " (" << f.label() << ", remat " << c.remat << ", "
    << c.microbatches << " microbatch" << (c.microbatches == 1 ? "" : "es") << ")\n";
  y << "name: " << spec.name << "-" << c.id << "\nchip: " << chip << "\npod: " << slice.pod_yaml << "\n";
  if (spec.candidate_wall_time > 0) y << "limits: {max_wall_time: " << spec.candidate_wall_time << "}\n";
  if (spec.is_maxtext()) {
    maxtext_workload(y, spec, f, c);
    return y.str();
  }
  if (!f.mesh.empty()) {
    y << "mesh: {";
    for (std::size_t i = 0; i < f.mesh.size(); ++i)
      y << (i ? ", " : "") << to_string(f.mesh[i].axis) << ": " << f.mesh[i].degree;
    y << "}\n";
  }
  train_workload(y, spec, f, c);
  return y.str();
}

}  // namespace plan
