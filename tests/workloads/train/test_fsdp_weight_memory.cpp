// FSDP's gathered weights weight by weight, against the hand count: a
// mixture of experts' block, whose experts are one stacked weight per
// projection ([experts, d_model, d_ff] in MaxText), holds at its fullest
// instant two of them gathered and two of their full gradients, not the
// block three times (XLA's latency hiding scheduler keeps one all-gather
// and one reduce-scatter in flight: openxla/xla
// xla/service/latency_hiding_scheduler.h, SchedulerConfig).
#include <catch2/catch.hpp>

#include "workloads/experiment_fixture.h"

namespace test_fsdp_weight_memory {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// Mixtral 8x7B's block cut small: L 2 blocks of E 8 SwiGLU experts (top 2)
// of F 512 over D 256, 4 heads of 64 (kv too), T 256, V 512 untied; 2
// sequences per chip, FSDP over 4 chips, grouped (megablox) experts. kind:
// maxtext, as kind: train runs no FSDP with experts.
constexpr double D = 256, F = 512, E = 8, NH = 4 * 64;

}  // namespace

TEST_CASE("fsdp mixture of experts: a block's backward holds two stacked expert weights and two of their gradients",
          "[workloads][train][memory][fsdp][moe]") {
  const auto r = run(write_yaml("moe-fsdp-memory", R"(chip: tpu-v6e
pod: {topology: torus2d, shape: [2, 2], wraparound: false}
workload:
  kind: maxtext
  config: {model_name: mixtral-8x7b, override_model_config: true, base_num_decoder_layers: 2,
           base_emb_dim: 256, base_mlp_dim: 512, base_moe_mlp_dim: 512, base_num_query_heads: 4,
           base_num_kv_heads: 4, head_dim: 64, vocab_size: 512, per_device_batch_size: 2,
           max_target_length: 256, attention: flash, ici_fsdp_parallelism: -1}
)"));
  const auto& m = r["result"]["memory"];
  // A block's weights in order of use: its norm vectors (D), Q, K, V, O
  // (D NH each), the router (D E), then the experts' up, gate and down,
  // E D F each. Its backward's instants (weight k: k gathered for its data
  // gradient, k - 1 prefetched, k's full gradient and k + 1's, being
  // reduce-scattered): at up 2 EDF + D E + EDF, at gate 2 EDF + 2 EDF, at
  // down 2 EDF + EDF + a norm vector of the next layer: the gate's, 4 E D F.
  const double expert = E * D * F;
  const double at_gate = 4 * expert;
  CHECK(at_gate > 3 * expert + D * E);
  CHECK(at_gate > 3 * expert + D);
  // The rest of the step holds less: the table and unembedding (V D each)
  // are an eighth of one stacked expert weight, so the last block's
  // backward, with every block's kept input still live, is the peak.
  CHECK(m["peak_pass"] == "backward of block1");
  CHECK(m["gathered_weights_bytes"].get<double>() == 2 * at_gate);
  // Before 2026-12-07 the count held the block three times (its weights,
  // the previous block's and its gradient): 3 x 2 x (3 E D F + 4 D NH +
  // D E and the norms) bytes, over 20.4 MB against 8.4 MB.
  const double block = 3 * expert + 4 * D * NH + D * E;
  CHECK(3 * 2 * block > 2.4 * m["gathered_weights_bytes"].get<double>());
  // Held all step beside them: the weights' shards, their gradients and
  // Adam state; at the peak, the stashes and the recomputed block.
  CHECK(m["per_chip_bytes"].get<double>() ==
        m["params_bytes"].get<double>() + m["grads_bytes"].get<double>() + m["optimizer_bytes"].get<double>() +
            m["activations_bytes"].get<double>() + m["rematerialized_bytes"].get<double>() + 2 * at_gate);
}

}  // namespace test_fsdp_weight_memory
