// An FSDP all-gather at superpod size (issue 44): a torus all-gather over
// every chip of a 24x24x24 torus (13,824 chips, more than a TPU7x
// superpod's 9,216; a cube, so that the torus's streams run in step and
// a closed form holds), run as a pod whose collective is planned for its
// orbit chip only (interconnect::images_along), against the torus formula.
#include <catch2/catch.hpp>

#include "workloads/experiment.h"

namespace test_superpod_allgather {

TEST_CASE("superpod all-gather: a 24x24x24 torus all-gather planned for its orbit chip meets the torus formula",
          "[workloads][collective][superpod]") {
  const double s = 24, n = s * s * s, w = 4.5e10, hop = 1e-6;  // tpu-v4.yaml's ICI link
  const double launch = 4e-6;                                  // tpu-v4.yaml's ici.collective_launch
  const double bytes = n * 6 * 8192;                           // 6 streams, each dividing evenly over the 13,824 chips
  auto exp = workloads::load_experiment(
      std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/allgather-ring-v5e-16.yaml",
      {"chip=tpu-v4", "pod={topology: torus3d, shape: [24, 24, 24], wraparound: true}", "workload.algorithm=torus",
       "workload.bytes=" + std::to_string(std::uint64_t(bytes))});
  const nlohmann::json r = exp.workload->run(exp, {}).report;
  // docs/reference/formulas.md §3, all-gather half: the buffer in 2 x 3
  // streams, each direction of each axis carrying one at a time; a stream
  // gathers along its three axes, its region growing 24-fold each phase
  // (1/576, 1/24, then all of its sixth), (s - 1)/s of it over one link
  // each way at W, and (s - 1) hops per phase, after the launch.
  const double stream = bytes / 6;
  const double want = launch + stream * (s - 1) / s * (1 / (s * s) + 1 / s + 1) / w + 3 * (s - 1) * hop;
  const double got = r["result"]["step_time_s"].get<double>();
  INFO("simulated " << got << " s, formula " << want << " s");
  CHECK(got == Approx(want).epsilon(1e-3));
  // One chip's messages simulated for the pod's: 6 streams x 3 phases x 23
  // steps, every chip's (x 13,824) carried.
  const auto& sim = r["simulator"];
  CHECK(sim["symmetric_axes"] == nlohmann::json::array({"x", "y", "z"}));
  CHECK(sim["messages"].get<double>() == 6 * 3 * (s - 1));
  CHECK(r["stats"]["network"]["messages"]["value"].get<double>() == n * 6 * 3 * (s - 1));
}

}  // namespace test_superpod_allgather
