// precision.matmul: a training step whose linear layers' forward and
// input-gradient matmuls run in an 8-bit format (MaxText's int8 training,
// AQT fwd and dlhs; docs/calibration.md#number-formats), against a hand
// count: on a compute-bound MLP the step saves the quantized matmuls' FLOPs
// at the bf16 peak less the same FLOPs at the format's peak, and nothing
// else moves; memory (weights, gradients and activations as stored) is the
// bf16 step's.
#include <catch2/catch.hpp>

#include "workloads/experiment_fixture.h"

namespace test_precision_matmul {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// One v5e chip (tpu-v5e.yaml: 197 TFLOP/s bf16, int8 at twice the rate:
// docs/reference/tpu-specs.md#v5e.peak_int8_ops_per_chip 394 TOP/s), an MLP
// of three 8192 x 8192 layers on 8192 samples: each layer's forward, dX
// and dW matmul is F = 2 x 8192^3 FLOPs, at 1.1e12 FLOPs per byte moved far
// above the ridge.
constexpr double kPeakBf16 = 4 * 128 * 128 * 2 * 1.5e9;  // tpu-v5e.yaml: 4 MXUs x 128 x 128 x 2 x 1.5 GHz
constexpr double kF = 2.0 * 8192.0 * 8192.0 * 8192.0;
// AQT's quantization of a quantized matmul's two bf16 operands (8192^2
// elements each) before it: 4 bytes read and 1 written per element
// (docs/calibration.md#number-formats), at most once per matmul on the
// step's critical path, at least none of it (the weights' pass may run
// beside the previous matmul's MXU work).
constexpr double kQuantizeBytes = 2 * 8192.0 * 8192.0 * 5;

std::string mlp_v5e() {
  return write_yaml("precision-mlp-v5e", R"(
chip: tpu-v5e
workload:
  kind: train
  model: {type: mlp, widths: [8192, 8192, 8192, 8192]}
  global_batch: 8192
  optimizer: sgd
)");
}

}  // namespace

TEST_CASE("precision.matmul int8: the quantized matmuls' FLOPs at twice the rate, memory unchanged",
          "[workloads][train][formats]") {
  const std::string path = mlp_v5e();
  const auto bf16 = run(path);
  const auto int8 = run(path, {"workload.precision={matmul: int8}"});
  CHECK(bf16["result"]["precision"]["matmul"] == "bf16");
  CHECK(int8["result"]["precision"]["matmul"] == "int8");
  // Quantized: the three forward matmuls and the two dX (the first layer
  // has no input gradient); the three dW stay bf16.
  const double quantized = 5 * kF;
  const double t_bf16 = bf16["result"]["step_time_s"], t_int8 = int8["result"]["step_time_s"];
  const double saved = quantized / kPeakBf16 - quantized / (2 * kPeakBf16);
  const double quantize = 5 * kQuantizeBytes / 8.1e11;  // tpu-v5e.yaml hbm.bandwidth
  INFO("bf16 step " << t_bf16 << " s, int8 " << t_int8 << " s, hand count " << t_bf16 - saved << " s + up to "
                    << quantize << " s of quantization");
  CHECK(t_int8 >= (t_bf16 - saved) * 0.99);
  CHECK(t_int8 <= (t_bf16 - saved + quantize) * 1.03);
  // Model FLOPs and MFU's peak are bf16's: MFU rises by the time saved.
  CHECK(int8["result"]["flops"].get<double>() == bf16["result"]["flops"].get<double>());
  CHECK(int8["result"]["mfu"].get<double>() == Approx(bf16["result"]["mfu"].get<double>() * t_bf16 / t_int8));
  // Weights, gradients, optimizer state and the stash are held as before:
  // the int8 operands are made from them inside the kernels.
  CHECK(int8["result"]["memory"]["per_chip_bytes"] == bf16["result"]["memory"]["per_chip_bytes"]);
}

TEST_CASE("precision.matmul fp8 on v5p (fp8 at the bf16 rate): the compute-bound step does not move",
          "[workloads][train][formats]") {
  // docs/reference/tpu-specs.md#v5p.peak_fp8_flops_per_chip: 459 TFLOP/s,
  // bf16's. One-byte operands halve the matmuls' operand bytes, which a
  // compute-bound step does not wait for; what it pays is AQT's
  // quantization of the five quantized matmuls' operands, at most.
  const std::string path = mlp_v5e();
  const auto bf16 = run(path, {"chip=tpu-v5p"});
  const auto fp8 = run(path, {"chip=tpu-v5p", "workload.precision={matmul: fp8}"});
  const double t_bf16 = bf16["result"]["step_time_s"], t_fp8 = fp8["result"]["step_time_s"];
  CHECK(t_fp8 >= t_bf16 * 0.99);
  CHECK(t_fp8 <= (t_bf16 + 5 * kQuantizeBytes / 2.46e12) * 1.01);  // tpu-v5p.yaml hbm.bandwidth
}

}  // namespace test_precision_matmul
