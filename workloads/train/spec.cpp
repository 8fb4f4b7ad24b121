#include "workloads/train/spec.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "workloads/experiment.h"
#include "workloads/sharding/planner.h"
#include "workloads/train/stages.h"

namespace workloads {

namespace {

// The keys of `model:`, for the documentation: `type`, then the keys of
// each type, marked with it.
nlohmann::json model_keys() {
  nlohmann::json params = nlohmann::json::array();
  params.push_back({{"name", "type"},
                    {"type", "mlp | transformer"},
                    {"unit", ""},
                    {"default", "(required)"},
                    {"description", "which model; the keys below are those of that type"}});
  for (const auto& [type, table] : {std::pair<const char*, nlohmann::json>{"mlp", models::mlp_params().describe()},
                                    {"transformer", models::transformer_params().describe()}})
    for (auto p : table["params"]) {
      p["description"] = std::string("[") + type + "] " + p["description"].get<std::string>();
      params.push_back(p);
    }
  return {{"params", params}};
}

}  // namespace

const sim::ParamTable<Precision>& precision_params() {
  static const sim::ParamTable<Precision> t = [] {
    sim::ParamTable<Precision> p("precision",
                                 "number formats: of what a step keeps (parameters and gradients, the optimizer's "
                                 "state; activations are BF16) and of the model's linear-layer matmuls");
    p.enumeration("params", &Precision::params, dtype_names(), Dtype::bf16,
                  "parameters and their gradients as stored (and as all-gathered and reduced)")
        .enumeration("optimizer", &Precision::optimizer, dtype_names(), Dtype::fp32,
                     "the optimizer's moments; float32 with bfloat16 parameters adds an FP32 master copy")
        .enumeration("matmul", &Precision::matmul, hw::number_format_names(), hw::NumberFormat::bf16,
                     "format of the linear layers' forward and input-gradient matmuls (AQT int8 training: "
                     "one-byte operands at the format's MAC rate, bf16 output); weight-gradient and attention "
                     "matmuls stay bf16; a format the chip lacks is refused (docs/calibration.md#number-formats)");
    return p;
  }();
  return t;
}

namespace {

// `remat_tensors:` as written: MaxText checkpoint names, each with a place.
void read_remat_tensors(const sim::YamlNode& n, TrainSpec& spec) {
  if (!n.is_map()) n.fail("expected a mapping of MaxText tensor names to device, remat or offload");
  n.reject_unknown_keys(checkpoint_names());
  for (const std::string& name : n.keys())
    spec.remat_tensors[name] = tensor_place_names().parse(n[name].as_string(), n[name].path());
}

}  // namespace

const sim::ParamTable<TrainSpec>& train_params() {
  static const sim::ParamTable<TrainSpec> t = [] {
    sim::ParamTable<TrainSpec> p("workload.train", "one training step of a model on the pod");
    p.custom(
         "model", {"mapping", "", "", ""}, "the model: an MLP or a decoder Transformer",
         [](const sim::YamlNode& n, TrainSpec& spec) { spec.model = models::load_model(n); }, true, model_keys)
        .integer<std::uint64_t>("global_batch", &TrainSpec::global_batch, "samples", std::nullopt,
                                sim::between(1, 1 << 24), "samples (MLP) or sequences (Transformer) per step")
        .group("parallelism", &TrainSpec::parallelism, parallelism_params())
        .group("precision", &TrainSpec::precision, precision_params())
        .enumeration<Optimizer>(
            "optimizer", [](TrainSpec& s) -> Optimizer& { return s.optimizer.kind; }, optimizer_names(),
            Optimizer::adam, "the update after the step, under the precision policy")
        .then([](const sim::YamlNode&, TrainSpec& spec) {
          spec.optimizer = optimizer_cost(spec.optimizer.kind, spec.precision);
        })
        .flag("overlap", &TrainSpec::overlap, true, "gradient all-reduces run under the backward pass")
        .flag("collective_matmul", &TrainSpec::collective_matmul, false,
              "with sequence parallelism, each tensor-parallel reduce-scatter after a linear matmul and all-gather "
              "before one run as N-1 permutes interleaved with N chunks of that matmul (XLA's windowed einsum); off by "
              "default: tpusim has no size threshold (XLA windows operands of 256 MiB and more), and its one-way "
              "permutes make a communication-bound layer slower")
        .enumeration("elementwise", &TrainSpec::elementwise, elementwise_names(), Elementwise::fused,
                     "fused: elementwise ops work on data the matmul kernels hold in VMEM; unfused: each reads and "
                     "writes HBM (the pessimistic bound)")
        .enumeration("execution", &TrainSpec::execution, execution_names(), Execution::jit,
                     "jit: the step is one compiled program (jax.jit); eager: every op is dispatched from the host "
                     "one at a time (JAX without jit): each kernel also waits for eager_dispatch of host time, and "
                     "no elementwise op is fused")
        // ASSUMPTION: an eager op is one call from Python into the runtime,
        // like a jitted call timed from Python: the per-call dispatch fitted to
        // the Pallas guide's timings (docs/matmul.md#host-dispatch, 60 us).
        .real("eager_dispatch", &TrainSpec::eager_dispatch, "s", 60e-6, sim::between(0, 1),
              "execution: eager only: host time to dispatch one op")
        .enumeration(
            "remat", &TrainSpec::remat, remat_names(), Remat::none,
            "rematerialisation: none keeps every activation; full keeps each Transformer block's (MLP "
            "layer's) input and recomputes its forward inside its backward; minimal also keeps the outputs "
            "of its weight matmuls and recomputes the rest (norms, attention core, activation); offload moves each "
            "repeated layer's stash to host memory over host.pcie_bandwidth and back for its backward; MaxText's "
            "per-tensor policies (save_qkv_proj, qkv_proj_offloaded, custom, ...) keep, recompute or offload each "
            "tensor MaxText names (docs/training.md#rematerialisation)")
        .custom("remat_tensors", {"mapping", "", "{}", ""},
                "remat: custom: where each named tensor of a repeated layer lives between its forward and its "
                "backward (decoder_layer_input, query_proj, key_proj, value_proj, qkv_proj, context, out_proj, "
                "mlpwi_0, mlpwi_1, mlpwi, mlpwo), each device, remat or offload; names not given are recomputed",
                read_remat_tensors)
        .flag("simulate_anyway", &TrainSpec::simulate_anyway, false,
              "run even when the model does not fit in HBM (result.memory.fits is then false)")
        .optional_group("input", &TrainSpec::input, input_params(),
                        "none: every replica's sequences are model.seq_len tokens")
        .integer<std::uint32_t>(
            "steps", [](TrainSpec& s) -> std::uint32_t& { return s.functional.steps; }, "steps", 10,
            sim::between(1, 1000), "functional training only: training steps to run")
        .real(
            "learning_rate", [](TrainSpec& s) -> double& { return s.functional.learning_rate; }, "", 0.1,
            sim::above(0, 100), "functional training only: SGD learning rate")
        .integer<std::uint64_t>(
            "seed", [](TrainSpec& s) -> std::uint64_t& { return s.functional.seed; }, "", 1, sim::at_least(0),
            "functional training only: the inputs, labels and initial weights")
        .allow("kind");
    return p;
  }();
  return t;
}

namespace {

// The interleaved schedule's own rules (pipeline_schedule.h): chunks of
// equal layers, a pipeline to interleave, and microbatches in groups of p.
void check_interleaving(const sim::YamlNode& par, const TrainParallelism& p, std::size_t per_stage) {
  const std::uint32_t v = p.virtual_stages;
  if (p.schedule != PipelineSchedule::interleaved) {
    if (v > 1)
      par["virtual_stages"].fail(std::to_string(v) + " virtual stages need schedule: interleaved (the schedule is " +
                                 to_string(p.schedule) + ")");
    return;
  }
  if (p.pipeline.degree == 1)
    par["schedule"].fail("the interleaved schedule needs pipeline parallelism (parallelism.pipeline)");
  if (v < 2)
    par["schedule"].fail("the interleaved schedule needs virtual_stages of 2 or more (with 1 it is schedule: 1f1b)");
  if (per_stage % v != 0)
    par["virtual_stages"].fail(std::to_string(v) + " virtual stages do not divide the " + std::to_string(per_stage) +
                               " layers of each pipeline stage; chunks must hold equal numbers of layers");
  if (p.microbatches % p.pipeline.degree != 0)
    par["microbatches"].fail(std::to_string(p.microbatches) + " microbatches are not a multiple of the " +
                             std::to_string(p.pipeline.degree) +
                             " pipeline stages, which the interleaved schedule runs them in groups of");
}

// Ring attention's own rules (ring_attention.h): a Transformer with the
// blockwise (flash) kernel, a sequence in 2N equal chunks (each chip holds
// two, so that causal masking leaves every chip the same work), and a
// gradient reduction that is an all-reduce.
void check_context(const sim::YamlNode& node, const TrainSpec& spec) {
  const TrainParallelism& p = spec.parallelism;
  const std::uint32_t n = p.context.degree;
  if (n == 1) return;
  const sim::YamlNode at = node["parallelism"]["context"];
  if (spec.model.type != "transformer")
    at.fail("context parallelism splits a Transformer's sequence; the model is an " + spec.model.type);
  if (spec.model.transformer.attention != "flash")
    at.fail(
        "context parallelism runs ring attention, a blockwise kernel: it needs model.attention: flash (the model "
        "has " +
        spec.model.transformer.attention + ")");
  // Ring attention passes whole K and V blocks around (ring_attention.h):
  // not a sliding window's band, nor latent attention's compressed keys.
  if (spec.model.transformer.sliding_window > 0)
    at.fail(
        "context parallelism runs ring attention over every key block; the model has a sliding window "
        "(model.sliding_window), which tpusim's ring attention does not model");
  if (spec.model.transformer.mla())
    at.fail(
        "context parallelism runs ring attention over K and V blocks; the model has latent attention "
        "(model.kv_lora_rank), which tpusim's ring attention does not model");
  const std::uint64_t t = spec.model.transformer.seq_len;
  if (t % (2 * std::uint64_t{n}) != 0)
    node["model"]["seq_len"].fail("seq_len " + std::to_string(t) + " does not split into 2 x " + std::to_string(n) +
                                  " = " + std::to_string(2 * n) + " equal chunks for context parallelism of " +
                                  std::to_string(n) +
                                  " (each chip holds two, so that causal masking leaves each the same work)");
  if (p.zero == 1)
    node["parallelism"]["zero"].fail(
        "zero: 1 is not supported with context parallelism (the gradients are all-reduced over data and context); "
        "use fsdp to shard the optimizer state");
}

}  // namespace

namespace {

// The remat policy's own rules: remat_tensors with remat: custom only, and
// host offload (which moves bytes over the host link) at kernel fidelity.
void check_remat(const sim::YamlNode& node, const TrainSpec& spec, const Experiment& exp) {
  if (node["remat_tensors"].present() && spec.remat != Remat::custom)
    node["remat_tensors"].fail("remat_tensors places MaxText's named tensors under remat: custom; remat is " +
                               std::string(to_string(spec.remat)));
  if (offloads_to_host(spec.remat, spec.remat_tensors) && exp.fidelity != hw::Fidelity::kernel)
    node["remat"].fail(std::string("remat: ") + to_string(spec.remat) +
                       " moves activations over the host link, modelled at kernel fidelity only; the experiment runs "
                       "at " +
                       hw::to_string(exp.fidelity) + " fidelity");
}

// SparseCore offload needs SparseCores.
void check_sparsecore(const sim::YamlNode& node, const TrainSpec& spec, const Experiment& exp) {
  if (spec.parallelism.sparsecore_offload.any() && exp.chip.sparsecore.count == 0)
    node["parallelism"]["sparsecore_offload"].fail("chip " + exp.chip.name +
                                                   " has no SparseCores (sparsecore.count is 0) to offload "
                                                   "collectives to");
}

// Expert parallelism's rules: a mixture of experts to shard, in whole
// experts per chip; tensor parallelism splits each expert's MLP width
// (TransformerConfig::expert_tensor_split), which must divide; (as
// modelled so far) no other splitting of the experts' work: sequence,
// fsdp, zero: 1 and context parallelism are refused.
void check_experts(const sim::YamlNode& node, const TrainSpec& spec) {
  const TrainParallelism& p = spec.parallelism;
  check_expert_split(node["parallelism"]["expert"], spec.model, p.expert.degree);
  if (!spec.model.moe()) return;
  const std::uint64_t width = spec.model.transformer.expert_width();
  if (width % p.tensor.degree != 0)
    node["model"][node["model"]["expert_d_ff"].present() ? "expert_d_ff" : "d_ff"].fail(
        "the experts' MLP width " + std::to_string(width) + " does not split evenly over tensor parallelism of " +
        std::to_string(p.tensor.degree) + " (each rank holds every expert's slice of it)");
  const std::pair<const char*, bool> refused[] = {
      {"sequence", p.sequence}, {"fsdp", p.fsdp.degree > 1}, {"zero", p.zero == 1}, {"context", p.context.degree > 1}};
  for (const auto& [key, on] : refused)
    if (on)
      node["parallelism"][key].fail(std::string("parallelism.") + key +
                                    " is not supported with a mixture of experts yet (model.experts); use data, "
                                    "tensor, pipeline and expert parallelism");
}

// Per-replica input lengths (input.h): a Transformer's sequences, each
// length at most seq_len, one measured length per replica; replicas that
// split their tokens further (expert and context parallelism, whose
// all-to-alls and ring blocks assume equal shares) are refused.
void check_input(const sim::YamlNode& node, const TrainSpec& spec) {
  const InputSpec& in = spec.input;
  if (!in.enabled) return;
  const sim::YamlNode at = node["input"];
  if (spec.model.type != "transformer")
    at.fail("input lengths are tokens per sequence of a Transformer; the model is an " + spec.model.type);
  const TrainParallelism& p = spec.parallelism;
  for (const auto& [key, degree] :
       {std::make_pair("expert", p.expert.degree), std::make_pair("context", p.context.degree)})
    if (degree > 1)
      node["parallelism"][key].fail(std::string("parallelism.") + key +
                                    " is not supported with per-replica input lengths yet (workload.input); use "
                                    "data, fsdp, tensor and pipeline parallelism");
  const std::uint64_t t = spec.model.transformer.seq_len;
  const auto within = [&](const sim::YamlNode& n, std::uint64_t v) {
    if (v > t)
      n.fail(std::to_string(v) + " tokens is above model.seq_len " + std::to_string(t) +
             " (the padded length every chip's memory is sized for)");
  };
  if (in.length) within(at["length"], *in.length);
  if (in.max) within(at["max"], *in.max);
  if (at["min"].present()) within(at["min"], in.min);
  if (in.median) within(at["median"], static_cast<std::uint64_t>(std::ceil(*in.median)));
  for (std::size_t r = 0; r < in.lengths.size(); ++r) within(at["lengths"][r], in.lengths[r]);
  const std::uint32_t replicas = p.data.degree * p.fsdp.degree;
  if (in.distribution == "measured" && in.lengths.size() != replicas)
    at["lengths"].fail("expected one length per data-parallel replica (data x fsdp = " + std::to_string(replicas) +
                       "), got " + std::to_string(in.lengths.size()));
}

}  // namespace

std::vector<std::uint64_t> TrainSpec::replica_lengths() const {
  const std::uint64_t t = model.type == "transformer" ? model.transformer.seq_len : 0;
  return workloads::replica_lengths(input, t, parallelism.data.degree * parallelism.fsdp.degree);
}

models::ModelConfig TrainSpec::chip_model() const {
  models::ModelConfig m = model;
  if (parallelism.context.degree > 1) m.transformer.seq_len /= parallelism.context.degree;
  m.transformer.expert_shards = parallelism.expert.degree;
  m.transformer.expert_tensor_split = true;
  return m;
}

ForwardStep TrainSpec::forward_step() const {
  return {model, parallelism, precision.matmul, execution == Execution::eager ? Elementwise::unfused : elementwise,
          collective_matmul};
}

TrainSpec load_train_spec(const sim::YamlNode& node, const Experiment& exp) {
  TrainSpec spec;
  train_params().load(node, spec);
  const sim::YamlNode gb = node["global_batch"];
  const sim::YamlNode par = node["parallelism"];
  TrainParallelism& p = spec.parallelism;
  resolve_parallel_axes(par, par.present() ? par : node, exp.mesh, p);

  const std::string shards =
      p.fsdp.degree > 1
          ? "data x fsdp parallelism of " + std::to_string(p.data.degree) + " x " + std::to_string(p.fsdp.degree)
      : p.expert.degree > 1
          ? "data x expert parallelism of " + std::to_string(p.data.degree) + " x " + std::to_string(p.expert.degree)
          : "data parallelism of " + std::to_string(p.data.degree);
  if (spec.global_batch % p.batch_shards() != 0)
    gb.fail("global_batch " + std::to_string(spec.global_batch) + " does not divide over " + shards);
  if (spec.replica_batch() % p.microbatches != 0)
    par["microbatches"].fail(std::to_string(p.microbatches) + " microbatches do not divide the per-replica batch of " +
                             std::to_string(spec.replica_batch()) + " (global_batch " +
                             std::to_string(spec.global_batch) + " / " + shards + ")");
  if (p.zero == 1 && p.fsdp.degree > 1)
    par["zero"].fail(
        "zero: 1 shards the optimizer state over the data axes, and fsdp already shards it with the "
        "parameters and gradients; use one of them");
  if (p.sequence && p.tensor.degree == 1)
    par["sequence"].fail(
        "sequence parallelism splits what tensor parallelism leaves replicated; it needs tensor "
        "parallelism (parallelism.tensor)");
  if (p.sequence && spec.model.type != "transformer")
    par["sequence"].fail("sequence parallelism splits Transformer blocks; the model is an " + spec.model.type);
  if (p.zero == 1 && p.data.degree == 1)
    par["zero"].fail("zero: 1 shards the optimizer state over data parallelism, and there is none (data is 1)");
  if (spec.precision.matmul != hw::NumberFormat::bf16)
    check_chip_format(node["precision"]["matmul"], exp.chip, spec.precision.matmul);
  check_tensor_split(node["model"], spec.model, p.tensor.degree);
  check_context(node, spec);
  check_experts(node, spec);
  check_input(node, spec);
  check_remat(node, spec, exp);
  check_sparsecore(node, spec, exp);

  models::ModelSpec micro;
  try {
    micro = models::build_model(spec.chip_model(), spec.microbatch_size());
  } catch (const std::invalid_argument& e) {
    node["model"].fail(e.what());
  } catch (const std::overflow_error& e) {
    // Sizes each in range whose product does not fit in 64 bits (a count
    // of elements or bytes, models::checked_mul): told before simulating.
    node["model"].fail(std::string(e.what()) + " (with " + std::to_string(spec.microbatch_size()) +
                       " sequences per microbatch)");
  }
  const std::size_t repeated = repeated_layers(micro);
  const std::string what =
      spec.model.type == "transformer" ? "Transformer blocks (model.layers)" : "dense layers (model.widths)";
  if (repeated % p.pipeline.degree != 0)
    par["pipeline"].fail(std::to_string(p.pipeline.degree) + " pipeline stages do not divide the " +
                         std::to_string(repeated) + " " + what + "; stages must hold equal numbers of layers");
  check_interleaving(par, p, repeated / p.pipeline.degree);
  return spec;
}

}  // namespace workloads
