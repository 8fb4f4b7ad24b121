// Memory per chip against published accounting: mixed-precision Adam at 16
// bytes per parameter (ZeRO, Rajbhandari et al. 2020, s.3.1: 2 + 2 + 12),
// Megatron's tensor-parallel split of the parameters, Korthikanti et al.
// 2022's activations per block with tensor parallelism, and a step that does
// not fit stopping before it runs (exit 3) with the breakdown.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>

#include "app/cli_runner.h"
#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_memory {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

namespace fs = std::filesystem;

// A small GPT-style model with F = 4D and N H = D, so the published
// formulas apply as written: L 2, D 512, F 2048, N 8 x H 64, T 256, V 4096,
// tied embeddings.
constexpr double L = 2, D = 512, F = 2048, N = 8, H = 64, T = 256, V = 4096;

std::string small_gpt(const std::string& name, const std::string& pod_and_mesh, const std::string& parallelism,
                      int global_batch) {
  return write_yaml(name, "chip: tpu-v4\n" + pod_and_mesh + R"(
workload:
  kind: train
  model: {type: transformer, layers: 2, d_model: 512, d_ff: 2048, heads: 8, head_dim: 64,
          seq_len: 256, vocab: 4096, tied_embeddings: true}
  global_batch: )" + std::to_string(global_batch) +
                              R"(
  parallelism: )" + parallelism +
                              R"(
  optimizer: adam
)");
}

// Parameters: per block 4 D N H (attention) + 2 D F (MLP) + 4 D (two
// LayerNorms), the V D table once (tied), the final LayerNorm 2 D
// (docs/models.md; Kaplan et al. 2020 Table 1 for the 12 L D^2 part).
constexpr double kParams = L * (4 * D * N * H + 2 * D * F + 4 * D) + V * D + 2 * D;

}  // namespace

TEST_CASE("memory: Adam in mixed precision costs 16 bytes per parameter, SGD 8", "[workloads][train]") {
  const std::string path = small_gpt("mem-one-chip", "", "{}", 2);
  const auto adam = run(path)["result"]["memory"];
  CHECK(adam["params_bytes"].get<double>() == 2 * kParams);
  CHECK(adam["grads_bytes"].get<double>() == 2 * kParams);
  CHECK(adam["optimizer_bytes"].get<double>() == 12 * kParams);
  const auto sgd = run(path, {"workload.optimizer=sgd"})["result"]["memory"];
  CHECK(sgd["params_bytes"].get<double>() + sgd["grads_bytes"].get<double>() + sgd["optimizer_bytes"].get<double>() ==
        8 * kParams);
  CHECK(adam["per_chip_bytes"].get<double>() == adam["params_bytes"].get<double>() + adam["grads_bytes"].get<double>() +
                                                    adam["optimizer_bytes"].get<double>() +
                                                    adam["activations_bytes"].get<double>());
  CHECK(adam["capacity_bytes"].get<double>() == 32.0 * (1ull << 30));  // tpu-v4.yaml hbm.capacity
}

TEST_CASE("memory with tensor parallelism: Megatron's split of the weights, Korthikanti's activations",
          "[workloads][train]") {
  const std::string pod = "pod: {topology: ring, shape: [2], wraparound: false}\nmesh: {model: 2}";
  const double t = 2, b = 2;  // tensor-parallel ranks, sequences per microbatch
  const auto two = run(small_gpt("mem-tp2", pod, "{tensor: model}", 2))["result"]["memory"];
  // Q, K, V, O, up, down and the vocabulary-parallel table are split, the
  // LayerNorms are not (Shoeybi et al. 2019, s.3).
  const double per_rank = L * (4 * D * N * H + 2 * D * F) / t + L * 4 * D + V * D / t + 2 * D;
  CHECK(two["params_bytes"].get<double>() == 2 * per_rank);

  // One block's activations per rank: the difference a third block makes.
  const auto three =
      run(small_gpt("mem-tp2-l3", pod, "{tensor: model}", 2), {"workload.model.layers=3"})["result"]["memory"];
  const double block =
      three["activations_per_microbatch_bytes"].get<double>() - two["activations_per_microbatch_bytes"].get<double>();
  // Korthikanti et al. 2022 (arXiv:2205.05198) s.4.2.1, tensor parallel:
  // s b h (10 + 24/t) + 5 a s^2 b / t, less what this model has no dropout
  // for: two masks (2 s b h) and the attention mask and dropout output
  // (3 a s^2 b / t, the softmax output 2 a s^2 b / t stays).
  const double s = T, h = D, a = N;
  CHECK(block == s * b * h * (8 + 24 / t) + 2 * a * s * s * b / t);

  // With sequence parallelism (s.4.2.2: s b h 34 / t + 5 a s^2 b / t, less
  // the same dropout terms) everything a block keeps is split.
  const std::string sp = "{tensor: model, sequence: true}";
  const double sp_block =
      run(small_gpt("mem-sp-l3", pod, sp, 2),
          {"workload.model.layers=3"})["result"]["memory"]["activations_per_microbatch_bytes"]
          .get<double>() -
      run(small_gpt("mem-sp-l2", pod, sp, 2))["result"]["memory"]["activations_per_microbatch_bytes"].get<double>();
  CHECK(sp_block == s * b * h * 32 / t + 2 * a * s * s * b / t);
  // With full recomputation as well, a block keeps its input split: 2 s b h / t (s.5).
  const double sp_remat =
      run(small_gpt("mem-spr-l3", pod, sp, 2),
          {"workload.model.layers=3", "workload.remat=full"})["result"]["memory"]["activations_per_microbatch_bytes"]
          .get<double>() -
      run(small_gpt("mem-spr-l2", pod, sp, 2),
          {"workload.remat=full"})["result"]["memory"]["activations_per_microbatch_bytes"]
          .get<double>();
  CHECK(sp_remat == 2 * s * b * h / t);

  // remat: minimal keeps a block's input x, the outputs of Q, K, V (N H
  // each, column-parallel: split) and of up (F, split), and the outputs of
  // O and down (h each: whole after their all-reduce, split with sequence
  // parallelism): 2 s b (3h + (3 N H + F) / t), or 2 s b (3h + 3 N H + F) / t.
  const auto minimal_block = [&](const std::string& par, const std::string& tag) {
    const auto three =
        run(small_gpt("mem-min3-" + tag, pod, par, 2), {"workload.model.layers=3", "workload.remat=minimal"});
    const auto two = run(small_gpt("mem-min2-" + tag, pod, par, 2), {"workload.remat=minimal"});
    return three["result"]["memory"]["activations_per_microbatch_bytes"].get<double>() -
           two["result"]["memory"]["activations_per_microbatch_bytes"].get<double>();
  };
  CHECK(minimal_block("{tensor: model}", "tp") == 2 * s * b * (3 * h + (3 * N * H + F) / t));
  CHECK(minimal_block(sp, "sp") == 2 * s * b * (3 * h + 3 * N * H + F) / t);
}

TEST_CASE("sequence parallelism: each tensor-parallel all-reduce becomes a reduce-scatter and an all-gather",
          "[workloads][train]") {
  const std::string pod = "pod: {topology: ring, shape: [2], wraparound: false}\nmesh: {model: 2}";
  const auto tp = run(small_gpt("sp-off", pod, "{tensor: model}", 2));
  // The plain collectives (collective_matmul replaces them with permutes:
  // tests/workloads/train/test_collective_matmul.cpp).
  const auto sp =
      run(small_gpt("sp-on", pod, "{tensor: model, sequence: true}", 2), {"workload.collective_matmul=false"});
  std::map<std::string, int> ops;
  for (const auto& c : sp["collectives"]) ++ops[c["op"].get<std::string>()];
  std::size_t tp_all_reduces = 0;
  for (const auto& c : tp["collectives"]) tp_all_reduces += c["op"] == "all_reduce";
  // The embedding's partial sums stay an all-reduce (it is not in a block).
  CHECK(ops["reduce_scatter"] == ops["all_gather"]);
  CHECK(ops["reduce_scatter"] > 0);
  CHECK(std::size_t(ops["reduce_scatter"] + ops["all_reduce"]) == tp_all_reduces);
  // A ring all-reduce moves what its reduce-scatter and all-gather move.
  CHECK(sp["per_chip"][0]["ici_bytes_out"] == tp["per_chip"][0]["ici_bytes_out"]);
  CHECK_THROWS_WITH(run(small_gpt("sp-no-tp", "", "{sequence: true}", 2)),
                    Catch::Contains("parallelism.sequence") && Catch::Contains("needs tensor parallelism"));
}

TEST_CASE("memory with pipeline parallelism: 1F1B's first stage keeps p microbatches, GPipe's m",
          "[workloads][train]") {
  const std::string pod = "pod: {topology: ring, shape: [2], wraparound: false}\nmesh: {pipe: 2}";
  const std::string path = small_gpt("mem-pp2", pod, "{pipeline: pipe, microbatches: 8, schedule: 1f1b}", 8);
  const auto f1b = run(path)["per_chip"];
  const auto gpipe = run(path, {"workload.parallelism.schedule=gpipe"})["per_chip"];
  for (int s = 0; s < 2; ++s) {
    const auto& a = f1b[s]["memory"];
    const auto& b = gpipe[s]["memory"];
    CHECK(f1b[s]["ranks"]["stage"] == s);
    CHECK(a["microbatches_in_flight"] == 2 - s);
    CHECK(b["microbatches_in_flight"] == 8);
    CHECK(a["activations_per_microbatch_bytes"] == b["activations_per_microbatch_bytes"]);
    CHECK(a["activations_bytes"].get<double>() == (2 - s) * a["activations_per_microbatch_bytes"].get<double>());
    CHECK(b["activations_bytes"].get<double>() == 8 * b["activations_per_microbatch_bytes"].get<double>());
  }
}

TEST_CASE("a step that does not fit stops before simulating, exit 3 with the breakdown, unless simulate_anyway",
          "[workloads][train]") {
  // GPT-3 XL sized (1.3B parameters) with Adam on one 16 GiB v5e chip:
  // 16 bytes x 1.3e9 = 21 GB of weights and optimizer state alone.
  const std::string path = write_yaml("mem-too-big", R"(
chip: tpu-v5e
workload:
  kind: train
  model: {type: transformer, layers: 24, d_model: 2048, d_ff: 8192, heads: 16, head_dim: 128,
          seq_len: 2048, vocab: 50304, tied_embeddings: true}
  global_batch: 1
  optimizer: adam
)");
  const auto r = testing_cli::run_tpusim("run " + path + " --out " + path + ".out");
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.output.find("does not fit in HBM") != std::string::npos);
  CHECK(r.output.find("of 16.0 GiB at its peak (the forward of loss)") != std::string::npos);
  CHECK(r.output.find("): parameters 2.4 GiB, gradients 2.4 GiB, optimizer 14.7 GiB, activations") !=
        std::string::npos);
  CHECK(r.output.find("simulate_anyway") != std::string::npos);
  CHECK(!fs::exists(path + ".out/report.json"));

  // Simulated regardless: a step that is quick to simulate but still too
  // big (one block, 128 tokens, a 512k vocabulary: 2.2e9 parameters, 34 GB
  // with Adam). The report says it does not fit.
  auto exp = workloads::load_experiment(
      path,
      {"workload.model.layers=1", "workload.model.d_model=4096", "workload.model.d_ff=4096", "workload.model.heads=32",
       "workload.model.seq_len=128", "workload.model.vocab=524288", "workload.simulate_anyway=true"});
  const auto mem = exp.workload->run(exp, {}).report["result"]["memory"];
  CHECK(mem["fits"] == false);
  CHECK(mem["per_chip_bytes"].get<double>() > mem["capacity_bytes"].get<double>());
}

TEST_CASE("precision policy: bytes per parameter where they live, against the hand count", "[workloads][train]") {
  const std::string path = small_gpt("mem-precision", "", "{}", 2);
  struct Case {
    const char* params;
    const char* optimizer;
    const char* kind;
    double p, g, state;
  };
  // P + P + state: Adam keeps m and v in the optimizer's format and, for
  // BF16 parameters under an FP32 optimizer, an FP32 master copy (ZeRO
  // s.3.1's 2 + 2 + 12); FP32 parameters need no master copy (MaxText's
  // layout: 4 + 4 + 8). SGD has no moments.
  const Case cases[] = {{"bfloat16", "float32", "adam", 2, 2, 12}, {"float32", "float32", "adam", 4, 4, 8},
                        {"bfloat16", "bfloat16", "adam", 2, 2, 4}, {"float32", "bfloat16", "adam", 4, 4, 4},
                        {"bfloat16", "float32", "sgd", 2, 2, 4},   {"float32", "float32", "sgd", 4, 4, 0}};
  for (const auto& c : cases) {
    INFO(c.params << " params, " << c.optimizer << " " << c.kind);
    const auto m =
        run(path, {std::string("workload.precision={params: ") + c.params + ", optimizer: " + c.optimizer + "}",
                   std::string("workload.optimizer=") + c.kind})["result"]["memory"];
    CHECK(m["params_bytes"].get<double>() == c.p * kParams);
    CHECK(m["grads_bytes"].get<double>() == c.g * kParams);
    CHECK(m["optimizer_bytes"].get<double>() == c.state * kParams);
    CHECK(m["bytes_per_param"]["optimizer"].get<double>() == c.state);
  }
}

}  // namespace test_memory
