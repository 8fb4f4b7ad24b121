// The KV cache as serving counts it: 2 (K and V) x layers x kv_heads x
// head_dim x bytes per token, split over tensor parallelism, allocated for
// the model's context window, and the largest batch whose cache fits
// beside the weights.
#include <catch2/catch.hpp>

#include <string>

#include "serving_model.h"
#include "sim/error.h"
#include "workloads/experiment_fixture.h"

namespace test_kv_cache {

using namespace testing_serving;
using testing_workloads::run;
using testing_workloads::write_yaml;

namespace {

std::string serve_yaml(const std::string& name, const Dense& m, std::uint64_t batch, const std::string& pod,
                       const std::string& extra = "") {
  return "name: " + name + "\nchip: tpu-v5e\n" + pod + "workload:\n  kind: inference\n  model: " + m.yaml(2048) +
         "\n  batch: " + std::to_string(batch) + "\n  prompt_len: 1024\n  decode_len: 1024\n  phase: decode\n" + extra;
}

const std::string kOneChip = "";
const std::string kEightChips =
    "pod: {topology: torus2d, shape: [2, 4], wraparound: [false, false]}\nmesh: {model: 8}\n";

}  // namespace

TEST_CASE("KV-cache bytes per token are 2 x layers x kv_heads x head_dim x bytes, exactly", "[inference][kv]") {
  // Llama 3 70B's attention (80 layers, 8 KV heads of 128) on the shipped
  // v5e-8 experiment: 327,680 bytes per token in bf16, half in int8.
  const std::string path = std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/serve-llama3-70b-v5e-8.yaml";
  for (const std::uint64_t bytes : {2, 1}) {
    INFO(bytes << "-byte KV cache");
    const nlohmann::json r = run(path, {std::string("workload.dtype.kv_cache=") + (bytes == 1 ? "int8" : "bf16"),
                                        "workload.phase=decode"})["result"]["inference"];
    CHECK(r["kv_cache_bytes_per_token"].get<std::uint64_t>() == 2 * 80 * 8 * 128 * bytes);
    // Per chip: each sequence's cache of Llama 3's 8192-token context, 8 KV
    // heads over 8 chips.
    const std::uint64_t tokens = r["batch"].get<std::uint64_t>() * 8192;
    CHECK(r["kv_cache_bytes"].get<std::uint64_t>() == tokens * 2 * 80 * 1 * 128 * bytes);
  }
}

TEST_CASE("the largest batch that fits is the hand count, and one more does not fit", "[inference][kv]") {
  const Dense m{2, 1024, 4096, 8, 8, 128, 32000};
  const std::uint64_t per_sequence = m.kv_bytes_per_token(2) * 2048;  // a cache of the model's 2048-token context
  SECTION("one chip") {
    const auto fits = static_cast<std::uint64_t>((kV5eHbmCapacity - 2.0 * double(m.params())) / double(per_sequence));
    REQUIRE(fits == 1012);  // (16 GiB - 189 MiB) / 16 MiB
    const nlohmann::json r = run(write_yaml("fits", serve_yaml("fits", m, fits, kOneChip)))["result"];
    CHECK(r["inference"]["max_batch_that_fits"].get<std::uint64_t>() == fits);
    CHECK(r["memory"]["fits"] == true);
    CHECK_THROWS_WITH(run(write_yaml("too-many", serve_yaml("too-many", m, fits + 1, kOneChip))),
                      Catch::Contains("does not fit in HBM") &&
                          Catch::Contains("The largest batch that fits is " + std::to_string(fits)));
  }
  SECTION("tensor parallelism over 8 chips splits the weights' matrices and the KV heads") {
    // Each chip: 1/8 of every matrix (the embedding table by vocabulary
    // rows, 32000 / 8), every norm, and 1 of the 8 KV heads.
    const double weights =
        2.0 * double(m.layers * m.block_matrix_params() / 8 + m.norm_params() + 2 * m.vocab * m.d_model / 8);
    const auto fits = static_cast<std::uint64_t>((kV5eHbmCapacity - weights) / double(per_sequence / 8));
    const nlohmann::json r = run(
        write_yaml("tp-fits", serve_yaml("tp-fits", m, 8, kEightChips, "  parallelism: {tensor: model}\n")))["result"];
    CHECK(r["inference"]["max_batch_that_fits"].get<std::uint64_t>() == fits);
    CHECK(r["inference"]["weights_bytes"].get<double>() == weights);
  }
}

TEST_CASE("tensor parallelism over more chips than KV heads replicates each head", "[inference][kv][gqa]") {
  // 4 KV heads over 8 chips: each chip caches and projects one whole head
  // (a replica shared with one other chip) and splits the query heads of
  // its group, so it holds and reads what the same model with 8 KV heads,
  // one per chip, does.
  const Dense grouped{2, 1024, 4096, 8, 4, 128, 32000}, one_per_chip{2, 1024, 4096, 8, 8, 128, 32000};
  const std::string tp8 = "  parallelism: {tensor: model}\n";
  const nlohmann::json r = run(write_yaml("kv4-tp8", serve_yaml("kv4-tp8", grouped, 8, kEightChips, tp8)))["result"];
  const nlohmann::json twin =
      run(write_yaml("kv8-tp8", serve_yaml("kv8-tp8", one_per_chip, 8, kEightChips, tp8)))["result"];
  const std::uint64_t d = grouped.d_model, q = grouped.heads * grouped.head_dim;
  const double weights = 2.0 * double(grouped.layers * (2 * d * q / 8 + 2 * d * grouped.head_dim + 3 * d * 4096 / 8) +
                                      grouped.norm_params() + 2 * grouped.vocab * d / 8);
  CHECK(r["inference"]["weights_bytes"].get<double>() == weights);
  CHECK(r["inference"]["kv_cache_bytes"].get<std::uint64_t>() == 8 * 2048 * 2 * grouped.layers * 1 * 128 * 2);
  CHECK(r["inference"]["kv_cache_bytes"] == twin["inference"]["kv_cache_bytes"]);
  CHECK(r["inference"]["weights_bytes"] == twin["inference"]["weights_bytes"]);
  CHECK(r["step_time_s"] == twin["step_time_s"]);
}

}  // namespace test_kv_cache
