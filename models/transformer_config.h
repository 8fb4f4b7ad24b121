#pragma once
// The sizes and options of a decoder-only Transformer (models/transformer.h
// builds it; docs/models.md describes every option), and which of its
// blocks have experts or a sliding window.
#include <cstdint>
#include <string>

#include "models/routing.h"

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
  // How tensor parallelism splits a tied embedding table: vocab (Megatron's
  // vocabulary-parallel table, the logits split over the vocabulary) or
  // d_model (each rank holds every token's slice of D, so the logits are
  // partial sums all-reduced over the vocabulary: JetStream-PyTorch's Gemma,
  // docs/serving.md#validation-against-measured-servers).
  std::string embedding_shard = "vocab";   // vocab | d_model
  std::string mlp = "gelu";                // relu | gelu | swiglu | geglu
  std::uint64_t kv_heads = 0;              // key/value heads; 0: as many as `heads`
  std::string attention = "materialized";  // materialized | flash
  std::string block = "serial";            // serial | parallel
  // Mixture of experts (docs/models.md#mixture-of-experts): experts > 0
  // replaces each block's MLP by a router and `experts` MLPs of
  // expert_d_ff (0: d_ff), each token going to top_k of them, plus
  // shared_experts MLPs every token goes through.
  std::uint64_t experts = 0;
  std::uint64_t top_k = 2;
  double capacity_factor = 0;  // 0: no capacity (dropless)
  std::uint64_t shared_experts = 0;
  std::uint64_t expert_d_ff = 0;
  RoutingConfig routing;
  // Which blocks have experts (docs/models.md#which-blocks-have-experts):
  // the first first_dense_layers keep a dense MLP of d_ff (DeepSeek-V3's
  // first_num_dense_layers), and after them every moe_layer_step-th block
  // ((i + 1) % step == 0) has experts (Llama 4 Maverick's interleave).
  std::uint64_t first_dense_layers = 0;
  std::uint64_t moe_layer_step = 1;
  // How a chip runs its experts' matmuls: batched (one matmul per expert on
  // the tokens it takes) or grouped (one grouped matmul over all of them,
  // MegaBlocks' / MaxText's megablox, MatmulSpec::grouped).
  // einsum: GShard's one-hot dispatch and combine einsums into buffers of
  // capacity_factor-padded rows per expert and sequence (MaxText's
  // dense_matmul), the experts batched over those buffers.
  std::string expert_matmul = "batched";  // batched | grouped | einsum
  // A grouped matmul's tile along the tokens (models::grouped_kernel_rows):
  // megablox's tm, MaxText's tile_batch_seq (base.yml: 512); 0: exact.
  std::uint64_t grouped_tile = 512;
  // Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434 s.2.1;
  // docs/models.md#multi-head-latent-attention), on when kv_lora_rank > 0:
  // keys and values come up from a kv_lora_rank latent, queries from a
  // q_lora_rank one (0: straight from d_model); query/key heads are
  // qk_nope_head_dim + qk_rope_head_dim wide, value heads v_head_dim.
  // head_dim and kv_heads are not used then.
  std::uint64_t q_lora_rank = 0;
  std::uint64_t kv_lora_rank = 0;
  std::uint64_t qk_nope_head_dim = 0;
  std::uint64_t qk_rope_head_dim = 0;
  std::uint64_t v_head_dim = 0;
  // Sliding-window attention (docs/models.md#sliding-window-attention):
  // with sliding_window W > 0 a local layer's query attends to its W most
  // recent keys (itself included). sliding_window_pattern k > 0 makes every
  // k-th block ((i + 1) % k == 0) global (full causal), the others local
  // (Gemma 3: 6, Gemma 2 and gpt-oss: 2); 0: every block is local (Mistral).
  std::uint64_t sliding_window = 0;
  std::uint64_t sliding_window_pattern = 0;
  bool qk_norm = false;     // a norm on each query and key head (Qwen3, Llama 4 Scout)
  bool post_norms = false;  // norms on the attention and MLP outputs before their residual adds (Gemma 2/3)
  // Vocabulary tiling (MaxText's num_vocab_tiling): the logits and their
  // gradient computed in this many chunks of tokens, the backward
  // recomputing each chunk's logits; 1: all at once.
  std::uint64_t vocab_tiles = 1;
  // Not a YAML key: the chips the experts are sharded over (expert
  // parallelism), set by the training strategy for the model one chip
  // runs. The chip holds experts / expert_shards of them and its experts
  // take the tokens its `expert_shards` peers route to them.
  std::uint64_t expert_shards = 1;
  // Not a YAML key: tensor parallelism splits each expert's MLP width, as
  // MaxText shards the experts' 'mlp' axis over `tensor` (layers/moe.py
  // wi_kernel_axes ("exp", "embed_no_exp", "mlp"); docs/reference/
  // maxtext-moe-tensor.md): up and gate column-parallel, down row-parallel,
  // the experts' output a partial sum over the tensor ranks. Set by the
  // training strategy; serving keeps each expert whole on every tensor rank.
  bool expert_tensor_split = false;

  std::uint64_t kv() const { return mla() ? heads : kv_heads ? kv_heads : heads; }
  bool moe() const { return experts > 0; }
  std::uint64_t expert_width() const { return expert_d_ff ? expert_d_ff : d_ff; }
  bool mla() const { return kv_lora_rank > 0; }
  bool gated() const { return mlp == "swiglu" || mlp == "geglu"; }
  // Width of one query/key head and of one value head.
  std::uint64_t qk_head_dim() const { return mla() ? qk_nope_head_dim + qk_rope_head_dim : head_dim; }
  std::uint64_t v_dim() const { return mla() ? v_head_dim : head_dim; }
  // K and V elements one block caches per token for decoding: kv heads x
  // (query/key + value head widths); latent attention's heads as the
  // up-projections produce them (the absorbed form caching the latent is
  // not modelled).
  std::uint64_t kv_width() const { return kv() * (qk_head_dim() + v_dim()); }
  // K and V elements one sequence's cache holds at `context` tokens, over
  // all blocks: a local block keeps only its window's tokens.
  std::uint64_t kv_cache_elements(std::uint64_t context) const;
  // Block i (0-based) has experts; block i attends within the sliding window.
  bool moe_layer(std::uint64_t i) const;
  bool local_layer(std::uint64_t i) const;
  std::uint64_t moe_layers() const;  // blocks with experts
  // The keys block i's query at a context of `context` tokens attends to:
  // the window on a local block, else all of them.
  std::uint64_t attended(std::uint64_t i, std::uint64_t context) const;
};

}  // namespace models
