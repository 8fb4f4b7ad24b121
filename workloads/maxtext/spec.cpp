#include "workloads/maxtext/spec.h"

#include <cmath>

namespace workloads {

const sim::EnumNames<MaxTextDtype>& maxtext_dtype_names() {
  static const sim::EnumNames<MaxTextDtype> names("dtype", {{MaxTextDtype::bfloat16, "bfloat16", ""},
                                                            {MaxTextDtype::float32, "float32", ""},
                                                            {MaxTextDtype::float16, "float16", ""}});
  return names;
}

const sim::EnumNames<DecoderBlock>& decoder_block_names() {
  static const sim::EnumNames<DecoderBlock> names("decoder block", {{DecoderBlock::default_block, "default", ""},
                                                                    {DecoderBlock::llama2, "llama2", ""},
                                                                    {DecoderBlock::mistral, "mistral", ""},
                                                                    {DecoderBlock::mixtral, "mixtral", ""},
                                                                    {DecoderBlock::deepseek, "deepseek", ""},
                                                                    {DecoderBlock::gemma, "gemma", ""},
                                                                    {DecoderBlock::gemma2, "gemma2", ""},
                                                                    {DecoderBlock::gemma3, "gemma3", ""},
                                                                    {DecoderBlock::qwen3, "qwen3", ""},
                                                                    {DecoderBlock::qwen3_moe, "qwen3_moe", ""},
                                                                    {DecoderBlock::gpt3, "gpt3", ""},
                                                                    {DecoderBlock::gpt_oss, "gpt_oss", ""},
                                                                    {DecoderBlock::simple, "simple", ""},
                                                                    {DecoderBlock::simple_mlp, "simple_mlp", ""},
                                                                    {DecoderBlock::llama4, "llama4", ""}});
  return names;
}

const sim::EnumNames<AttentionKernel>& attention_kernel_names() {
  static const sim::EnumNames<AttentionKernel> names(
      "attention kernel", {{AttentionKernel::autoselected, "autoselected", "flash on TPU for training"},
                           {AttentionKernel::dot_product, "dot_product", "plain einsums, the scores in HBM"},
                           {AttentionKernel::flash, "flash", "the Pallas splash-attention kernel"},
                           {AttentionKernel::cudnn_flash_te, "cudnn_flash_te", "GPU"},
                           {AttentionKernel::cudnn_flash_jax, "cudnn_flash_jax", "GPU"},
                           {AttentionKernel::paged, "paged", "inference"}});
  return names;
}

const sim::EnumNames<AttentionType>& attention_type_names() {
  static const sim::EnumNames<AttentionType> names(
      "attention type", {{AttentionType::global, "global", "causal over the whole sequence"},
                         {AttentionType::local_sliding, "local_sliding", "causal within sliding_window_size"},
                         {AttentionType::chunk, "chunk", "causal within chunks of chunk_attn_window_size"},
                         {AttentionType::mla, "mla", "multi-head latent attention"},
                         {AttentionType::full, "full", "not causal"}});
  return names;
}

const sim::EnumNames<RematPolicy>& remat_policy_names() {
  static const sim::EnumNames<RematPolicy> names(
      "remat policy", {{RematPolicy::full, "full", "recompute the whole layer"},
                       {RematPolicy::minimal, "minimal", "save every projection output, recompute the attention core"},
                       {RematPolicy::minimal_with_context, "minimal_with_context", "minimal and the attention output"},
                       {RematPolicy::minimal_with_context, "minimal_flash", "the old name of minimal_with_context"},
                       {RematPolicy::save_dot_with_context_except_mlp, "save_dot_with_context_except_mlp", ""},
                       {RematPolicy::save_dot_except_mlpwi, "save_dot_except_mlpwi", ""},
                       {RematPolicy::save_dot_except_mlp, "save_dot_except_mlp", ""},
                       {RematPolicy::save_qkv_proj, "save_qkv_proj", ""},
                       {RematPolicy::qkv_proj_offloaded, "qkv_proj_offloaded", "Q, K, V projections to host memory"},
                       {RematPolicy::minimal_offloaded, "minimal_offloaded", "every projection output to host memory"},
                       {RematPolicy::custom, "custom", "each named tensor as its own key says"},
                       {RematPolicy::save_out_proj, "save_out_proj", ""}});
  return names;
}

const sim::EnumNames<Quantization>& quantization_names() {
  static const sim::EnumNames<Quantization> names("quantization",
                                                  {{Quantization::none, "", "bfloat16 matmuls"},
                                                   {Quantization::int8, "int8", "AQT int8 matmuls"},
                                                   {Quantization::intmp, "intmp", "mixed precision for inference"},
                                                   {Quantization::fp8, "fp8", ""},
                                                   {Quantization::fp8_full, "fp8_full", "fp8 with static scaling"},
                                                   {Quantization::fp8_gpu, "fp8_gpu", ""},
                                                   {Quantization::fp8_nanoo, "fp8_nanoo", ""},
                                                   {Quantization::nanoo_fp8, "nanoo_fp8", ""}});
  return names;
}

const sim::EnumNames<OptimizerType>& optimizer_type_names() {
  static const sim::EnumNames<OptimizerType> names("optimizer",
                                                   {{OptimizerType::adamw, "adamw", ""},
                                                    {OptimizerType::adam_pax, "adam_pax", "Praxis-style Adam"},
                                                    {OptimizerType::sgd, "sgd", ""}});
  return names;
}

const sim::EnumNames<MaxTextAxis>& maxtext_axis_names() {
  static const sim::EnumNames<MaxTextAxis> names(
      "mesh axis", {{MaxTextAxis::data, "data", ""},
                    {MaxTextAxis::stage, "stage", "pipeline stages (ici/dcn_pipeline_parallelism)"},
                    {MaxTextAxis::fsdp, "fsdp", ""},
                    {MaxTextAxis::fsdp_transpose, "fsdp_transpose", ""},
                    {MaxTextAxis::sequence, "sequence", ""},
                    {MaxTextAxis::context, "context", ""},
                    {MaxTextAxis::context_autoregressive, "context_autoregressive", ""},
                    {MaxTextAxis::tensor, "tensor", ""},
                    {MaxTextAxis::tensor_transpose, "tensor_transpose", ""},
                    {MaxTextAxis::tensor_sequence, "tensor_sequence", ""},
                    {MaxTextAxis::expert, "expert", ""},
                    {MaxTextAxis::autoregressive, "autoregressive", ""}});
  return names;
}

std::uint64_t MaxTextModel::expert_mlp_dim() const {
  const bool moe_width = decoder_block == DecoderBlock::deepseek || decoder_block == DecoderBlock::llama4 ||
                         decoder_block == DecoderBlock::qwen3_moe;
  return moe_width ? moe_mlp_dim : mlp_dim;
}

std::uint64_t MaxTextModel::shared_experts_in_use() const {
  return decoder_block == DecoderBlock::deepseek || decoder_block == DecoderBlock::llama4 ? shared_experts : 0;
}

std::vector<MaxTextModel::Layer> MaxTextModel::layers() const {
  const Layer plain{attention_type, attention_type == AttentionType::local_sliding ? sliding_window_size : 0, moe(),
                    true};
  const Layer local{AttentionType::local_sliding, sliding_window_size, moe(), true};
  const Layer global{AttentionType::global, 0, moe(), true};
  std::vector<Layer> out;
  for (std::uint64_t i = 0; i < num_decoder_layers; ++i) {
    switch (decoder_block) {
      case DecoderBlock::gemma2:  // gemma2.py: each scanned layer is a local and a global layer
        out.push_back(local);
        out.push_back(global);
        break;
      case DecoderBlock::gemma3:  // gemma3.py GEMMA3_ATTENTION_PATTERN: five local, then one global
        out.push_back(i % 6 == 5 ? global : local);
        break;
      case DecoderBlock::gpt_oss:  // gpt_oss.py GPT_OSS_ATTENTION_PATTERN: local, global
        out.push_back(i % 2 == 1 ? global : local);
        break;
      case DecoderBlock::llama4: {  // llama4.py determine_is_nope_layer, determine_is_moe_layer
        Layer l;
        l.rope = !(nope_layer_interval > 0 && (i + 1) % static_cast<std::uint64_t>(nope_layer_interval) == 0);
        l.attention = l.rope ? AttentionType::chunk : AttentionType::global;
        l.window = l.rope ? chunk_attn_window_size : 0;
        l.moe = moe() && interleave_moe_layer_step > 0 && (i + 1) % interleave_moe_layer_step == 0;
        out.push_back(l);
        break;
      }
      case DecoderBlock::deepseek: {  // decoders.py: first_num_dense_layers dense layers, then MoE layers
        Layer l = plain;
        l.moe = moe() && i >= first_num_dense_layers;
        out.push_back(l);
        break;
      }
      default: out.push_back(plain);
    }
  }
  return out;
}

std::uint64_t MaxTextConfig::global_batch() const {
  // pyconfig.py calculate_global_batch_sizes: int(devices x per_device_batch_size) x accumulation steps.
  return static_cast<std::uint64_t>(std::floor(static_cast<double>(chips) * per_device_batch_size)) *
         gradient_accumulation_steps;
}

RematTensors MaxTextConfig::effective_remat() const {
  // layers/decoders.py get_remat_policy at 50bafeb: the names each policy
  // saves (device) or offloads; every other named tensor is recomputed. The
  // decoder layer's input is the scan's carry, kept on the device unless
  // custom says otherwise.
  using P = TensorPlace;
  RematTensors t;  // decoder_layer_input device, the rest remat
  auto set = [](std::initializer_list<P*> which, P p) {
    for (P* x : which) *x = p;
  };
  P* const q[] = {&t.query_proj, &t.key_proj, &t.value_proj, &t.qkv_proj};
  P* const mlp[] = {&t.mlpwi, &t.mlpwi_0, &t.mlpwi_1, &t.mlpwo};
  switch (remat_policy) {
    case RematPolicy::full: break;
    case RematPolicy::minimal_with_context: t.context = P::device; [[fallthrough]];
    case RematPolicy::minimal:
      for (P* x : q) *x = P::device;
      for (P* x : mlp) *x = P::device;
      t.out_proj = P::device;
      break;
    case RematPolicy::save_dot_with_context_except_mlp: t.context = P::device; [[fallthrough]];
    case RematPolicy::save_dot_except_mlp:
      for (P* x : q) *x = P::device;
      t.out_proj = P::device;
      break;
    case RematPolicy::save_dot_except_mlpwi:
      for (P* x : q) *x = P::device;
      set({&t.out_proj, &t.mlpwo}, P::device);
      break;
    case RematPolicy::save_qkv_proj:
      for (P* x : q) *x = P::device;
      break;
    case RematPolicy::qkv_proj_offloaded: set({&t.query_proj, &t.key_proj, &t.value_proj}, P::offload); break;
    case RematPolicy::minimal_offloaded:
      for (P* x : q) *x = P::offload;
      for (P* x : mlp) *x = P::offload;
      t.out_proj = P::offload;
      break;
    case RematPolicy::save_out_proj: t.out_proj = P::device; break;
    case RematPolicy::custom:
      t = remat_tensors;
      // pyconfig.py validate_and_assign_remat_tensors lists every named
      // tensor but qkv_proj, so under custom a fused QKV output is recomputed.
      t.qkv_proj = P::remat;
      break;
  }
  return t;
}

}  // namespace workloads
