// `kind: collective` from YAML to report.json: the numbers the interconnect
// computes reach the report under docs/interface.md's names, and the ring
// formula (docs/reference/formulas.md §1) holds end to end.
#include <catch2/catch.hpp>

#include "workloads/experiment.h"

namespace test_collective_workload {

namespace {
nlohmann::json run(const std::string& file, std::vector<std::string> sets = {}) {
  auto exp = workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/" + file, sets);
  return exp.workload->run(exp, {}).report;
}
}  // namespace

TEST_CASE("collective experiment: ring all-gather time, algbw and busbw", "[workloads][collective]") {
  auto r = run("allgather-ring-v5e-16.yaml");
  REQUIRE(r["collectives"].size() == 1);
  const auto& c = r["collectives"][0];
  const double n = 16, bytes = 67108864, w = 4.5e10, hop = 1e-6;  // tpu-v5e.yaml ICI link
  // Unidirectional ring all-gather: (n-1) steps of bytes/n, one hop each.
  const double expected = (n - 1) * (bytes / n / w + hop);
  CHECK(c["time_s"].get<double>() == Approx(expected).epsilon(0.02));
  CHECK(c["algbw_bytes_per_s"].get<double>() == Approx(bytes / c["time_s"].get<double>()));
  CHECK(c["busbw_bytes_per_s"].get<double>() == Approx(c["algbw_bytes_per_s"].get<double>() * (n - 1) / n));
  CHECK(r["result"]["step_time_s"] == c["time_s"]);
  CHECK(r["per_chip"].size() == 16);
  CHECK(r["links"].size() == 32);
  // Each chip sends n-1 shards.
  CHECK(r["per_chip"][3]["ici_bytes_out"].get<double>() == (n - 1) * bytes / n);
  // The stats tree's network group: each of the n chips receives the n-1
  // shards it lacks, each over one link (one hop on the ring).
  const auto& net = r["stats"]["network"];
  CHECK(net["link_bytes"]["value"].get<double>() == (n - 1) * bytes);
  CHECK(net["links"]["value"].get<double>() == 32);
  CHECK(net["link_utilization_max"]["value"].get<double>() > 0.9);  // every link of the ring carries a shard per step
  // Each chip sends n-1 messages; with the ring's symmetry the network
  // simulates one chip's (simulator.messages) standing for all n.
  CHECK(net["messages"]["value"].get<double>() == n * (n - 1));
  CHECK(r["simulator"]["messages"].get<double>() == n - 1);
  // An all-gather reduces nothing.
  CHECK(r["stats"]["chip0"]["reduction"]["hbm_bytes"]["value"].get<double>() == 0);
}

TEST_CASE("collective experiment: an all-reduce's reductions in each chip's stats", "[workloads][collective]") {
  // A ring all-reduce's reduce-scatter: each chip adds n-1 incoming shards of
  // bytes/n into its own (reads both operands, writes the sum: 3 x shard).
  auto r = run("allgather-ring-v5e-16.yaml", {"workload.op=all_reduce"});
  const double n = 16, bytes = 67108864;
  const auto& red = r["stats"]["chip0"]["reduction"];
  CHECK(red["hbm_bytes"]["value"].get<double>() == Approx(3 * (n - 1) * bytes / n));
  CHECK(red["vector_busy_time"]["value"].get<double>() > 0);
}

TEST_CASE("collective experiment: bidirectional ring halves the time", "[workloads][collective]") {
  const double uni = run("allgather-ring-v5e-16.yaml")["result"]["step_time_s"];
  const double bidi =
      run("allgather-ring-v5e-16.yaml", {"workload.algorithm=bidirectional_ring"})["result"]["step_time_s"];
  CHECK(bidi / uni == Approx(0.5).epsilon(0.05));
}

TEST_CASE("collective experiment: a dimension-ordered all-to-all from YAML", "[workloads][collective]") {
  // 4x4x4 v4 cube (W = 4.5e10 B/s, L = 1 us per hop, pods/v4-4x4x4.yaml):
  // one ring all-to-all of V per chip per axis, 4 V / (8 W) + 2 L each
  // (docs/interconnect.md, Algorithms and their steps).
  auto r = run("allreduce-v4-4x4x4.yaml", {"workload.op=all_to_all", "workload.algorithm=dimension_ordered"});
  const auto& c = r["collectives"][0];
  CHECK(c["algorithm"] == "dimension_ordered");
  const double V = 268435456, w = 4.5e10, hop = 1e-6;
  CHECK(c["time_s"].get<double>() == Approx(3 * (4 * V / (8 * w) + 2 * hop)).epsilon(0.02));
}

TEST_CASE("collective experiment: functional mode checks every chip's buffer", "[workloads][collective]") {
  auto r = run("allreduce-v4-4x4x4.yaml", {"functional=true", "workload.bytes=98304"});
  CHECK(r["result"]["functional"]["matches_reference"] == true);
}

TEST_CASE("collective experiment: bad input is located", "[workloads][collective][bad-input]") {
  CHECK_THROWS_WITH(run("allgather-ring-v5e-16.yaml", {"workload.bytes=1000"}),
                    Catch::StartsWith("--set workload.bytes=1000: workload.bytes:"));
  CHECK_THROWS_WITH(run("allgather-ring-v5e-16.yaml", {"workload.algorithm=tree"}),
                    Catch::Contains("allgather-ring-v5e-16.yaml") || Catch::Contains("--set workload.algorithm=tree"));
  CHECK_THROWS_WITH(run("allgather-ring-v5e-16.yaml", {"workload.axes=[q]"}), Catch::Contains("unknown mesh axis 'q'"));
  CHECK_THROWS_WITH(run("allreduce-v4-4x4x4.yaml", {"workload.algorithm=dimension_ordered"}),
                    Catch::StartsWith("--set workload.algorithm=dimension_ordered: workload.algorithm: algorithm "
                                      "dimension_ordered does not implement all_reduce"));
  CHECK_THROWS_WITH(run("allgather-ring-v5e-16.yaml", {"pod.link_bandwidth=0"}),
                    Catch::Contains("pod.link_bandwidth: value 0 is out of range: expected > 0 B/s"));
  CHECK_THROWS_WITH(run("allreduce-v4-4x4x4.yaml", {"mesh={data: 3}"}),
                    Catch::Contains("mesh axes multiply to 3 chips but the pod has 64"));
}

}  // namespace test_collective_workload
