// kind: cluster end to end (docs/cluster.md): two jobs, each a 2-slice
// all-reduce of S bytes (v5e, slices of 4 chips), placed on a data center
// of two pods. Hand counts: the hierarchical all-reduce reduce-scatters
// over the slice's 4 chips, then each chip all-reduces its S/4 shard over
// the ring of 2 slices (S/8 out in each half), so each slice sends 4 x S/4
// = S to the other (docs/interconnect.md#dcn). With pod uplinks of C bytes/s
// far under the NICs, a job alone on the fabric moves its S at C (S/C);
// two at once share C (2S/C each).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "app/host_fields.h"
#include "nominal_chip.h"
#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_cluster {

namespace {

constexpr double kS = 64.0 * 1024 * 1024;  // bytes all-reduced
constexpr double kC = 5e9;                 // each pod's uplink, bytes/s each way

std::string job_yaml(const std::string& name, const std::string& slices, const std::string& start = "0",
                     int steps = 2) {
  return "    - name: " + name + "\n      slices: " + slices + "\n      start: " + start +
         "\n      steps: " + std::to_string(steps) +
         "\n      experiment:\n        chip: " + nominal_chip::chip("tpu-v5e") +
         "\n        pod: {slices: 2, slice: {topology: ring, shape: [4], wraparound: true}}\n"
         "        workload: {kind: collective, op: all_reduce, bytes: 67108864}\n";
}

// Pods p0 (slices a0, b0) and p1 (a1, b1), uplinks C.
std::string cluster_yaml(const std::string& jobs) {
  return "chip: " + nominal_chip::chip("tpu-v5e") +
         "\nworkload:\n  kind: cluster\n  datacenter:\n    pods:\n"
         "      - {name: p0, slice: [4], slices: [a0, b0], uplink_bandwidth: 5.0e9}\n"
         "      - {name: p1, slice: [4], slices: [a1, b1], uplink_bandwidth: 5.0e9}\n  jobs:\n" +
         jobs;
}

nlohmann::json run(const std::string& name, const std::string& text) {
  return testing_workloads::run(testing_workloads::write_yaml(name, text));
}

const nlohmann::json& job(const nlohmann::json& r, std::size_t j) { return r.at("cluster").at("jobs").at(j); }

// The job's collective alone, from its own report.
double collective_s(const nlohmann::json& j) { return j.at("report").at("collectives").at(0).at("time_s"); }

void strip_host_fields(nlohmann::json& j) {
  if (j.is_object()) {
    for (const char* f : testing_cli::kHostFields) j.erase(f);
    for (auto& [k, v] : j.items()) strip_host_fields(v);
  } else if (j.is_array()) {
    for (auto& v : j) strip_host_fields(v);
  }
}

}  // namespace

TEST_CASE("cluster: a job's slices send S to each other, as the hand count and the network say", "[cluster]") {
  const nlohmann::json r = run("cluster-one", cluster_yaml(job_yaml("a", "[a0, a1]")));
  const nlohmann::json& rep = job(r, 0).at("report");
  const nlohmann::json& traffic = rep.at("collectives").at(0).at("dcn_traffic");
  REQUIRE(traffic.size() == 2);
  for (const auto& t : traffic) CHECK(t.at("bytes").get<double>() == kS);
  // The plan's count against the bytes the network carried between slices.
  CHECK(rep.at("result").at("dcn").at("bytes").get<double>() == 2 * kS);
}

TEST_CASE("cluster: jobs that share no fabric link run exactly as alone", "[cluster]") {
  // Each job's two slices in one pod: nothing crosses an uplink.
  std::string text = cluster_yaml(job_yaml("a", "[a0, b0]") + job_yaml("b", "[a1, b1]"));
  const nlohmann::json r = run("cluster-apart", text);
  for (std::size_t j = 0; j < 2; ++j) {
    const nlohmann::json& jb = job(r, j);
    INFO(jb.at("name"));
    const double step = jb.at("step_time_s");
    for (const auto& s : jb.at("steps")) {
      CHECK(s.at("time_s").get<double>() == Approx(step).margin(1e-12));
      CHECK(s.at("alone_s").get<double>() == s.at("time_s").get<double>());
      CHECK(s.at("dcn_time_s").get<double>() == Approx(collective_s(jb)).margin(1e-12));
    }
    CHECK(jb.at("slowdown").get<double>() == 1.0);
  }
  for (const auto& l : r.at("cluster").at("links")) CHECK(l.at("bytes").get<double>() == 0);
  // Across the pods but each job with a pod pair of its own: alone on the
  // fabric (slowed by its uplinks, S/C) and in company the same.
  text = "chip: " + nominal_chip::chip("tpu-v5e") + "\nworkload:\n  kind: cluster\n  datacenter:\n    pods:\n" +
         "      - {name: p0, slice: [4], slices: [a0], uplink_bandwidth: 5.0e9}\n"
         "      - {name: p1, slice: [4], slices: [a1], uplink_bandwidth: 5.0e9}\n"
         "      - {name: p2, slice: [4], slices: [b0], uplink_bandwidth: 5.0e9}\n"
         "      - {name: p3, slice: [4], slices: [b1], uplink_bandwidth: 5.0e9}\n  jobs:\n" +
         job_yaml("a", "[a0, a1]") + job_yaml("b", "[b0, b1]");
  const nlohmann::json q = run("cluster-pairs", text);
  for (std::size_t j = 0; j < 2; ++j) {
    const nlohmann::json& jb = job(q, j);
    CHECK(jb.at("dcn_alone_s").get<double>() == Approx(kS / kC).epsilon(1e-9));
    CHECK(jb.at("dcn_s").get<double>() == jb.at("dcn_alone_s").get<double>());
    CHECK(jb.at("step_s").get<double>() == jb.at("step_alone_s").get<double>());
  }
}

TEST_CASE("cluster: two jobs on one bottleneck each get half of it", "[cluster]") {
  const nlohmann::json r = run("cluster-shared", cluster_yaml(job_yaml("a", "[a0, a1]") + job_yaml("b", "[b0, b1]")));
  for (std::size_t j = 0; j < 2; ++j) {
    const nlohmann::json& jb = job(r, j);
    INFO(jb.at("name"));
    // Alone on the fabric: S at C. Together: S at C/2.
    CHECK(jb.at("dcn_alone_s").get<double>() == Approx(kS / kC).epsilon(1e-9));
    CHECK(jb.at("dcn_s").get<double>() == Approx(2 * kS / kC).epsilon(1e-9));
    // The step: its experiment's, with the collective's time alone
    // replaced by its time on the shared fabric (exposed whole).
    const double step = jb.at("step_time_s").get<double>() - collective_s(jb) + 2 * kS / kC;
    CHECK(jb.at("step_s").get<double>() == Approx(step).epsilon(1e-9));
    CHECK(jb.at("slowdown").get<double>() > 1.5);
  }
  // p0.up carried both jobs' S per step, 2 steps each.
  const nlohmann::json& up = r.at("cluster").at("links").at(0);
  CHECK(up.at("name") == "p0.up");
  CHECK(up.at("by_job").at("a").get<double>() == 2 * kS);
  CHECK(up.at("by_job").at("b").get<double>() == 2 * kS);
}

TEST_CASE("cluster: a later start shares the bottleneck only while both run", "[cluster]") {
  // One step each; b starts d = S/(2C) after a (their DCN phases the same
  // offset into the step). a alone at C until then (S/2 moved), then C/2
  // each: a's last S/2 take S/C, so a's phase is d + S/C = 1.5 S/C; b has
  // moved S/2 by then, its last S/2 alone at C take S/(2C): also 1.5 S/C.
  const double d = kS / (2 * kC);  // 0.0067108864 s, exact in decimal
  const nlohmann::json r = run("cluster-staggered", cluster_yaml(job_yaml("a", "[a0, a1]", "0", 1) +
                                                                 job_yaml("b", "[b0, b1]", "0.0067108864", 1)));
  for (std::size_t j = 0; j < 2; ++j) {
    const nlohmann::json& jb = job(r, j);
    INFO(jb.at("name"));
    CHECK(jb.at("steps").at(0).at("dcn_time_s").get<double>() == Approx(1.5 * kS / kC).epsilon(1e-6));
    CHECK(jb.at("dcn_alone_s").get<double>() == Approx(kS / kC).epsilon(1e-9));
  }
  CHECK(job(r, 1).at("steps").at(0).at("start_s").get<double>() == Approx(d).epsilon(1e-9));
}

TEST_CASE("cluster: the same cluster gives the same report", "[cluster]") {
  const std::string file = testing_workloads::write_yaml(
      "cluster-det", cluster_yaml(job_yaml("a", "[a0, a1]") + job_yaml("b", "[b0, b1]", "1e-3")));
  nlohmann::json x = testing_workloads::run(file), y = testing_workloads::run(file);
  strip_host_fields(x);
  strip_host_fields(y);
  CHECK(x.dump() == y.dump());
  // A job's report has the fields of its kind.
  CHECK(job(x, 0).at("report").at("result").contains("dcn"));
  CHECK(job(x, 0).at("report").at("collectives").at(0).at("op") == "all_reduce");
}

}  // namespace test_cluster
