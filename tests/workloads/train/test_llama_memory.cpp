// A Llama-shaped model's memory per chip against the hand count: grouped-
// query attention, SwiGLU, an untied vocabulary, flash attention, FSDP with
// float32 weights and full rematerialisation, as MaxText trains Llama 3.1
// 8B (docs/reference/measured.md#llama3-8b-v6e). Every term is written out
// here from the model's shapes. The loss keeps the BF16 logits once (2 B T V
// bytes): XLA's backward of MaxText's cross-entropy recomputes the softmax
// from them and per-token statistics (docs/reference/measured.md#llama3-8b-hlo:
// MaxText's compiled llama3-8b step saves one bf16[1,128,128256] logits
// tensor per device and recomputes exp(logits - max) in f32 in the
// backward fusion).
#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/experiment_fixture.h"

namespace test_llama_memory {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// L 3 blocks, D 256, F 768 (SwiGLU), N 8 query heads and K 2 KV heads of
// H 32, T 256, V 4096 untied; B 2 sequences per chip, FSDP over 4 chips.
constexpr double L = 3, D = 256, F = 768, N = 8, K = 2, H = 32, T = 256, V = 4096, B = 2, fsdp = 4;

}  // namespace

TEST_CASE(
    "Llama-shaped model (GQA, SwiGLU, untied vocabulary, flash) with FSDP and remat full: memory per chip "
    "equals the hand count",
    "[workloads][train][memory][llama]") {
  const auto r = run(write_yaml("llama-memory", R"(chip: tpu-v6e
pod: {topology: torus2d, shape: [2, 2], wraparound: false}
mesh: {fsdp: 4}
workload:
  kind: train
  model: {type: transformer, layers: 3, d_model: 256, d_ff: 768, heads: 8, kv_heads: 2, head_dim: 32,
          seq_len: 256, vocab: 4096, tied_embeddings: false, mlp: swiglu, attention: flash}
  global_batch: 8
  parallelism: {fsdp: fsdp}
  remat: full
  precision: {params: float32, optimizer: float32}
  optimizer: adam
)"));
  const auto& m = r["result"]["memory"];
  // Parameters: the V D table; per block Q (D NH), K and V (D KH each), O
  // (NH D), up, gate and down (3 D F), two norms (scale and bias, 4 D);
  // the final norm (2 D) and the untied unembedding (D V). Each layer's
  // shard is 1/4 (every size here divides by 4).
  const double block = D * N * H + 2 * D * K * H + N * H * D + 3 * D * F + 4 * D;
  const double output = 2 * D + D * V;
  const double params = V * D + L * block + output;
  CHECK(m["params_bytes"].get<double>() == 4 * params / fsdp);     // float32
  CHECK(m["grads_bytes"].get<double>() == 4 * params / fsdp);      // float32
  CHECK(m["optimizer_bytes"].get<double>() == 8 * params / fsdp);  // m and v; no master copy
  // Kept for the backward pass, per layer: the token ids (int32), each
  // block's BF16 input (remat full), the output layer's input and normed
  // input, the loss's BF16 logits and int32 labels.
  const double ids = 4 * B * T, input = 2 * B * T * D, out_kept = 2 * 2 * B * T * D;
  const double loss_kept = 2 * B * T * V + 4 * B * T;
  const double kept = ids + L * input + out_kept + loss_kept;
  CHECK(m["activations_per_microbatch_bytes"].get<double>() == kept);
  // The block recomputed during its backward holds its whole stash once:
  // BF16 per token its input, LN1 output, Q, K, V, attention context,
  // residual, LN2 output, gate, up and activation outputs, and flash's FP32
  // log-sum-exp per query row and head.
  const double block_stash = B * T * 2 * (4 * D + 2 * N * H + 2 * K * H + 3 * F) + 4 * B * N * T;
  // The peak, instant by instant down the backward (loss, output, block2,
  // block1, block0, embedding): what is still kept, plus while a pass runs
  // its recomputed stash and FSDP's BF16 weights weight by weight, as XLA
  // gathers and reduce-scatters them one at a time (latency hiding
  // scheduler: one all-gather and one reduce-scatter in flight): at weight
  // k of a backward pass, k gathered (its data gradient reads it), k - 1
  // prefetched, k's full gradient and k + 1's, being reduce-scattered. The
  // stage's weights in order of use: the table; per block the four norm
  // vectors (D each), then Q, K, V, O, up, gate, down as its matmuls read
  // them; the output's two norm vectors, then the unembedding.
  const double q = D * N * H, ff = D * F, table = V * D, unembed = D * V;
  // Within a block the fullest instant is the gate's: 2 x gate + up + down
  // = 4 D F (up's: 2 D F + O + gate, down's: 2 D F + gate + a norm vector).
  const double w_block = std::max({2 * ff + q + ff, 2 * ff + ff + ff, 2 * ff + ff + D});
  CHECK(w_block == 4 * D * F);
  const std::vector<double> instants{
      kept + 2 * unembed,                           // loss: the unembedding, prefetched
      kept - loss_kept + 2 * (2 * unembed + D),     // output: at the unembedding
      ids + 3 * input + block_stash + 2 * w_block,  // block2, at its gate
      ids + 2 * input + block_stash + 2 * w_block,  // block1
      ids + input + block_stash + 2 * w_block,      // block0
      ids + 2 * (2 * table + D),                    // embedding: the table and block0's first norm vector
  };
  // The loss's: its logits (4.2 MB) are still kept while the unembedding
  // (2.1 MB) is prefetched for the output's backward; a block's instant
  // holds 1.6 MB of weights and gradients (before 2026-12-07 block0's held
  // two whole blocks' weights, a block's gradient and the table: 5.1 MB,
  // and the peak was there).
  CHECK(*std::max_element(instants.begin(), instants.end()) == instants[0]);
  CHECK(m["peak_pass"] == "backward of loss");
  CHECK(m["activations_bytes"].get<double>() == kept);
  CHECK(m["rematerialized_bytes"].get<double>() == 0);
  CHECK(m["gathered_weights_bytes"].get<double>() == 2 * unembed);
  CHECK(m["per_chip_bytes"].get<double>() == 16 * params / fsdp + instants[0]);
}

}  // namespace test_llama_memory
