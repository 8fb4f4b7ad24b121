#pragma once
// The layers around a Transformer's blocks: the token embedding, the output
// layer (final norm and logits, vocabulary-parallel) and the softmax
// cross-entropy loss. With vocabulary tiling (vocab_tiles = k > 1, MaxText's
// num_vocab_tiling) the logits, the loss and their gradients are computed
// in k chunks of the tokens, one after another: only one chunk's logits
// are ever held (the loss layer's stash is 1/k of the logits), and the
// backward pass computes each chunk's logits again before its gradient
// (a recomputed matmul: executed FLOPs, not model FLOPs, which stay
// unchanged). docs/models.md#vocabulary-tiling.
#include "models/block_parts.h"

namespace models {

LayerSpec embedding_layer(const Dims& d);
LayerSpec output_layer(const Dims& d, const TransformerConfig& c);
LayerSpec loss_layer(const Dims& d, const TransformerConfig& c);

}  // namespace models
