#pragma once
// A mixture of experts in place of a serial block's dense MLP
// (docs/models.md#mixture-of-experts): the router, the dispatch and
// combine all-to-alls, the chip's experts (batched or one grouped matmul),
// and the shared experts every token goes through.
#include <cstdint>

#include "models/block_parts.h"

namespace models {

// Replaces the dense MLP that block `n` was built with by the experts of
// shape.cfg; `ordinal` is the block's index among the blocks with experts
// (LayerSpec::routing_layer).
void add_moe(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n, std::uint64_t ordinal);

// The rows one expert computes per sequence under GShard's one-hot einsum
// dispatch (Lepikhin et al. 2020, arXiv:2006.16668, Algorithm 2; MaxText's
// dense_matmul, layers/moe.py generate_masks): each sequence of `seq`
// tokens is a group whose tokens fill a buffer of C = int(max(ceil(T top_k
// / E) cf, cf)) rows per expert, computed whether or not the router fills
// it; with no capacity (cf <= 0) every expert computes every token.
std::uint64_t einsum_capacity(const TransformerConfig& c, std::uint64_t seq);

// The rows a grouped matmul kernel computes for `rows` tokens sorted into
// `groups` experts that each take some (docs/models.md#grouped-matmul-tiles):
// megablox's gmm and tgmm (jax/experimental/pallas/ops/tpu/megablox/gmm.py,
// make_group_metadata) run a grid of whole `tile`-row tiles, one visit per
// (tile, group) pair that overlap, so a group starting inside a tile costs
// that tile again: ceil(rows / tile) to ceil(rows / tile) + groups - 1
// tiles. A router's per-step counts are not multiples of the tile (they
// scatter by about their square root around the balanced share), so every
// group after the first starts inside a tile: the upper end. tile 0: an
// exact kernel, `rows`.
std::uint64_t grouped_kernel_rows(std::uint64_t rows, std::uint64_t groups, std::uint64_t tile);

}  // namespace models
