// Data parallelism on 8 chips: what overlapping the gradient all-reduces
// with the backward pass buys (against the same step with overlap off, and
// that against a one-chip step plus the all-reduces), the all-reduce time
// against the ring formula, and the compute/communication crossover against
// the roofline ratio peak FLOP/s / ICI bandwidth (docs/reference/formulas.md §1, 2, 5).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_data_parallel {

namespace {

using testing_workloads::dp_mlp_ring_of_8;
using testing_workloads::run;

namespace fs = std::filesystem;

// 8 TPU v4 chips on a ring with wraparound, one mesh axis `data`; an MLP of
// four 2048 x 2048 layers (tpu-v4.yaml: 275.3 TFLOP/s, links 4.5e10 B/s
// per direction, 1 us per hop).
constexpr double kPeak = 2 * 4 * 128 * 128 * 2 * 1.05e9;
constexpr double kLinkBidi = 2 * 4.5e10;  // W_bidi: both directions of the ring
constexpr double kHop = 1.0e-6;
constexpr double kChips = 8;
constexpr double kWidth = 2048;

double sum_collective_time(const nlohmann::json& r) {
  double s = 0;
  for (const auto& c : r["collectives"]) s += c["time_s"].get<double>();
  return s;
}

}  // namespace

TEST_CASE(
    "data parallel on 8 chips: overlap hides gradient all-reduces under the backward pass, "
    "without it the step is compute + communication",
    "[workloads][train]") {
  const std::string path = dp_mlp_ring_of_8();
  const auto on = run(path, {"workload.overlap=true"});
  const auto& c_on = on["result"]["communication"];
  INFO("overlap on: step " << on["result"]["step_time_s"] << ", communication " << c_on);
  CHECK(c_on["overlap_fraction"].get<double>() > 0);
  CHECK(c_on["exposed_time_s"].get<double>() < c_on["collective_time_s"].get<double>());
  CHECK(on["result"]["pipeline"].is_null());
  REQUIRE(on["collectives"].size() == 4);  // one per layer
  for (const auto& c : on["collectives"]) CHECK(c["purpose"] == "gradients");

  const auto off = run(path, {"workload.overlap=false"});
  CHECK(off["result"]["communication"]["overlap_fraction"].get<double>() == 0);
  // Compute alone: the same per-chip batch on one chip, which has nothing to
  // all-reduce. Communication: the all-reduces as the 8-chip run timed them.
  const auto one = run(path, {"pod.shape=[1]", "pod.wraparound=false", "mesh.data=1", "workload.global_batch=2048",
                              "workload.overlap=false"});
  CHECK(one["collectives"].empty());
  const double compute = one["result"]["step_time_s"], comm = sum_collective_time(off);
  INFO("overlap off: step " << off["result"]["step_time_s"] << ", one chip " << compute << ", all-reduces " << comm);
  CHECK(off["result"]["step_time_s"].get<double>() == Approx(compute + comm).epsilon(0.02));
  CHECK(on["result"]["step_time_s"].get<double>() < off["result"]["step_time_s"].get<double>());
  // Exposed communication is what the all-reduces added to the step: the
  // overlapped step less the one-chip step, to within 5% of the all-reduce
  // time (communication under DMA-only work, such as the HBM-bound
  // optimizer updates, counts as hidden).
  const double added = on["result"]["step_time_s"].get<double>() - compute;
  INFO("overlap on: exposed " << c_on["exposed_time_s"] << " s, step - one chip " << added << " s");
  CHECK(std::abs(c_on["exposed_time_s"].get<double>() - added) <= 0.05 * comm);
}

TEST_CASE("data parallel gradient all-reduce takes the bidirectional ring's time", "[workloads][train]") {
  const auto r = run(dp_mlp_ring_of_8());
  // One gradient all-reduce per dense layer: with none the loop below
  // would check nothing.
  REQUIRE(r["collectives"].size() == 4);
  // 2(n-1) steps, each moving V/n split over both directions plus one hop:
  // 2 (n-1) (V / (n W_bidi) + T_min) (docs/reference/formulas.md §1-2, latency per step).
  const double v = kWidth * kWidth * 2;  // one layer's BF16 weight gradient (+ its bias, below 0.1%)
  const double ring = 2 * (kChips - 1) * (v / (kChips * kLinkBidi) + kHop);
  for (const auto& c : r["collectives"]) {
    INFO(c["name"] << ": " << c["time_s"] << " s, bytes " << c["bytes"]);
    CHECK(c["participants"] == 8);
    CHECK(c["time_s"].get<double>() == Approx(ring).epsilon(0.05));
  }
}

TEST_CASE(
    "data parallel: a large per-chip batch is compute-bound, a tiny one communication-bound, "
    "crossing near peak FLOP/s / ICI bandwidth",
    "[workloads][train]") {
  // docs/reference/formulas.md §5 (scaling book, DP backward per layer): the backward's
  // T_math = 8BDF/(X C) against the all-reduce's T_comms = 8DF/W_ici, so
  // communication hides when the per-chip batch B/X exceeds C/W_ici, W_ici
  // the bidirectional bandwidth of the ring. Here: 14 B D^2 / (X C) (seven
  // backward matmuls: the first layer has no input gradient) against
  // 2 (X-1)/X 8 D^2 / W_bidi = 14 D^2 / W_bidi for X = 8: the same ratio.
  const double crossover = kPeak / kLinkBidi;  // about 3060 samples per chip
  const std::string path = dp_mlp_ring_of_8();
  for (double factor : {0.25, 4.0}) {
    const double per_chip = std::round(crossover * factor / 256) * 256;
    const auto r = run(path, {"workload.global_batch=" + std::to_string(int(per_chip * kChips))});
    const auto& res = r["result"];
    const double backward = res["phases"]["backward_s"], comm = res["communication"]["collective_time_s"];
    // Backward time grows with the batch, all-reduce time does not: they
    // meet at per_chip x comm / backward.
    const double measured_crossover = per_chip * comm / backward;
    INFO(per_chip << " per chip: backward " << backward << " s, all-reduces " << comm << " s, bound "
                  << res["roofline"]["bound"] << ", crossover estimate " << measured_crossover << " vs " << crossover);
    CHECK(res["roofline"]["bound"] == (factor < 1 ? "communication" : "compute"));
    if (factor < 1) {
      CHECK(comm > backward);
    } else {
      CHECK(res["communication"]["exposed_time_s"].get<double>() < 0.1 * res["step_time_s"].get<double>());
    }
    // The roofline uses peak FLOP/s and link bandwidth; the simulated kernel
    // runs the MXUs below peak and every ring step pays a hop latency, which
    // move the crossover by less than 20% here.
    CHECK(measured_crossover == Approx(crossover).epsilon(0.2));
  }
}

}  // namespace test_data_parallel
