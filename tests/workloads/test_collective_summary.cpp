// report.json's collective_summary (workloads/report.h): one entry per op,
// algorithm, axes, size and purpose, with the count, bytes, times, exposed
// times and waits of its collectives; the per-collective list only with
// ReportDetail::full (a tensor-parallel step's summary:
// tests/workloads/train/test_tensor_parallel.cpp). Checked against hand
// counts of the experiments' collectives, the ring formula (docs/reference/formulas.md §1) and the
// step's exposed communication, which the runtime measures another way
// (merged intervals of all a chip's communication, runtime/pod_simulation.cpp).
#include <catch2/catch.hpp>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"
#include "workloads/report.h"

namespace test_collective_summary {

namespace {

nlohmann::json run_shipped(const std::string& file) {
  return testing_workloads::run(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/" + file);
}

// report.json as written at `detail`.
nlohmann::json written(const nlohmann::json& report, workloads::ReportDetail detail) {
  return nlohmann::json::parse(workloads::report_text(report, detail));
}

}  // namespace

TEST_CASE("collective summary: one ring all-gather is one entry, all of it exposed", "[workloads][report]") {
  const auto r = run_shipped("allgather-ring-v5e-16.yaml");
  REQUIRE(r["collective_summary"].size() == 1);
  const auto& g = r["collective_summary"][0];
  const double n = 16, bytes = 67108864, w = 4.5e10, hop = 1e-6;  // the experiment; tpu-v5e.yaml's ICI link
  CHECK(g["op"] == "all_gather");
  CHECK(g["axes"].empty());  // every chip of the pod
  CHECK(g["participants"] == 16);
  CHECK(g["count"] == 1);
  CHECK(g["bytes"].get<double>() == bytes);
  CHECK(g["total_bytes"].get<double>() == bytes);
  CHECK(g["wait_s"].get<double>() == 0);  // every chip joins at once
  // Unidirectional ring all-gather: (n-1) steps of bytes/n, one hop each.
  const double ring = (n - 1) * (bytes / n / w + hop);
  CHECK(g["time_s"].get<double>() == Approx(ring).epsilon(0.02));
  // The chips do nothing else: none of it is hidden.
  CHECK(g["exposed_s"].get<double>() == Approx(g["time_s"].get<double>()).epsilon(1e-9));
}

TEST_CASE("collective summary: a data-parallel step's exposed time is the step's exposed communication",
          "[workloads][report]") {
  // One queue of gradient all-reduces, one at a time, on 8 identical chips:
  // the collectives' exposed times add up to what the runtime measures as
  // the chips' communication not hidden by their work.
  const auto r = testing_workloads::run(testing_workloads::dp_mlp_ring_of_8());
  double exposed = 0, count = 0;
  for (const auto& g : r["collective_summary"]) {
    CHECK(g["op"] == "all_reduce");
    CHECK(g["purpose"] == "gradients");
    exposed += g["exposed_s"].get<double>();
    count += g["count"].get<double>();
  }
  CHECK(count == 4);  // one per layer of the four-layer MLP
  const double step_exposed = r["result"]["communication"]["exposed_time_s"];
  REQUIRE(step_exposed > 0);
  CHECK(exposed == Approx(step_exposed).epsilon(1e-9));
}

TEST_CASE("collective summary: report.json keeps the list only at full detail", "[workloads][report]") {
  const auto r = run_shipped("allgather-ring-v5e-16.yaml");
  const auto summary = written(r, workloads::ReportDetail::summary);
  CHECK(summary["report_detail"] == "summary");
  CHECK_FALSE(summary.contains("collectives"));
  CHECK(summary["collective_summary"] == r["collective_summary"]);
  const auto full = written(r, workloads::ReportDetail::full);
  CHECK(full["report_detail"] == "full");
  CHECK(full["collectives"] == r["collectives"]);
  // Nothing else differs.
  auto trimmed = full;
  trimmed.erase("collectives");
  trimmed["report_detail"] = "summary";
  CHECK(trimmed == summary);
}

}  // namespace test_collective_summary
