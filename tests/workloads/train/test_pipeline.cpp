// Pipeline parallelism: the schedules against the papers' statements, and
// the bubble the simulated stages really sat idle against the ideal
// (p-1)/(m+p-1) (docs/reference/formulas.md §4: GPipe, Huang et al. 2019; Megatron-LM,
// Narayanan et al. 2021, s.2.2.1, the same for 1F1B).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"
#include "workloads/train/pipeline_schedule.h"

namespace test_pipeline {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

namespace fs = std::filesystem;

// p = 4 uniform stages of 8 equal dense layers each on a v4 ring, links so
// fast that communication is negligible (1 PB/s, no latency). The MLP's
// first layer has no input gradient to compute, so stage 0's backward is
// 1/16 lighter: the stages are uniform to within that.
std::string uniform_pipeline() {
  std::string widths = "[1024";
  for (int i = 0; i < 32; ++i) widths += ", 1024";
  widths += "]";
  return write_yaml("uniform-pipeline", R"(
chip: tpu-v4
pod: {topology: ring, shape: [4], link_bandwidth: 1.0e15, link_latency: 0}
mesh: {pipe: 4}
workload:
  kind: train
  model: {type: mlp, widths: )" + widths + R"(}
  global_batch: 2048
  parallelism: {pipeline: pipe, microbatches: 8, schedule: gpipe}
  optimizer: sgd
)");
}

}  // namespace

TEST_CASE("pipeline schedules: forward before backward, GPipe keeps m microbatches, 1F1B at most p - s",
          "[workloads][train]") {
  using workloads::PipelineSchedule;
  const std::uint32_t p = 4, m = 8;
  for (std::uint32_t s = 0; s < p; ++s) {
    for (auto schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
      const auto tasks = workloads::stage_tasks(schedule, p, s, m, 1);
      REQUIRE(tasks.size() == 2 * m);
      std::vector<int> forward_at(m, -1), backward_at(m, -1);
      for (std::size_t i = 0; i < tasks.size(); ++i)
        (tasks[i].backward ? backward_at : forward_at)[tasks[i].microbatch] = static_cast<int>(i);
      for (std::uint32_t j = 0; j < m; ++j) {
        CHECK(forward_at[j] >= 0);
        CHECK(backward_at[j] > forward_at[j]);
      }
      // GPipe stashes all m; PipeDream-Flush (1F1B) at most p - s
      // (Narayanan et al. 2021, s.2.2.1: "at most p" on the first stage).
      CHECK(workloads::peak_in_flight(tasks) == (schedule == PipelineSchedule::gpipe ? m : p - s));
    }
  }
  // Fewer microbatches than stages: 1F1B cannot keep more than m.
  CHECK(workloads::peak_in_flight(workloads::stage_tasks(PipelineSchedule::one_f_one_b, 8, 0, 3, 1)) == 3);
}

TEST_CASE("pipeline bubble, 4 uniform stages, 8 microbatches: measured within 5% of 3/11 for GPipe and 1F1B",
          "[workloads][train]") {
  const std::string path = uniform_pipeline();
  const double ideal = 3.0 / 11.0;
  for (const char* schedule : {"gpipe", "1f1b"}) {
    const auto r = run(path, {std::string("workload.parallelism.schedule=") + schedule});
    const auto& pl = r["result"]["pipeline"];
    INFO(schedule << ": measured bubble " << pl["bubble_fraction"] << ", stage busy " << pl["stage_busy_s"] << ", span "
                  << pl["span_s"]);
    CHECK(pl["stages"] == 4);
    CHECK(pl["microbatches"] == 8);
    CHECK(pl["schedule"] == schedule);
    CHECK(pl["bubble_fraction_ideal"].get<double>() == Approx(ideal));
    CHECK(pl["bubble_fraction"].get<double>() == Approx(ideal).epsilon(0.05));
    // Activations the stages really held (forward start .. backward end,
    // from the simulated timeline): GPipe all m, 1F1B at most p.
    const auto peaks = pl["peak_microbatches_in_flight"].get<std::vector<int>>();
    REQUIRE(peaks.size() == 4);
    for (int k : peaks) {
      if (std::string(schedule) == "gpipe") {
        CHECK(k == 8);
      } else {
        CHECK(k <= 4);
      }
    }
    // The memory check before the run counts the same.
    const auto& mem = r["result"]["memory"];
    CHECK(mem["microbatches_in_flight"] == (std::string(schedule) == "gpipe" ? 8 : 4));
    CHECK(mem["activations_bytes"].get<double>() ==
          mem["microbatches_in_flight"].get<double>() * mem["activations_per_microbatch_bytes"].get<double>());
  }
}

TEST_CASE("pipeline: stages hand each microbatch's activations on and its gradients back over ICI",
          "[workloads][train]") {
  const auto r = run(uniform_pipeline(), {"workload.parallelism.schedule=1f1b"});
  // A stage boundary of the MLP carries 256 samples x 1024 features in BF16
  // each way per microbatch: stage s sends 8 activations on (s < 3) and 8
  // gradients back (s > 0).
  const double boundary = 256.0 * 1024 * 2;
  for (int s = 0; s < 4; ++s) {
    const double messages = (s < 3 ? 8 : 0) + (s > 0 ? 8 : 0);
    CHECK(r["per_chip"][s]["ranks"]["stage"] == s);
    CHECK(r["per_chip"][s]["ici_bytes_out"].get<double>() == messages * boundary);
  }
  // No collectives in a pure pipeline of one replica without tensor parallelism.
  CHECK(r["collectives"].empty());
}

TEST_CASE("pipeline bubble shrinks with more microbatches as (p-1)/(m+p-1)", "[workloads][train]") {
  const std::string path = uniform_pipeline();
  for (int m : {4, 16}) {
    const auto r =
        run(path, {"workload.parallelism.microbatches=" + std::to_string(m), "workload.parallelism.schedule=1f1b"});
    const double ideal = 3.0 / (m + 3.0);
    INFO(m << " microbatches: measured " << r["result"]["pipeline"]["bubble_fraction"]);
    CHECK(r["result"]["pipeline"]["bubble_fraction"].get<double>() == Approx(ideal).epsilon(0.05));
  }
}

// Tied embeddings on a pipeline: the first stage's table and the last
// stage's copy exchange their gradients before the update (Megatron-LM's
// embedding all-reduce between the two), V x D BF16 each way, on top of
// the stage boundaries' messages (2 microbatches of 2 x 128 x 256 BF16 each
// way). Without tied embeddings the last stage has its own unembedding and
// nothing is exchanged.
TEST_CASE("pipeline: tied embeddings sum their gradients between the first and the last stage",
          "[workloads][train][pipeline][tied]") {
  auto gpt = [](bool tied) {
    return write_yaml(tied ? "tied-pipeline" : "untied-pipeline", R"(
chip: tpu-v4
pod: {topology: ring, shape: [4]}
mesh: {pipe: 4}
workload:
  kind: train
  model: {type: transformer, layers: 4, d_model: 256, d_ff: 1024, heads: 4, head_dim: 64, seq_len: 128,
          vocab: 1000, tied_embeddings: )" + std::string(tied ? "true" : "false") +
                                                                      R"(}
  global_batch: 4
  parallelism: {pipeline: pipe, microbatches: 2, schedule: 1f1b}
)");
  };
  const double boundary = 2.0 * 128 * 256 * 2, table = 1000.0 * 256 * 2;
  const auto tied = run(gpt(true)), untied = run(gpt(false));
  for (int s = 0; s < 4; ++s) {
    const double messages = ((s < 3 ? 2 : 0) + (s > 0 ? 2 : 0)) * boundary;
    INFO("stage " << s);
    CHECK(untied["per_chip"][s]["ici_bytes_out"].get<double>() == messages);
    CHECK(tied["per_chip"][s]["ici_bytes_out"].get<double>() == messages + (s == 0 || s == 3 ? table : 0));
  }
}

}  // namespace test_pipeline
