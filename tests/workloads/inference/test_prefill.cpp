// The prefill on one TPU v5e: the prompts' forward pass, compute-bound,
// its time to first token against FLOPs / peak, writing the KV cache.
#include <catch2/catch.hpp>

#include <string>

#include "serving_model.h"
#include "workloads/experiment_fixture.h"

namespace test_prefill {

using namespace testing_serving;
using testing_workloads::run;
using testing_workloads::write_yaml;

namespace {

// Two Llama-3-70B-sized blocks (GQA, 8 KV heads), 2 prompts of 1024 tokens.
const Dense kModel{2, 8192, 28672, 64, 8, 128, 32000};
constexpr std::uint64_t kBatch = 2, kPrompt = 1024;

}  // namespace

TEST_CASE("prefill takes its FLOPs over the peak and writes the prompts' KV cache", "[inference][prefill]") {
  const nlohmann::json r = run(write_yaml(
      "prefill", "name: prefill\nchip: tpu-v5e\nworkload:\n  kind: inference\n  model: " + kModel.yaml(2048) +
                     "\n  batch: " + std::to_string(kBatch) + "\n  prompt_len: " + std::to_string(kPrompt) +
                     "\n  decode_len: 16\n  phase: prefill\n"))["result"]["inference"];
  const double tokens = double(kBatch * kPrompt);
  // Every prompt token through the blocks' weight matmuls; logits for each
  // sequence's last token only; causal attention (scores and P V) over
  // (T + 1) / 2 keys per query on average, for every query head.
  const double flops =
      2.0 * tokens * double(kModel.layers * kModel.block_matrix_params()) +
      2.0 * double(kBatch) * double(kModel.d_model * kModel.vocab) +
      2.0 * 2.0 * tokens * double(kModel.heads * kModel.head_dim * kModel.layers) * (double(kPrompt) + 1) / 2;
  const double ttft = r["ttft_s"].get<double>();
  CHECK(r["tpot_s"].is_null());
  CHECK(r["prefill"]["bound"] == "compute");
  CHECK(ttft >= flops / kV5eSustainedBf16);
  CHECK(ttft == Approx(flops / kV5eSustainedBf16).epsilon(0.10));
  // The K and V projections' outputs are the cache: 2 x layers x 8 heads x
  // 128 x 2 bytes per prompt token, all of it written to HBM.
  const double kv = tokens * double(kModel.kv_bytes_per_token(2));
  CHECK(r["prefill"]["kv_bytes"].get<double>() == kv);
  CHECK(r["prefill"]["hbm_bytes"].get<double>() >= 2.0 * double(kModel.params_read()) + kv);
}

}  // namespace test_prefill
