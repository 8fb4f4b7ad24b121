// Tensor-parallel decode on 8 v5e chips (a 2x4 slice): every Transformer
// block all-reduces its attention and MLP outputs, batch x d_model bf16
// values, over the 8 chips. For a small batch those are a few kilobytes,
// and the all-reduce costs its launch and hops, not its bytes. A tied
// embedding table split over d_model (JetStream-PyTorch's Gemma) adds one
// all-reduce of the whole step's logits.
#include <catch2/catch.hpp>

#include <string>

#include "serving_model.h"
#include "workloads/experiment_fixture.h"

namespace test_tensor_parallel_decode {

using namespace testing_serving;
using testing_workloads::run;
using testing_workloads::write_yaml;

namespace {

// Two Llama-3-70B-shaped blocks.
const Dense kModel{2, 8192, 28672, 64, 8, 128, 32000};
constexpr double kChips = 8;

struct AllReduces {
  std::uint64_t count = 0, bytes = 0;
  double mean_s = 0;
};

AllReduces decode_all_reduces(std::uint64_t batch) {
  const std::string b = std::to_string(batch);
  const nlohmann::json rep =
      run(write_yaml("tp-" + b, "name: tp-" + b +
                                    "\nchip: tpu-v5e\npod: {topology: torus2d, shape: [2, 4], wraparound: [false, "
                                    "false]}\nmesh: {model: 8}\nworkload:\n  kind: inference\n  model: " +
                                    kModel.yaml(4096) + "\n  batch: " + b +
                                    "\n  prompt_len: 512\n  decode_len: 32\n  phase: decode\n  parallelism: {tensor: "
                                    "model}\n"));
  AllReduces a;
  for (const auto& c : rep["collectives"]) {
    if (c["op"] != "all_reduce") continue;
    ++a.count;
    a.bytes = c["bytes"].get<std::uint64_t>();
    a.mean_s += c["time_s"].get<double>();
  }
  if (a.count) a.mean_s /= double(a.count);
  return a;
}

// The size at which a bidirectional ring all-reduce's bandwidth term,
// 2 (n - 1) / n x bytes over 2 links' bandwidth, equals the collective's
// launch cost: below it, the fixed costs dominate.
const double kLatencyBoundBytes = kV5eCollectiveLaunch * 2 * kV5eLinkBandwidth * kChips / (2 * (kChips - 1));
double bandwidth_term(double bytes) { return 2 * (kChips - 1) / kChips * bytes / (2 * kV5eLinkBandwidth); }

// A Gemma-7B-shaped decode step (2 of its 28 blocks, its tied 256,128-token
// vocabulary) at batch 96 over the 8 chips, the table split `shard` ways.
nlohmann::json gemma_decode(const std::string& shard) {
  return run(write_yaml("gemma-" + shard,
                        "name: gemma-" + shard +
                            "\nchip: tpu-v5e\npod: {topology: torus2d, shape: [2, 4], wraparound: [false, false]}\n"
                            "mesh: {model: 8}\nworkload:\n  kind: inference\n  model: {type: transformer, layers: 2, "
                            "d_model: 3072, d_ff: 24576, heads: 16, kv_heads: 16, head_dim: 256, seq_len: 2048, "
                            "vocab: 256128, tied_embeddings: true, embedding_shard: " +
                            shard +
                            ", mlp: geglu, attention: flash}\n  batch: 96\n  prompt_len: 512\n  decode_len: 32\n"
                            "  phase: decode\n  parallelism: {tensor: model}\n"));
}

}  // namespace

TEST_CASE("a tied table split over d_model all-reduces the step's logits over the vocabulary", "[inference][tensor]") {
  // JetStream-PyTorch shards Gemma's embedder over its hidden axis
  // (default_shardings/gemma.yaml, embedder.weight: 1) and computes the
  // logits with it (gemma/model.py: hidden_states x embedder.weight^T), so
  // each chip holds partial sums of all 96 x 256,128 logits, which are
  // all-reduced in bf16: 49,176,576 bytes. By hand, a bidirectional ring
  // over 8 chips moves 2 x 7/8 of them over 2 links of 4.5e10 B/s:
  // 0.956 ms at least (the 2 x 4 slice has no wraparound, so more).
  const nlohmann::json d = gemma_decode("d_model"), v = gemma_decode("vocab");
  const std::uint64_t logits_bytes = 96ull * 256128 * 2;
  REQUIRE(logits_bytes == 49176576);
  std::uint64_t count_d = 0, count_v = 0, largest = 0;
  double largest_s = 0;
  for (const auto& c : d["collectives"]) {
    if (c["op"] != "all_reduce") continue;
    ++count_d;
    if (c["bytes"].get<std::uint64_t>() > largest) {
      largest = c["bytes"].get<std::uint64_t>();
      largest_s = c["time_s"].get<double>();
    }
  }
  for (const auto& c : v["collectives"]) count_v += c["op"] == "all_reduce" ? 1 : 0;
  CHECK(count_v == 2 * 2 + 1);  // two per block, the embedding lookup
  CHECK(count_d == count_v + 1);
  CHECK(largest == logits_bytes);
  const double by_hand = 2.0 * 7 / 8 * double(logits_bytes) / (2 * kV5eLinkBandwidth);
  CHECK(by_hand == Approx(0.956e-3).epsilon(0.001));
  CHECK(largest_s >= by_hand);
  // The same all-reduce run alone (kind: collective, the same pod and mesh)
  // takes what the step's does: the op, bytes and axes are the collective's.
  const nlohmann::json alone =
      run(write_yaml("logits-all-reduce",
                     "name: logits-all-reduce\nchip: tpu-v5e\npod: {topology: torus2d, shape: [2, 4], wraparound: "
                     "[false, false]}\nmesh: {model: 8}\nworkload: {kind: collective, op: all_reduce, bytes: " +
                         std::to_string(logits_bytes) + ", axes: [model]}\n"));
  CHECK(largest_s == Approx(alone["result"]["step_time_s"].get<double>()).epsilon(0.01));
  // It is on the step's critical path (sampling needs the summed logits),
  // and the logits matmul itself reads the same table bytes either way.
  const double step_d = d["result"]["inference"]["tpot_s"].get<double>();
  const double step_v = v["result"]["inference"]["tpot_s"].get<double>();
  CHECK(step_d - step_v > 0.9 * by_hand);
}

TEST_CASE("tensor-parallel decode all-reduces batch x d_model twice per block, latency-bound for a small batch",
          "[inference][tensor]") {
  REQUIRE(kLatencyBoundBytes == Approx(241714).epsilon(0.001));  // 4.7 us x 90 GB/s x 8 / 14
  const AllReduces one = decode_all_reduces(1), two = decode_all_reduces(2);
  // Two per block (attention and MLP outputs) and one for the
  // vocabulary-parallel embedding lookup.
  CHECK(one.count == 2 * kModel.layers + 1);
  CHECK(one.bytes == 1 * kModel.d_model * 2);
  CHECK(two.bytes == 2 * kModel.d_model * 2);
  // 16 KiB, far below the latency-bound size: launch and hops are the time.
  REQUIRE(double(one.bytes) < kLatencyBoundBytes / 8);
  CHECK(one.mean_s >= kV5eCollectiveLaunch + kV5eHopLatency);
  CHECK(bandwidth_term(double(one.bytes)) < 0.1 * one.mean_s);
  CHECK(two.mean_s < 1.1 * one.mean_s);  // twice the bytes, nearly the same time
}

TEST_CASE("tensor-parallel decode all-reduces far above the latency-bound size grow with their bytes",
          "[inference][tensor]") {
  const AllReduces a = decode_all_reduces(128), b = decode_all_reduces(256);
  REQUIRE(double(a.bytes) > 8 * kLatencyBoundBytes);  // 2 MiB
  CHECK(b.mean_s > 1.5 * a.mean_s);
  CHECK(b.mean_s >= bandwidth_term(double(b.bytes)));
}

}  // namespace test_tensor_parallel_decode
