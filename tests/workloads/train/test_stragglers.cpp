// Stragglers (docs/interface.md, `stragglers`): one slow chip in a
// data-parallel step. Every gradient all-reduce waits for it, by what its
// extra compute costs, counted by hand from the layers' FLOPs and the
// chip's peak; the report names it; and simulating it on its own beside one
// chip for its 7 replicas gives what simulating every chip gives.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "workloads/experiment_fixture.h"

namespace test_stragglers {

namespace {

using testing_workloads::dp_mlp_ring_of_8;
using testing_workloads::run;

// 8 TPU v4 chips on a ring with wraparound, data parallel; an MLP of four
// 2048 x 2048 layers, 2048 samples per chip (tpu-v4.yaml: 275.3 TFLOP/s
// peak, links 4.5e10 B/s per direction, 1 us per hop).
constexpr double kPeak = 2 * 4 * 128 * 128 * 2 * 1.05e9;
constexpr double kBatch = 2048, kWidth = 2048, kChips = 8;
constexpr double kLinkBidi = 2 * 4.5e10;
constexpr double kHop = 1.0e-6;
// One 2048 x 2048 layer's matmul over the chip's batch: 2 B D^2 FLOPs.
constexpr double kMatmulFlops = 2 * kBatch * kWidth * kWidth;
// The MXU runs below peak by its weight-stationary pipeline: each 128 x 128
// weight tile streams its m = 2048 rows in m + R - 1 cycles, overlapped
// with the next tile's load (docs/mxu.md, "overlapped"; tested against
// SCALE-Sim in tests/hw/test_mxu_fold_serial.cpp).
constexpr double kRows = 128;
constexpr double kPipeline = (kWidth + kRows - 1) / kWidth;
// One matmul's engine time on a chip at full speed, and what a chip at
// half compute adds to it: as much again.
constexpr double kMatmulS = kMatmulFlops / kPeak * kPipeline;
constexpr double kHalfExtra = kMatmulS * (1 / 0.5 - 1);
// ici.collective_launch of tpu-v4.yaml.
constexpr double kLaunch = 4.0e-6;
constexpr int kStraggler = 5;

const std::string kHalf = "stragglers=[{chips: [5], compute: 0.5}]";

// The collectives in the order they started.
std::vector<nlohmann::json> by_start(const nlohmann::json& r) {
  std::vector<nlohmann::json> c(r["collectives"].begin(), r["collectives"].end());
  std::stable_sort(c.begin(), c.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["start_s"].get<double>() < b["start_s"].get<double>();
  });
  return c;
}

}  // namespace

TEST_CASE("stragglers: one chip at half compute gates every gradient all-reduce by its extra compute",
          "[workloads][train][stragglers]") {
  const std::string path = dp_mlp_ring_of_8();
  const auto even = run(path);
  const auto slow = run(path, {kHalf});
  // Without a straggler no all-reduce waits for a chip.
  for (const auto& c : even["collectives"]) {
    CHECK(c["wait_s"].get<double>() == 0);
    CHECK(c["gated_by"].is_null());
  }

  // The straggler's matmuls take twice as long; HBM-bound work (elementwise
  // ops, the optimizer) and launch costs do not change. Each layer's
  // backward runs dX, then dW, whose all-reduce follows (models/linear.cpp);
  // dense0 has no dX. The first all-reduce (dense3's) comes after the
  // forward's 4 matmuls and dense3's dX and dW: the straggler joins it 6
  // matmuls' extra time after the others.
  const auto colls = by_start(slow);
  REQUIRE(colls.size() == 4);
  INFO("first all-reduce waited " << colls[0]["wait_s"] << " s; predicted " << 6 * kHalfExtra << " s");
  CHECK(colls[0]["gated_by"] == kStraggler);
  CHECK(colls[0]["wait_s"].get<double>() == Approx(6 * kHalfExtra).epsilon(0.01));

  // Later all-reduces: the 7 others, long done with their backward, join
  // each when the one before it ends (the gradient all-reduces share one
  // ICI queue): its launch and ring time D after the straggler joined it,
  // D the bidirectional ring's 2 (n-1) (V / (n W_bidi) + hop)
  // (docs/reference/formulas.md §1-2). The straggler joins after its next
  // layer's dX and dW at half speed and that layer's elementwise gradient
  // ops (HBM-bound, the same on every chip: at most 4 passes over the
  // layer's B x D BF16 activations at the chip's 1.2e12 B/s, tpu-v4.yaml).
  // So dense2 and dense1 wait 4 matmul times less D, plus at most that.
  const double ring = 2 * (kChips - 1) * (kWidth * kWidth * 2 / (kChips * kLinkBidi) + kHop);
  const double elementwise = 4 * kBatch * kWidth * 2 / 1.2e12;
  for (std::size_t k = 1; k < 3; ++k) {
    const double matmuls = 2 * kMatmulS / 0.5 - (ring + kLaunch);
    const double wait = colls[k]["wait_s"];
    INFO(colls[k]["name"] << ": waited " << wait << " s; predicted " << matmuls << " .. " << matmuls + elementwise
                          << " s");
    CHECK(colls[k]["gated_by"] == kStraggler);
    CHECK(wait >= matmuls);
    CHECK(wait <= matmuls + elementwise);
  }
  // dense0 has only dW: at half speed (133 us) with its elementwise
  // gradients it is done before dense1's all-reduce ends (D = 181 us), so
  // the straggler is not late for dense0's.
  CHECK(kMatmulS / 0.5 + elementwise < ring);
  CHECK(colls[3]["gated_by"] != kStraggler);

  // The report names it, per op.
  const auto& waiting = slow["result"]["communication"]["waiting"];
  REQUIRE(waiting.size() == 1);
  CHECK(waiting[0]["op"] == "all_reduce");
  CHECK(waiting[0]["collectives"] == 4);
  CHECK(waiting[0]["gated_by"][0]["chip"] == kStraggler);
  CHECK(waiting[0]["gated_by"][0]["gated"] == 3);
  CHECK(waiting[0]["wait_max_s"] == colls[0]["wait_s"]);
  // The step is the straggler's.
  CHECK(slow["result"]["step_time_s"].get<double>() > even["result"]["step_time_s"].get<double>());
}

TEST_CASE("stragglers: without overlap only the first all-reduce waits for the straggler, by the whole step's",
          "[workloads][train][stragglers]") {
  // overlap: false puts every all-reduce after the backward pass: the
  // straggler joins the first one after all 11 matmuls (4 forward, 3 dX,
  // 4 dW), each twice as long; from then on every chip goes from one
  // all-reduce to the next with nothing computed between.
  const auto slow = run(dp_mlp_ring_of_8(), {kHalf, "workload.overlap=false"});
  const auto colls = by_start(slow);
  REQUIRE(colls.size() == 4);
  const double first = colls[0]["wait_s"];
  INFO("first all-reduce waited " << first << " s; predicted " << 11 * kHalfExtra << " s");
  CHECK(colls[0]["gated_by"] == kStraggler);
  CHECK(first == Approx(11 * kHalfExtra).epsilon(0.01));
  for (std::size_t k = 1; k < colls.size(); ++k) {
    // What is left: chips ending the all-reduce before a few microseconds
    // apart (their places on the ring relative to the last to join).
    INFO(colls[k]["name"] << ": waited " << colls[k]["wait_s"] << " s");
    CHECK(colls[k]["gated_by"] != kStraggler);
    CHECK(colls[k]["wait_s"].get<double>() < 0.02 * first);
  }
}

TEST_CASE("stragglers: simulated on their own, they give what simulating every chip gives",
          "[workloads][train][stragglers]") {
  // One chip for the 7 alike, one for the straggler; against all 8. The 7
  // end each all-reduce up to replica_spread_s apart (their places on the
  // ring relative to the straggler), which run_pod accepts below 1% of the
  // step (docs/performance.md); waits and the step agree to within it.
  const std::string path = dp_mlp_ring_of_8();
  const auto grouped = run(path, {kHalf});
  const auto every = run(path, {kHalf, "replicas=all"});
  CHECK(grouped["simulator"]["chips_simulated"] == 2);
  CHECK(every["simulator"]["chips_simulated"] == 8);
  const double spread = grouped["simulator"]["replica_spread_s"];
  CHECK(spread < 0.01 * grouped["result"]["step_time_s"].get<double>());
  CHECK(std::abs(grouped["result"]["step_time_s"].get<double>() - every["result"]["step_time_s"].get<double>()) <=
        spread);
  const auto a = by_start(grouped), b = by_start(every);
  REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    INFO(a[k]["name"] << ": waited " << a[k]["wait_s"] << " s, every chip simulated " << b[k]["wait_s"] << " s");
    CHECK((a[k]["gated_by"] == kStraggler) == (b[k]["gated_by"] == kStraggler));
    CHECK(std::abs(a[k]["wait_s"].get<double>() - b[k]["wait_s"].get<double>()) <= spread);
  }
}

}  // namespace test_stragglers
