// The request stream: the scheduler against schedules worked out by hand
// (step costs given as simple functions), the stream generator against its
// definition, and a stream of simulated steps against the one-batch run it
// must reduce to.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "flat_step_costs.h"
#include "serving_model.h"
#include "workloads/experiment_fixture.h"
#include "workloads/inference/request_stream.h"

namespace test_request_stream {

using namespace workloads;
using namespace testing_serving;
using testing_workloads::run;
using testing_workloads::write_yaml;

TEST_CASE("request stream: continuous batching admits an arrival before the next step", "[inference][stream]") {
  // A (prompt 10, 3 tokens) at 0, B (2 tokens) at 0.15, two slots. A's
  // prefill ends at 1.0; B has arrived, takes the free slot and is
  // prefilled (2.0) before any decode step; then steps at 2.1, 2.2 (B done)
  // and 2.3 (A done).
  const std::vector<Request> reqs = {{0.0, 10, 3}, {0.15, 10, 2}};
  const StreamRun r = serve_requests(reqs, 2, Batching::continuous, flat_step_costs());
  REQUIRE(r.requests.size() == 2);
  CHECK(r.requests[0].first_token_s == Approx(1.0));
  CHECK(r.requests[0].finish_s == Approx(2.3));
  CHECK(r.requests[0].tpot_s() == Approx(1.3 / 3));  // B's prefill stalls A's first decode step
  CHECK(r.requests[1].ttft_s() == Approx(1.85));
  CHECK(r.requests[1].finish_s == Approx(2.2));
  CHECK(r.prefill_steps == 2);
  CHECK(r.decode_steps == 3);
  CHECK(r.mean_batch == Approx(5.0 / 3));
  CHECK(r.makespan_s == Approx(2.3));
}

TEST_CASE("request stream: a static batch runs to its end before the next one starts", "[inference][stream]") {
  // Same requests: A alone is prefilled (1.0) and decoded (1.1, 1.2, 1.3);
  // B waits for the batch to end, then prefill 2.3 and steps 2.4, 2.5.
  const std::vector<Request> reqs = {{0.0, 10, 3}, {0.15, 10, 2}};
  const StreamRun r = serve_requests(reqs, 2, Batching::static_batch, flat_step_costs());
  CHECK(r.requests[0].finish_s == Approx(1.3));
  CHECK(r.requests[1].ttft_s() == Approx(2.3 - 0.15));
  CHECK(r.requests[1].finish_s == Approx(2.5));
  CHECK(r.decode_steps == 5);
}

TEST_CASE("request stream: finished sequences pad a static batch, free a continuous slot", "[inference][stream]") {
  // A (1 token) and B (3 tokens) together; a decode step costs 0.1 s per
  // sequence in the batch. Continuous: 0.2 + 0.1 + 0.1; static: three
  // steps of two sequences (A's slot padded), 0.6.
  StepCosts c = flat_step_costs();
  c.decode_s = [](std::uint64_t batch, double) { return 0.1 * double(batch); };
  const std::vector<Request> reqs = {{0.0, 10, 1}, {0.0, 10, 3}};
  const StreamRun cont = serve_requests(reqs, 2, Batching::continuous, c);
  const StreamRun stat = serve_requests(reqs, 2, Batching::static_batch, c);
  CHECK(cont.prefill_steps == 1);  // one prompt length: one batch
  CHECK(cont.requests[1].finish_s == Approx(1.0 + 0.4));
  CHECK(stat.requests[1].finish_s == Approx(1.0 + 0.6));
  CHECK(cont.requests[0].finish_s == Approx(1.2));
  CHECK(stat.requests[0].finish_s == Approx(1.2));
}

TEST_CASE("request stream: contexts, prefill groups and slots", "[inference][stream]") {
  // Step contexts: the next token attends over prompt + generated + 1.
  StepCosts c;
  c.prefill_s = [](std::uint64_t sequences, std::uint64_t prompt) { return 0.01 * double(sequences * prompt); };
  c.decode_s = [](std::uint64_t batch, double context) { return 1e-3 * double(batch) * context; };
  const StreamRun one = serve_requests({{0.0, 10, 2}}, 4, Batching::continuous, c);
  CHECK(one.requests[0].first_token_s == Approx(0.1));
  CHECK(one.requests[0].finish_s == Approx(0.1 + 0.011 + 0.012));
  // Two prompt lengths arriving together: two prefills, shorter first.
  const StreamRun two = serve_requests({{0.0, 20, 1}, {0.0, 10, 1}}, 4, Batching::continuous, c);
  CHECK(two.prefill_steps == 2);
  CHECK(two.requests[1].first_token_s == Approx(0.1));
  CHECK(two.requests[0].first_token_s == Approx(0.3));
  // One slot: requests are served one after another, in arrival order.
  const StreamRun queue = serve_requests({{0.0, 10, 1}, {0.0, 10, 1}, {0.0, 10, 1}}, 1, Batching::continuous, c);
  CHECK(queue.requests[2].first_token_s == Approx(3 * 0.1 + 2 * 0.011));
  CHECK(queue.mean_batch == Approx(1.0));
}

TEST_CASE("request stream: generated arrivals and lengths", "[inference][stream]") {
  RequestStreamSpec s;
  s.count = 20000;
  s.rate = 4;
  s.prompt_len = {128, 512, 2048};
  s.decode_len = {64};
  s.seed = 7;
  const std::vector<Request> a = generate_requests(s), b = generate_requests(s);
  REQUIRE(a.size() == 20000);
  std::set<std::uint64_t> prompts;
  bool same = true, ordered = true;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same = same && a[i].arrival_s == b[i].arrival_s && a[i].prompt_len == b[i].prompt_len;
    ordered = ordered && (i == 0 || a[i].arrival_s >= a[i - 1].arrival_s);
    prompts.insert(a[i].prompt_len);
    CHECK(a[i].decode_len == 64);
  }
  CHECK(same);
  CHECK(ordered);
  CHECK(prompts == std::set<std::uint64_t>{128, 512, 2048});
  // Poisson arrivals: 19,999 exponential gaps of mean 1/4 s; their mean has a
  // standard error of 0.25 / sqrt(19999) = 0.0018 s, so 2% is 2.8 sigma.
  CHECK(a.back().arrival_s / 19999 == Approx(0.25).epsilon(0.02));
  s.seed = 8;
  CHECK(generate_requests(s)[1].arrival_s != a[1].arrival_s);
  s.rate = 0;
  for (const Request& r : generate_requests(s)) CHECK(r.arrival_s == 0.0);
}

TEST_CASE("request stream: nearest-rank percentiles", "[inference][stream]") {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  CHECK(percentile(v, 50) == 50);
  CHECK(percentile(v, 99) == 99);
  CHECK(percentile({5.0}, 99) == 5);
  CHECK(percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99) == 10);
}

TEST_CASE("request stream of simulated steps reduces to the one-batch run", "[inference][stream]") {
  // Four requests at once into four slots with the workload's own lengths:
  // the same prefill as `phase: both` (one batch of four), and decode steps
  // whose mean over contexts 1025..1088, interpolated between the two ends
  // the pod runs, must equal the step simulated at the mean context.
  const Dense model{2, 1024, 4096, 16, 4, 64, 32000};
  const std::string head = "name: stream\nchip: tpu-v5e\nworkload:\n  kind: inference\n  model: " + model.yaml(4096) +
                           "\n  batch: 4\n  prompt_len: 1024\n  decode_len: 64\n";
  const nlohmann::json r = run(
      write_yaml("stream", head + "  requests: {count: 4, prompt_len: 1024, decode_len: 64}\n"))["result"]["inference"];
  const nlohmann::json& s = r["stream"];
  CHECK(s["requests"] == 4);
  CHECK(s["prefill_steps"] == 1);
  CHECK(s["decode_steps"] == 64);
  CHECK(s["mean_batch"] == 4.0);
  CHECK(s["steps_simulated"] == 3);  // the prefill and the decode step at contexts 1025 and 1088
  CHECK(s["ttft_s"]["p99"].get<double>() == r["ttft_s"].get<double>());
  CHECK(s["tpot_s"]["p50"].get<double>() == Approx(r["tpot_s"].get<double>()).epsilon(0.01));
  CHECK(s["tokens_per_s"].get<double>() == Approx(r["tokens_per_s"].get<double>()).epsilon(0.01));

  // Arrivals far apart (one a minute): each request is served alone, so
  // every TTFT is the batch-1 prefill and p50 = p99.
  const nlohmann::json alone = run(write_yaml(
      "stream-alone",
      head + "  requests: {count: 5, rate: 0.0166, prompt_len: 1024, decode_len: 64}\n"))["result"]["inference"];
  const nlohmann::json one =
      run(write_yaml("one", "name: one\nchip: tpu-v5e\nworkload:\n  kind: inference\n  model: " + model.yaml(4096) +
                                "\n  batch: 1\n  prompt_len: 1024\n  decode_len: 64\n"))["result"]["inference"];
  // (TTFT = first token - arrival: equal up to the rounding of the subtraction.)
  CHECK(alone["stream"]["ttft_s"]["p50"].get<double>() ==
        Approx(alone["stream"]["ttft_s"]["p99"].get<double>()).epsilon(1e-9));
  CHECK(alone["stream"]["ttft_s"]["p50"].get<double>() == Approx(one["ttft_s"].get<double>()).epsilon(1e-9));
  CHECK(alone["stream"]["tpot_s"]["p99"].get<double>() == Approx(one["tpot_s"].get<double>()).epsilon(0.01));
  CHECK(alone["stream"]["mean_batch"] == 1.0);
}

}  // namespace test_request_stream
