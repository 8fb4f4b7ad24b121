#include "workloads/maxtext/to_train.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "interconnect/mesh.h"
#include "models/model_config.h"
#include "sim/text.h"
#include "workloads/train/parallelism.h"

namespace workloads {

namespace {

// What MaxText asks for and tpusim does not model: an error at `at`, or
// with allow_unmodelled an approximation the run lists.
void unmodelled(MaxTextConfig& cfg, const sim::YamlNode& at, const std::string& key, const std::string& what) {
  if (!cfg.allow_unmodelled)
    at.fail(what +
            "; tpusim does not model it yet (allow_unmodelled: true runs without it and lists it in "
            "result.approximations)");
  cfg.approximations.push_back({key, "", at.location().str(), what + ": not modelled, run without it"});
}

// `key` of the config where given, else the config (a default or a model
// file's value).
sim::YamlNode key_or_config(const sim::YamlNode& config, const std::string& key) {
  return config[key].present() ? config[key] : config;
}

// Where a model file's choice is located: the config's model_name.
const sim::YamlNode model_key(const sim::YamlNode& config) {
  return config["model_name"].present() ? config["model_name"] : config;
}

models::ModelConfig model_of(MaxTextConfig& cfg, const sim::YamlNode& config) {
  const MaxTextModel& m = cfg.model;
  const sim::YamlNode at = model_key(config);
  const std::string file = "model " + m.name;
  models::ModelConfig out;
  out.type = "transformer";
  models::TransformerConfig& t = out.transformer;
  t.layers = m.num_decoder_layers;
  t.d_model = m.emb_dim;
  t.d_ff = m.mlp_dim;
  t.heads = m.num_query_heads;
  t.kv_heads = m.num_kv_heads;
  t.head_dim = m.head_dim;
  t.seq_len = cfg.max_target_length;
  t.vocab = m.vocab_size;
  t.tied_embeddings = m.logits_via_embedding;
  t.attention = cfg.attention == AttentionKernel::dot_product ? "materialized" : "flash";
  const std::vector<std::string>& act = m.mlp_activations;
  if (act.size() == 2 && act[0] == "silu" && act[1] == "linear") {
    t.mlp = "swiglu";
  } else if (act.size() == 2 && act[0] == "gelu" && act[1] == "linear") {
    t.mlp = "geglu";
  } else if (act.size() == 1 && (act[0] == "gelu" || act[0] == "relu")) {
    t.mlp = act[0];
  } else {
    std::string list;
    for (const auto& a : act) list += (list.empty() ? "" : ", ") + a;
    unmodelled(cfg, at, "mlp_activations", file + " has MLP activations [" + list + "]");
    t.mlp = act.size() == 2 ? "swiglu" : "gelu";
  }
  if (m.moe()) {
    t.experts = m.num_experts;
    t.top_k = m.num_experts_per_tok;
    t.capacity_factor = cfg.moe.capacity_factor > 0 ? cfg.moe.capacity_factor : 0;
    t.shared_experts = m.shared_experts_in_use();
    t.expert_d_ff = m.expert_mlp_dim();
    t.first_dense_layers = m.first_num_dense_layers;
    t.moe_layer_step = m.interleave_moe_layer_step;
    // MaxText's RoutedMoE: sparse_matmul (megablox or ragged dot) sorts the
    // tokens by expert; otherwise dense_matmul's one-hot einsums fill
    // capacity-padded buffers, or without a capacity run every expert on
    // every token.
    if (cfg.moe.megablox || cfg.moe.sparse_matmul) {
      t.expert_matmul = "grouped";
      // megablox's gmm tiles (tm, the tokens' tile); ragged_dot gets the
      // same tiling as XLA metadata (layers/moe.py sparse_matmul).
      t.grouped_tile = cfg.moe.tile_batch_seq;
    } else if (t.capacity_factor > 0) {
      t.expert_matmul = "einsum";
    } else {
      unmodelled(cfg, key_or_config(config, "sparse_matmul"), "sparse_matmul",
                 "dense experts without a capacity (sparse_matmul: false, capacity_factor <= 0: every expert "
                 "computes every token)");
    }
  }
  if (m.attention_type == AttentionType::mla) {
    t.q_lora_rank = m.q_lora_rank;
    t.kv_lora_rank = m.kv_lora_rank;
    t.qk_nope_head_dim = m.qk_nope_head_dim;
    t.qk_rope_head_dim = m.qk_rope_head_dim;
    t.v_head_dim = m.v_head_dim;
  }
  // Local (sliding-window) layers: every layer, or a pattern of local
  // layers and one global (models/transformer_config.h).
  const auto layers = m.layers();
  std::uint64_t local = 0, period = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const MaxTextModel::Layer& l = layers[i];
    if (l.attention == AttentionType::local_sliding) {
      ++local;
      t.sliding_window = l.window;
    } else if (l.attention == AttentionType::global && local > 0 && period == 0) {
      period = i + 1;
    } else if (l.attention == AttentionType::chunk && l.window >= cfg.max_target_length) {
      // A chunk as long as the sequence: every query attends causally to
      // every key before it, the global layers' attention (attentions.py's
      // chunked mask is causal within chunks).
      if (local > 0 && period == 0) period = i + 1;
    } else if (l.attention == AttentionType::chunk || l.attention == AttentionType::full) {
      unmodelled(cfg, at, "attention_type",
                 file + " has " + attention_type_names().name(l.attention) + " attention layers" +
                     (l.attention == AttentionType::chunk
                          ? " of chunks (" + std::to_string(l.window) + " tokens) shorter than the sequence (" +
                                std::to_string(cfg.max_target_length) + ")"
                          : std::string()));
      break;
    }
  }
  if (local > 0 && local < layers.size()) {
    t.sliding_window_pattern = period;
    for (std::size_t i = 0; i < layers.size(); ++i)
      if ((layers[i].attention == AttentionType::local_sliding) != (period == 0 || (i + 1) % period != 0)) {
        unmodelled(cfg, at, "attention_type", file + "'s local and global layers follow no period tpusim has");
        break;
      }
  }
  t.layers = layers.size();  // gemma2 scans pairs: 2 x num_decoder_layers
  t.qk_norm = m.use_qk_norm;
  t.post_norms = m.use_post_attn_norm || m.use_post_ffw_norm;
  t.vocab_tiles = cfg.num_vocab_tiling;
  return out;
}

// The mesh axes of one parallelism: MaxText's ici and dcn axes that it maps.
struct AxisUse {
  MaxTextAxis axis;
  ParallelAxes TrainParallelism::*field;
};
const AxisUse kAxisUses[] = {
    {MaxTextAxis::data, &TrainParallelism::data},       {MaxTextAxis::stage, &TrainParallelism::pipeline},
    {MaxTextAxis::fsdp, &TrainParallelism::fsdp},       {MaxTextAxis::fsdp_transpose, &TrainParallelism::fsdp},
    {MaxTextAxis::context, &TrainParallelism::context}, {MaxTextAxis::tensor, &TrainParallelism::tensor},
    {MaxTextAxis::expert, &TrainParallelism::expert}};

// The mesh and each parallelism's axes.
void mesh_of(MaxTextConfig& cfg, const sim::YamlNode& config, const Experiment& exp, MaxTextTrain& out) {
  std::vector<std::pair<std::string, std::uint32_t>> ici;
  TrainParallelism& par = out.spec.parallelism;
  for (std::size_t i = 0; i < kMaxTextAxes; ++i) {
    const auto axis = static_cast<MaxTextAxis>(i);
    const std::string name = maxtext_axis_names().name(axis);
    const auto use =
        std::find_if(std::begin(kAxisUses), std::end(kAxisUses), [&](const AxisUse& u) { return u.axis == axis; });
    for (const bool dcn : {false, true}) {
      const std::int64_t size = dcn ? cfg.mesh.dcn[i] : cfg.mesh.ici[i];
      if (size == 1) continue;
      const std::string key = (dcn ? "dcn_" : "ici_") + name + "_parallelism";
      if (use == std::end(kAxisUses)) {
        unmodelled(cfg, key_or_config(config, key), key, "the " + name + " mesh axis");
        continue;
      }
      const std::string mesh_name = dcn ? "dcn_" + name : name;
      (par.*(use->field)).axes.push_back(mesh_name);
      (par.*(use->field)).degree *= static_cast<std::uint32_t>(size);
      if (dcn) {
        if (!out.dcn_axes.empty())
          unmodelled(cfg, key_or_config(config, key), key, "more than one mesh axis across the slices");
        out.dcn_axes.push_back(mesh_name);
        out.mesh.push_back({mesh_name, static_cast<std::uint32_t>(size)});
      } else {
        ici.push_back({mesh_name, static_cast<std::uint32_t>(size)});
      }
    }
  }
  // MaxText's order first, then the first order that lands on whole
  // physical axes; where none does and allow_split_physical_axes is set,
  // physical axes are split as JAX's mesh_utils does with it (docs/maxtext.md
  // "Mesh"): the most communication-heavy axes, last in MaxText's order,
  // take the inner factors (interconnect::mesh_order).
  const std::vector<int> shape(exp.pod.shape.begin(), exp.pod.shape.end());
  std::vector<long long> sizes;
  for (const auto& axis : ici) sizes.push_back(axis.second);
  std::optional<std::vector<std::size_t>> order = interconnect::mesh_order(shape, sizes, true);
  const bool split = cfg.mesh.allow_split_physical_axes;
  if (!order && split) order = interconnect::mesh_order(shape, sizes, false);
  if (!order) {
    std::string axes;
    for (const auto& [n, s] : ici) axes += (axes.empty() ? "" : ", ") + n + " " + std::to_string(s);
    config.fail("the mesh (" + axes + ") does not lay onto whole physical axes of the " +
                sim::shape_text(exp.pod.shape) + " slice in any order" +
                (split ? std::string(", nor splitting a physical axis (a mesh axis takes whole physical axes or a "
                                     "factor of one that divides it)")
                       : std::string("; allow_split_physical_axes: true lets a mesh axis take a factor of one")));
  }
  std::vector<std::pair<std::string, std::uint32_t>> mesh;
  for (std::size_t k : *order) mesh.push_back(ici[k]);
  mesh.insert(mesh.end(), out.mesh.begin(), out.mesh.end());
  out.mesh = std::move(mesh);
  if (cfg.shard_optimizer_over_data && par.data.degree > 1) par.zero = 1;
  // MaxText's rules shard the activations' embedding dimension
  // ('activation_embed') over tensor between the sharded matmuls, and its
  // experts reduce-scatter their output over it (psum_scatter,
  // docs/reference/maxtext-moe-tensor.md#computation): each chip holds 1/t
  // of every activation, each partial sum a reduce-scatter and a gather,
  // which is Megatron sequence parallelism's bytes (as the hand-written
  // v5e 128B cases model MaxText's tensor axis, docs/validation.md).
  if (par.tensor.degree > 1) par.sequence = true;
}

Dtype dtype_of(MaxTextConfig& cfg, const sim::YamlNode& config, const char* key, MaxTextDtype d) {
  if (d == MaxTextDtype::float16) unmodelled(cfg, key_or_config(config, key), key, "float16");
  return d == MaxTextDtype::bfloat16 ? Dtype::bf16 : Dtype::fp32;
}

// The modelled XLA flags (xla_flags.h) as tpusim's training step honours
// them: collectives overlap compute as XLA's async collective fusion and
// data-parallel all-reduce optimisation make them (tpusim's default
// overlap); tpusim windows no einsum without sequence parallelism, as a
// threshold no operand reaches. The SparseCore offload flags move the
// step's weight gathers, gradient reduce-scatters and gradient all-reduces
// to the SparseCores (parallelism.sparsecore_offload); the tensor-parallel
// all-reduces stay on the TensorCore, so an all-reduce offload with tensor
// parallelism is only part modelled. A chip without SparseCores has nothing
// to offload to: the flags change nothing there.
void check_flags(MaxTextConfig& cfg, const sim::YamlNode& at, TrainParallelism& par, const hw::ChipConfig& chip) {
  const XlaSettings& x = cfg.xla;
  if (chip.sparsecore.count > 0)
    par.sparsecore_offload = {x.sparse_core_all_gather, x.sparse_core_reduce_scatter, x.sparse_core_all_reduce};
  if (par.sparsecore_offload.all_reduce && par.tensor.degree > 1)
    unmodelled(cfg, at, "xla_tpu_enable_sparse_core_collective_offload_all_reduce",
               "tensor-parallel all-reduces on the SparseCores (tpusim offloads the gradient all-reduces only)");
  if (x.windowed_einsum_threshold_mib >= 0 && x.windowed_einsum_threshold_mib < (1 << 20) && par.tensor.degree > 1)
    unmodelled(cfg, at, "xla_jf_spmd_threshold_for_windowed_einsum_mib", "windowed einsums over tensor parallelism");
}

// What kind: train checks when it loads (spec.cpp), located at the MaxText
// keys that set it, so that nothing is left to fail in the run: the batch
// over the replicas and accumulation steps, the model's split over
// tensor and expert parallelism, and the model itself.
void check_step(const sim::YamlNode& config, const TrainSpec& s) {
  const TrainParallelism& p = s.parallelism;
  if (s.global_batch % p.batch_shards() != 0 || s.replica_batch() % p.microbatches != 0)
    key_or_config(config, "per_device_batch_size")
        .fail("the global batch of " + std::to_string(s.global_batch) + " sequences does not divide over " +
              std::to_string(p.batch_shards()) + " replicas x " + std::to_string(p.microbatches) +
              " accumulation steps");
  const models::TransformerConfig& t = s.model.transformer;
  const std::uint64_t tp = p.tensor.degree;
  // MaxText shards the experts' 'mlp' axis over tensor as the dense MLP's
  // (TransformerConfig::expert_tensor_split): their width must split too.
  const std::uint64_t experts_width = t.moe() ? t.expert_width() : t.d_ff;
  if (tp > 1 &&
      (t.heads % tp != 0 || t.d_ff % tp != 0 || experts_width % tp != 0 || (t.kv() % tp != 0 && tp % t.kv() != 0)))
    key_or_config(config, "ici_tensor_parallelism")
        .fail("tensor parallelism of " + std::to_string(tp) + " does not split the model's " + std::to_string(t.heads) +
              " query heads, " + std::to_string(t.kv()) + " key/value heads and MLP of " + std::to_string(t.d_ff) +
              (t.moe() ? " (experts' " + std::to_string(experts_width) + ")" : std::string()) +
              " evenly (tpusim splits heads and MLP widths whole, as Megatron does)");
  check_expert_split(key_or_config(config, "ici_expert_parallelism"), s.model, p.expert.degree);
  const std::uint64_t ranges = std::uint64_t{p.pipeline.degree} * p.virtual_stages;
  if (ranges > 1 && t.layers % ranges != 0)
    key_or_config(config, "ici_pipeline_parallelism")
        .fail("a pipeline of " + std::to_string(p.pipeline.degree) + " stages x " + std::to_string(p.virtual_stages) +
              " repeats does not divide the model's " + std::to_string(t.layers) + " layers");
  try {
    models::build_model(s.chip_model(), s.microbatch_size());
  } catch (const std::exception& e) {  // a size models refuses, or a product past 64 bits
    model_key(config).fail(std::string("the model as MaxText's keys give it: ") + e.what());
  }
}

}  // namespace

MaxTextTrain maxtext_to_train(MaxTextConfig& cfg, const sim::YamlNode& config, const sim::YamlNode* flags,
                              const Experiment& exp) {
  MaxTextTrain out;
  TrainSpec& s = out.spec;
  s.model = model_of(cfg, config);
  s.global_batch = cfg.global_batch();
  if (s.global_batch == 0)
    config["per_device_batch_size"].fail("per_device_batch_size x " + std::to_string(cfg.chips) +
                                         " chips is less than one sequence");
  mesh_of(cfg, config, exp, out);
  check_flags(cfg, flags ? *flags : config, s.parallelism, exp.chip);
  s.parallelism.microbatches = static_cast<std::uint32_t>(cfg.gradient_accumulation_steps);
  s.precision.params = dtype_of(cfg, config, "weight_dtype", cfg.weight_dtype);
  s.precision.optimizer =
      dtype_of(cfg, config, "mu_dtype", cfg.mu_dtype_follows_weights ? cfg.weight_dtype : cfg.mu_dtype);
  switch (cfg.quantization) {
    case Quantization::none: break;
    case Quantization::int8: s.precision.matmul = hw::NumberFormat::int8; break;
    case Quantization::fp8: s.precision.matmul = hw::NumberFormat::fp8; break;
    default:
      unmodelled(cfg, key_or_config(config, "quantization"), "quantization",
                 std::string("quantization ") + quantization_names().name(cfg.quantization));
  }
  s.optimizer = optimizer_cost(cfg.opt_type == OptimizerType::sgd ? Optimizer::sgd : Optimizer::adam, s.precision);
  // Every named tensor where the policy puts it (MaxTextConfig::
  // effective_remat), as tpusim's custom policy.
  const RematTensors r = cfg.effective_remat();
  s.remat = Remat::custom;
  s.remat_tensors = {{"decoder_layer_input", r.decoder_layer_input},
                     {"context", r.context},
                     {"mlpwi", r.mlpwi},
                     {"mlpwi_0", r.mlpwi_0},
                     {"mlpwi_1", r.mlpwi_1},
                     {"mlpwo", r.mlpwo},
                     {"query_proj", r.query_proj},
                     {"key_proj", r.key_proj},
                     {"value_proj", r.value_proj},
                     {"qkv_proj", r.qkv_proj},
                     {"out_proj", r.out_proj}};
  check_step(config, s);
  return out;
}

}  // namespace workloads
