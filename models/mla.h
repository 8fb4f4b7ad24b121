#pragma once
// Multi-head latent attention (DeepSeek-V2, DeepSeek-AI 2024,
// arXiv:2405.04434 s.2.1; DeepSeek-V3, arXiv:2412.19437 s.2.1): the
// projections that replace grouped-query attention's W_q, W_k, W_v when
// kv_lora_rank > 0. With x = LN1(input), per token:
//   c_Q = x W_DQ                      d_model -> q_lora_rank    (when q_lora_rank > 0)
//   q   = norm(c_Q) W_UQ              q_lora_rank -> heads x (nope + rope)
//                                     (q_lora_rank 0: q = x W_Q, d_model -> heads x (nope + rope))
//   [c_KV, k_rope] = x W_DKV          d_model -> kv_lora_rank + rope (one rotary key shared by the heads)
//   [k_nope, v] = norm(c_KV) W_UKV    kv_lora_rank -> heads x (nope + v_head_dim)
//   k   = [k_nope, k_rope]            heads x (nope + rope)
// The attention core then runs on query/key heads of nope + rope and value
// heads of v_head_dim (models/attention.h), and W_o maps heads x v_head_dim
// back to d_model. The two down-projections are replicated over tensor
// parallelism, the up-projections split by heads. The norms are RMSNorms
// with a scale (DeepSeek-V2 eq. 37 ff.), counted as norms here.
#include "models/block_parts.h"

namespace models {

void add_mla_params(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);
// The projections' forward matmuls (with their backward ones) and latent
// norms. Returns the ops whose results the score matmul reads.
Names add_mla_projections(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);
// The ops whose backward produces the gradient of LN1's output.
Names mla_input_grads(const BlockShape& shape, const BlockNames& n);
// The latent norms' backward (after the core's backward).
void add_mla_backward_norms(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);
// The latents, their norms' outputs, Q and [k_nope, V], kept for backward.
void add_mla_stash(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);

}  // namespace models
