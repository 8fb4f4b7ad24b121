// Tensor-parallel decode on 8 v5e chips (a 2x4 slice): every Transformer
// block all-reduces its attention and MLP outputs, batch x d_model bf16
// values, over the 8 chips. For a small batch those are a few kilobytes,
// and the all-reduce costs its launch and hops, not its bytes.
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

}  // namespace

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
