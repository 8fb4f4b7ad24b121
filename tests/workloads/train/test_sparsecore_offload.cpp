// Collectives offloaded to the SparseCores in a training step
// (parallelism.sparsecore_offload, docs/training.md#sparsecore-collective-offload):
// a reduction that held the TensorCore's vector units no longer does, the
// SparseCores' own HBM bandwidth bounds it instead, and gathers, which
// occupy nothing of the TensorCore, move queue without moving the step.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/error.h"
#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_sparsecore_offload {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

constexpr double W = 4096;  // one dense layer of W x W and its bias

// Two v5p chips on a ring, fsdp 2: one W x W layer, so the step ends with
// its gradient's reduce-scatter and the update that waits for it.
std::string step(const std::string& name, const std::string& chip, const std::string& offload) {
  return write_yaml(name, "chip: " + chip + R"(
pod: {topology: ring, shape: [2], wraparound: false}
mesh: {fsdp: 2}
workload:
  kind: train
  model: {type: mlp, widths: [4096, 4096]}
  global_batch: 64
  parallelism: {fsdp: fsdp, sparsecore_offload: )" +
                              offload + "}\n  optimizer: sgd\n");
}

double stat(const nlohmann::json& group, const char* key) {
  return group.contains(key) ? group[key]["value"].get<double>() : 0.0;
}

// The bytes each chip reduces in the step's reduce-scatter: on a ring of
// n, (n - 1) / n of the buffer.
double reduced_bytes(const nlohmann::json& r) {
  double bytes = 0;
  for (const auto& c : r["collectives"])
    if (c["op"] == "reduce_scatter") bytes += c["bytes"].get<double>() / 2;
  return bytes;
}

}  // namespace

TEST_CASE("sparsecore offload: a reduce-scatter bound by the TensorCore's vector units shortens the step by them",
          "[workloads][train][sparsecore]") {
  // A v5p at 1 MHz: its vector units reduce 4096 B per cycle per
  // TensorCore, 2 x 4096 x 1e6 = 8.192e9 B/s, against 1e12 B/s links and
  // 2.46e12 / 3 B/s of HBM per reduced byte: on the TensorCore the
  // reduction is bound by the vector units; offloaded, by nothing of the
  // chip's (the SparseCores take 4 x 6.15e11 / 3 reduced B/s).
  const std::string chip =
      "{base: tpu-v5p, compute_efficiency: 1, clock: 1.0e6, ici: {link_bandwidth: 1.0e12}, host: {dcn_sync: 0}}";
  const auto tc = run(step("sc-rs-tc", chip, "{}"));
  const auto sc = run(step("sc-rs-sc", chip, "{reduce_scatter: true}"));
  const double r = reduced_bytes(tc);
  CHECK(r == W * (W + 1) * 2 / 2);  // the BF16 weight and bias gradients, half reduced on each chip
  const double vector = 2 * 4096 * 1.0e6;
  const double tc_step = tc["result"]["step_time_s"].get<double>();
  const double sc_step = sc["result"]["step_time_s"].get<double>();
  INFO("TensorCore " << tc_step << " s, SparseCore " << sc_step << " s");
  // What the vector units took, less what the links take anyway (r / 1e12,
  // under 1% of it).
  CHECK(tc_step - sc_step == Approx(r / vector - r / 1.0e12).epsilon(0.01));
  // The TensorCore's vector units reduced nothing offloaded; the
  // SparseCores moved the reduction's 3 HBM bytes per reduced byte.
  CHECK(stat(tc["stats"]["chip0"]["reduction"], "vector_busy_time") == Approx(r / vector));
  CHECK(stat(sc["stats"]["chip0"]["reduction"], "vector_busy_time") == 0);
  CHECK(stat(sc["stats"]["chip0"], "sparsecore_hbm_bytes") == 3 * r);
  CHECK(stat(tc["stats"]["chip0"], "sparsecore_hbm_bytes") == 0);
}

TEST_CASE("sparsecore offload: the SparseCores' own HBM bandwidth bounds an offloaded reduce-scatter",
          "[workloads][train][sparsecore]") {
  // 4 SparseCores of 1e8 B/s each: 3 HBM bytes per reduced byte at 4e8 B/s
  // together, far below the links (9e10 B/s) and HBM (2.46e12 B/s).
  const std::string shipped = "{base: tpu-v5p, compute_efficiency: 1, host: {dcn_sync: 0}}";
  const std::string slow =
      "{base: tpu-v5p, compute_efficiency: 1, host: {dcn_sync: 0}, sparsecore: {hbm_bandwidth: 1.0e8}}";
  const auto fast = run(step("sc-bw-fast", shipped, "{reduce_scatter: true}"));
  const auto bound = run(step("sc-bw-slow", slow, "{reduce_scatter: true}"));
  const double r = reduced_bytes(fast);
  const double fast_step = fast["result"]["step_time_s"].get<double>();
  const double bound_step = bound["result"]["step_time_s"].get<double>();
  INFO("shipped " << fast_step << " s, slow SparseCores " << bound_step << " s");
  // The reduction takes its HBM bytes over the SparseCores' bandwidth, where
  // with the shipped figure it kept up with the links (r / 9e10, 0.3% of it).
  CHECK(bound_step - fast_step == Approx(3 * r / 4.0e8 - r / 9.0e10).epsilon(0.01));
  CHECK(stat(bound["stats"]["chip0"]["program"], "sparsecore_time") >= 3 * r / 4.0e8);
}

TEST_CASE("sparsecore offload: gathers offloaded alone leave a one-slice step as it was",
          "[workloads][train][sparsecore]") {
  // An all-gather does no arithmetic and, in tpusim's model, moves no HBM
  // flow of its own: on the TensorCore it already ran on a queue of its own
  // beside the chip's work, so moving it to the SparseCores moves nothing
  // but the queue.
  const std::string chip = "{base: tpu-v5p, compute_efficiency: 1, host: {dcn_sync: 0}}";
  const auto tc = run(step("sc-ag-tc", chip, "{}"));
  const auto sc = run(step("sc-ag-sc", chip, "{all_gather: true}"));
  CHECK(sc["result"]["step_time_s"] == tc["result"]["step_time_s"]);
  CHECK(stat(sc["stats"]["chip0"]["program"], "sparsecore_time") > 0);
  CHECK_FALSE(tc["stats"]["chip0"]["program"].contains("sparsecore_time"));
}

TEST_CASE("sparsecore offload: a chip without SparseCores is a located error", "[workloads][train][sparsecore]") {
  try {
    run(step("sc-v5e", "tpu-v5e", "{all_gather: true}"));
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("sparsecore_offload") != std::string::npos);
    CHECK(std::string(e.what()).find("has no SparseCores") != std::string::npos);
    CHECK(e.where().line == 8);
  }
}

}  // namespace test_sparsecore_offload
