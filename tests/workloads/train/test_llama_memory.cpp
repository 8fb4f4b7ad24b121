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
  // block1, block0): what is still kept, plus while a pass runs its
  // recomputed stash and its gathered BF16 weights: its layer's twice (the
  // weights and their full gradient) and the previous layer's, prefetched.
  const double g_table = 2 * V * D, g_block = 2 * block, g_output = 2 * output;
  const std::vector<double> instants{
      kept + g_output,                                    // loss
      kept - loss_kept + 2 * g_output + g_block,          // output
      ids + 3 * input + block_stash + 3 * g_block,        // block2
      ids + 2 * input + block_stash + 3 * g_block,        // block1
      ids + input + block_stash + 2 * g_block + g_table,  // block0
      ids + 2 * g_table,                                  // embedding
  };
  // block0's: the table prefetched (1.05 M elements) outweighs a block (0.75 M).
  CHECK(*std::max_element(instants.begin(), instants.end()) == instants[4]);
  CHECK(m["peak_pass"] == "backward of block0");
  CHECK(m["activations_bytes"].get<double>() == ids + input);
  CHECK(m["rematerialized_bytes"].get<double>() == block_stash);
  CHECK(m["gathered_weights_bytes"].get<double>() == 2 * g_block + g_table);
  CHECK(m["per_chip_bytes"].get<double>() == 16 * params / fsdp + instants[4]);
}

}  // namespace test_llama_memory
