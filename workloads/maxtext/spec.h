#pragma once
// MaxText's configuration as typed values (docs/maxtext.md): what
// load_maxtext_config (config.h) gives from `model_name`, the model file
// configs/maxtext/models/<model_name>.yml, MaxText's base.yml defaults
// (configs/maxtext/base.yml) and the user's keys. Names follow MaxText's
// keys (AI-Hypercomputer/maxtext src/MaxText/configs/base.yml at tag
// tpu-recipes-v0.1.5, commit 50bafeb98299458f73d853b1325787a6d241d10c), so a
// field is found by the key that sets it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/params.h"
#include "workloads/train/remat_policy.h"

namespace workloads {

// dtype, weight_dtype, grad_dtype, mu_dtype: MaxText passes them to
// jax.numpy.dtype; these are the spellings its configs use.
enum class MaxTextDtype { bfloat16, float32, float16 };
const sim::EnumNames<MaxTextDtype>& maxtext_dtype_names();

// decoder_block: which layer MaxText builds (common_types.py DecoderBlockType).
enum class DecoderBlock {
  default_block,
  llama2,
  mistral,
  mixtral,
  deepseek,
  gemma,
  gemma2,
  gemma3,
  qwen3,
  qwen3_moe,
  gpt3,
  gpt_oss,
  simple,
  simple_mlp,
  llama4
};
const sim::EnumNames<DecoderBlock>& decoder_block_names();

// attention: the kernel (pyconfig.py validate_attention_kernel).
enum class AttentionKernel { autoselected, dot_product, flash, cudnn_flash_te, cudnn_flash_jax, paged };
const sim::EnumNames<AttentionKernel>& attention_kernel_names();

// attention_type: global (causal), local_sliding (a window of
// sliding_window_size keys), chunk (causal within chunks of
// chunk_attn_window_size), mla (multi-head latent attention, DeepSeek),
// full (not causal).
enum class AttentionType { global, local_sliding, chunk, mla, full };
const sim::EnumNames<AttentionType>& attention_type_names();

// remat_policy (layers/decoders.py get_remat_policy): which named tensors of
// a decoder layer are saved for the backward pass, offloaded to host memory,
// or recomputed. effective_remat() spells each policy out per tensor.
enum class RematPolicy {
  full,
  minimal,
  minimal_with_context,
  save_dot_with_context_except_mlp,
  save_dot_except_mlpwi,
  save_dot_except_mlp,
  save_qkv_proj,
  qkv_proj_offloaded,
  minimal_offloaded,
  custom,
  save_out_proj
};
const sim::EnumNames<RematPolicy>& remat_policy_names();

// One named tensor's fate under remat_policy (the training step's
// TensorPlace, remat_policy.h): kept in HBM for the backward pass (device),
// recomputed in it (remat), or copied to pinned host memory in the forward
// pass and back for the backward (offload).

// The per-tensor keys, each device | remat | offload (base.yml defaults:
// decoder_layer_input device, the rest remat). They take effect only under
// remat_policy: custom; effective_remat() gives every policy's placements.
struct RematTensors {
  TensorPlace decoder_layer_input = TensorPlace::device;
  TensorPlace context = TensorPlace::remat;  // attention output before the output projection
  TensorPlace mlpwi = TensorPlace::remat;    // MLP up projection (not gated)
  TensorPlace mlpwi_0 = TensorPlace::remat;  // gated MLP: the gate projection
  TensorPlace mlpwi_1 = TensorPlace::remat;  // gated MLP: the up projection
  TensorPlace mlpwo = TensorPlace::remat;    // MLP down projection
  TensorPlace query_proj = TensorPlace::remat;
  TensorPlace key_proj = TensorPlace::remat;
  TensorPlace value_proj = TensorPlace::remat;
  TensorPlace qkv_proj = TensorPlace::remat;  // fused_qkv's one projection
  TensorPlace out_proj = TensorPlace::remat;
};

// quantization: "" (bf16 matmuls), int8 (AQT int8), intmp (mixed, for
// inference), fp8, fp8_full (fp8 with static scaling), fp8_gpu, fp8_nanoo,
// nanoo_fp8 (GPU formats).
enum class Quantization { none, int8, intmp, fp8, fp8_full, fp8_gpu, fp8_nanoo, nanoo_fp8 };
const sim::EnumNames<Quantization>& quantization_names();

// opt_type.
enum class OptimizerType { adamw, adam_pax, sgd };
const sim::EnumNames<OptimizerType>& optimizer_type_names();

// The architecture: the model file's keys over base.yml's. Dimensions are
// after global_parameter_scale (pyconfig.py user_init): emb_dim =
// 2^e base_emb_dim and so on, the exponents from get_individual_scales.
struct MaxTextModel {
  std::string name = "default";  // model_name
  DecoderBlock decoder_block = DecoderBlock::llama2;
  std::uint32_t global_parameter_scale = 1;
  std::uint64_t base_emb_dim = 0, base_num_query_heads = 0, base_num_kv_heads = 0, base_mlp_dim = 0,
                base_moe_mlp_dim = 0, base_num_decoder_layers = 0;
  std::uint64_t emb_dim = 0, num_query_heads = 0, num_kv_heads = 0, mlp_dim = 0, moe_mlp_dim = 0,
                num_decoder_layers = 0;
  std::uint64_t head_dim = 0;
  std::uint64_t vocab_size = 0;
  std::vector<std::string> mlp_activations;   // two entries: a gated MLP (SwiGLU, GeGLU)
  bool logits_via_embedding = false;          // tied input and output embeddings
  bool use_iota_embed = false;                // embedding lookup as a one-hot matmul
  std::int64_t trainable_position_size = -1;  // > 0: a learned position embedding of this many rows (GPT-3)
  bool fused_qkv = false, fused_mlp = false;
  bool attention_bias = false, mlp_bias = false;
  bool use_post_attn_norm = false, use_post_ffw_norm = false, use_qk_norm = false;
  // Mixture of experts (num_experts 1: dense).
  std::uint64_t num_experts = 1, num_experts_per_tok = 1, shared_experts = 0, first_num_dense_layers = 0;
  std::uint64_t interleave_moe_layer_step = 1;  // llama4: every Nth layer is a MoE layer
  std::string routed_score_func;                // "" softmax, "sigmoid" (DeepSeek V3)
  bool routed_bias = false;
  // Attention.
  AttentionType attention_type = AttentionType::global;
  std::uint64_t sliding_window_size = 0;     // local layers' window (gemma2/3, gpt-oss; local_sliding)
  std::uint64_t chunk_attn_window_size = 0;  // llama4's chunked attention
  std::int64_t nope_layer_interval = -1;     // llama4: every Nth layer without RoPE
  bool attention_sink = false;               // gpt-oss: a learned sink logit per head
  double attn_logits_soft_cap = 0.0, final_logits_soft_cap = 0.0;  // 0: none
  // Multi-head latent attention (attention_type: mla).
  std::uint64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  bool moe() const { return num_experts > 1; }
  bool gated_mlp() const { return mlp_activations.size() > 1; }
  // What MaxText's decoder code makes of these keys (layers/<block>.py at
  // 50bafeb; docs/maxtext.md, "Decoder blocks"):
  // The routed experts' MLP width: moe_mlp_dim for the deepseek, llama4 and
  // qwen3_moe blocks, mlp_dim for the others (mixtral, gpt_oss).
  std::uint64_t expert_mlp_dim() const;
  // Shared experts beside the routed ones: shared_experts for deepseek and
  // llama4 (each moe_mlp_dim wide), 0 for every other block (base.yml's
  // default of 1 is not used by them).
  std::uint64_t shared_experts_in_use() const;
  // One entry per Transformer layer, in order (gemma2 scans pairs of a local
  // and a global layer, so it has 2 x num_decoder_layers).
  struct Layer {
    AttentionType attention = AttentionType::global;
    std::uint64_t window = 0;  // local_sliding: keys before each query; chunk: the chunk length
    bool moe = false;          // a mixture-of-experts MLP (else dense, mlp_dim)
    bool rope = true;          // false: a llama4 NoPE layer
  };
  std::vector<Layer> layers() const;
};

// Splash (flash) attention tiling, sa_* keys (default 512 each).
struct SplashBlocks {
  std::uint64_t q = 512, kv = 512, kv_compute = 512, q_dkv = 512, kv_dkv = 512, kv_dkv_compute = 512, q_dq = 512,
                kv_dq = 512;
  bool use_fused_bwd_kernel = false;
};

// Mixture-of-experts execution.
struct MoeExecution {
  bool megablox = true;         // grouped-matmul kernel for the routed experts
  bool sparse_matmul = true;    // sort tokens by expert, ragged matmuls (false: dense, capacity-padded einsums)
  double capacity_factor = -1;  // > 0: tokens over capacity_factor x the balanced load are dropped; -1 dropless
  bool use_custom_sort_vjp = true;
  bool use_random_routing = false;
  bool fsdp_shard_on_exp = false;  // expert weights' expert dimension sharded over fsdp
  bool moe_fsdp_use_two_stage_all_gather = false;
  std::uint64_t tile_batch_seq = 512, tile_embed_dim = 1024, tile_mlp_dim = 1024;  // megablox GMM tiles
};

// The mesh axes, in MaxText's order (base.yml mesh_axes at 50bafeb). ICI
// axes join chips inside a slice, DCN axes join slices; each mesh axis is
// ici x dcn chips.
enum class MaxTextAxis {
  data,
  stage,
  fsdp,
  fsdp_transpose,
  sequence,
  context,
  context_autoregressive,
  tensor,
  tensor_transpose,
  tensor_sequence,
  expert,
  autoregressive
};
constexpr std::size_t kMaxTextAxes = 12;
const sim::EnumNames<MaxTextAxis>& maxtext_axis_names();

// ici_*_parallelism and dcn_*_parallelism as given (-1: fill), then, after
// fill_mesh (mesh.h), as MaxText builds the mesh.
struct MaxTextMesh {
  std::int64_t ici[kMaxTextAxes] = {1, 1, -1, 1, 1, 1, 1, 1, 1, 1, 1, 1};  // base.yml: ici_fsdp -1
  std::int64_t dcn[kMaxTextAxes] = {-1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};  // base.yml: dcn_data -1
  std::uint64_t size(MaxTextAxis a) const {
    const auto i = static_cast<std::size_t>(a);
    return static_cast<std::uint64_t>(ici[i] * dcn[i]);
  }
  bool allow_split_physical_axes = false;
  std::string custom_mesh;  // "" or hybrid_ring_64x4 | hybrid_ring_32x8
};

// base.yml logical_axis_rules: a logical dimension name ('embed', 'mlp',
// 'activation_batch', ...) and the mesh axes that may shard it. A name may
// have several rules, tried in order (axis_rules.h).
struct AxisRule {
  std::string logical;
  std::vector<MaxTextAxis> mesh;
};
using LogicalAxisRules = std::vector<AxisRule>;

// One key of the user's config (or of a model file) that the report lists:
// its name, the value as written, where it came from, and why it is listed.
struct ListedKey {
  std::string key, value, where, why;
};

// One libtpu/XLA flag of the recipe's LIBTPU_INIT_ARGS (xla_flags.h).
struct XlaFlag {
  std::string name;   // without the leading "--"
  std::string value;  // "true" when the flag has no "=value"
};

// What the modelled XLA flags say (the rest are listed in
// MaxTextConfig::ignored_keys or approximations).
struct XlaSettings {
  std::uint64_t scoped_vmem_limit_kib = 0;  // 0: the compiler's default
  // Windowed-einsum (collective matmul) threshold in MiB; -1: XLA's default.
  std::int64_t windowed_einsum_threshold_mib = -1;
  // Collectives run on the SparseCores instead of the TensorCores.
  bool sparse_core_all_gather = false, sparse_core_reduce_scatter = false, sparse_core_all_reduce = false;
  // Continuation (async collective) fusion: collectives overlapped inside compute fusions.
  bool async_collective_fusion = false;
  bool fuse_all_gather = false, fuse_all_reduce = false, fuse_reduce_scatter = false;
  // Data-parallel all-reduces across DCN optimised and pipelined.
  bool data_parallel_all_reduce_opt = false;
  std::map<std::string, std::string> flags;  // every flag of the string, name -> value
};

struct MaxTextConfig {
  MaxTextModel model;
  double per_device_batch_size = 12.0;
  std::uint64_t max_target_length = 2048;
  std::uint64_t gradient_accumulation_steps = 1;
  MaxTextDtype dtype = MaxTextDtype::bfloat16;        // activations and matmul inputs
  MaxTextDtype weight_dtype = MaxTextDtype::float32;  // stored parameters
  MaxTextDtype grad_dtype = MaxTextDtype::float32;
  MaxTextDtype mu_dtype = MaxTextDtype::float32;  // Adam's first moment
  bool mu_dtype_follows_weights = true;           // mu_dtype "" (base.yml): mu_dtype = weight_dtype
  OptimizerType opt_type = OptimizerType::adamw;
  Quantization quantization = Quantization::none;
  bool scan_layers = true;
  RematPolicy remat_policy = RematPolicy::full;
  RematTensors remat_tensors;  // the per-tensor keys as given (used under custom)
  AttentionKernel attention = AttentionKernel::autoselected;
  SplashBlocks splash;
  MoeExecution moe;
  std::uint64_t num_vocab_tiling = 1;
  bool shard_optimizer_over_data = false;  // ZeRO-1 over the data axis
  MaxTextMesh mesh;                        // filled: every entry >= 1
  LogicalAxisRules logical_axis_rules;     // base.yml's, with the model file's merged in
  std::uint32_t chips = 0, slices = 0;     // as given to load_maxtext_config
  XlaSettings xla;
  bool allow_unmodelled = false;
  bool override_model_config = false;
  // Keys read but with no effect on performance (name, value, why), and
  // keys that change performance in a way tpusim does not model, accepted
  // with allow_unmodelled: true; each in the order given.
  std::vector<ListedKey> ignored_keys, approximations;

  // per_device_batch_size x chips x gradient_accumulation_steps sequences
  // (pyconfig.py calculate_global_batch_sizes; one JAX device per chip).
  std::uint64_t global_batch() const;
  // Every named tensor's placement under remat_policy.
  RematTensors effective_remat() const;
};

}  // namespace workloads
