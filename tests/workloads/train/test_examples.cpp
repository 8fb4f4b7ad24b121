// Every shipped training experiment (configs/experiments/train-*.yaml) runs,
// fits, and reports what its strategy should show: data parallelism hides
// gradient all-reduces, tensor parallelism splits the matmul FLOPs over the
// ranks, a pipeline idles at least its ideal bubble.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <utility>

#include "app/cli_runner.h"
#include "models/model_config.h"
#include "sim/yaml_node.h"
#include "workloads/experiment.h"
#include "workloads/train/layout.h"
#include "workloads/train/memory.h"
#include "workloads/train/spec.h"

namespace test_examples {

namespace {

nlohmann::json run_example(const std::string& name) {
  auto exp = workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/" + name + ".yaml");
  return exp.workload->run(exp, {}).report;
}

// What every training report must hold, whatever the strategy.
void check_common(const nlohmann::json& r) {
  const auto& res = r["result"];
  const double step = res["step_time_s"];
  CHECK(step > 0);
  CHECK(res["memory"]["fits"] == true);
  CHECK(res["memory"]["per_chip_bytes"].get<double>() <= res["memory"]["capacity_bytes"].get<double>());
  CHECK(res["tokens_per_s"].get<double>() == Approx(res["tokens"].get<double>() / step));
  CHECK(res["mfu"].get<double>() > 0);
  CHECK(res["mfu"].get<double>() <= 1);
  CHECK(res["arithmetic_intensity"].get<double>() ==
        Approx(res["flops"].get<double>() / res["hbm_bytes"].get<double>()));
  const auto& p = res["parallelism"];
  CHECK(p["data"]["degree"].get<int>() * p["tensor"]["degree"].get<int>() * p["pipeline"]["degree"].get<int>() ==
        r["pod"]["chips"].get<int>());
  CHECK(res["pipeline"].is_null() == (p["pipeline"]["degree"] == 1));
  CHECK(r["per_chip"].size() == r["pod"]["chips"].get<std::size_t>());
  for (const auto& c : r["per_chip"]) CHECK(c["end_s"].get<double>() <= step);
}

}  // namespace

TEST_CASE("example: data parallel on v4 and v5e", "[workloads][train][examples]") {
  // One gradient all-reduce per layer that holds parameters: train-dp-v4's
  // embedding, 12 Transformer blocks and output layer; train-dp-v5e's 4
  // dense layers (the loss holds none).
  for (const auto& [name, gradient_all_reduces] :
       {std::pair<const char*, std::size_t>{"train-dp-v4", 14}, {"train-dp-v5e", 4}}) {
    const auto r = run_example(name);
    INFO(name << ": " << r["result"]["communication"]);
    check_common(r);
    CHECK(r["result"]["communication"]["overlap_fraction"].get<double>() > 0);
    REQUIRE(r["collectives"].size() == gradient_all_reduces);
    for (const auto& c : r["collectives"]) {
      CHECK(c["purpose"] == "gradients");
      CHECK(c["op"] == "all_reduce");
      CHECK(c["participants"] == r["result"]["parallelism"]["data"]["degree"]);
    }
  }
}

TEST_CASE("example: tensor parallel on v4 and v5e", "[workloads][train][examples]") {
  for (const char* name : {"train-tp-v4", "train-tp-v5e"}) {
    const auto r = run_example(name);
    INFO(name);
    check_common(r);
    const double tp = r["result"]["parallelism"]["tensor"]["degree"];
    CHECK(tp > 1);
    for (const auto& c : r["collectives"]) CHECK(c["purpose"] == "tensor_parallel");
    for (const auto& c : r["per_chip"])
      CHECK(c["mxu_flops"].get<double>() == Approx(r["result"]["model_flops"].get<double>() / tp));
  }
}

TEST_CASE("example: pipeline parallel on v4 and v5e", "[workloads][train][examples]") {
  for (const char* name : {"train-pp-v4", "train-pp-v5e"}) {
    const auto r = run_example(name);
    INFO(name << ": " << r["result"]["pipeline"]);
    check_common(r);
    const auto& p = r["result"]["pipeline"];
    // Uneven stages (embedding and logits at the ends) and stage-to-stage
    // messages only add idle time to the ideal.
    CHECK(p["bubble_fraction"].get<double>() >= 0.95 * p["bubble_fraction_ideal"].get<double>());
    CHECK(p["bubble_fraction"].get<double>() < 1);
  }
}

TEST_CASE("example: data x tensor (x pipeline) on v4 and v5e", "[workloads][train][examples]") {
  for (const char* name : {"train-hybrid-v4", "train-hybrid-v5e"}) {
    const auto r = run_example(name);
    INFO(name);
    check_common(r);
    bool gradients = false, tensor = false;
    for (const auto& c : r["collectives"]) (c["purpose"] == "gradients" ? gradients : tensor) = true;
    CHECK(gradients);
    CHECK(tensor);
  }
}

TEST_CASE("example: a Llama-3-8B shape with FSDP over a v6e-256 fits without simulate_anyway",
          "[workloads][train][examples]") {
  const auto r = run_example("train-llama3-8b-v6e-256");
  const auto& res = r["result"];
  CHECK(res["memory"]["fits"] == true);
  CHECK(res["memory"]["per_chip_bytes"].get<double>() <= res["memory"]["capacity_bytes"].get<double>());
  CHECK(res["parallelism"]["fsdp"]["degree"] == 256);
  CHECK(res["mfu"].get<double>() > 0);
  CHECK(res["hfu"].get<double>() > res["mfu"].get<double>());  // remat full recomputes the blocks
  CHECK(res["hfu"].get<double>() <= 1);
}

TEST_CASE("example: 128k-token sequences of a Llama-3-8B shape fit a v6e-256 only with context parallelism",
          "[workloads][train][examples][context]") {
  const std::string name = "train-llama3-8b-context-128k-v6e-256";
  const auto r = run_example(name);
  const auto& res = r["result"];
  CHECK(res["memory"]["fits"] == true);
  CHECK(res["parallelism"]["context"]["degree"] == 16);
  CHECK(res["model"]["seq_len"] == 131072);
  // Ring attention's 4 buffers (K/V in use and arriving, two dK/dV) of one
  // block's K and V: 8192 tokens x 8 KV heads of 128 (GQA), BF16.
  CHECK(res["memory"]["ring_buffers_bytes"].get<double>() == 4 * 2 * 2 * 8192.0 * 8 * 128);
  CHECK(res["hfu"].get<double>() > res["mfu"].get<double>());
  std::size_t permutes = 0;
  for (const auto& c : r["collectives"]) permutes += c["purpose"] == "context";
  CHECK(permutes == 32 * (15 + 15 + 15 + 16));  // per block: forward, recomputed forward, backward K/V and dK/dV
  // The same 256 chips as FSDP alone, one whole sequence per chip.
  std::ifstream in(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/" + name + ".yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"mesh: {fsdp: 16, context: 16}", "mesh: {fsdp: 256}"},
        {"global_batch: 16", "global_batch: 256"},
        {"parallelism: {fsdp: fsdp, context: context}", "parallelism: {fsdp: fsdp}"}}) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  const std::string path = std::string(TPUSIM_SOURCE_DIR) + "/build-test-out/train-128k-no-context.yaml";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  auto exp = workloads::load_experiment(path);
  CHECK_THROWS_WITH(exp.workload->run(exp, {}), Catch::Contains("does not fit in HBM"));
}

TEST_CASE("tpusim run --trace on a pipeline: a task track per chip shows the schedule", "[workloads][train]") {
  const std::string out = std::string(TPUSIM_SOURCE_DIR) + "/build-test-out/train-pp-v5e";
  std::filesystem::remove_all(out);
  const auto r = testing_cli::run_tpusim("run configs/experiments/train-pp-v5e.yaml --trace --out " + out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("bubble (measured / ideal)") != std::string::npos);
  std::ifstream f(out + "/trace.json");
  const auto trace = nlohmann::json::parse(f);
  // 4 stages x 16 microbatches x (forward + backward) task slices, and
  // each chip's optimizer.
  int tasks = 0, optimizer = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") != "pipeline") continue;
    const std::string n = e["name"];
    (n == "optimizer" ? optimizer : tasks) += 1;
  }
  CHECK(tasks == 4 * 16 * 2);
  CHECK(optimizer == 4);
}

TEST_CASE("example: GPT-3 175B on a v4-1024 fits with remat full and sequence parallelism, by the hand count",
          "[workloads][train][examples][remat]") {
  // What stage 0's chips keep, computed as run_train does before it
  // simulates (the full step takes minutes; the memory check comes first).
  std::ifstream in(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/train-gpt3-175b-v4-1024.yaml");
  const std::string shipped((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto memory = [&](const std::string& remat) {
    std::string text = shipped;
    const auto at = text.rfind("remat: full");  // the key, after the comments that name it
    REQUIRE(at != std::string::npos);
    text.replace(at, 11, "remat: " + remat);
    const std::string path = std::string(TPUSIM_SOURCE_DIR) + "/build-test-out/train-gpt3-remat-" + remat + ".yaml";
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    const workloads::Experiment exp = workloads::load_experiment(path);
    const workloads::TrainSpec spec = workloads::load_train_spec(sim::YamlNode::load_file(path)["workload"], exp);
    CHECK_FALSE(spec.simulate_anyway);
    const models::ModelSpec micro = models::build_model(spec.chip_model(), spec.microbatch_size());
    const workloads::TrainLayout layout = workloads::make_train_layout(exp, spec.parallelism, micro);
    return workloads::train_memory(spec, layout, micro)[0];  // chip 0: stage 0, tensor rank 0
  };
  // Brown et al. 2020 Table 2.1: h 12288 (96 heads of 128), d_ff 4h,
  // s 2048; 16 stages of 6 blocks, t 8, microbatches of b 3 sequences.
  const double h = 12288, F = 4 * h, V = 50304, s = 2048, b = 3, a = 96, t = 8, p = 16;
  // Megatron's split: each block's 4h^2 + 2hF weights and stage 0's
  // embedding over t; the norms (a few h) are left out, under 1e-4.
  const double params = (6 * (4 * h * h + 2 * h * F) + V * h) / t;
  // Korthikanti et al. 2022 s.5: with full recomputation and sequence
  // parallelism a block keeps 2sbh/t; 1F1B's first stage holds p
  // microbatches; the recomputed block holds again its whole stash,
  // 32sbh/t + 2as^2b/t (s.4.2.2 without dropout).
  const double activations = p * 6 * 2 * s * b * h / t;
  const double redo = 32 * s * b * h / t + 2 * a * s * s * b / t;
  const workloads::ChipMemory full = memory("full");
  CHECK(double(full.params) == Approx(2 * params).epsilon(0.01));
  CHECK(double(full.optimizer) == Approx(12 * params).epsilon(0.01));
  CHECK(full.microbatches_in_flight == p);
  CHECK(double(full.activations) == Approx(activations).epsilon(0.01));
  CHECK(double(full.rematerialized) == Approx(redo).epsilon(0.01));
  CHECK(double(full.total()) == Approx(16 * params + activations + redo).epsilon(0.01));
  CHECK(full.total() <= 32ull << 30);  // tpu-v4.yaml hbm.capacity, 32 GiB
  // Without remat each block keeps its whole stash for 16 microbatches.
  const workloads::ChipMemory none = memory("none");
  CHECK(double(none.activations) == Approx(p * 6 * redo).epsilon(0.01));
  CHECK(none.total() > 32ull << 30);
}

}  // namespace test_examples
