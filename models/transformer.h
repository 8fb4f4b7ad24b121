#pragma once
// A decoder-only Transformer language model (GPT-style, pre-layer-norm):
//   serial:   embedding -> L x [x + Attn(LN1(x)), h + MLP(LN2(h))] -> LN -> logits -> loss
//   parallel: embedding -> L x [x + Attn(LN(x)) + MLP(LN(x))] -> ...   (PaLM, GPT-J)
// Causal self-attention with `heads` query heads of `head_dim` each and
// `kv_heads` key/value heads (grouped-query attention, Ainslie et al. 2023,
// arXiv:2305.13245; kv_heads = 1 is multi-query attention, Shazeer 2019,
// arXiv:1911.02150, as PaLM uses; kv_heads = heads is multi-head); d_model
// need not equal heads x head_dim. Attention is either materialized (the
// T x T scores and probabilities go through HBM, softmax is its own op) or
// flash (Dao et al. 2022, arXiv:2205.14135: one fused kernel keeps them in
// VMEM, skips the blocks causal masking removes, and recomputes S in the
// backward pass). No biases in the linear layers, LayerNorm with scale and
// bias, positions without parameters (rotary or none), no dropout. The MLP is
//   relu:   W_down ReLU(W_up x)                     2 d_model d_ff params (MaxText's default)
//   gelu:   W_down GELU(W_up x)                     2 d_model d_ff params (GPT-2/3)
//   swiglu: W_down (SiLU(W_gate x) * W_up x)         3 d_model d_ff params (PaLM, LLaMA)
//   geglu:  W_down (GELU(W_gate x) * W_up x)         3 d_model d_ff params (Gemma)
// Each optional mechanism (multi-head latent attention, sliding windows,
// query/key and post norms, mixtures of experts on some layers, vocabulary
// tiling) is off by default and lives in its own file: attention.*, mla.*,
// mlp_block.*, moe.*, lm_head.*. Formulas, sources and what is stashed for
// backward: docs/models.md.
#include <cstdint>
#include <vector>

#include "models/model_spec.h"
#include "models/transformer_config.h"

namespace models {

// The model for `batch` sequences of cfg.seq_len tokens. Layers, in order:
// "embedding", "block0" .. "block<L-1>", "output" (final norm + logits),
// "loss" (softmax cross-entropy). Throws std::invalid_argument on a zero
// size, an unknown mlp variant, an inconsistent option or batch 0. A block
// with experts has LayerSpec::routing_layer = its index among such blocks
// (so a routing of moe_layers() layers covers them).
ModelSpec build_transformer(const TransformerConfig& cfg, std::uint64_t batch);

// Inference (docs/serving.md): forward passes only, no loss, no backward
// ops, nothing stashed.
// The prompt's forward pass (prefill) of `batch` sequences of cfg.seq_len
// tokens: build_transformer's layers up to the logits, which are computed
// for each sequence's last token only (the one the next token is sampled
// from). Each block's K and V projections write the KV cache.
ModelSpec build_transformer_prefill(const TransformerConfig& cfg, std::uint64_t batch);
// One decode step: a new token for each of `batch` sequences whose KV caches
// hold `context` tokens, this step's included. The linear layers are
// batch-row matmuls that read every weight once; each block's attention
// reads every sequence's cached K and V once. The batch x kv_heads
// instances of the query group's (heads / kv_heads rows) product with its
// own K (or V) are folded along n, one matmul of n = instances x context
// (for P V: instances x head_dim): its B operand is exactly the cache's
// bytes, and a weight-stationary array loads the same tiles the instances
// would load one after another; its split by tensor parallelism divides
// the kv heads.
ModelSpec build_transformer_decode(const TransformerConfig& cfg, std::uint64_t batch, std::uint64_t context);

// A prompt chunk of a chunked-prefill step: `tokens` of a prompt whose
// first `prior` tokens are already in the KV cache.
struct PromptChunk {
  std::uint64_t tokens = 0, prior = 0;
  bool operator<(const PromptChunk& o) const { return tokens != o.tokens ? tokens < o.tokens : prior < o.prior; }
  bool operator==(const PromptChunk& o) const { return tokens == o.tokens && prior == o.prior; }
};
// One step of chunked prefill (Sarathi-Serve, vLLM): `batch` decoding
// sequences whose caches hold `context` tokens, as build_transformer_decode,
// and the prompt chunks `chunks`, all batch + sum(tokens) rows through the
// linear layers at once (the weights read once). Each chunk's attention is
// its own pair of matmuls per block, its group x tokens query rows of each
// kv head over the keys they see: the cache's prior tokens and the chunk's
// own under the causal mask, prior + (tokens + 1) / 2 on the mean (exact
// FLOPs for an odd chunk); logits for each decoding sequence and each
// chunk's last token. No chunks: build_transformer_decode.
ModelSpec build_transformer_mixed(const TransformerConfig& cfg, std::uint64_t batch, std::uint64_t context,
                                  const std::vector<PromptChunk>& chunks);

}  // namespace models
