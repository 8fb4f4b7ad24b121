#pragma once
// The attention of a Transformer block, in the pieces the block assembles
// (models/transformer.cpp) in execution order:
//  - the projections of grouped-query attention (Ainslie et al. 2023,
//    arXiv:2305.13245): Q, K, V = LN1(x) W_q, W_k, W_v, with optional
//    query/key norms (qk_norm: a norm over each head, as Qwen3 and Llama 4
//    Scout apply before the rotary embedding); multi-head latent attention
//    has its own (models/mla.h);
//  - the core softmax(Q K^T) V over batch x heads, forward and backward,
//    materialized or flash, causal and optionally within a sliding window;
//  - the output projection W_o, with an optional post-attention norm
//    (post_norms: Gemma 2/3's norm of the attention output before the
//    residual add).
// Formulas and what each piece stashes: docs/models.md.
#include <cstdint>
#include <string>

#include "models/block_parts.h"

namespace models {

// W_q, W_k, W_v (and the query/key norms' scales) of block `n`.
void add_gqa_params(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);
// Their forward matmuls (with their backward ones) and norms. Returns the
// ops whose results the score matmul reads.
Names add_gqa_projections(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);
// The ops whose backward produces the gradient of LN1's output, and the
// projections' backward norms (after the core's backward).
Names gqa_input_grads(const BlockNames& n);
void add_gqa_backward_norms(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);
// Q, K, V (and the norms' inputs) kept for the backward pass.
void add_gqa_stash(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);

// scores = Q K^T, P = softmax(scores), context = P V, after `q_ready` (the
// ops producing Q and K) and `v_ready` (producing V).
void add_attention_core_forward(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n,
                                const Names& q_ready, const Names& v_ready);
// Their backward: dV, dP, dS, dQ, dK (flash: recomputing S and P).
void add_attention_core_backward(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);
// The softmax's output (materialized) or log-sum-exp (flash), and the
// context, kept for the backward pass.
void add_attention_core_stash(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);

// The output projection W_o (and the post-attention norm's scale), and its
// forward matmul, post-attention norm and (serial blocks) residual add;
// `out` the tensor it writes, `bwd_after` the op producing its output's
// gradient.
void add_output_projection_params(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);
void add_output_projection(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n,
                           const std::string& out, const std::string& bwd_after);
// The post-attention norm's input, kept for its backward.
void add_output_projection_stash(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);

}  // namespace models
