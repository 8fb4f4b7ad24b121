#include "workloads/inference/spec.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "workloads/experiment.h"

namespace workloads {

namespace {

// Sizes up to 2^24 tokens or sequences, as global_batch.
const sim::Range kTokens = sim::between(1, 1 << 24);

const sim::ParamTable<TrainParallelism>& inference_parallelism_params() {
  static const sim::ParamTable<TrainParallelism> t = [] {
    sim::ParamTable<TrainParallelism> p("parallelism",
                                        "how the chips share the batch and the model: mesh axes for data and tensor "
                                        "parallelism, each mesh axis of more than one chip used exactly once");
    const sim::Doc axes{"mesh axis name, list of names, or degree", "", "1 (none)", "a degree between 1 and 65536"};
    sim::Doc data = axes;
    data.def = "every mesh axis tensor leaves (all of them without parallelism:)";
    p.custom("data", data, "data parallelism: replicas of the model, each serving its share of the batch",
             [](const sim::YamlNode& n, TrainParallelism& out) { read_parallel_axes(n, out.data); })
        .custom("tensor", axes,
                "tensor (Megatron) parallelism: attention heads, KV heads and MLP widths split; two all-reduces "
                "of the activations per Transformer block",
                [](const sim::YamlNode& n, TrainParallelism& out) { read_parallel_axes(n, out.tensor); })
        .custom("expert", axes,
                "expert parallelism: a mixture of experts' experts sharded over these axes, which split the batch "
                "too; each block's tokens go to their experts' chips and back by all-to-alls",
                [](const sim::YamlNode& n, TrainParallelism& out) { read_parallel_axes(n, out.expert); });
    return p;
  }();
  return t;
}

const sim::ParamTable<InferenceDtypes>& dtype_params() {
  static const sim::ParamTable<InferenceDtypes> t = [] {
    sim::ParamTable<InferenceDtypes> p("dtype", "number formats of what serving keeps in HBM");
    p.enumeration("weights", &InferenceDtypes::weights, hw::number_format_names(), hw::NumberFormat::bf16,
                  "the weights as stored and read every step; an 8-bit format reads one byte per weight and runs "
                  "the linear layers' matmuls as activations says (a format the chip lacks is refused)")
        .enumeration("kv_cache", &InferenceDtypes::kv_cache, hw::number_format_names(), hw::NumberFormat::bf16,
                     "the KV cache's elements; an 8-bit format halves its bytes and runs the attention matmuls "
                     "that read it as activations says")
        .enumeration("activations", &InferenceDtypes::activations, activations_names(), Activations::quantized,
                     "what multiplies 8-bit weights and KV cache: quantized (both operands in the 8-bit format, "
                     "its MAC rate) or bf16 (weight-only: the 8-bit operand converted, the bf16 rate)");
    return p;
  }();
  return t;
}

// The models the run builds, built once here so that a size they reject is
// a located error before anything runs.
void check_models(const sim::YamlNode& node, const InferenceSpec& spec) {
  const models::TransformerConfig& cfg = spec.model.transformer;
  try {
    models::TransformerConfig prompt = cfg;
    prompt.seq_len = spec.prompt_len;
    if (spec.prefill()) models::build_transformer_prefill(prompt, spec.replica_batch());
    if (spec.decode()) models::build_transformer_decode(cfg, spec.replica_batch(), spec.decode_context());
  } catch (const std::invalid_argument& e) {
    node["model"].fail(e.what());
  } catch (const std::overflow_error& e) {
    node["model"].fail(std::string(e.what()) + " (with " + std::to_string(spec.replica_batch()) +
                       " sequences per replica)");
  }
}

// The pools of disaggregated serving: whole model replicas on each side,
// and in a pod of several slices whole slices, so that a replica never
// spans the two pools and the KV cache crosses ICI or DCN, not both.
void check_pools(const sim::YamlNode& stream, const InferenceSpec& spec, const Experiment& exp) {
  const RequestStreamSpec& r = spec.requests;
  const sim::YamlNode at = stream["prefill_chips"];
  const std::uint64_t chips = exp.pod.devices(), replica = chips / spec.parallelism.data.degree;
  if (r.batching != Batching::continuous)
    stream["batching"].fail(
        "the decode pool of disaggregated serving (prefill_chips) batches continuously; drop "
        "batching: static or prefill_chips");
  if (r.prefill_chips >= chips)
    at.fail(std::to_string(r.prefill_chips) + " prefill chips leave none to decode: the pod has " +
            std::to_string(chips));
  if (r.prefill_chips % replica != 0)
    at.fail(std::to_string(r.prefill_chips) + " chips are not whole model replicas of " + std::to_string(replica) +
            " chips (tensor " + std::to_string(spec.parallelism.tensor.degree) + ")");
  if (exp.pod.slices == 1) return;
  const std::uint64_t slice = chips / exp.pod.slices;
  if (r.prefill_chips % slice != 0)
    at.fail(std::to_string(r.prefill_chips) + " chips are not whole slices of " + std::to_string(slice) +
            ": across slices, each pool takes whole slices and the KV cache crosses DCN");
  for (const std::string& axis : spec.parallelism.tensor.axes)
    if (std::find(exp.pod.dcn_axes.begin(), exp.pod.dcn_axes.end(), axis) != exp.pod.dcn_axes.end())
      at.fail("tensor parallelism over mesh axis '" + axis +
              "' spans slices: a model replica must sit in one slice to belong to one pool");
}

// A closed loop's clients: not with open-loop arrivals, no more clients
// than requests, every replica at least one client, and one server (the
// pools of disaggregated serving are open loop only).
void check_clients(const sim::YamlNode& stream, const InferenceSpec& spec) {
  const RequestStreamSpec& r = spec.requests;
  const sim::YamlNode at = stream["concurrency"];
  if (stream["rate"].present())
    stream["rate"].fail(
        "rate (open-loop arrivals) and concurrency (closed-loop clients, each sending when its "
        "previous request finishes) exclude each other; drop one");
  if (r.concurrency > r.count)
    at.fail(std::to_string(r.concurrency) + " clients for " + std::to_string(r.count) +
            " requests: the extra clients would send nothing; at most count");
  const std::uint64_t replicas = spec.parallelism.batch_shards();
  if (r.concurrency < replicas)
    at.fail(std::to_string(r.concurrency) + " clients for " + std::to_string(replicas) +
            " replicas (request i goes to replica i mod " + std::to_string(replicas) +
            "): each replica needs a client of its own");
  if (r.prefill_chips > 0)
    stream["prefill_chips"].fail(
        "disaggregated serving (prefill_chips) is simulated open loop only; drop "
        "concurrency or prefill_chips");
}

// Chunked prefill: continuous batching on one server, every decoding
// sequence's token inside the budget.
void check_chunked(const sim::YamlNode& stream, const InferenceSpec& spec) {
  const RequestStreamSpec& r = spec.requests;
  const sim::YamlNode at = stream["chunked_prefill"];
  if (r.batching != Batching::continuous)
    stream["batching"].fail(
        "chunked prefill mixes prompt chunks into the decode steps of continuous batching; drop "
        "batching: static or chunked_prefill");
  if (r.prefill_chips > 0)
    stream["prefill_chips"].fail(
        "disaggregated serving (prefill_chips) prefills on its own pool; drop chunked_prefill "
        "or prefill_chips");
  if (r.chunked.max_batched_tokens < spec.replica_batch())
    at["max_batched_tokens"].fail(std::to_string(r.chunked.max_batched_tokens) + " tokens a step for " +
                                  std::to_string(spec.replica_batch()) +
                                  " slots per replica: every decoding sequence's token must fit; at least " +
                                  std::to_string(spec.replica_batch()));
}

// Whole prefills' policy and the fixed decode step: both describe a server
// that prefills whole prompts on the chips that decode (not chunked, not
// disaggregated), and every padded prompt fits the context window.
void check_server_shape(const sim::YamlNode& stream, const InferenceSpec& spec) {
  const RequestStreamSpec& r = spec.requests;
  const sim::YamlNode at = stream["prefill"];
  if (at.present()) {
    if (r.chunked.max_batched_tokens > 0 || r.prefill_chips > 0)
      at.fail(std::string("a policy for whole prefills on the decoding chips; ") +
              (r.prefill_chips > 0 ? "disaggregated serving (prefill_chips) prefills on its own pool"
                                   : "chunked_prefill splits prompts into the decode steps") +
              ": drop one");
    const std::vector<std::uint64_t>& b = r.prefill.buckets;
    for (std::size_t i = 1; i < b.size(); ++i)
      if (b[i] <= b[i - 1])
        at["buckets"][i].fail("buckets must increase: " + std::to_string(b[i]) + " after " + std::to_string(b[i - 1]));
    const std::uint64_t longest = *std::max_element(r.prompt_len.begin(), r.prompt_len.end());
    if (!b.empty() && b.back() < longest)
      at["buckets"].fail("the longest prompt (" + std::to_string(longest) + " tokens) is longer than every bucket (" +
                         std::to_string(b.back()) + ")");
    if (!b.empty() && r.prefill.padded(longest) > spec.model.transformer.seq_len)
      at["buckets"].fail("the longest prompt padded to " + std::to_string(r.prefill.padded(longest)) +
                         " tokens exceeds the model's context window (model.seq_len " +
                         std::to_string(spec.model.transformer.seq_len) + ")");
  }
  if (r.decode_step == DecodeStep::fixed && r.chunked.max_batched_tokens > 0)
    stream["decode_step"].fail(
        "a fixed decode step has no room for prompt chunks (chunked_prefill mixes them into the step); drop one");
}

// A stream needs both phases, and every request's cache must fit the
// context window the KV cache is allocated for.
void check_request_stream(const sim::YamlNode& node, const InferenceSpec& spec, const Experiment& exp) {
  const RequestStreamSpec& r = spec.requests;
  if (r.count == 0) return;
  const sim::YamlNode stream = node["requests"];
  if (spec.phase != InferencePhase::both)
    node["phase"].fail("a request stream runs prefills and decode steps: phase must be both, got " +
                       std::string(to_string(spec.phase)));
  const std::uint64_t longest_prompt = *std::max_element(r.prompt_len.begin(), r.prompt_len.end());
  const std::uint64_t longest_output = *std::max_element(r.decode_len.begin(), r.decode_len.end());
  const std::uint64_t window = spec.model.transformer.seq_len;
  if (longest_prompt + longest_output > window)
    stream["decode_len"].fail("the longest prompt (" + std::to_string(longest_prompt) + ") and output (" +
                              std::to_string(longest_output) + ") exceed the model's context window (model.seq_len " +
                              std::to_string(window) + ")");
  if (r.prefill_chips > 0) check_pools(stream, spec, exp);
  if (r.warmup >= r.count)
    stream["warmup"].fail("warmup " + std::to_string(r.warmup) + " leaves none of the " + std::to_string(r.count) +
                          " requests to measure");
  if (r.concurrency > 0) check_clients(stream, spec);
  if (r.chunked.max_batched_tokens > 0) check_chunked(stream, spec);
  check_server_shape(stream, spec);
}

}  // namespace

const sim::EnumNames<InferencePhase>& inference_phase_names() {
  static const sim::EnumNames<InferencePhase> names(
      "inference phase", {{InferencePhase::prefill, "prefill", "the prompts' forward pass, writing the KV cache"},
                          {InferencePhase::decode, "decode", "the mean decode step: one token per sequence"},
                          {InferencePhase::both, "both", "prefill, then decode_len decode steps"}});
  return names;
}

const char* to_string(InferencePhase p) { return inference_phase_names().name(p); }

const sim::EnumNames<Activations>& activations_names() {
  static const sim::EnumNames<Activations> names(
      "activations",
      {{Activations::quantized, "quantized", "activations quantized to the weights' format (AQT serving int8)"},
       {Activations::bf16, "bf16", "weight-only: bf16 activations times converted 8-bit weights and cache"}});
  return names;
}

ForwardStep InferenceSpec::forward_step() const {
  ForwardStep step;
  step.model = model;
  step.parallelism = parallelism;
  step.matmul = stored_format();
  step.weight_only = dtype.activations == Activations::bf16;
  return step;
}

std::uint64_t kv_bytes_per_token(const models::TransformerConfig& cfg, hw::NumberFormat kv, std::uint32_t tp) {
  // With more ranks than KV heads each rank holds one head (a replica).
  // Each head caches its key and value widths (kv_width: head_dim each, or
  // latent attention's key and value dimensions).
  return cfg.layers * std::max<std::uint64_t>(cfg.kv() / tp, 1) * (cfg.kv_width() / cfg.kv()) * hw::element_bytes(kv);
}

const sim::ParamTable<InferenceSpec>& inference_params() {
  static const sim::ParamTable<InferenceSpec> t = [] {
    sim::ParamTable<InferenceSpec> p("workload.inference",
                                     "serving a decoder Transformer: the prompts' prefill and the decode steps, "
                                     "with a KV cache");
    p.custom(
         "model", {"mapping", "", "", ""},
         "the model, {type: transformer, ...} as kind: train's; its seq_len is the context window each "
         "sequence's KV cache is allocated for (a static cache), which prompt_len + decode_len must not exceed",
         [](const sim::YamlNode& n, InferenceSpec& spec) { spec.model = models::load_model(n); }, true,
         [] { return models::transformer_params().describe(); })
        .integer<std::uint64_t>("batch", &InferenceSpec::batch, "sequences", std::nullopt, kTokens,
                                "sequences served at once, over the whole pod (each data-parallel replica serves "
                                "batch / data)")
        .integer<std::uint64_t>("prompt_len", &InferenceSpec::prompt_len, "tokens", std::nullopt, kTokens,
                                "tokens of each prompt: the prefill's sequence length, and the KV cache the first "
                                "decode step finds")
        .integer<std::uint64_t>("decode_len", &InferenceSpec::decode_len, "tokens", std::nullopt, kTokens,
                                "tokens generated per sequence, one per decode step")
        .enumeration("phase", &InferenceSpec::phase, inference_phase_names(), InferencePhase::both,
                     "what is simulated: the prefill (time to first token), the mean decode step (time per "
                     "output token), or both")
        .group("dtype", &InferenceSpec::dtype, dtype_params())
        .group("parallelism", &InferenceSpec::parallelism, inference_parallelism_params())
        .flag("simulate_anyway", &InferenceSpec::simulate_anyway, false,
              "run even when the weights and KV cache do not fit in HBM")
        .enumeration("scheduling", &InferenceSpec::scheduling, scheduling_names(), Scheduling::sync,
                     "where the server runs the host's work of each step (the chip's host.serve_step): sync, "
                     "between device steps (a step takes device + host); async, while the previous step runs "
                     "(max(device, host))")
        .optional_group("requests", &InferenceSpec::requests, request_stream_params(),
                        "none: one batch of `batch` sequences")
        .allow("kind");
    return p;
  }();
  return t;
}

InferenceSpec load_inference_spec(const sim::YamlNode& node, const Experiment& exp) {
  InferenceSpec spec;
  inference_params().load(node, spec);
  if (exp.functional) node.fail("functional mode is not available for inference");
  const sim::YamlNode model = node["model"];
  if (spec.model.type != "transformer")
    model["type"].fail("inference serves a decoder Transformer (type: transformer); the model is an " +
                       spec.model.type);
  const models::TransformerConfig& cfg = spec.model.transformer;
  if (cfg.moe() && cfg.expert_matmul == "einsum")
    model.fail(
        "expert_matmul: einsum (a training step's capacity-padded dispatch) is not modelled for serving, "
        "which runs one matmul per expert on the tokens it takes");
  if (spec.prompt_len + spec.decode_len > cfg.seq_len)
    node[node["decode_len"].present() ? "decode_len" : "prompt_len"].fail(
        "prompt_len " + std::to_string(spec.prompt_len) + " + decode_len " + std::to_string(spec.decode_len) +
        " tokens exceed the model's context window (model.seq_len " + std::to_string(cfg.seq_len) + ")");

  const sim::YamlNode par = node["parallelism"];
  TrainParallelism& p = spec.parallelism;
  resolve_parallel_axes(par, par.present() ? par : node, exp.mesh, p);
  if (spec.batch % p.batch_shards() != 0)
    node["batch"].fail("batch " + std::to_string(spec.batch) + " does not divide over " +
                       (p.expert.degree > 1 ? "data x expert parallelism of " + std::to_string(p.data.degree) + " x " +
                                                  std::to_string(p.expert.degree)
                                            : "data parallelism of " + std::to_string(p.data.degree)));
  check_tensor_split(model, spec.model, p.tensor.degree);
  check_expert_split(par["expert"], spec.model, p.expert.degree);
  spec.model.transformer.expert_shards = p.expert.degree;  // the experts one chip holds and runs

  const sim::YamlNode dt = node["dtype"];
  if (spec.dtype.weights != hw::NumberFormat::bf16) check_chip_format(dt["weights"], exp.chip, spec.dtype.weights);
  if (spec.dtype.kv_cache != hw::NumberFormat::bf16) check_chip_format(dt["kv_cache"], exp.chip, spec.dtype.kv_cache);
  if (spec.dtype.weights != hw::NumberFormat::bf16 && spec.dtype.kv_cache != hw::NumberFormat::bf16 &&
      spec.dtype.weights != spec.dtype.kv_cache)
    dt["kv_cache"].fail(std::string("weights in ") + hw::to_string(spec.dtype.weights) + " and the KV cache in " +
                        hw::to_string(spec.dtype.kv_cache) +
                        ": a step runs one 8-bit format; use the same for both, or bf16 for one");
  check_models(node, spec);
  check_request_stream(node, spec, exp);
  return spec;
}

}  // namespace workloads
