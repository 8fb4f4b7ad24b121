#pragma once
// A decoder Transformer's sizes and the serving arithmetic written out by
// hand (docs/serving.md; the scaling book's inference chapter), independent
// of tpusim's model builder: parameter counts from the layer shapes, the
// KV cache from 2 x layers x kv_heads x head_dim, FLOPs as 2 per
// multiply-accumulate.
#include <cstdint>
#include <string>

namespace testing_serving {

struct Dense {
  std::uint64_t layers, d_model, d_ff, heads, kv_heads, head_dim, vocab;
  // SwiGLU blocks (three MLP matrices), LayerNorm scale and bias twice per
  // block and once at the end, untied embedding and unembedding.
  std::uint64_t block_matrix_params() const {
    const std::uint64_t q = heads * head_dim, kv = kv_heads * head_dim;
    return d_model * q + 2 * d_model * kv + q * d_model + 3 * d_model * d_ff;
  }
  std::uint64_t norm_params() const { return 4 * d_model * layers + 2 * d_model; }
  std::uint64_t params() const { return layers * block_matrix_params() + norm_params() + 2 * vocab * d_model; }
  // What one decode step reads whole: everything but the embedding table,
  // of which it gathers one row per sequence.
  std::uint64_t params_read() const { return params() - vocab * d_model; }
  // Multiply-accumulates per token of the weight matmuls (the blocks' and the logits').
  std::uint64_t matmul_params() const { return layers * block_matrix_params() + d_model * vocab; }
  std::uint64_t kv_bytes_per_token(std::uint64_t element_bytes) const {
    return 2 * layers * kv_heads * head_dim * element_bytes;
  }
  // The model: mapping of an experiment.
  std::string yaml(std::uint64_t seq_len) const {
    return "{type: transformer, layers: " + std::to_string(layers) + ", d_model: " + std::to_string(d_model) +
           ", d_ff: " + std::to_string(d_ff) + ", heads: " + std::to_string(heads) +
           ", kv_heads: " + std::to_string(kv_heads) + ", head_dim: " + std::to_string(head_dim) +
           ", seq_len: " + std::to_string(seq_len) + ", vocab: " + std::to_string(vocab) +
           ", mlp: swiglu, attention: flash}";
  }
};

// TPU v5e as configs/chips/tpu-v5e.yaml describes it (docs/reference/tpu-specs.md):
// 4 MXUs of 128 x 128 at 1.5 GHz, 8.1e11 B/s of HBM, 16 GiB.
constexpr double kV5ePeakBf16 = 4.0 * 128 * 128 * 2 * 1.5e9;
// What its MXUs sustain through long compute-bound kernels: 0.942 of the
// clock, from the JAX Pallas guide's XLA matmul timings (the chip file's
// compute_efficiency; docs/calibration.md#compute-efficiency). The roofline
// a step is held to uses it; reported peaks and MFU stay nominal.
constexpr double kV5eComputeEfficiency = 0.942;
constexpr double kV5eSustainedBf16 = kV5ePeakBf16 * kV5eComputeEfficiency;
constexpr double kV5eHbmBandwidth = 8.1e11;
constexpr double kV5eHbmCapacity = 17179869184.0;
// Its ICI: 4.5e10 B/s per link direction, 1 us per hop, 4.7 us to launch a collective.
constexpr double kV5eLinkBandwidth = 4.5e10;
constexpr double kV5eHopLatency = 1.0e-6;
constexpr double kV5eCollectiveLaunch = 4.7e-6;

}  // namespace testing_serving
