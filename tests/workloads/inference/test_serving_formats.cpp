// Today's serving formats (issue 42): fp8 weights and KV cache on the chips
// that have fp8 matmuls, TPU7x at twice its bf16 rate and v6e at its bf16
// rate (configs/chips: `formats.fp8`, docs/reference/tpu-specs.md), and a
// located refusal on a chip without them (v5e).
#include <catch2/catch.hpp>

#include <string>

#include "serving_model.h"
#include "sim/error.h"
#include "workloads/experiment_fixture.h"

namespace test_serving_formats {

using namespace testing_serving;
using testing_workloads::run;
using testing_workloads::write_yaml;

namespace {

// Two Llama-3-70B-sized blocks with 8 KV heads.
const Dense kModel{2, 8192, 28672, 64, 8, 128, 32000};

nlohmann::json serve(const std::string& chip, const std::string& format, const std::string& phase,
                     std::uint64_t batch) {
  const std::string name = "fmt-" + chip + "-" + format + "-" + phase;
  return run(write_yaml(
      name, "name: " + name + "\nchip: " + chip + "\nworkload:\n  kind: inference\n  model: " + kModel.yaml(4096) +
                "\n  batch: " + std::to_string(batch) + "\n  prompt_len: 2048\n  decode_len: 128\n  phase: " + phase +
                "\n  dtype: {weights: " + format + ", kv_cache: " + format + "}\n"))["result"]["inference"];
}

}  // namespace

TEST_CASE("fp8 serving on TPU7x reads one byte a weight and halves a memory-bound decode step",
          "[inference][formats]") {
  const auto bf16 = serve("tpu-7x", "bf16", "decode", 8), fp8 = serve("tpu-7x", "fp8", "decode", 8);
  // Every weight but the embedding table, read once a step: 2 B, then 1 B.
  CHECK(bf16["decode"]["weights_bytes"].get<double>() == 2.0 * double(kModel.params_read()));
  CHECK(fp8["decode"]["weights_bytes"].get<double>() == double(kModel.params_read()));
  CHECK(fp8["decode"]["kv_bytes"].get<double>() == bf16["decode"]["kv_bytes"].get<double>() / 2);
  // Memory-bound at batch 8: half the bytes, about half the time (launches
  // and pipeline fills do not halve).
  const double ratio = fp8["tpot_s"].get<double>() / bf16["tpot_s"].get<double>();
  INFO("fp8 / bf16 decode step " << ratio);
  CHECK(ratio >= 0.5);
  CHECK(ratio <= 0.55);
  // The KV cache a sequence holds is half as large, so twice the batch fits (within one).
  const double fits_bf16 = bf16["max_batch_that_fits"].get<double>(),
               fits_fp8 = fp8["max_batch_that_fits"].get<double>();
  CHECK(fits_fp8 >= 2 * fits_bf16 - 2);
}

TEST_CASE("fp8 prefill runs at twice the bf16 rate on TPU7x and at the bf16 rate on v6e", "[inference][formats]") {
  const auto ttft = [](const std::string& chip, const std::string& format) {
    return serve(chip, format, "prefill", 8)["ttft_s"].get<double>();
  };
  // Compute-bound: 8 prompts of 2048 tokens through 8192-wide layers.
  const double x_ratio = ttft("tpu-7x", "fp8") / ttft("tpu-7x", "bf16");
  const double v6e_ratio = ttft("tpu-v6e", "fp8") / ttft("tpu-v6e", "bf16");
  INFO("7x fp8 / bf16 " << x_ratio << ", v6e " << v6e_ratio);
  CHECK(x_ratio >= 0.5);
  CHECK(x_ratio <= 0.6);
  CHECK(v6e_ratio >= 0.9);
  CHECK(v6e_ratio <= 1.0);
}

TEST_CASE("fp8 serving on a chip without fp8 matmuls is refused at the key", "[inference][formats]") {
  CHECK_THROWS_WITH(serve("tpu-v5e", "fp8", "decode", 8), Catch::Contains("tpu-v5e has no fp8 matmuls"));
}

}  // namespace test_serving_formats
