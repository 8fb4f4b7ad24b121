// Rematerialisation against published accounting: with full recomputation
// a Transformer block keeps only its input, 2sbh bytes (Korthikanti et al.
// 2022, arXiv:2205.05198 s.5), and the step executes one more forward pass
// of the blocks, so HFU / MFU = (fwd + bwd + fwd_blocks) / (fwd + bwd) with
// the scaling book's per-layer FLOPs (backward = 2 x forward).
#include <catch2/catch.hpp>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_remat {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// B 2 sequences per chip, T 256, D 512, F 2048, N 8 x H 64, V 4096.
constexpr double B = 2, T = 256, D = 512, F = 2048, NH = 512, V = 4096;

std::string gpt(const std::string& name, int layers, const std::string& remat, const std::string& extra = "") {
  return write_yaml(name, R"(chip: tpu-v4
workload:
  kind: train
  model: {type: transformer, layers: )" +
                              std::to_string(layers) +
                              R"(, d_model: 512, d_ff: 2048, heads: 8, head_dim: 64,
          seq_len: 256, vocab: 4096)" +
                              extra +
                              R"(}
  global_batch: 2
  remat: )" + remat + "\n");
}

// What the step stashes for its backward (one microbatch in flight).
double activations(const nlohmann::json& r) {
  return r["result"]["memory"]["activations_per_microbatch_bytes"].get<double>();
}

}  // namespace

TEST_CASE("remat full: a block keeps only its input (2sbh), and holds one block's stash again in its backward",
          "[workloads][train][remat]") {
  const auto full2 = run(gpt("remat-l2", 2, "full")), full3 = run(gpt("remat-l3", 3, "full"));
  const auto none2 = run(gpt("keep-l2", 2, "none")), none3 = run(gpt("keep-l3", 3, "none"));
  // What a third block adds: its BF16 input, b s h x 2 bytes.
  CHECK(activations(full3) - activations(full2) == 2 * B * T * D);
  // Without remat it adds its whole stash; that is what the recomputed
  // block holds while its backward runs.
  const double block_stash = activations(none3) - activations(none2);
  CHECK(block_stash > 10 * 2 * B * T * D);  // Korthikanti: 34 sbh + 5 a s^2 b, without dropout
  CHECK(full3["result"]["memory"]["rematerialized_bytes"].get<double>() == block_stash);
  CHECK(none3["result"]["memory"]["rematerialized_bytes"].get<double>() == 0);
  // The layers around the blocks (embedding, output, loss) keep theirs.
  CHECK(activations(none2) - 2 * block_stash == Approx(activations(full2) - 2 * (2 * B * T * D)));
  const auto& m = full3["result"]["memory"];
  CHECK(m["per_chip_bytes"].get<double>() == m["params_bytes"].get<double>() + m["grads_bytes"].get<double>() +
                                                 m["optimizer_bytes"].get<double>() +
                                                 m["activations_bytes"].get<double>() + block_stash);
}

TEST_CASE("remat full: HFU / MFU adds one forward pass of the blocks", "[workloads][train][remat]") {
  const double L = 3;
  // Training FLOPs (the scaling book's table, two-matrix MLP, full T x T
  // attention): a block 12BTDF + 24BTD(NH) + 12BT^2(NH), the logits 6BTDV.
  const double block = 12 * B * T * D * F + 24 * B * T * D * NH + 12 * B * T * T * NH;
  const double output = 6 * B * T * D * V;
  const double ratio = (L * block + output + L * block / 3) / (L * block + output);
  const auto full = run(gpt("remat-hfu", 3, "full")), none = run(gpt("keep-hfu", 3, "none"));
  const auto& r = full["result"];
  CHECK(r["hfu"].get<double>() / r["mfu"].get<double>() == Approx(ratio).epsilon(0.01));
  CHECK(none["result"]["hfu"] == none["result"]["mfu"]);
  CHECK(r["parallelism"]["remat"] == "full");
  // The recomputation is executed work: the step takes longer by about one
  // forward pass of the blocks (their share of the forward phase).
  const double extra = r["step_time_s"].get<double>() - none["result"]["step_time_s"].get<double>();
  const double forward = none["result"]["phases"]["forward_s"].get<double>();
  CHECK(extra > 0.5 * forward * L * block / (L * block + output));
  CHECK(extra < 1.2 * forward);
  CHECK(r["mfu"].get<double>() < none["result"]["mfu"].get<double>());
}

// remat: minimal (MaxText's policy: the outputs of the query, key, value
// and output projections and of the MLP's matmuls are saved) against the
// hand count for this model's serial GPT block (N H = D = 512, GELU MLP of
// F): it keeps its input x and the outputs of Q, K, V (N H each), O (D),
// up (F) and down (D), 2 b s (3D + 3NH + F) bytes, and recomputes the
// layer norms, the attention core S, softmax and P V, the GELU and the
// residual adds: 4 B T^2 N H matmul FLOPs per block (S and P V).
TEST_CASE("remat minimal: a block keeps its input and its weight matmuls' outputs, recomputes the attention core",
          "[workloads][train][remat]") {
  const auto min2 = run(gpt("minimal-l2", 2, "minimal")), min3 = run(gpt("minimal-l3", 3, "minimal"));
  const auto none2 = run(gpt("keep-l2", 2, "none")), none3 = run(gpt("keep-l3", 3, "none"));
  const auto full3 = run(gpt("remat-l3", 3, "full"));
  CHECK(activations(min3) - activations(min2) == 2 * B * T * (3 * D + 3 * NH + F));
  // Held again while its backward runs: the rest of its stash, the block's
  // input, LN1 and LN2 outputs, the B N T^2 probabilities, the attention
  // context, the attention residual output and the GELU output.
  const double N = 8;
  CHECK(min3["result"]["memory"]["rematerialized_bytes"].get<double>() ==
        2 * B * T * (4 * D + NH + F) + 2 * B * N * T * T);
  const double block_stash = activations(none3) - activations(none2);
  CHECK(block_stash == 2 * B * T * (4 * D + 4 * NH + 2 * F) + 2 * B * N * T * T);  // the whole stash
  // HFU / MFU: the attention core's forward once more per block.
  const double L = 3;
  const double block = 12 * B * T * D * F + 24 * B * T * D * NH + 12 * B * T * T * NH;
  const double output = 6 * B * T * D * V;
  const double ratio = (L * block + output + L * 4 * B * T * T * NH) / (L * block + output);
  const auto& r = min3["result"];
  CHECK(r["hfu"].get<double>() / r["mfu"].get<double>() == Approx(ratio).epsilon(0.001));
  CHECK(r["parallelism"]["remat"] == "minimal");
  // It recomputes less than full: longer than none, shorter than full.
  const double t_none = none3["result"]["step_time_s"].get<double>(), t_min = r["step_time_s"].get<double>();
  const double t_full = full3["result"]["step_time_s"].get<double>();
  CHECK(t_none < t_min);
  CHECK(t_min < t_full);
  CHECK(activations(full3) < activations(min3));
  CHECK(activations(min3) < activations(none3));
}

TEST_CASE("remat: bad input is located", "[workloads][train][remat][bad-input]") {
  CHECK_THROWS_WITH(run(gpt("remat-bad", 2, "fulll")),
                    Catch::Contains("workload.remat") && Catch::Contains("did you mean 'full'"));
}

}  // namespace test_remat
