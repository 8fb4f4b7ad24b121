#pragma once
// A decoder-only Transformer language model (GPT-style, pre-layer-norm):
//   embedding -> L x [x + Attn(LN1(x)), h + MLP(LN2(h))] -> LN -> logits -> loss
// Multi-head causal self-attention with `heads` heads of `head_dim` each
// (d_model need not equal heads x head_dim: W_q/W_k/W_v map d_model to
// heads x head_dim and W_o maps back). No biases in the linear layers,
// LayerNorm with scale and bias, positions without parameters (rotary or
// none), no dropout. The MLP is either
//   gelu:   W_down GELU(W_up x)                     2 d_model d_ff params (GPT-2/3)
//   swiglu: W_down (SiLU(W_gate x) * W_up x)         3 d_model d_ff params (PaLM, LLaMA)
// Formulas and what is stashed for backward: docs/models.md.
#include <cstdint>
#include <string>

#include "models/model_spec.h"

namespace models {

struct TransformerConfig {
  std::uint64_t layers = 0;
  std::uint64_t d_model = 0;
  std::uint64_t d_ff = 0;
  std::uint64_t heads = 0;
  std::uint64_t head_dim = 0;
  std::uint64_t seq_len = 0;
  std::uint64_t vocab = 0;
  bool tied_embeddings = false;  // the unembedding reuses the embedding table (transposed)
  std::string mlp = "gelu";      // gelu | swiglu
};

// The model for `batch` sequences of cfg.seq_len tokens. Layers, in order:
// "embedding", "block0" .. "block<L-1>", "output" (final norm + logits),
// "loss" (softmax cross-entropy). Throws std::invalid_argument on a zero
// size, an unknown mlp variant or batch 0.
ModelSpec build_transformer(const TransformerConfig& cfg, std::uint64_t batch);

}  // namespace models
