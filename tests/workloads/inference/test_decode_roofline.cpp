// A decode step of a dense model on one TPU v5e against the roofline
// arithmetic of serving (the scaling book, "All About Transformer
// Inference"): each step reads every weight and each sequence's KV cache
// once and does 2 FLOPs per weight per sequence, so its time is at least
// max((weights + KV bytes) / HBM bandwidth, FLOPs / peak), and the batch at
// which it turns compute-bound is near the chip's critical intensity,
// peak / HBM bandwidth (about 240 on v5e in bf16).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "serving_model.h"
#include "workloads/experiment_fixture.h"

namespace test_decode_roofline {

using namespace testing_serving;
using testing_workloads::run;
using testing_workloads::write_yaml;

namespace {

// Two Llama-3-70B-sized blocks with multi-query attention (one KV head)
// and a context of 128 tokens, the MXU's depth: the weights dominate the
// bytes, as in a whole model, so the crossover is the chip's, and the
// attention matmuls' depth (the context) fills the array.
const Dense kModel{2, 8192, 28672, 64, 1, 128, 32000};
constexpr std::uint64_t kPrompt = 112, kDecode = 32;
// The mean decode step's context: prompt + (decode + 1) / 2 (docs/serving.md).
constexpr std::uint64_t kContext = kPrompt + (kDecode + 1) / 2;
const double kRidge = kV5ePeakBf16 / kV5eHbmBandwidth;  // 242.7 FLOPs per byte

// `extra`: more keys of the workload mapping, indented.
nlohmann::json decode_result(std::uint64_t batch, const std::string& extra = "") {
  const std::string b = std::to_string(batch), name = "decode-" + b + (extra.empty() ? "" : "-int8");
  return run(write_yaml(
      name, "name: " + name + "\nchip: tpu-v5e\nworkload:\n  kind: inference\n  model: " + kModel.yaml(256) +
                "\n  batch: " + b + "\n  prompt_len: " + std::to_string(kPrompt) +
                "\n  decode_len: " + std::to_string(kDecode) + "\n  phase: decode\n" + extra))["result"]["inference"];
}
double decode_step(std::uint64_t batch) { return decode_result(batch)["tpot_s"].get<double>(); }

double hand_bytes(std::uint64_t batch) {
  return 2.0 * double(kModel.params_read()) + double(batch * kContext * kModel.kv_bytes_per_token(2));
}
// The weight matmuls, and attention's two matmuls (scores and P V) over
// the context for each query head.
double hand_flops(std::uint64_t batch) {
  return 2.0 * double(batch) * double(kModel.matmul_params()) +
         2.0 * 2.0 * double(batch * kModel.heads * kModel.head_dim * kContext * kModel.layers);
}
// The roofline at the rate the MXUs sustain (serving_model.h).
double hand_step(std::uint64_t batch) {
  return std::max(hand_bytes(batch) / kV5eHbmBandwidth, hand_flops(batch) / kV5eSustainedBf16);
}

}  // namespace

TEST_CASE("a decode step on one v5e never beats the roofline, and its split is the roofline's terms",
          "[inference][roofline]") {
  for (std::uint64_t batch : {1, 16, 64, 128, 192, 240, 256, 320, 512, 1024}) {
    INFO("batch " << batch);
    const nlohmann::json r = decode_result(batch);
    CHECK(r["tpot_s"].get<double>() >= hand_step(batch));
    const nlohmann::json& split = r["decode"]["split"];
    CHECK(split["weights_s"].get<double>() == Approx(2.0 * double(kModel.params_read()) / kV5eHbmBandwidth));
    CHECK(split["kv_s"].get<double>() ==
          Approx(double(batch * kContext * kModel.kv_bytes_per_token(2)) / kV5eHbmBandwidth));
    // The matmuls' FLOPs; the layer norms', activation's and softmax's on
    // the vector unit are under 1% more.
    CHECK(split["compute_s"].get<double>() == Approx(hand_flops(batch) / kV5ePeakBf16).epsilon(0.01));
    const double memory_s = hand_bytes(batch) / kV5eHbmBandwidth, compute_s = hand_flops(batch) / kV5ePeakBf16;
    CHECK(r["decode"]["bound"] == (compute_s > memory_s ? "compute" : "memory"));
  }
}

TEST_CASE("decode's step-time curve turns compute-bound near peak / HBM bandwidth (about 240 on v5e in bf16)",
          "[inference][roofline]") {
  // The knee as a plot of step time against batch shows it: where the
  // memory-bound plateau (through batch 16 and 64) meets the compute-bound
  // line (through batch 512 and 1024), both measured.
  const double t16 = decode_step(16), t64 = decode_step(64), t512 = decode_step(512), t1024 = decode_step(1024);
  const double plateau_slope = (t64 - t16) / 48, line_slope = (t1024 - t512) / 512;
  const double knee = ((t512 - line_slope * 512) - (t16 - plateau_slope * 16)) / (plateau_slope - line_slope);
  CHECK(knee == Approx(kRidge).epsilon(0.10));
}

// Weight-only int8 (JetStream-PyTorch's WeightOnlyInt8Linear,
// jetstream_pt/layers.py at 84ac213: bf16 activations times int8 weights):
// the step reads one byte a weight beside the bf16 KV cache, and its
// matmuls run at the bf16 rate, where AQT-style int8 (both operands) runs
// them at v5e's int8 rate, twice bf16's (docs/reference/tpu-specs.md).
TEST_CASE("a weight-only int8 decode step reads one byte a weight and multiplies at the bf16 rate",
          "[inference][roofline][formats]") {
  const std::string weight_only = "  dtype: {weights: int8, activations: bf16}\n";
  const std::string both = "  dtype: {weights: int8, activations: quantized}\n";
  for (std::uint64_t batch : {16, 1024}) {
    INFO("batch " << batch);
    const double weights = double(kModel.params_read()), kv = double(batch * kContext * kModel.kv_bytes_per_token(2));
    const double flops = hand_flops(batch);
    const nlohmann::json w = decode_result(batch, weight_only), q = decode_result(batch, both);
    const nlohmann::json& split = w["decode"]["split"];
    CHECK(split["weights_s"].get<double>() == Approx(weights / kV5eHbmBandwidth));
    CHECK(split["kv_s"].get<double>() == Approx(kv / kV5eHbmBandwidth));
    CHECK(split["compute_s"].get<double>() == Approx(flops / kV5ePeakBf16).epsilon(0.01));
    CHECK(q["decode"]["split"]["compute_s"].get<double>() == Approx(flops / (2 * kV5ePeakBf16)).epsilon(0.01));
    const double step = std::max((weights + kv) / kV5eHbmBandwidth, flops / kV5eSustainedBf16);
    CHECK(w["tpot_s"].get<double>() >= step);
    if (batch == 1024) CHECK(w["tpot_s"].get<double>() == Approx(step).epsilon(0.05));
  }
  // Memory-bound at batch 16: HBM moves the weights at one byte, the cache
  // at two, and the activations' round trips between kernels (1.2% more).
  // The bf16 MXUs take the converted weights no faster than a 128 x 128
  // tile per 128 cycles each (a weight-stationary array's tile period,
  // max(rows, 128) with double-buffered weights: docs/mxu.md), 4 x 128
  // weights a cycle at the sustained clock, 7.2e11 a second: fewer than
  // HBM's 8.1e11 one-byte weights, so that is the step's bound (+11%
  // above it measured: both bounds nearly meet, and the kernels' fills
  // and drains stall on one or the other).
  const std::uint64_t batch = 16;
  const double weights = double(kModel.params_read()), kv = double(batch * kContext * kModel.kv_bytes_per_token(2));
  const nlohmann::json w = decode_result(batch, weight_only);
  const double hbm = w["decode"]["hbm_bytes"].get<double>();
  CHECK(hbm >= weights + kv);
  CHECK(hbm <= 1.05 * (weights + kv));
  const double mxu_weights_per_s = 4.0 * 128 * 1.5e9 * kV5eComputeEfficiency;
  const double bound = std::max((weights + kv) / kV5eHbmBandwidth, weights / mxu_weights_per_s);
  CHECK(bound == Approx(weights / mxu_weights_per_s));
  CHECK(w["tpot_s"].get<double>() >= bound);
  CHECK(w["tpot_s"].get<double>() == Approx(bound).epsilon(0.15));
  // Int8 operands both ways (AQT) run on twice the arrays (the int8 rate).
  CHECK(decode_result(batch, both)["tpot_s"].get<double>() < w["tpot_s"].get<double>());
  // Compute-bound at batch 1024: the int8 rate halves the MXU time.
  CHECK(decode_result(1024, both)["tpot_s"].get<double>() <=
        0.6 * decode_result(1024, weight_only)["tpot_s"].get<double>());
}

// The acceptance as written (docs/serving.md, "Checked against"):
// within 5% of the roofline, here at every batch where the roofline's
// premises hold, one of its two terms dominating and the activations'
// bytes negligible beside the weights'. Measured: batch 1 +2.0%, 4 +2.1%,
// 16 +2.3%, 64 +3.3%, 128 +4.7%, 1024 +3.8% (the matmul kernel's blocking
// counts the DMA engines' latency per block step, docs/matmul.md; before,
// batches 1 and 4 were +20% and +18%).
TEST_CASE("a decode step on one v5e is within 5% of the roofline away from its knee", "[inference][roofline]") {
  for (std::uint64_t batch : {1, 4, 16, 64, 128, 1024}) {
    INFO("batch " << batch);
    CHECK(decode_step(batch) == Approx(hand_step(batch)).epsilon(0.05));
  }
}

// The roofline of kernels run one after another (issue 42's settled form):
// each of the layer's matmuls and its attention is bound by its own bytes,
// activations' HBM round trips included (a matmul reads its batch x k input
// and writes its batch x n output, beside its k x n weights; attention reads
// the KV cache and the queries and writes the context), or by its FLOPs at
// the sustained rate, whichever is longer; the step is their sum.
double sequential_roofline(std::uint64_t batch) {
  const double B = double(batch), d = double(kModel.d_model), f = double(kModel.d_ff);
  const double q = double(kModel.heads * kModel.head_dim), kv = double(kModel.kv_heads * kModel.head_dim);
  const auto matmul = [&](double k, double n) {
    return std::max(2.0 * (k * n + B * (k + n)) / kV5eHbmBandwidth, 2.0 * B * k * n / kV5eSustainedBf16);
  };
  const double attention = std::max((B * double(kContext) * 2.0 * kv * 2.0 + 2.0 * B * 2.0 * q) / kV5eHbmBandwidth,
                                    4.0 * B * q * double(kContext) / kV5eSustainedBf16);
  const double block = matmul(d, q) + 2 * matmul(d, kv) + matmul(q, d) + 2 * matmul(d, f) + matmul(f, d) + attention;
  return double(kModel.layers) * block + matmul(d, double(kModel.vocab));
}

// Every batch from 1 to 1024 against it: never below it, and within 5%
// but where a kernel's bytes and FLOPs take the same time. Measured: 1
// +2.1%, 16 +2.1%, 128 +2.2%, 192 +2.7%, 240 +8.1%, 256 +7.6%, 320 +6.2%,
// 512 +4.0%, 1024 +2.5%. At 240-320 the MLP's matmuls (intensity about the
// batch, the ridge 229 FLOPs a byte at the sustained rate) have HBM and MXU
// both saturated, and their pipeline's fill and drain (first loads, the
// last 3.9 MB output store, the array's fill per weight tile) cannot hide
// under either: a roofline is the bound a kernel reaches away from its
// balance point, not at it (docs/serving.md, "Near the knee"). There the
// step is within 10%.
TEST_CASE("a decode step on one v5e is within 5% of the sequential kernels' roofline but at the knee",
          "[inference][roofline]") {
  for (std::uint64_t batch : {1, 2, 4, 8, 16, 32, 64, 128, 192, 240, 256, 320, 512, 1024}) {
    const double step = decode_step(batch), roof = sequential_roofline(batch);
    INFO("batch " << batch << ": " << step << " s against " << roof << " s");
    CHECK(step >= roof);
    const bool knee = batch >= 240 && batch <= 320;
    CHECK(step <= (knee ? 1.10 : 1.05) * roof);
  }
}

}  // namespace test_decode_roofline
