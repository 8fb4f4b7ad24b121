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

}  // namespace models
