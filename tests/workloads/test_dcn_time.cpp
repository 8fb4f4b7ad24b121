// result.dcn.time_s and exposed_time_s (docs/interface.md): the time a chip
// has a collective across slices running, and the part of it no compute
// hid, against the collective's own span and against a step whose
// all-reduces run after the backward (workload.overlap: false).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "workloads/experiment.h"

namespace test_dcn_time {

namespace {

nlohmann::json run(const std::string& file, const std::vector<std::string>& sets) {
  auto exp = workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + file, sets);
  return exp.workload->run(exp, {}).report;
}

const std::string kTwoSlices =
    "pod={slices: 2, slice: {topology: ring, shape: [4], wraparound: true}, dcn_axes: [replica]}";

}  // namespace

TEST_CASE("dcn time: a collective across slices alone is exposed for its whole span", "[workloads][dcn]") {
  const nlohmann::json r = run("/configs/experiments/allgather-ring-v5e-16.yaml",
                               {kTwoSlices, "mesh={x: 4, replica: 2}", "workload.op=all_reduce",
                                "workload.algorithm=auto", "workload.bytes=8388608"});
  REQUIRE(r["collectives"].size() == 1);
  const double span = r["collectives"][0]["time_s"];
  CHECK(r["result"]["dcn"]["time_s"].get<double>() == Approx(span).epsilon(1e-9));
  CHECK(r["result"]["dcn"]["exposed_time_s"].get<double>() == Approx(span).epsilon(1e-9));
  // Over the slice's axis only: no DCN time in a pod of two slices.
  const nlohmann::json ici = run("/configs/experiments/allgather-ring-v5e-16.yaml",
                                 {kTwoSlices, "mesh={x: 4, replica: 2}", "workload.op=all_reduce",
                                  "workload.algorithm=auto", "workload.bytes=8388608", "workload.axes=[x]"});
  CHECK(ici["result"]["dcn"]["time_s"].get<double>() == 0);
  CHECK(ici["result"]["dcn"]["bytes"].get<double>() == 0);
}

TEST_CASE("dcn time: gradient all-reduces after the backward are exposed, under it partly hidden", "[workloads][dcn]") {
  const std::vector<std::string> sets = {kTwoSlices, "mesh={data: 4, replica: 2}",
                                         "workload.parallelism={data: [data, replica]}", "workload.global_batch=64",
                                         "fidelity=tile"};
  std::vector<std::string> serial = sets;
  serial.push_back("workload.overlap=false");
  const nlohmann::json after = run("/configs/sweeps/dp-v4-strong.base.yaml", serial);
  const nlohmann::json under = run("/configs/sweeps/dp-v4-strong.base.yaml", sets);
  const auto &a = after["result"]["dcn"], &u = under["result"]["dcn"];
  INFO("after the backward: " << a << "; under it: " << u);
  REQUIRE(a["time_s"].get<double>() > 0);
  CHECK(a["exposed_time_s"].get<double>() == Approx(a["time_s"].get<double>()).epsilon(1e-6));
  CHECK(u["exposed_time_s"].get<double>() < 0.9 * u["time_s"].get<double>());
}

}  // namespace test_dcn_time
