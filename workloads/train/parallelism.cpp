#include "workloads/train/parallelism.h"

#include <algorithm>
#include <string>

#include "sim/error.h"
#include "workloads/sharding/planner.h"

namespace workloads {

namespace {

// The parallelisms, in the order they are reported.
struct ParallelismKey {
  const char* key;
  const char* what;  // for messages
  ParallelAxes TrainParallelism::*field;
};
const ParallelismKey kParallelisms[] = {{"data", "data parallelism", &TrainParallelism::data},
                                        {"fsdp", "fully sharded data parallelism", &TrainParallelism::fsdp},
                                        {"tensor", "tensor parallelism", &TrainParallelism::tensor},
                                        {"pipeline", "pipeline parallelism", &TrainParallelism::pipeline},
                                        {"context", "context parallelism", &TrainParallelism::context},
                                        {"expert", "expert parallelism", &TrainParallelism::expert}};

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

}  // namespace

// `parallelism.data` (or tensor, pipeline) as written: mesh axis names, or
// (no names) a degree.
void read_parallel_axes(const sim::YamlNode& n, ParallelAxes& out) {
  out.axes.clear();
  out.degree = 1;
  if (is_degree(n)) {
    out.degree = sim::read_integer_as<std::uint32_t>(n, sim::between(1, 65536), "chips");
  } else if (n.is_sequence()) {
    if (n.size() == 0) n.fail("expected mesh axis names, got an empty list");
    for (std::size_t i = 0; i < n.size(); ++i) out.axes.push_back(n[i].as_string());
  } else {
    out.axes.push_back(n.as_string());
  }
}

// Mesh axes each parallelism runs over, every axis of more than one chip
// used exactly once (so the degrees multiply to the chip count). `out` holds
// what the table read (names, or a degree); it ends with the axes and the
// product of their sizes.
void resolve_parallel_axes(const sim::YamlNode& par, const sim::YamlNode& where, const MeshAxes& mesh,
                           TrainParallelism& out) {
  const TrainParallelism asked = out;
  std::map<std::string, const char*> used_by;  // axis -> parallelism
  for (const auto& k : kParallelisms) out.*k.field = ParallelAxes{};
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
    const ParallelAxes& a = asked.*k.field;
    for (std::size_t i = 0; i < a.axes.size(); ++i) take(n.is_sequence() ? n[i] : n, k, a.axes[i]);
  }
  for (const auto& k : kParallelisms) {
    const sim::YamlNode n = par[k.key];
    const ParallelAxes& a = asked.*k.field;
    if (!n.present() || !a.axes.empty() || a.degree == 1) continue;
    const std::uint32_t d = a.degree;
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
    const bool fsdp = out.fsdp.degree > 1, context = out.context.degree > 1, expert = out.expert.degree > 1;
    where.fail(std::string("data x ") + (fsdp ? "fsdp x " : "") + "tensor x pipeline" + (context ? " x context" : "") +
               (expert ? " x expert" : "") + " = " + std::to_string(out.data.degree) + " x " +
               (fsdp ? std::to_string(out.fsdp.degree) + " x " : "") + std::to_string(out.tensor.degree) + " x " +
               std::to_string(out.pipeline.degree) + (context ? " x " + std::to_string(out.context.degree) : "") +
               (expert ? " x " + std::to_string(out.expert.degree) : "") + " = " +
               std::to_string(out.batch_shards() * out.tensor.degree * out.pipeline.degree * out.context.degree) +
               " chips, but the pod has " + std::to_string(chips) + ": mesh axis '" + name + "' (" +
               std::to_string(size) + " chips) is used by no parallelism");
  }
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
  // Key/value heads split whole over the ranks, or each is replicated on
  // tp / kv_heads ranks (models::MatmulSpec::tp_units); anything else would
  // cut a head.
  if (cfg.type != "transformer") return;
  const std::uint64_t kv = cfg.transformer.kv();
  if (kv % tp != 0 && tp % kv != 0)
    model[model["kv_heads"].present() ? "kv_heads" : "heads"].fail(
        std::to_string(kv) + " key/value heads neither split over tensor parallelism of " + std::to_string(tp) +
        " nor replicate evenly on its ranks; use a tensor degree that divides them or that they divide");
}

namespace {

const sim::ParamTable<SparseCoreOffload>& sparsecore_offload_params() {
  static const sim::ParamTable<SparseCoreOffload> t = [] {
    sim::ParamTable<SparseCoreOffload> p(
        "sparsecore_offload",
        "weight and gradient collectives the chip's SparseCores drive instead of the TensorCore (XLA's "
        "--xla_tpu_enable_sparse_core_collective_offload_*): their own ICI queue, their reductions on the "
        "SparseCores' HBM bandwidth, not the TensorCore's vector units "
        "(docs/training.md#sparsecore-collective-offload)");
    p.flag("all_gather", &SparseCoreOffload::all_gather, false, "fsdp's and ZeRO-1's weight all-gathers")
        .flag("reduce_scatter", &SparseCoreOffload::reduce_scatter, false,
              "fsdp's and ZeRO-1's gradient reduce-scatters")
        .flag("all_reduce", &SparseCoreOffload::all_reduce, false, "the gradient all-reduces over the data axes");
    return p;
  }();
  return t;
}

}  // namespace

const sim::ParamTable<TrainParallelism>& parallelism_params() {
  static const sim::ParamTable<TrainParallelism> t = [] {
    sim::ParamTable<TrainParallelism> p("parallelism",
                                        "how the chips share the step: mesh axes for data, tensor and pipeline "
                                        "parallelism, each mesh axis of more than one chip used exactly once");
    const sim::Doc axes{"mesh axis name, list of names, or degree", "", "", "a degree between 1 and 65536"};
    sim::Doc data = axes;
    data.def = "every mesh axis the others leave (all of them without parallelism:)";
    sim::Doc other = axes;
    other.def = "1 (none)";
    p.custom("data", data, "data parallelism: replicas of the model, each on its share of the batch",
             [](const sim::YamlNode& n, TrainParallelism& out) { read_parallel_axes(n, out.data); })
        .custom("fsdp", other,
                "fully sharded data parallelism (ZeRO-3): replicas on their shares of the batch, with parameters, "
                "gradients and optimizer state sharded over these axes",
                [](const sim::YamlNode& n, TrainParallelism& out) { read_parallel_axes(n, out.fsdp); })
        .custom("tensor", other, "tensor (Megatron) parallelism: attention heads and MLP widths split",
                [](const sim::YamlNode& n, TrainParallelism& out) { read_parallel_axes(n, out.tensor); })
        .custom("pipeline", other, "pipeline parallelism: consecutive layers on consecutive stages",
                [](const sim::YamlNode& n, TrainParallelism& out) { read_parallel_axes(n, out.pipeline); })
        .custom("context", other,
                "context parallelism (ring attention): each chip holds 1/N of every sequence; key/value blocks "
                "pass around these axes, each transfer under the attention of the block before",
                [](const sim::YamlNode& n, TrainParallelism& out) { read_parallel_axes(n, out.context); })
        .custom("expert", other,
                "expert parallelism: a mixture of experts' experts sharded over these axes, which split the batch "
                "too; tokens go to their experts' chips and back by all-to-alls",
                [](const sim::YamlNode& n, TrainParallelism& out) { read_parallel_axes(n, out.expert); })
        .enumeration("expert_all_to_all", &TrainParallelism::expert_all_to_all,
                     interconnect::algorithm_names_for(interconnect::CollectiveOp::all_to_all),
                     interconnect::Algorithm::direct,
                     "the algorithm of the expert axes' dispatch and combine all-to-alls (dimension_ordered: one "
                     "phase per physical axis, the same as direct on one)")
        .integer<std::uint32_t>("microbatches", &TrainParallelism::microbatches, "", 1, sim::between(1, 65536),
                                "microbatches per replica and step (they must divide its batch)")
        .enumeration("schedule", &TrainParallelism::schedule, pipeline_schedule_names(), PipelineSchedule::one_f_one_b,
                     "the order each pipeline stage runs its microbatches in")
        .integer<std::uint32_t>("virtual_stages", &TrainParallelism::virtual_stages, "", 1, sim::between(1, 1024),
                                "interleaved schedule: chunks of layers per pipeline stage (Megatron-LM's virtual "
                                "pipeline stages); they must divide its layers")
        .flag("sync_gradients", &TrainParallelism::sync_gradients, true,
              "all-reduce the gradients over data parallelism (false: the replicas diverge, for comparisons)")
        .flag("sequence", &TrainParallelism::sequence, false,
              "Megatron sequence parallelism with the tensor parallelism: layer norms, residual adds and the "
              "activations they keep split along the sequence; all-reduces become reduce-scatter + all-gather")
        .integer<std::uint32_t>("zero", &TrainParallelism::zero, "", 0, sim::between(0, 1),
                                "ZeRO stage over the data axes: 0 replicates the optimizer state, 1 shards it "
                                "(gradients reduce-scattered, updated weights all-gathered); for ZeRO-3 use fsdp")
        .group("sparsecore_offload", &TrainParallelism::sparsecore_offload, sparsecore_offload_params());
    return p;
  }();
  return t;
}

void check_expert_split(const sim::YamlNode& expert, const models::ModelConfig& cfg, std::uint32_t ep) {
  if (!cfg.moe()) {
    if (ep > 1) expert.fail("expert parallelism shards a mixture of experts; the model has none (model.experts)");
    return;
  }
  const std::uint64_t e = cfg.transformer.experts;
  if (e % ep != 0)
    expert.fail(std::to_string(ep) + " expert-parallel chips do not divide the " + std::to_string(e) +
                " experts (each chip holds whole experts)");
}
}  // namespace workloads
