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

}  // namespace models
