// Disaggregated serving (requests.prefill_chips): the scheduler against
// schedules worked out by hand, with the continuous scheduler on the same
// replicas beside it, and simulated streams whose time to first token is
// the prefill step plus the KV cache's bytes over the link, by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "flat_step_costs.h"
#include "serving_model.h"
#include "workloads/experiment_fixture.h"
#include "workloads/inference/request_stream.h"

namespace test_disaggregated {

using namespace workloads;
using namespace testing_serving;
using testing_workloads::run;
using testing_workloads::write_yaml;

namespace {

double max_tpot(const std::vector<RequestOutcome>& outcomes) {
  double m = 0;
  for (const RequestOutcome& o : outcomes) m = std::max(m, o.tpot_s());
  return m;
}

}  // namespace

TEST_CASE("disaggregated: first token after the prefill and the KV transfer", "[inference][stream][disaggregated]") {
  // One request: prefill 0..1, transfer 1..1.25, steps to 1.35, 1.45, 1.55.
  const StreamRun one = serve_disaggregated({{0.0, 10, 3}}, {1, 1, 2}, flat_step_costs());
  CHECK(one.requests[0].ttft_s() == Approx(1.25));
  CHECK(one.requests[0].tpot_s() == Approx(0.1));
  CHECK(one.requests[0].finish_s == Approx(1.55));
  CHECK(one.kv_transfer_s == Approx(0.25));

  // Two requests prefilled together (one step, 0..1): their caches cross
  // the decode replica's link one after the other, landing at 1.25 and
  // 1.5. A decodes from 1.25 (1.35, 1.45: done); B, landed during A's
  // second step, joins when it ends, at 1.5, and steps to 1.6, 1.7.
  const StreamRun two = serve_disaggregated({{0.0, 10, 2}, {0.0, 10, 2}}, {1, 1, 2}, flat_step_costs());
  CHECK(two.prefill_steps == 1);
  CHECK(two.requests[0].ttft_s() == Approx(1.25));
  CHECK(two.requests[1].ttft_s() == Approx(1.5));
  CHECK(two.requests[0].tpot_s() == Approx(0.1));
  CHECK(two.requests[1].tpot_s() == Approx(0.1));
  CHECK(two.requests[1].finish_s == Approx(1.7));
  CHECK(two.decode_steps == 4);
  CHECK(two.mean_batch == Approx(1.0));
  CHECK(two.kv_transfer_s == Approx(0.5));
}

TEST_CASE("disaggregated: decode steps are not stretched by prefills", "[inference][stream][disaggregated]") {
  // Four requests 0.5 s apart (4 output tokens each) on two replicas of
  // two slots.
  const std::vector<Request> reqs = {{0.0, 10, 4}, {0.5, 10, 4}, {1.0, 10, 4}, {1.5, 10, 4}};
  // Continuous, each replica serving every other request: replica 0
  // prefills A (0..1), then C, arrived at 1.0 (1..2), before A's first
  // step; both decode 2.1 .. 2.4. A's four tokens span 1.4 s: TPOT 0.35.
  // Replica 1 does the same to B and D 0.5 s later.
  std::vector<RequestOutcome> continuous;
  for (int replica = 0; replica < 2; ++replica) {
    const StreamRun r = serve_requests({reqs[replica], reqs[replica + 2]}, 2, Batching::continuous, flat_step_costs());
    continuous.insert(continuous.end(), r.requests.begin(), r.requests.end());
  }
  CHECK(continuous[0].tpot_s() == Approx(0.35));
  CHECK(continuous[0].ttft_s() == Approx(1.0));
  CHECK(max_tpot(continuous) == Approx(0.35));

  // Disaggregated, one prefill and one decode replica. Prefills: A 0..1;
  // B and C (arrived by 1.0) together 1..2; D 2..3. Transfers on the
  // decode link: A 1..1.25; B takes the second slot at 1.0 and crosses
  // 2..2.25; C takes A's slot when A is done (1.65) and crosses
  // 2.25..2.5 after B; D takes B's slot at 2.65 and crosses 3..3.25.
  // Decode: A 1.25..1.65; B from 2.25; C landed during B's third step and
  // joins at 2.55; B done at 2.65, C at 2.95; D 3.25..3.65. Every TPOT is
  // the step, 0.1; TTFT pays the prefill queue and the transfer.
  const StreamRun d = serve_disaggregated(reqs, {1, 1, 2}, flat_step_costs());
  CHECK(d.requests[0].ttft_s() == Approx(1.25));
  CHECK(d.requests[1].ttft_s() == Approx(2.25 - 0.5));
  CHECK(d.requests[2].ttft_s() == Approx(2.55 - 1.0));
  CHECK(d.requests[3].ttft_s() == Approx(3.25 - 1.5));
  CHECK(d.requests[1].finish_s == Approx(2.65));
  CHECK(d.requests[2].finish_s == Approx(2.95));
  CHECK(max_tpot(d.requests) == Approx(0.1));
  CHECK(d.prefill_steps == 3);
  CHECK(d.prefill_s == Approx(3.0));
  // A's 4 steps, B's 3 alone, one with C, C's 3 alone, D's 4.
  CHECK(d.decode_steps == 15);
  CHECK(d.mean_batch == Approx(16.0 / 15));
  CHECK(d.makespan_s == Approx(3.65));
  CHECK(d.kv_transfer_s == Approx(1.0));
}

TEST_CASE("disaggregated: several replicas in each pool", "[inference][stream][disaggregated]") {
  // Three requests at once, one slot each. Two prefill replicas: A and B
  // 0..1 side by side, C 1..2 on the first. In order of their prefills'
  // ends, A and C go to decode replica 0, B to replica 1; one token each.
  const StreamRun r = serve_disaggregated({{0.0, 10, 1}, {0.0, 10, 1}, {0.0, 10, 1}}, {2, 2, 1}, flat_step_costs());
  CHECK(r.prefill_steps == 3);
  CHECK(r.requests[0].finish_s == Approx(1.35));
  CHECK(r.requests[1].finish_s == Approx(1.35));
  CHECK(r.requests[2].ttft_s() == Approx(2.25));
  CHECK(r.requests[2].finish_s == Approx(2.35));
}

namespace {

const Dense kModel{2, 1024, 4096, 16, 4, 64, 32000};
// One token's cache, all layers, bf16: 2 x 2 x 4 x 64 x 2 B; a prompt of 1024.
const double kPromptKvBytes = double(kModel.kv_bytes_per_token(2) * 1024);

// `batch` over the two chips' replicas (data parallelism of 2).
std::string serving(const std::string& pod, const std::string& requests, int batch = 2) {
  return "name: disaggregated\nchip: tpu-v5e\n" + pod + "workload:\n  kind: inference\n  model: " + kModel.yaml(4096) +
         "\n  batch: " + std::to_string(batch) + "\n  prompt_len: 1024\n  decode_len: 64\n  requests: " + requests +
         "\n";
}

const char* const kTwoChips = "pod: {topology: ring, shape: [2], wraparound: [false]}\n";

}  // namespace

TEST_CASE("disaggregated stream of simulated steps: one request over ICI", "[inference][stream][disaggregated]") {
  // One chip prefills, the other decodes. The prefill is the one-batch
  // run's (one sequence per replica); the cache, 2 MiB, crosses one ICI
  // link: 2 MiB / 45 GB/s + one 1 us hop.
  const nlohmann::json r = run(write_yaml(
      "disagg-ici",
      serving(kTwoChips, "{count: 1, prompt_len: 1024, decode_len: 64, prefill_chips: 1}")))["result"]["inference"];
  const nlohmann::json& s = r["stream"];
  const nlohmann::json& d = s["disaggregated"];
  const double transfer = kPromptKvBytes / kV5eLinkBandwidth + kV5eHopLatency;
  CHECK(d["link"] == "ici");
  CHECK(d["prefill"]["chips"] == 1);
  CHECK(d["decode"]["replicas"] == 1);
  CHECK(d["kv_bytes_mean"].get<double>() == kPromptKvBytes);
  CHECK(d["kv_transfer_s_mean"].get<double>() == Approx(transfer).epsilon(1e-12));
  CHECK(s["ttft_s"]["p50"].get<double>() == Approx(r["ttft_s"].get<double>() + transfer).epsilon(1e-9));
  // Decode steps of one sequence at contexts 1025..1088, interpolated: the
  // one-batch run's step at the mean context.
  CHECK(s["tpot_s"]["p50"].get<double>() == Approx(r["tpot_s"].get<double>()).epsilon(0.01));
  // Each pool busy for its steps alone: the prefill over the whole span,
  // the decode steps over it less the prefill and the transfer.
  const double span = s["makespan_s"].get<double>();
  CHECK(d["prefill"]["utilization"].get<double>() == Approx(r["ttft_s"].get<double>() / span).epsilon(1e-9));
  CHECK(d["decode"]["utilization"].get<double>() ==
        Approx((span - r["ttft_s"].get<double>() - transfer) / span).epsilon(1e-9));
}

TEST_CASE("disaggregated stream of simulated steps: separate slices over DCN", "[inference][stream][disaggregated]") {
  // Two slices of one chip: the cache crosses the DCN at min(host link
  // 20 GB/s, NIC 10 GB/s, the slice's fabric share 10 GB/s) after its 20 us.
  const std::string pod =
      "pod: {slices: 2, slice: {topology: ring, shape: [1], wraparound: [false]},\n"
      "      dcn: {nic_bandwidth: 1.0e+10, host_bandwidth: 2.0e+10, latency: 2.0e-5}}\n";
  const nlohmann::json r = run(write_yaml(
      "disagg-dcn",
      serving(pod, "{count: 1, prompt_len: 1024, decode_len: 64, prefill_chips: 1}")))["result"]["inference"];
  const nlohmann::json& d = r["stream"]["disaggregated"];
  const double transfer = 2.0e-5 + kPromptKvBytes / 1.0e10;
  CHECK(d["link"] == "dcn");
  CHECK(d["kv_transfer_s_mean"].get<double>() == Approx(transfer).epsilon(1e-12));
  CHECK(r["stream"]["ttft_s"]["p50"].get<double>() == Approx(r["ttft_s"].get<double>() + transfer).epsilon(1e-9));
}

TEST_CASE("disaggregated stream of simulated steps: a burst, and determinism", "[inference][stream][disaggregated]") {
  // 8 requests at 2000 per second (a decode step of this model is about
  // 0.2 ms, a request's decode 6 to 13 ms) on two chips of two slots each:
  // continuous batching stalls running sequences for each arrival's
  // prefill (its TPOT p99 carries a prefill), the decode replica of a
  // disaggregated pair never does.
  const std::string stream = "{count: 8, rate: 2000, prompt_len: [512, 1024], decode_len: [32, 64], seed: 5";
  const auto run_stream = [&](const std::string& name, const std::string& extra) {
    return run(write_yaml(name, serving(kTwoChips, stream + extra + "}", 4)))["result"]["inference"];
  };
  const nlohmann::json cont = run_stream("burst-continuous", ""),
                       disagg = run_stream("burst-disagg", ", prefill_chips: 1");
  CHECK(disagg["stream"]["tpot_s"]["p99"].get<double>() < cont["stream"]["tpot_s"]["p99"].get<double>());
  // The decode replica's steps: one or two sequences at contexts up to
  // 1088, within 5% of the one-batch run's step (two sequences at the
  // mean context, 1056; the weights' read dominates both).
  CHECK(disagg["stream"]["tpot_s"]["p99"].get<double>() < 1.05 * disagg["tpot_s"].get<double>());
  CHECK(disagg["stream"]["requests"] == 8);
  // Same seed, same report.
  CHECK(run_stream("burst-disagg-again", ", prefill_chips: 1")["stream"] == disagg["stream"]);
}

}  // namespace test_disaggregated
