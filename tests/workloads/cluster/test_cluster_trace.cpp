// A cluster run's Perfetto trace (docs/cluster.md#trace): two jobs, each a
// 2-slice all-reduce of S bytes sharing one bottleneck of C bytes/s (the
// hand count of test_cluster.cpp: each job's DCN phase takes 2S/C in
// company). Each job is a process of its own with its
// steps and its DCN phases; the fabric's links are counters.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include "nominal_chip.h"
#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_cluster_trace {

namespace {

constexpr double kS = 64.0 * 1024 * 1024;
constexpr double kC = 5e9;

std::string job_yaml(const std::string& name, const std::string& slices) {
  return "    - name: " + name + "\n      slices: " + slices +
         "\n      steps: 2\n      experiment:\n        chip: " + nominal_chip::chip("tpu-v5e") +
         "\n        pod: {slices: 2, slice: {topology: ring, shape: [4], wraparound: true}}\n"
         "        workload: {kind: collective, op: all_reduce, bytes: 67108864}\n";
}

}  // namespace

TEST_CASE("cluster trace: each job its own process, its steps and DCN phases as the report has them", "[cluster]") {
  const std::string file = testing_workloads::write_yaml(
      "cluster-trace", "chip: " + nominal_chip::chip("tpu-v5e") +
                           "\nworkload:\n  kind: cluster\n  datacenter:\n    pods:\n"
                           "      - {name: p0, slice: [4], slices: [a0, b0], uplink_bandwidth: 5.0e9}\n"
                           "      - {name: p1, slice: [4], slices: [a1, b1], uplink_bandwidth: 5.0e9}\n  jobs:\n" +
                           job_yaml("a", "[a0, a1]") + job_yaml("b", "[b0, b1]"));
  auto exp = workloads::load_experiment(file, {});
  workloads::RunOptions opts;
  opts.trace = true;
  const workloads::RunOutput out = exp.workload->run(exp, opts);
  REQUIRE_FALSE(out.trace_json.empty());
  const nlohmann::json trace = nlohmann::json::parse(out.trace_json);
  std::map<long, std::string> process;
  std::map<std::pair<long, long>, std::string> track;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "process_name")
      process[e.at("pid")] = e.at("args").at("name");
    else if (e.at("ph") == "M" && e.at("name") == "thread_name")
      track[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
  CHECK(process == std::map<long, std::string>{{1, "a (collective)"}, {2, "b (collective)"}, {3, "fabric"}});
  const nlohmann::json& jobs = out.report.at("cluster").at("jobs");
  std::map<long, int> steps, phases;
  std::set<std::string> counters;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "C") counters.insert(e.at("name").get<std::string>());
    if (e.at("ph") != "X") continue;
    const long pid = e.at("pid");
    const std::string name = track.at({pid, e.at("tid")});
    const nlohmann::json& job = jobs.at(std::size_t(pid - 1));
    if (name == "steps") {
      const nlohmann::json& s = job.at("steps").at(std::size_t(steps[pid]++));
      CHECK(e.at("ts").get<double>() == Approx(s.at("start_s").get<double>() * 1e6).epsilon(1e-9));
      CHECK(e.at("dur").get<double>() == Approx(s.at("time_s").get<double>() * 1e6).epsilon(1e-9));
    } else {
      REQUIRE(name == "DCN");
      ++phases[pid];
      // In company: S at C/2, by hand.
      CHECK(e.at("dur").get<double>() == Approx(2 * kS / kC * 1e6).epsilon(1e-9));
    }
  }
  CHECK(steps == std::map<long, int>{{1, 2}, {2, 2}});
  CHECK(phases == std::map<long, int>{{1, 2}, {2, 2}});
  CHECK(counters == std::set<std::string>{"p0.up B/s", "p0.down B/s", "p1.up B/s", "p1.down B/s"});
}

}  // namespace test_cluster_trace
