// A serving fleet in a cluster (docs/cluster.md#serving-jobs): one request
// served disaggregated over two v5e slices of 4 chips (prefill on the
// first, decode on the second), its KV cache of B bytes crossing the
// fabric. Hand counts: B = 2 (K and V) x 2 layers x 8 KV heads x 128 x 2
// bytes x 512 prompt tokens = 4 MiB (over the replica's 4 chips). The
// request's first token comes when its cache lands (nothing else is
// decoding), so its TTFT is its prefill plus its transfer: with pod
// uplinks of C bytes/s far under the transfer's rate alone, B/C alone on
// the fabric; beside a collective job whose all-reduce keeps the same
// uplink busy the whole time (one connection each), B/(C/2).
#include <catch2/catch.hpp>

#include <string>

#include "nominal_chip.h"
#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_cluster_serving {

namespace {

constexpr double kB = 2.0 * 2 * 8 * 128 * 2 * 512;  // 4 MiB
constexpr double kC = 5e9;

std::string serving_job(const std::string& slices) {
  return "    - name: fleet\n      slices: " + slices +
         "\n      experiment:\n        chip: " + nominal_chip::chip("tpu-v5e") +
         "\n        pod: {slices: 2, slice: {topology: ring, shape: [4], wraparound: true}, dcn_axes: [dcn]}\n"
         "        mesh: {model: 4, dcn: 2}\n"
         "        workload:\n          kind: inference\n"
         "          model: {type: transformer, layers: 2, d_model: 1024, d_ff: 4096, heads: 8, head_dim: 128, "
         "seq_len: 1024, vocab: 32000}\n"
         "          batch: 2\n          prompt_len: 512\n          decode_len: 16\n"
         "          parallelism: {tensor: model, data: dcn}\n"
         "          requests: {count: 1, prompt_len: [512], decode_len: [16], prefill_chips: 4}\n";
}

// All-reduces of 64 MiB between slices a0 and a1, back to back for 40 steps
// (about 40 x 2 x 64 MiB / C = 1.07 s on the shared uplinks).
std::string collective_job() {
  return "    - name: sync\n      slices: [a0, a1]\n      steps: 40\n      experiment:\n        chip: " +
         nominal_chip::chip("tpu-v5e") +
         "\n        pod: {slices: 2, slice: {topology: ring, shape: [4], wraparound: true}}\n"
         "        workload: {kind: collective, op: all_reduce, bytes: 67108864}\n";
}

std::string cluster_yaml(const std::string& pods, const std::string& jobs) {
  return "chip: " + nominal_chip::chip("tpu-v5e") + "\nworkload:\n  kind: cluster\n  datacenter:\n    pods:\n" + pods +
         "  jobs:\n" + jobs;
}

const std::string kTwoPods =
    "      - {name: p0, slice: [4], slices: [a0, s0], uplink_bandwidth: 5.0e9}\n"
    "      - {name: p1, slice: [4], slices: [a1, s1], uplink_bandwidth: 5.0e9}\n";

nlohmann::json run(const std::string& name, const std::string& text) {
  return testing_workloads::run(testing_workloads::write_yaml(name, text));
}

const nlohmann::json& stream_of(const nlohmann::json& report) {
  return report.at("result").at("inference").at("stream");
}

}  // namespace

TEST_CASE("cluster serving: a fleet that shares no link serves as alone", "[cluster]") {
  // Both slices in one pod: the KV cache never crosses an uplink.
  const nlohmann::json r =
      run("fleet-apart", cluster_yaml("      - {name: ps, slice: [4], slices: [s0, s1], uplink_bandwidth: 5.0e9}\n"
                                      "      - {name: p0, slice: [4], slices: [a0], uplink_bandwidth: 5.0e9}\n"
                                      "      - {name: p1, slice: [4], slices: [a1], uplink_bandwidth: 5.0e9}\n",
                                      serving_job("[s0, s1]") + collective_job()));
  const nlohmann::json& fleet = r.at("cluster").at("jobs").at(0);
  CHECK(fleet.at("kind") == "inference");
  const nlohmann::json& alone = stream_of(fleet.at("report")).at("ttft_s");
  for (const char* k : {"ttft_alone_s", "ttft_s"})
    for (const char* q : {"mean", "p50", "p99"}) CHECK(fleet.at("serving").at(k).at(q) == alone.at(q));
  CHECK(fleet.at("slowdown").get<double>() == 1.0);
  CHECK(fleet.at("dcn_phases") == 1);  // one transfer, off the shared links
}

TEST_CASE("cluster serving: a KV transfer beside an all-reduce gets half the uplink", "[cluster]") {
  const nlohmann::json r = run("fleet-shared", cluster_yaml(kTwoPods, serving_job("[s0, s1]") + collective_job()));
  const nlohmann::json& fleet = r.at("cluster").at("jobs").at(0);
  const nlohmann::json& alone = stream_of(fleet.at("report"));
  const double ttft = alone.at("ttft_s").at("p99").get<double>();
  const double kv = alone.at("disaggregated").at("kv_transfer_s_mean").get<double>();
  REQUIRE(kv < kB / kC / 4);  // the transfer alone is far faster than the uplink allows
  // Alone on the fabric: the prefill, then B at C.
  CHECK(fleet.at("dcn_alone_s").get<double>() == Approx(kB / kC).epsilon(1e-9));
  CHECK(fleet.at("serving").at("ttft_alone_s").at("p99").get<double>() == Approx(ttft - kv + kB / kC).epsilon(1e-9));
  // In company: B at C/2 (the all-reduce's flow on the same uplink throughout).
  CHECK(fleet.at("dcn_s").get<double>() == Approx(2 * kB / kC).epsilon(1e-6));
  CHECK(fleet.at("serving").at("ttft_s").at("p99").get<double>() == Approx(ttft - kv + 2 * kB / kC).epsilon(1e-6));
  CHECK(fleet.at("slowdown").get<double>() == Approx((ttft - kv + 2 * kB / kC) / (ttft - kv + kB / kC)).epsilon(1e-6));
  // p0.up carried the cache once for the fleet.
  const nlohmann::json& up = r.at("cluster").at("links").at(0);
  REQUIRE(up.at("name") == "p0.up");
  CHECK(up.at("by_job").at("fleet").get<double>() == kB);
}

TEST_CASE("cluster serving: the trace has the fleet's KV transfer on its decode replica's track", "[cluster]") {
  auto exp = workloads::load_experiment(
      testing_workloads::write_yaml("fleet-trace", cluster_yaml(kTwoPods, serving_job("[s0, s1]") + collective_job())),
      {});
  workloads::RunOptions opts;
  opts.trace = true;
  const nlohmann::json trace = nlohmann::json::parse(exp.workload->run(exp, opts).trace_json);
  long fleet = -1, kv = -1;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name" && e.at("args").at("name") == "fleet (inference)")
      fleet = e.at("pid");
    if (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("args").at("name") == "KV into decode replica 0")
      kv = e.at("tid");
  }
  REQUIRE(fleet == 1);
  int transfers = 0;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("pid") == fleet && e.at("tid") == kv) {
      ++transfers;
      CHECK(e.at("name") == "KV request 0");
      CHECK(e.at("dur").get<double>() == Approx(2 * kB / kC * 1e6).epsilon(1e-6));  // us: B at C/2
    }
  CHECK(transfers == 1);
}

TEST_CASE("cluster serving: a serving job runs its stream once and needs one", "[cluster]") {
  const std::string steps =
      serving_job("[s0, s1]").replace(std::string("    - name: fleet\n").size(), 0, "      steps: 2\n");
  CHECK_THROWS_WITH(run("fleet-steps", cluster_yaml(kTwoPods, steps)),
                    Catch::Contains("steps") && Catch::Contains("runs its request stream once"));
  std::string bare = serving_job("[s0, s1]");
  bare.erase(bare.find("          requests:"));
  CHECK_THROWS_WITH(run("fleet-bare", cluster_yaml(kTwoPods, bare)), Catch::Contains("serves a request stream"));
}

}  // namespace test_cluster_serving
