// Interleaved 1F1B (Megatron-LM, Narayanan et al. 2021 s.2.2.2): each stage
// holds V chunks of layers, and the bubble of uniform stages with free
// communication shrinks to (p-1)/(V m + p - 1) (docs/reference/formulas.md
// §4). Measured on the simulated timeline, against that closed form and the
// paper's statements on memory and messages.
#include <catch2/catch.hpp>

#include "workloads/experiment_fixture.h"
#include "workloads/train/pipeline_schedule.h"

namespace test_interleaved {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// 32 equal dense layers (1024 wide) on 4 v4 stages of a ring, links so fast
// that communication is negligible (1 PB/s, no latency): chunks of 32 / (4 V)
// layers, uniform but for the first layer's backward, which has no input
// gradient to compute.
std::string uniform_pipeline() {
  std::string widths = "[1024";
  for (int i = 0; i < 32; ++i) widths += ", 1024";
  widths += "]";
  return write_yaml("uniform-interleaved", R"(
chip: tpu-v4
pod: {topology: ring, shape: [4], link_bandwidth: 1.0e15, link_latency: 0}
mesh: {pipe: 4}
workload:
  kind: train
  model: {type: mlp, widths: )" + widths + R"(}
  global_batch: 2048
  parallelism: {pipeline: pipe, microbatches: 8, schedule: interleaved, virtual_stages: 2}
  optimizer: sgd
)");
}

}  // namespace

TEST_CASE("interleaved schedule: every chunk of every microbatch once each way, forward before backward",
          "[workloads][train][interleaved]") {
  using workloads::PipelineSchedule;
  const std::uint32_t p = 4, m = 8, v = 2;
  for (std::uint32_t s = 0; s < p; ++s) {
    const auto tasks = workloads::stage_tasks(PipelineSchedule::interleaved, p, s, m, v);
    REQUIRE(tasks.size() == 2 * m * v);
    std::vector<int> forward_at(m * v, -1), backward_at(m * v, -1);
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      int& at = (tasks[i].backward ? backward_at : forward_at)[tasks[i].microbatch * v + tasks[i].chunk];
      CHECK(at == -1);
      at = static_cast<int>(i);
    }
    for (std::uint32_t k = 0; k < m * v; ++k) CHECK(backward_at[k] > forward_at[k]);
    // Megatron-LM's warm-up: (p - s - 1) 2 + (V - 1) p forwards, then one
    // more before the first backward; that many chunk passes in flight.
    CHECK(workloads::peak_in_flight(tasks) == (p - s - 1) * 2 + (v - 1) * p + 1);
  }
}

TEST_CASE("interleaved 1F1B bubble within 5% of (p-1)/(V m + p - 1) at three (p, m, V) points",
          "[workloads][train][interleaved]") {
  const std::string path = uniform_pipeline();
  struct Point {
    int m, v;
  };
  // (4, 8, 2), (4, 4, 2) (m = p: Megatron-LM runs every forward first) and
  // (4, 8, 4).
  for (const Point pt : {Point{8, 2}, Point{4, 2}, Point{8, 4}}) {
    const auto r = run(path, {"workload.parallelism.microbatches=" + std::to_string(pt.m),
                              "workload.parallelism.virtual_stages=" + std::to_string(pt.v)});
    const auto& pl = r["result"]["pipeline"];
    const double ideal = 3.0 / (pt.v * pt.m + 3.0);
    INFO("m " << pt.m << ", V " << pt.v << ": measured bubble " << pl["bubble_fraction"] << ", ideal " << ideal
              << ", stage busy " << pl["stage_busy_s"] << ", span " << pl["span_s"]);
    CHECK(pl["schedule"] == "interleaved");
    CHECK(pl["virtual_stages"] == pt.v);
    CHECK(pl["bubble_fraction_ideal"].get<double>() == Approx(ideal));
    CHECK(pl["bubble_fraction"].get<double>() == Approx(ideal).epsilon(0.05));
  }
}

TEST_CASE(
    "interleaved 1F1B: each stage sends every chunk's activations on and its gradients back, memory holds "
    "the warm-up's chunk passes",
    "[workloads][train][interleaved]") {
  const auto r = run(uniform_pipeline());
  // 256 samples x 1024 features in BF16 per microbatch and boundary. Every
  // chunk hands on forward but the model's last (stage 3, chunk 1) and back
  // but the model's first (stage 0, chunk 0): V m or (V - 1) m each way.
  const double boundary = 256.0 * 1024 * 2, m = 8, v = 2;
  for (int s = 0; s < 4; ++s) {
    const double messages = (s < 3 ? v * m : (v - 1) * m) + (s > 0 ? v * m : (v - 1) * m);
    INFO("stage " << s);
    CHECK(r["per_chip"][s]["ranks"]["stage"] == s);
    CHECK(r["per_chip"][s]["ici_bytes_out"].get<double>() == messages * boundary);
  }
  // Stage 0 holds (p - 1) 2 + (V - 1) p + 1 = 11 chunk passes at once, each
  // half of a microbatch's stash over the stage's 8 layers (Narayanan et al.
  // 2021 s.2.2.2: more in flight than 1F1B's p, each 1/V the size).
  const auto& mem = r["result"]["memory"];
  CHECK(mem["chip"] == 0);
  CHECK(mem["microbatches_in_flight"] == 11);
  CHECK(mem["activations_bytes"].get<double>() == 11 * mem["activations_per_microbatch_bytes"].get<double>() / v);
  const auto peaks = r["result"]["pipeline"]["peak_microbatches_in_flight"].get<std::vector<int>>();
  REQUIRE(peaks.size() == 4);
  for (int s = 0; s < 4; ++s) CHECK(peaks[s] <= (3 - s) * 2 + 4 + 1);
}

}  // namespace test_interleaved
