// Context parallelism (ring attention; Liu et al. 2023, arXiv:2310.01889)
// against closed forms: a block's attention runs its own (causal) block,
// then N - 1 more, each while the next key/value block travels one hop, so
// it takes c + (N - 1) max(c, t) with c the block's compute, measured on a
// single chip that holds only the block's tokens, and t the permute's
// closed form (launch + bytes / link bandwidth + hop latency). Activations
// per chip are those of T / N tokens; the model's FLOPs are the whole
// sequence's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <limits>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_context {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// One block (D 512, 8 heads of 64, GELU MLP), flash attention, 2 sequences.
constexpr double B = 2, D = 512, NH = 512, F = 2048, V = 4096, kHeads = 8;

// tpu-v4 inline, so that --set reaches its ICI link.
std::string v4_inline() {
  std::ifstream in(std::string(TPUSIM_SOURCE_DIR) + "/configs/chips/tpu-v4.yaml");
  std::string text = "chip:\n", line;
  while (std::getline(in, line)) text += "  " + line + "\n";
  return text;
}

std::string gpt(const std::string& name, int chips, int seq, const std::string& parallelism) {
  const std::string pod = chips == 1 ? ""
                                     : "pod: {topology: ring, shape: [" + std::to_string(chips) +
                                           "], wraparound: " + (chips > 2 ? "true" : "false") + "}\n";
  const std::string mesh = chips == 1 ? "" : "mesh: {ctx: " + std::to_string(chips) + "}\n";
  return write_yaml(name, v4_inline() + pod + mesh + R"(workload:
  kind: train
  model: {type: transformer, layers: 1, d_model: 512, d_ff: 2048, heads: 8, head_dim: 64,
          seq_len: )" + std::to_string(seq) +
                              R"(, vocab: 4096, tied_embeddings: true, attention: flash}
  global_batch: 2
  parallelism: )" + parallelism +
                              "\n");
}

// The first forward's attention core on chip 0 (its block's scores,
// softmax and context, every ring step): the first op's start to the last
// op's end, in us, from the trace.
double attention_span_us(const std::string& path, const std::vector<std::string>& sets) {
  auto exp = workloads::load_experiment(path, sets);
  workloads::RunOptions opts;
  opts.trace = true;
  const auto trace = nlohmann::json::parse(exp.workload->run(exp, opts).trace_json);
  double begin = std::numeric_limits<double>::infinity(), end = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("pid", -1) != 0) continue;
    const std::string n = e["name"];
    if (n.rfind("launch", 0) == 0) continue;  // the kernel's launch runs ahead, on its own track
    const bool core = n.find("F0 block0.attn.score") != std::string::npos ||
                      n.find("F0 block0.attn.softmax") != std::string::npos ||
                      n.find("F0 block0.attn.context") != std::string::npos;
    if (!core) continue;
    begin = std::min(begin, e["ts"].get<double>());
    end = std::max(end, e["ts"].get<double>() + e["dur"].get<double>());
  }
  return end - begin;
}

}  // namespace

TEST_CASE("context: ring attention takes the first block plus N - 1 x max(block, permute)",
          "[workloads][train][context]") {
  struct Point {
    int chips;
    double link_bandwidth;  // bytes/s one way
  };
  // v4's 45 GB/s: the permute (2 MiB, 51.6 us) hides the block (about 24 us);
  // ten times that: the block hides the permute; and a ring of two.
  for (const Point p : {Point{4, 4.5e10}, Point{4, 4.5e11}, Point{2, 4.5e10}}) {
    const int seq = 512 * p.chips;  // 512 tokens per chip
    const std::vector<std::string> sets = {"chip.ici.link_bandwidth=" + std::to_string(p.link_bandwidth)};
    const double ring = attention_span_us(gpt("ring" + std::to_string(p.chips), p.chips, seq, "{context: ctx}"), sets);
    // The same block's attention alone: one chip with its 512 tokens.
    const double c = attention_span_us(gpt("block", 1, 512, "{}"), sets);
    const double kv_bytes = 2 * B * 512 * NH * 2;                    // K and V, BF16
    const double t = 4.0 + kv_bytes / p.link_bandwidth * 1e6 + 1.0;  // launch + bytes / bandwidth + one hop, us
    const double expected = c + (p.chips - 1) * std::max(c, t);
    INFO("chips " << p.chips << ", link " << p.link_bandwidth << ": block " << c << " us, permute " << t << " us, ring "
                  << ring << " us, closed form " << expected << " us");
    CHECK(ring == Approx(expected).epsilon(0.05));
  }
}

TEST_CASE("context: activations per chip are those of T / N tokens", "[workloads][train][context]") {
  const auto ring = run(gpt("mem-ring", 4, 2048, "{context: ctx}"));
  const auto whole = run(gpt("mem-whole", 1, 2048, "{}"));
  const double s = 2048.0 / 4;  // tokens of each sequence per chip
  // The block's stash with flash attention (Korthikanti et al. 2022 s.4.1
  // without dropout, the T x T probabilities replaced by an FP32 log-sum-
  // exp per query and head): 2 b s (4D + 4NH + 2F) + 4 b N s; the
  // embedding's token ids (4 bytes), the output layer's input and norm
  // (2 x 2 b s D), the loss's BF16 probabilities and int32 labels.
  const double block = 2 * B * s * (4 * D + 4 * NH + 2 * F) + 4 * B * kHeads * s;
  const double hand = block + 4 * B * s + 4 * B * s * D + 2 * B * s * V + 4 * B * s;
  const auto& m = ring["result"]["memory"];
  CHECK(m["activations_per_microbatch_bytes"].get<double>() == hand);
  CHECK(m["activations_per_microbatch_bytes"].get<double>() * 4 ==
        whole["result"]["memory"]["activations_per_microbatch_bytes"].get<double>());
  // The ring's buffers: the K/V block in use and the one arriving, and in
  // the backward two dK/dV blocks, each 2 b s k_h BF16 values for K and V.
  const double kv_block = 2 * 2 * B * s * NH;
  CHECK(m["ring_buffers_bytes"].get<double>() == 4 * kv_block);
  CHECK(m["per_chip_bytes"].get<double>() == m["params_bytes"].get<double>() + m["grads_bytes"].get<double>() +
                                                 m["optimizer_bytes"].get<double>() +
                                                 m["activations_bytes"].get<double>() + 4 * kv_block);
  CHECK(whole["result"]["memory"].count("ring_buffers_bytes") == 0);
  // Weights, gradients and Adam state stay whole on every chip.
  CHECK(m["params_bytes"] == whole["result"]["memory"]["params_bytes"]);
  CHECK(m["optimizer_bytes"] == whole["result"]["memory"]["optimizer_bytes"]);
}

TEST_CASE("context: the model's FLOPs are the whole sequence's, gradients all-reduced over the context axis",
          "[workloads][train][context]") {
  const auto ring = run(gpt("flops-ring", 4, 2048, "{context: ctx}"));
  const auto whole = run(gpt("flops-whole", 1, 2048, "{}"));
  CHECK(ring["result"]["model_flops"].get<double>() == Approx(whole["result"]["model_flops"].get<double>()));
  CHECK(ring["result"]["tokens"] == whole["result"]["tokens"]);
  CHECK(ring["result"]["model"]["seq_len"] == 2048);
  double grads = 0, permutes = 0;
  for (const auto& c : ring["collectives"]) {
    if (c["purpose"] == "gradients") {
      CHECK(c["op"] == "all_reduce");
      grads += c["bytes"].get<double>();
    }
    if (c["purpose"] == "context") permutes += 1;
  }
  CHECK(grads == ring["result"]["memory"]["grads_bytes"].get<double>());  // every BF16 gradient once
  // Per block: N - 1 K/V permutes forward; backward N - 1 more and N of dK/dV.
  CHECK(permutes == 3 + 3 + 4);
}

TEST_CASE("context: unsupported combinations are located errors", "[workloads][train][context][bad-input]") {
  const std::string zero = write_yaml("ctx-zero", R"(chip: tpu-v4
pod: {topology: torus2d, shape: [2, 2], wraparound: false}
mesh: {data: 2, ctx: 2}
workload:
  kind: train
  model: {type: transformer, layers: 1, d_model: 512, d_ff: 2048, heads: 8, head_dim: 64,
          seq_len: 1024, vocab: 4096, attention: flash}
  global_batch: 2
  parallelism: {data: data, context: ctx, zero: 1}
)");
  CHECK_THROWS_WITH(workloads::load_experiment(zero, {}),
                    Catch::Contains("9:49: workload.parallelism.zero: zero: 1 is not supported with context"));
  const std::string mlp = write_yaml("ctx-mlp", R"(chip: tpu-v4
pod: {topology: ring, shape: [2], wraparound: false}
mesh: {ctx: 2}
workload:
  kind: train
  model: {type: mlp, widths: [64, 64, 64]}
  global_batch: 2
  parallelism: {context: ctx}
)");
  CHECK_THROWS_WITH(
      workloads::load_experiment(mlp, {}),
      Catch::Contains("workload.parallelism.context: context parallelism splits a Transformer's sequence"));
}

}  // namespace test_context
