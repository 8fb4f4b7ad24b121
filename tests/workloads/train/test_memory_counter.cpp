// The trace's "HBM in use (B)" counter (run --trace) against hand counts:
// a data-parallel MLP rises through its forward and falls through its
// backward by each layer's stash (docs/models.md: an MLP layer with ReLU
// stashes its BF16 input, 2 b w bytes; the loss its BF16 probabilities and
// int32 labels); a pipeline's first stage holds p microbatches' stashes at
// its peak under 1F1B and m under GPipe (Narayanan et al. 2021, s.2.2); the
// peak is the report's memory total of the chip, and the step ends at what
// it holds throughout.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_memory_counter {

namespace {

using testing_workloads::write_yaml;

const char* const kCounter = "HBM in use (B)";

struct Run {
  nlohmann::json report, trace;
};

Run run_traced(const std::string& path, const std::vector<std::string>& sets = {}) {
  auto exp = workloads::load_experiment(path, sets);
  workloads::RunOptions opts;
  opts.trace = true;
  const workloads::RunOutput out = exp.workload->run(exp, opts);
  return {out.report, nlohmann::json::parse(out.trace_json)};
}

// The counter's samples on chip `chip`, in time order.
std::vector<std::pair<double, double>> samples(const nlohmann::json& trace, int chip) {
  std::vector<std::pair<double, double>> s;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == "C" && e.at("pid") == chip && e.at("name") == kCounter)
      s.emplace_back(e.at("ts").get<double>(), e.at("args").at("value").get<double>());
  std::stable_sort(s.begin(), s.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return s;
}

double peak(const std::vector<std::pair<double, double>>& s) {
  double m = 0;
  for (const auto& [t, v] : s) m = std::max(m, v);
  return m;
}

const nlohmann::json& chip_memory(const nlohmann::json& report, int chip) {
  for (const auto& p : report.at("per_chip"))
    if (p.at("chip") == chip) return p.at("memory");
  FAIL("no per_chip entry for chip " << chip);
  return report;
}

}  // namespace

TEST_CASE("memory counter: a data-parallel MLP rises and falls by each layer's stash", "[train][trace][memory]") {
  // widths 1024, 2048, 512, 256 and 256 samples per chip, one microbatch.
  const std::string path = write_yaml("memory-counter-dp", R"(
chip: tpu-v4
pod: {topology: ring, shape: [4]}
mesh: {data: 4}
workload:
  kind: train
  model: {type: mlp, widths: [1024, 2048, 512, 256]}
  global_batch: 1024
  parallelism: {data: data}
  optimizer: sgd
)");
  const Run r = run_traced(path);
  const auto s = samples(r.trace, 0);
  REQUIRE(s.size() >= 2);
  // The first layer allocates at the step's first instant (time 0).
  std::vector<double> steps{s.front().second - s.back().second};
  for (std::size_t k = 1; k < s.size(); ++k) steps.push_back(s[k].second - s[k - 1].second);
  // Hand count, b = 256: each layer's BF16 input 2 b w; the loss layer's
  // probabilities 2 b 256 and labels 4 b.
  const double b = 256, l0 = 2 * b * 1024, l1 = 2 * b * 2048, l2 = 2 * b * 512, loss = 2 * b * 256 + 4 * b;
  const std::vector<double> want{l0, l1, l2, loss, -loss, -l2, -l1, -l0};
  CHECK(steps == want);
  // Before and after: the weights and biases, 2 + 2 bytes of BF16
  // parameter and gradient and SGD's 4-byte FP32 master copy (no moments;
  // ZeRO s.3.1's accounting) each.
  const double params = 1024 * 2048 + 2048 + 2048 * 512 + 512 + 512 * 256 + 256;
  CHECK(s.back().second == (2 + 2 + 4) * params);
  CHECK(peak(s) == chip_memory(r.report, 0).at("total_bytes").get<double>());
}

TEST_CASE("memory counter: a pipeline's first stage holds p microbatches under 1F1B, m under GPipe",
          "[train][trace][memory]") {
  // The shipped 4-stage MLP (8 layers of 4096, then the loss), cut to 8
  // microbatches of 256.
  const std::string exp = std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/train-pp-v5e.yaml";
  const std::vector<std::string> cut{"workload.global_batch=2048", "workload.parallelism.microbatches=8"};
  // Stage 0 holds layers 0 and 1: each stashes its BF16 input, 2 x 256 x 4096 bytes.
  const double per_microbatch = 2 * (2 * 256 * 4096.0);
  for (const auto& [schedule, in_flight] : {std::pair<std::string, double>{"gpipe", 8}, {"1f1b", 4}}) {
    INFO(schedule);
    auto sets = cut;
    sets.push_back("workload.parallelism.schedule=" + schedule);
    const Run r = run_traced(exp, sets);
    const auto s = samples(r.trace, 0);
    REQUIRE(!s.empty());
    CHECK(peak(s) - s.back().second == in_flight * per_microbatch);
    // Every stage: the counter's peak is the report's total for the chip.
    for (int chip = 0; chip < 4; ++chip) {
      INFO("chip " << chip);
      const auto c = samples(r.trace, chip);
      const nlohmann::json& m = chip_memory(r.report, chip);
      CHECK(peak(c) == m.at("total_bytes").get<double>());
      // It ends at what the step holds throughout, its lowest level.
      CHECK(c.back().second == m.at("total_bytes").get<double>() - m.at("activations_bytes").get<double>());
      for (const auto& [t, v] : c) CHECK(v >= c.back().second);
    }
  }
}

TEST_CASE("memory counter: remat full holds one recomputed layer at a time, as the report counts",
          "[train][trace][memory]") {
  // The shipped 4-stage Transformer with remat: full, cut to 4 microbatches.
  // Layer l - 1's recomputed forward waits for layer l's whole backward,
  // whose weight-gradient matmuls still read l's recomputed stash: on a
  // stage of blocks alone (stages 1 and 2; the first also holds the
  // embedding, the last the logits and loss) the counter's peak is the
  // report's total, which counts one recomputed layer (train_memory's
  // rematerialized). Before the recompute waited, two were live at once and
  // the peak was one rematerialized_bytes above the total.
  const std::string exp = std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/train-pp-v4.yaml";
  const Run r =
      run_traced(exp, {"workload.remat=full", "workload.global_batch=8", "workload.parallelism.microbatches=4"});
  for (int chip = 1; chip < 3; ++chip) {
    INFO("chip " << chip);
    const nlohmann::json& m = chip_memory(r.report, chip);
    REQUIRE(m.at("rematerialized_bytes").get<double>() > 0);
    const auto c = samples(r.trace, chip);
    CHECK(peak(c) == m.at("total_bytes").get<double>());
  }
}

}  // namespace test_memory_counter
