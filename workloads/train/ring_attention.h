#pragma once
// Ring attention (Liu, Zaharia and Abbeel 2023, "Ring Attention with
// Blockwise Transformers for Near-Infinite Context", arXiv:2310.01889):
// context parallelism over N chips, each holding 1/N of every sequence.
// A Transformer block's queries stay on their chip; its key/value block is
// passed around the ring of the context axes, N - 1 permutes, and the chip
// runs the attention of its queries against each block as it holds it,
// the transfer of the next block under the computation of this one
// (double buffering: a transfer also waits until the block whose buffer
// it fills has been used). The backward passes K/V around the same way and
// the dK/dV accumulated for each block with it, one step behind (they
// hold this chip's contribution once its step is done), and a last hop
// brings each block's dK/dV home.
//
// Causal masking with the sequence cut into 2N chunks, chip i holding
// chunks i and 2N - 1 - i (the zigzag layout of Brandon et al. 2023,
// "Striped Attention", arXiv:2311.09431, s.3, and of ring-flash-attention):
// the chip's own block is the causal kernel on its 2T/2N tokens, and every
// other block is exactly half of the T/N x T/N square, all queries against
// the first chunk's keys or the second chunk's queries against all keys;
// it is run as the block's kernel with half the queries. So every chip does
// the same work, 1/N of the causal attention.
#include <cstdint>
#include <string>
#include <vector>

#include "models/layer_spec.h"

namespace workloads {

// One permute of a block around the ring: its name (what the layer's ops
// wait for), what it waits for, and the bytes each chip sends.
struct RingTransfer {
  std::string name;
  std::vector<std::string> after;
  std::uint64_t bytes = 0;
  bool gradients = false;  // dK/dV (its own ICI queue) rather than K/V
};

struct RingLayer {
  models::LayerSpec layer;  // the attention core repeated per block
  std::vector<RingTransfer> forward, backward;
};

// `layer` built for the chip's tokens (T / N of each sequence); `ranks` N;
// `kv_bytes` what one chip's K and V blocks hold (its tensor-parallel
// share, BF16); dK and dV travel in the same format. The attention core of
// a pass is its attention matmuls and the elementwise ops that read only
// them (softmax). A layer without attention comes back as it is.
RingLayer ring_attention(const models::LayerSpec& layer, std::uint32_t ranks, std::uint64_t kv_bytes);

// What one chip's K and V blocks of `layer` hold: its tensor-parallel share
// (`tp`) of the keys and values of its tokens, as the layer stashes them
// (0 for a layer without attention).
std::uint64_t ring_block_bytes(const models::LayerSpec& layer, std::uint32_t tp);

// The ring's buffers in HBM while a layer's attention runs: in the forward
// the K/V block in use and the one arriving (double buffering); in the
// backward those two and two dK/dV blocks, the one this chip adds to and
// the one it passes on. So 4 blocks at the peak, the backward's.
constexpr std::uint32_t kRingBuffers = 4;

}  // namespace workloads
