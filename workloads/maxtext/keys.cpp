#include "workloads/maxtext/keys.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include "workloads/maxtext/axis_rules.h"
#include "workloads/maxtext/mesh.h"

namespace workloads {

const char* to_string(KeyClass c) {
  switch (c) {
    case KeyClass::modelled: return "modelled";
    case KeyClass::ignored: return "ignored";
    case KeyClass::unmodelled: return "unmodelled";
  }
  return "?";
}

MaxTextKeyTable& MaxTextKeyTable::real(const char* name, sim::Field<MaxTextConfig, double> field, const char* unit,
                                       sim::Range range, const char* meaning) {
  const std::string u = unit;
  return add(
      {name, KeyClass::modelled, "number", unit, range.str(), meaning, std::nullopt,
       [field, range, u](const sim::YamlNode& n, MaxTextConfig& c) { field.get(c) = sim::read_real(n, range, u); }});
}

MaxTextKeyTable& MaxTextKeyTable::flag(const char* name, sim::Field<MaxTextConfig, bool> field, const char* meaning) {
  return add({name, KeyClass::modelled, "bool", "", "", meaning, std::nullopt,
              [field](const sim::YamlNode& n, MaxTextConfig& c) { field.get(c) = n.as_bool(); }});
}

MaxTextKeyTable& MaxTextKeyTable::text(const char* name, sim::Field<MaxTextConfig, std::string> field,
                                       const char* meaning) {
  return add({name, KeyClass::modelled, "string", "", "", meaning, std::nullopt,
              [field](const sim::YamlNode& n, MaxTextConfig& c) { field.get(c) = n.as_string(); }});
}

MaxTextKeyTable& MaxTextKeyTable::custom(const char* name, const char* type, const char* meaning,
                                         std::function<void(const sim::YamlNode&, MaxTextConfig&)> read) {
  return add({name, KeyClass::modelled, type, "", "", meaning, std::nullopt, std::move(read)});
}

MaxTextKeyTable& MaxTextKeyTable::ignored(std::vector<const char*> names, const char* why) {
  for (const char* n : names) add({n, KeyClass::ignored, "", "", "", why, std::nullopt, nullptr});
  return *this;
}

MaxTextKeyTable& MaxTextKeyTable::unmodelled(const char* name, const char* neutral, const char* why) {
  MaxTextKey k{name, KeyClass::unmodelled, "", "", "", why, std::nullopt, nullptr};
  if (neutral) k.neutral = neutral;
  return add(std::move(k));
}

MaxTextKeyTable& MaxTextKeyTable::add(MaxTextKey k) {
  // One entry per key: a second one is a bug in the table below.
  if (find(k.name)) throw std::logic_error("MaxText key '" + k.name + "' declared twice");
  keys_.push_back(std::move(k));
  return *this;
}

const MaxTextKey* MaxTextKeyTable::find(const std::string& name) const {
  for (const auto& k : keys_)
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<std::string> MaxTextKeyTable::names() const {
  std::vector<std::string> out;
  for (const auto& k : keys_) out.push_back(k.name);
  return out;
}

std::vector<std::string> MaxTextKeyTable::names(KeyClass c) const {
  std::vector<std::string> out;
  for (const auto& k : keys_)
    if (k.cls == c) out.push_back(k.name);
  return out;
}

nlohmann::json MaxTextKeyTable::describe() const {
  nlohmann::json params = nlohmann::json::array();
  for (const auto& k : keys_) {
    nlohmann::json p{{"name", k.name}, {"class", to_string(k.cls)}, {"description", k.meaning}};
    if (!k.type.empty()) p["type"] = k.type;
    if (!k.unit.empty()) p["unit"] = k.unit;
    if (!k.range.empty()) p["range"] = k.range;
    if (k.neutral) p["neutral"] = *k.neutral;
    params.push_back(p);
  }
  return {{"component", "maxtext"},
          {"description", "MaxText's configuration keys (base.yml at tag tpu-recipes-v0.1.5)"},
          {"params", params}};
}

namespace {

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

bool as_number(const std::string& s, double& out) {
  std::string t;
  for (char ch : s)
    if (ch != '_') t += ch;  // YAML 1.1 (and MaxText's files) allow 10_000
  if (t.empty()) return false;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end && *end == '\0';
}

// The MaxTextConfig field a named per-tensor remat key sets.
TensorPlace& remat_field(MaxTextConfig& c, const std::string& name) {
  RematTensors& t = c.remat_tensors;
  if (name == "decoder_layer_input") return t.decoder_layer_input;
  if (name == "context") return t.context;
  if (name == "mlpwi") return t.mlpwi;
  if (name == "mlpwi_0") return t.mlpwi_0;
  if (name == "mlpwi_1") return t.mlpwi_1;
  if (name == "mlpwo") return t.mlpwo;
  if (name == "query_proj") return t.query_proj;
  if (name == "key_proj") return t.key_proj;
  if (name == "value_proj") return t.value_proj;
  if (name == "qkv_proj") return t.qkv_proj;
  return t.out_proj;
}

void add_model_keys(MaxTextKeyTable& t) {
  using C = MaxTextConfig;
  const sim::Range pos = sim::at_least(1);
  t.custom("model_name", "string", "which configs/maxtext/models/<name>.yml supplies the architecture (read first)",
           [](const sim::YamlNode& n, C& c) { c.model.name = n.as_string(); })
      .flag("override_model_config", &C::override_model_config,
            "allow the config to set keys the model file sets (MaxText refuses otherwise)")
      .enumeration<DecoderBlock>(
          "decoder_block", [](C& c) -> DecoderBlock& { return c.model.decoder_block; }, decoder_block_names(),
          "which layer MaxText builds (attention pattern, MoE placement, norms)")
      .integer<std::uint32_t>(
          "global_parameter_scale", [](C& c) -> std::uint32_t& { return c.model.global_parameter_scale; }, "", pos,
          "a power of 2 that scales the base_* dimensions (pyconfig.py get_individual_scales)")
      .integer<std::uint64_t>(
          "base_emb_dim", [](C& c) -> std::uint64_t& { return c.model.base_emb_dim; }, "", pos, "d_model")
      .integer<std::uint64_t>(
          "base_num_query_heads", [](C& c) -> std::uint64_t& { return c.model.base_num_query_heads; }, "", pos,
          "query heads")
      .integer<std::uint64_t>(
          "base_num_kv_heads", [](C& c) -> std::uint64_t& { return c.model.base_num_kv_heads; }, "", pos,
          "key/value heads (grouped-query attention when fewer than the query heads)")
      .integer<std::uint64_t>(
          "base_mlp_dim", [](C& c) -> std::uint64_t& { return c.model.base_mlp_dim; }, "", pos,
          "the dense MLP's hidden width (and the experts' for mixtral and gpt_oss)")
      .integer<std::uint64_t>(
          "base_moe_mlp_dim", [](C& c) -> std::uint64_t& { return c.model.base_moe_mlp_dim; }, "", pos,
          "the experts' hidden width for the deepseek, llama4 and qwen3_moe blocks")
      .integer<std::uint64_t>(
          "base_num_decoder_layers", [](C& c) -> std::uint64_t& { return c.model.base_num_decoder_layers; }, "", pos,
          "decoder layers (gemma2: pairs of a local and a global layer)")
      .integer<std::uint64_t>(
          "head_dim", [](C& c) -> std::uint64_t& { return c.model.head_dim; }, "", pos, "width of one head")
      .integer<std::uint64_t>(
          "vocab_size", [](C& c) -> std::uint64_t& { return c.model.vocab_size; }, "tokens", pos, "vocabulary")
      .custom("mlp_activations", "list of string", "one activation: a plain MLP; two: a gated one (SwiGLU, GeGLU)",
              [](const sim::YamlNode& n, C& c) {
                const auto v = sim::text_item().read;
                c.model.mlp_activations.clear();
                if (!n.is_sequence() || n.size() == 0 || n.size() > 2) n.fail("expected a list of one or two words");
                for (std::size_t i = 0; i < n.size(); ++i) c.model.mlp_activations.push_back(v(n[i]));
              })
      .flag(
          "logits_via_embedding", [](C& c) -> bool& { return c.model.logits_via_embedding; },
          "tied embeddings: the output projection is the embedding table")
      .flag(
          "use_iota_embed", [](C& c) -> bool& { return c.model.use_iota_embed; },
          "embedding lookup as a one-hot (iota) matmul instead of a gather")
      .integer<std::int64_t>(
          "trainable_position_size", [](C& c) -> std::int64_t& { return c.model.trainable_position_size; }, "",
          sim::at_least(-1), "a learned position embedding of this many rows (GPT-3); -1 none")
      .flag(
          "fused_qkv", [](C& c) -> bool& { return c.model.fused_qkv; }, "one matmul for Q, K and V")
      .flag(
          "fused_mlp", [](C& c) -> bool& { return c.model.fused_mlp; }, "one matmul for the gated MLP's inputs")
      .flag(
          "attention_bias", [](C& c) -> bool& { return c.model.attention_bias; }, "biases on Q, K, V")
      .flag(
          "mlp_bias", [](C& c) -> bool& { return c.model.mlp_bias; }, "biases on the MLP's matmuls")
      .flag(
          "use_post_attn_norm", [](C& c) -> bool& { return c.model.use_post_attn_norm; },
          "a norm after attention (gemma2/3)")
      .flag(
          "use_post_ffw_norm", [](C& c) -> bool& { return c.model.use_post_ffw_norm; },
          "a norm after the MLP (gemma2/3)")
      .flag(
          "use_qk_norm", [](C& c) -> bool& { return c.model.use_qk_norm; }, "norms on queries and keys");
}

// Experts and attention.
void add_model_structure_keys(MaxTextKeyTable& t) {
  using C = MaxTextConfig;
  const sim::Range pos = sim::at_least(1);
  const sim::Range nonneg = sim::at_least(0);
  t.integer<std::uint64_t>(
       "num_experts", [](C& c) -> std::uint64_t& { return c.model.num_experts; }, "", pos,
       "routed experts (1: a dense model)")
      .integer<std::uint64_t>(
          "num_experts_per_tok", [](C& c) -> std::uint64_t& { return c.model.num_experts_per_tok; }, "", pos,
          "experts each token is routed to (top-k)")
      .integer<std::uint64_t>(
          "shared_experts", [](C& c) -> std::uint64_t& { return c.model.shared_experts; }, "", nonneg,
          "shared experts (used by the deepseek and llama4 blocks only)")
      .integer<std::uint64_t>(
          "first_num_dense_layers", [](C& c) -> std::uint64_t& { return c.model.first_num_dense_layers; }, "", nonneg,
          "deepseek: dense layers before the MoE layers")
      .integer<std::uint64_t>(
          "interleave_moe_layer_step", [](C& c) -> std::uint64_t& { return c.model.interleave_moe_layer_step; }, "",
          pos, "llama4: every Nth layer is a MoE layer")
      .text(
          "routed_score_func", [](C& c) -> std::string& { return c.model.routed_score_func; },
          "router scores: softmax (\"\") or sigmoid")
      .flag(
          "routed_bias", [](C& c) -> bool& { return c.model.routed_bias; }, "a learned router bias")
      .enumeration<AttentionType>(
          "attention_type", [](C& c) -> AttentionType& { return c.model.attention_type; }, attention_type_names(),
          "the attention of every layer (blocks with a pattern override it per layer)")
      .integer<std::uint64_t>(
          "sliding_window_size", [](C& c) -> std::uint64_t& { return c.model.sliding_window_size; }, "tokens", nonneg,
          "local layers' window")
      .integer<std::uint64_t>(
          "chunk_attn_window_size", [](C& c) -> std::uint64_t& { return c.model.chunk_attn_window_size; }, "tokens",
          nonneg, "llama4's attention chunk")
      .integer<std::int64_t>(
          "nope_layer_interval", [](C& c) -> std::int64_t& { return c.model.nope_layer_interval; }, "",
          sim::at_least(-1), "llama4: every Nth layer has no RoPE and global attention; -1 none")
      .flag(
          "attention_sink", [](C& c) -> bool& { return c.model.attention_sink; }, "gpt-oss: a sink logit per head")
      .real(
          "attn_logits_soft_cap", [](C& c) -> double& { return c.model.attn_logits_soft_cap; }, "", sim::at_least(0),
          "tanh cap on attention logits (0: none)")
      .real(
          "final_logits_soft_cap", [](C& c) -> double& { return c.model.final_logits_soft_cap; }, "", sim::at_least(0),
          "tanh cap on the output logits (0: none)")
      .integer<std::uint64_t>(
          "q_lora_rank", [](C& c) -> std::uint64_t& { return c.model.q_lora_rank; }, "", nonneg,
          "MLA: the queries' low rank (0: full-rank queries)")
      .integer<std::uint64_t>(
          "kv_lora_rank", [](C& c) -> std::uint64_t& { return c.model.kv_lora_rank; }, "", nonneg,
          "MLA: the keys' and values' latent rank")
      .integer<std::uint64_t>(
          "qk_nope_head_dim", [](C& c) -> std::uint64_t& { return c.model.qk_nope_head_dim; }, "", nonneg,
          "MLA: query/key head width without RoPE")
      .integer<std::uint64_t>(
          "qk_rope_head_dim", [](C& c) -> std::uint64_t& { return c.model.qk_rope_head_dim; }, "", nonneg,
          "MLA: query/key head width with RoPE")
      .integer<std::uint64_t>(
          "v_head_dim", [](C& c) -> std::uint64_t& { return c.model.v_head_dim; }, "", nonneg, "MLA: value head width");
}

void add_run_keys(MaxTextKeyTable& t) {
  using C = MaxTextConfig;
  const sim::Range pos = sim::at_least(1);
  t.flag("allow_unmodelled", &C::allow_unmodelled,
         "tpusim's own key: run although keys that change performance are not modelled, listing them")
      .real("per_device_batch_size", &C::per_device_batch_size, "sequences", sim::positive(),
            "sequences per chip per step (may be fractional)")
      .integer<std::uint64_t>("max_target_length", &C::max_target_length, "tokens", pos, "sequence length")
      .integer<std::uint64_t>("gradient_accumulation_steps", &C::gradient_accumulation_steps, "", pos,
                              "microbatches accumulated per optimizer step")
      .enumeration<MaxTextDtype>("dtype", &C::dtype, maxtext_dtype_names(), "activations and matmul inputs")
      .enumeration<MaxTextDtype>("weight_dtype", &C::weight_dtype, maxtext_dtype_names(), "stored parameters")
      .enumeration<MaxTextDtype>("grad_dtype", &C::grad_dtype, maxtext_dtype_names(), "gradients")
      .custom("mu_dtype", "\"\" | dtype", "Adam's first moment; \"\" follows weight_dtype",
              [](const sim::YamlNode& n, C& c) {
                c.mu_dtype_follows_weights = n.as_string().empty();
                if (!c.mu_dtype_follows_weights) c.mu_dtype = maxtext_dtype_names().parse(n);
              })
      .enumeration<OptimizerType>("opt_type", &C::opt_type, optimizer_type_names(), "the optimizer")
      .enumeration<Quantization>("quantization", &C::quantization, quantization_names(), "matmul quantization")
      .enumeration<RematPolicy>("remat_policy", &C::remat_policy, remat_policy_names(),
                                "what each layer keeps, offloads or recomputes for the backward pass");
  for (const char* name : {"decoder_layer_input", "context", "mlpwi", "mlpwi_0", "mlpwi_1", "mlpwo", "query_proj",
                           "key_proj", "value_proj", "qkv_proj", "out_proj"}) {
    const std::string key = name;
    t.custom(
        name, "device | remat | offload", "this named tensor under remat_policy: custom",
        [key](const sim::YamlNode& n, C& c) {
          const TensorPlace p = tensor_place_names().parse(n);
          // pyconfig.py validate_and_assign_remat_tensors.
          if (key == "decoder_layer_input" && p == TensorPlace::remat)
            n.fail("the decoder layer's input cannot be rematerialized (it is the scan's carry): device or offload");
          remat_field(c, key) = p;
        });
  }
  t.enumeration<AttentionKernel>("attention", &C::attention, attention_kernel_names(), "the attention kernel");
  struct Block {
    const char* name;
    std::uint64_t SplashBlocks::*field;
  };
  for (const Block& b : {Block{"sa_block_q", &SplashBlocks::q}, Block{"sa_block_kv", &SplashBlocks::kv},
                         Block{"sa_block_kv_compute", &SplashBlocks::kv_compute},
                         Block{"sa_block_q_dkv", &SplashBlocks::q_dkv}, Block{"sa_block_kv_dkv", &SplashBlocks::kv_dkv},
                         Block{"sa_block_kv_dkv_compute", &SplashBlocks::kv_dkv_compute},
                         Block{"sa_block_q_dq", &SplashBlocks::q_dq}, Block{"sa_block_kv_dq", &SplashBlocks::kv_dq}}) {
    const auto f = b.field;
    t.integer<std::uint64_t>(
        b.name, [f](C& c) -> std::uint64_t& { return c.splash.*f; }, "tokens", pos, "a splash-attention tile");
  }
  t.flag(
       "sa_use_fused_bwd_kernel", [](C& c) -> bool& { return c.splash.use_fused_bwd_kernel; },
       "dQ, dK and dV in one backward kernel")
      .flag(
          "megablox", [](C& c) -> bool& { return c.moe.megablox; }, "grouped-matmul kernel for the experts")
      .flag(
          "sparse_matmul", [](C& c) -> bool& { return c.moe.sparse_matmul; },
          "tokens sorted by expert, ragged matmuls (false: dense, capacity-padded einsums)")
      .real(
          "capacity_factor", [](C& c) -> double& { return c.moe.capacity_factor; }, "", sim::at_least(-1),
          "expert capacity in balanced loads; tokens over it are dropped; -1 (or <= 0) dropless")
      .flag(
          "use_custom_sort_vjp", [](C& c) -> bool& { return c.moe.use_custom_sort_vjp; },
          "the cheaper backward of the token sort")
      .flag(
          "use_random_routing", [](C& c) -> bool& { return c.moe.use_random_routing; },
          "random expert choice: balanced on average")
      .flag(
          "fsdp_shard_on_exp", [](C& c) -> bool& { return c.moe.fsdp_shard_on_exp; },
          "the experts' expert dimension sharded over fsdp");
  for (const char* name : {"tile_batch_seq", "tile_embed_dim", "tile_mlp_dim"}) {
    const std::string key = name;
    t.integer<std::uint64_t>(
        name,
        [key](C& c) -> std::uint64_t& {
          return key == "tile_batch_seq"   ? c.moe.tile_batch_seq
                 : key == "tile_embed_dim" ? c.moe.tile_embed_dim
                                           : c.moe.tile_mlp_dim;
        },
        "", pos, "a megablox grouped-matmul tile");
  }
  t.integer<std::uint64_t>("num_vocab_tiling", &C::num_vocab_tiling, "", pos,
                           "the logits and cross-entropy in this many chunks of batch x sequence")
      .flag("shard_optimizer_over_data", &C::shard_optimizer_over_data, "ZeRO-1: optimizer state over data");
}

void add_mesh_keys(MaxTextKeyTable& t) {
  using C = MaxTextConfig;
  for (const MaxTextAxis a : all_maxtext_axes()) {
    for (const bool ici : {true, false}) {
      const std::string key = parallelism_key(a, ici);
      const auto i = static_cast<std::size_t>(a);
      t.custom(key.c_str(), "integer",
               ici ? "chips of this mesh axis inside a slice (-1: what the others leave)"
                   : "slices of this mesh axis (-1: what the others leave)",
               [i, ici](const sim::YamlNode& n, C& c) {
                 const std::int64_t v = n.as_int();
                 if (v != -1 && v < 1) n.fail("expected -1 (fill) or a positive integer, got " + std::to_string(v));
                 (ici ? c.mesh.ici : c.mesh.dcn)[i] = v;
               });
    }
  }
  t.flag(
       "allow_split_physical_axes", [](C& c) -> bool& { return c.mesh.allow_split_physical_axes; },
       "one physical torus axis may be split over several mesh axes")
      .custom("custom_mesh", "\"\" | hybrid_ring_64x4 | hybrid_ring_32x8", "a hand-made device order",
              [](const sim::YamlNode& n, C& c) {
                const std::string v = n.as_string();
                if (v != "" && v != "hybrid_ring_64x4" && v != "hybrid_ring_32x8") {
                  const std::string hint = sim::did_you_mean(v, {"hybrid_ring_64x4", "hybrid_ring_32x8"});
                  n.fail("unknown custom_mesh '" + v + "'; expected \"\", hybrid_ring_64x4 or hybrid_ring_32x8" +
                         (hint.empty() ? "" : "; " + hint));
                }
                c.mesh.custom_mesh = v;
              })
      .custom("logical_axis_rules", "list of [name, mesh axes]",
              "which mesh axes may shard each logical dimension, in priority order",
              [](const sim::YamlNode& n, C& c) { c.logical_axis_rules = read_axis_rules(n); });
}

// Keys that change a step's performance in a way tpusim does not model;
// base.yml's value (the neutral one) changes nothing.
void add_unmodelled_keys(MaxTextKeyTable& t) {
  t.unmodelled("scan_layers", "true", "unrolled layers (XLA schedules across layers, more memory)")
      .unmodelled("matmul_precision", "default", "higher-precision matmul passes")
      .unmodelled("activations_in_float32", "false", "float32 activations before nonlinearities")
      .unmodelled("replicate_quant_scale", "false", "replicated quantization scales")
      .unmodelled("use_qwix_quantization", "false", "quantization through Qwix instead of AQT")
      .unmodelled("dropout_rate", "0.0", "dropout masks")
      .unmodelled("cast_logits_to_fp32", "true", "bfloat16 logits")
      .unmodelled("float32_qk_product", "false", "float32 attention scores (dot_product attention)")
      .unmodelled("float32_logits", "false", "float32 softmax inputs (dot_product attention)")
      .unmodelled("logits_dot_in_fp32", "false", "the output projection in float32")
      .unmodelled("mtp_num_layers", "0", "multi-token prediction layers")
      .unmodelled("use_ring_of_experts", "false", "ring-of-experts dispatch")
      .unmodelled("expert_shard_attention_option", "fsdp", "how attention is sharded on the expert axis")
      .unmodelled("moe_fsdp_use_two_stage_all_gather", "false", "experts' weights gathered in two all-gathers")
      .unmodelled("n_routing_groups", "-1", "group-limited routing (DeepSeek): fewer all-to-all destinations")
      .unmodelled("topk_routing_group", "-1", "group-limited routing (DeepSeek): fewer all-to-all destinations")
      .unmodelled("use_batch_split_schedule", "false", "batch split to overlap expert all-to-alls")
      .unmodelled("num_layers_per_pipeline_stage", "1", "pipeline layout")
      .unmodelled("num_pipeline_repeats", "-1", "circular pipeline repeats")
      .unmodelled("pipeline_parallel_layers", "-1", "pipelining a subset of the layers")
      .unmodelled("num_pipeline_microbatches", "-1", "pipeline microbatches")
      .unmodelled("pipeline_delay_activation_forwarding", "false", "pipeline activation forwarding delay")
      .unmodelled("model_fsdp_ag_once", "false", "all-gather the weights once per step (ZeRO-1 style)")
      .unmodelled("pipeline_fsdp_ag_once", "false", "all-gather the weights once per pipeline")
      .unmodelled("scan_pipeline_iterations", "true", "pipeline iterations unrolled")
      .unmodelled("scan_layers_per_stage", "false", "layers of a stage scanned")
      .unmodelled("set_remat_policy_on_pipeline_iterations", "true", "remat around pipeline iterations")
      .unmodelled("set_remat_policy_on_layers_per_stage", "false", "remat around each stage's layers")
      .unmodelled("optimizer_memory_host_offload", "false", "optimizer state in host memory")
      .unmodelled("parameter_memory_host_offload", "false", "parameters in host memory")
      .unmodelled("moba", "false", "mixture-of-block attention")
      .unmodelled("hardware", "tpu", "not a TPU")
      .unmodelled("mesh_axes", nullptr, "another set or order of mesh axes")
      .unmodelled("data_sharding", nullptr, "another sharding of the input batch")
      .unmodelled("input_data_sharding_logical_axes", nullptr, "another sharding of the input batch")
      .unmodelled("sa_q_layout", "HEAD_DIM_MINOR", "another memory layout of the splash kernel's Q")
      .unmodelled("sa_k_layout", "HEAD_DIM_MINOR", "another memory layout of the splash kernel's K")
      .unmodelled("sa_v_layout", "HEAD_DIM_MINOR", "another memory layout of the splash kernel's V")
      .unmodelled("context_parallel_load_balance", "true", "context parallelism without load balancing")
      .unmodelled("use_multimodal", "false", "a vision encoder")
      .unmodelled("use_dpo", "false", "DPO: a reference model's forward pass as well")
      .unmodelled("subslice_shape", "", "a sub-slice of the chips")
      .unmodelled("optimize_mesh_for_tpu_v6e", "false", "a reordered v6e device mesh")
      .unmodelled("max_checkify", "false", "runtime checks in the step")
      .unmodelled("tile_activation_dim", "1024", "an older megablox tile")
      .unmodelled("tile_weight_dim", "1024", "an older megablox tile");
}

void add_ignored_keys(MaxTextKeyTable& t) {
  t.ignored({"run_name",
             "base_output_directory",
             "metrics_file",
             "gcs_metrics",
             "save_config_to_gcs",
             "jax_cache_dir",
             "log_period",
             "log_config",
             "record_internal_nn_metrics",
             "enable_tensorboard",
             "use_vertex_tensorboard",
             "vertex_tensorboard_project",
             "vertex_tensorboard_region",
             "prometheus_port",
             "enable_checkpoint_cloud_logger",
             "enable_checkpoint_standard_logger",
             "collect_stack_trace",
             "stack_trace_to_cloud",
             "stack_trace_interval_seconds",
             "jax_debug_log_modules",
             "jax_distributed_initialization_timeout",
             "skip_jax_distributed_system",
             "enable_single_controller",
             "colocated_python_data_input"},
            "names, output paths, logging and process setup: outside the step");
  t.ignored({"load_parameters_path",
             "lora_input_adapters_path",
             "load_full_state_path",
             "enable_checkpointing",
             "save_checkpoint_on_completion",
             "async_checkpointing",
             "checkpoint_period",
             "enable_single_replica_ckpt_restoring",
             "force_unroll",
             "checkpoint_storage_target_data_file_size_bytes",
             "checkpoint_storage_use_ocdbt",
             "checkpoint_storage_use_zarr3",
             "checkpoint_storage_concurrent_gb",
             "enable_orbax_v1",
             "checkpoint_conversion_fn",
             "source_checkpoint_layout",
             "enable_multi_tier_checkpointing",
             "multi_tier_checkpointing_backup_interval_minutes",
             "mtc_data_parallelism",
             "enable_emergency_checkpoint",
             "local_checkpoint_directory",
             "local_checkpoint_period",
             "use_replicator_service",
             "replicator_backup_interval_minutes",
             "checkpoint_is_quantized",
             "save_quantized_params_path"},
            "checkpointing: saving and loading happen between steps");
  t.ignored({"learning_rate",
             "cosine_learning_rate_final_fraction",
             "warmup_steps_fraction",
             "learning_rate_schedule_steps",
             "adam_b1",
             "adam_b2",
             "adam_eps",
             "adam_eps_root",
             "adam_weight_decay",
             "steps",
             "init_weights_seed",
             "target_eval_loss",
             "load_balance_loss_weight",
             "mtp_loss_scaling_factor",
             "mtp_eval_target_module",
             "normalization_layer_epsilon",
             "routed_scaling_factor",
             "norm_topk_prob",
             "mlp_activations_limit",
             "normalize_embedding_logits",
             "enable_dropout",
             "dpo_label_smoothing",
             "dpo_beta",
             "sft_train_on_completion_only",
             "use_sft",
             "enable_padding_causal_mask",
             "quantization_calibration_method",
             "quantization_local_shard_count",
             "constant_bound_config"},
            "numerical values of a step of the same shape: hyperparameters, constants, loss weights, masks");
  t.ignored({"gradient_clipping_threshold"},
            "global-norm clipping: a scalar all-reduce and an elementwise scale, small next to the step");
}

void add_ignored_numeric_keys(MaxTextKeyTable& t) {
  t.ignored({"rope_type", "rope_linear_scaling_factor", "rope_use_scale", "rope_min_timescale", "rope_max_timescale",
             "local_rope_max_timescale", "max_position_embeddings", "original_max_position_embeddings", "rope_factor",
             "beta_fast", "beta_slow", "mscale", "rope_interleave", "rope_truncate", "rope_attention_scaling",
             "use_untrainable_positional_embedding", "temperature_tuning"},
            "position encodings' constants and query scaling: the same elementwise work whatever their values");
  t.ignored({"reuse_example_batch",
             "tokenizer_path",
             "tokenizer_type",
             "use_chat_template",
             "tokenize_train_data",
             "tokenize_eval_data",
             "add_bos",
             "add_eos",
             "expansion_factor_real_data",
             "eval_per_device_batch_size",
             "max_corpus_chars",
             "train_data_columns",
             "train_image_column",
             "eval_data_columns",
             "eval_image_column",
             "train_data_column",
             "eval_data_column",
             "packing",
             "num_epoch",
             "generate_padding_batch_train",
             "generate_padding_batch_eval",
             "dataset_type",
             "dataset_path",
             "dataset_name",
             "eval_dataset_name",
             "train_split",
             "eval_split",
             "hf_path",
             "hf_data_dir",
             "hf_train_files",
             "hf_eval_split",
             "hf_eval_files",
             "hf_access_token",
             "grain_train_files",
             "grain_eval_files",
             "grain_file_type",
             "grain_worker_count",
             "grain_worker_count_eval",
             "enable_data_shuffling",
             "data_shuffle_seed",
             "eval_interval",
             "eval_steps"},
            "input data and evaluation: the step trains on a batch of the configured shape (the recipes use "
            "synthetic data)");
  t.ignored({"profiler",
             "upload_all_profiler_results",
             "skip_first_n_steps_for_profiler",
             "profiler_steps",
             "profile_cleanly",
             "profile_periodically_period",
             "dump_hlo",
             "dump_step",
             "dump_hlo_local_dir",
             "dump_hlo_delete_local_after",
             "dump_hlo_gcs_dir",
             "dump_hlo_local_module_name",
             "dump_hlo_module_name",
             "dump_hlo_xla_flags",
             "dump_hlo_upload_all",
             "enable_goodput_recording",
             "monitor_goodput",
             "goodput_upload_interval_seconds",
             "enable_pathways_goodput",
             "monitor_step_time_deviation",
             "step_deviation_interval_seconds",
             "enable_gcp_goodput_metrics",
             "enable_gcp_step_deviation_metrics",
             "report_heartbeat_metric_for_gcp_monitoring",
             "heartbeat_reporting_interval_in_seconds",
             "report_performance_metric_for_gcp_monitoring",
             "enable_jax_profiler",
             "jax_profiler_port"},
            "profiling, HLO dumps and monitoring: observe the step without changing it");
  t.ignored({"compiled_trainstep_file", "compile_topology", "compile_topology_num_slices", "num_slices", "shardy",
             "sharding_tolerance", "param_scan_axis", "inhomogeneous_layer_cycle_interval", "enable_nnx"},
            "compilation and bookkeeping: tpusim takes the slices from the pod; the rest changes how the program is "
            "built or checked, not the step it runs");
}

void add_ignored_other_keys(MaxTextKeyTable& t) {
  t.ignored({"max_prefill_predict_length",
             "prompt",
             "load_from_prefill_dir",
             "prefill_cache_dir",
             "autoregressive_decode_assert",
             "decode_sampling_strategy",
             "decode_sampling_nucleus_p",
             "decode_sampling_top_k",
             "decode_sampling_temperature",
             "inference_microbenchmark_prefill_lengths",
             "inference_microbenchmark_stages",
             "inference_microbenchmark_loop_iters",
             "inference_microbenchmark_log_file_path",
             "inference_microbenchmark_num_samples",
             "inference_microbenchmark_prefix_cache_entries_num",
             "inference_microbenchmark_prefix_cache_common_prefix_proportion",
             "inference_metadata_file",
             "inference_server",
             "prefill_slice",
             "generate_slice",
             "inference_benchmark_test",
             "enable_model_warmup",
             "enable_llm_inference_pool",
             "multi_sampling",
             "return_log_prob",
             "stack_prefill_result_cache",
             "prefill_cache_axis_order",
             "ar_cache_axis_order",
             "compute_axis_order",
             "reshape_q",
             "use_ragged_attention",
             "ragged_block_size",
             "pagedattn_num_pages",
             "pagedattn_tokens_per_page",
             "pagedattn_pages_per_compute_block",
             "pagedattn_max_pages_per_group",
             "pagedattn_head_dim_alignment",
             "prefill_chunk_size",
             "use_chunked_prefill",
             "enable_prefix_caching",
             "prefix_caching_hbm_byte",
             "prefix_caching_dram_byte",
             "quantize_kvcache",
             "kv_quant_axis",
             "kv_quant_dtype",
             "model_call_mode",
             "quant_cfg_path",
             "mla_naive_kvcache"},
            "inference and decoding: a training step has no KV cache, prefill or sampling");
  t.ignored({"moba_chunk_size", "moba_topk"}, "used only with moba: true, itself unmodelled");
  t.ignored({"freeze_vision_encoder_params",
             "dtype_mm",
             "remat_policy_for_vit",
             "image_size_for_vit",
             "image_path",
             "image_placeholder",
             "posemb_type_for_vit",
             "max_num_images_per_example",
             "hidden_size_for_vit",
             "intermediate_size_for_vit",
             "num_attention_heads_for_vit",
             "num_channels_for_vit",
             "tile_size_for_vit",
             "patch_size_for_vit",
             "conv_stride_for_vit",
             "num_hidden_layers_for_vit",
             "projector_input_dim_for_vit",
             "projector_output_dim_for_vit",
             "rope_theta_for_vit",
             "vision_output_dim_for_vit",
             "pixel_shuffle_ratio_for_vit",
             "projector_dropout_for_vit"},
            "the vision encoder: used only with use_multimodal: true, itself unmodelled");
}

}  // namespace

const MaxTextKeyTable& maxtext_keys() {
  static const MaxTextKeyTable table = [] {
    MaxTextKeyTable t;
    add_model_keys(t);
    add_model_structure_keys(t);
    add_run_keys(t);
    add_mesh_keys(t);
    add_unmodelled_keys(t);
    add_ignored_keys(t);
    add_ignored_numeric_keys(t);
    add_ignored_other_keys(t);
    return t;
  }();
  return table;
}

bool same_value(const std::string& written, const std::string& neutral) {
  double a = 0, b = 0;
  if (as_number(written, a) && as_number(neutral, b)) return a == b;
  const std::string w = lower(written), n = lower(neutral);
  return w == n;
}

}  // namespace workloads
