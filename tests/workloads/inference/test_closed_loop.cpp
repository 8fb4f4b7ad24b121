// Closed-loop clients (requests.concurrency) and the benchmark client's
// metrics: schedules worked out by hand with step costs simple enough to
// add up on paper (flat_step_costs.h, or linear in the batch), and a
// closed-loop stream of simulated steps against the one-batch run it must
// reduce to.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "flat_step_costs.h"
#include "serving_model.h"
#include "workloads/experiment_fixture.h"
#include "workloads/inference/request_stream.h"
#include "workloads/inference/stream_metrics.h"

namespace test_closed_loop {

using namespace workloads;
using namespace testing_serving;
using testing_workloads::run;
using testing_workloads::write_yaml;

// `n` requests of prompt 10 and `decode` tokens; closed-loop arrival times
// are the scheduler's to set.
std::vector<Request> equal_requests(std::size_t n, std::uint64_t decode) {
  return std::vector<Request>(n, Request{0.0, 10, decode});
}

TEST_CASE("closed loop: one client sends each request when the last finishes", "[inference][stream][closed]") {
  // Prefill 1 s, decode step 0.1 s, 3 tokens each. Request 0: sent 0, first
  // token 1.0, tokens 1.1, 1.2, 1.3. Request 1 sent at 1.3: 2.3, done 2.6.
  // Request 2 sent at 2.6: 3.6, done 3.9.
  const StreamRun r = serve_requests(equal_requests(3, 3), 4, Batching::continuous, flat_step_costs(), 1);
  const double sent[] = {0.0, 1.3, 2.6}, done[] = {1.3, 2.6, 3.9};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(r.requests[i].arrival_s == Approx(sent[i]));
    CHECK(r.requests[i].ttft_s() == Approx(1.0));
    CHECK(r.requests[i].finish_s == Approx(done[i]));
    CHECK(r.requests[i].tpot_s() == Approx(0.1));
  }
  CHECK(r.makespan_s == Approx(3.9));
  CHECK(r.prefill_steps == 3);
  CHECK(r.decode_steps == 9);
  CHECK(r.mean_batch == 1.0);
}

TEST_CASE("closed loop: two clients", "[inference][stream][closed]") {
  SECTION("two slots, equal lengths: rounds of one prefill and three steps") {
    // Requests 0 and 1 at 0, one prefill (same prompt), done at 1.3; 2 and 3
    // sent at 1.3, done at 2.6.
    const StreamRun r = serve_requests(equal_requests(4, 3), 2, Batching::continuous, flat_step_costs(), 2);
    CHECK(r.requests[2].arrival_s == Approx(1.3));
    CHECK(r.requests[3].arrival_s == Approx(1.3));
    for (const RequestOutcome& o : r.requests) CHECK(o.ttft_s() == Approx(1.0));
    CHECK(r.makespan_s == Approx(2.6));
    CHECK(r.prefill_steps == 2);
    CHECK(r.decode_steps == 6);
    CHECK(r.mean_batch == 2.0);
  }
  SECTION("one slot: the second client's request queues") {
    // 0 runs 0..1.3 while 1 waits; 1 runs 1.3..2.6 (TTFT 2.3); client 0
    // sent 2 at 1.3, which runs 2.6..3.9 (TTFT 3.6 - 1.3); client 1 sent 3
    // at 2.6, which runs 3.9..5.2 (TTFT 4.9 - 2.6).
    const StreamRun r = serve_requests(equal_requests(4, 3), 1, Batching::continuous, flat_step_costs(), 2);
    const double ttft[] = {1.0, 2.3, 2.3, 2.3}, done[] = {1.3, 2.6, 3.9, 5.2};
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(r.requests[i].ttft_s() == Approx(ttft[i]));
      CHECK(r.requests[i].finish_s == Approx(done[i]));
    }
    CHECK(r.makespan_s == Approx(5.2));
  }
  SECTION("two slots, unequal lengths: the next request's prefill stalls the other's decode") {
    // 0 (1 token) and 1 (3 tokens) prefilled together by 1.0; step 1.1
    // ends 0, whose client sends 2 (2 tokens) at 1.1; its prefill runs
    // 1.1..2.1 before the next step; steps 2.2 and 2.3 end 1 and 2.
    const std::vector<Request> reqs = {{0.0, 10, 1}, {0.0, 10, 3}, {0.0, 10, 2}};
    const StreamRun r = serve_requests(reqs, 2, Batching::continuous, flat_step_costs(), 2);
    CHECK(r.requests[2].arrival_s == Approx(1.1));
    CHECK(r.requests[2].ttft_s() == Approx(1.0));
    CHECK(r.requests[1].finish_s == Approx(2.3));
    CHECK(r.requests[1].tpot_s() == Approx(1.3 / 3));
    REQUIRE(r.requests[1].token_s.size() == 3);
    CHECK(r.requests[1].token_s[1] == Approx(2.2));  // its inter-token gaps: 0.1, 1.1, 0.1
    CHECK(r.requests[2].finish_s == Approx(2.3));
    CHECK(r.makespan_s == Approx(2.3));
  }
  SECTION("a static batch: a client whose request ended sends while the batch runs on") {
    // 0 (1 token) and 1 (3 tokens): 0 is answered at 1.1, and its client
    // sends 2 at once, which waits for the batch to end at 1.3: prefill
    // 2.3, its 2 tokens at 2.5 (TTFT 2.3 - 1.1).
    const std::vector<Request> reqs = {{0.0, 10, 1}, {0.0, 10, 3}, {0.0, 10, 2}};
    const StreamRun r = serve_requests(reqs, 2, Batching::static_batch, flat_step_costs(), 2);
    CHECK(r.requests[0].finish_s == Approx(1.1));
    CHECK(r.requests[2].arrival_s == Approx(1.1));
    CHECK(r.requests[2].ttft_s() == Approx(1.2));
    CHECK(r.requests[2].finish_s == Approx(2.5));
  }
}

TEST_CASE("closed loop: N clients with equal lengths run in rounds", "[inference][stream][closed]") {
  // 8 clients, 8 slots, 24 requests of prompt 100 and 4 tokens. A prefill
  // costs 1 ms per prompt token (8 x 100: 0.8 s), a decode step 0.02 s +
  // 0.01 s per sequence (0.1 s at 8). Three rounds of 0.8 + 4 x 0.1 = 1.2 s:
  // makespan 3.6 s, TTFT 0.8 s and TPOT 0.1 s for every request.
  StepCosts c;
  c.prefill_s = [](std::uint64_t sequences, std::uint64_t prompt) { return 1e-3 * double(sequences * prompt); };
  c.decode_s = [](std::uint64_t batch, double) { return 0.02 + 0.01 * double(batch); };
  const std::vector<Request> reqs(24, Request{0.0, 100, 4});
  const StreamRun closed = serve_requests(reqs, 8, Batching::continuous, c, 8);
  RequestStreamSection m;
  fill_stream_metrics(closed.requests, m);
  CHECK(m.ttft_s.mean == Approx(0.8));
  CHECK(m.ttft_s.p99 == Approx(0.8));
  CHECK(m.tpot_s.p50 == Approx(0.1));
  CHECK(m.itl_s.p99 == Approx(0.1));
  CHECK(m.makespan_s == Approx(3.6));
  CHECK(m.requests_per_s == Approx(24 / 3.6));
  CHECK(m.tokens_per_s == Approx(96 / 3.6));
  CHECK(m.total_tokens_per_s == Approx((2400 + 96) / 3.6));
  // The same 24 requests all sent at once (open loop, rate 0) run the same
  // steps, but the second and third rounds' requests wait from time 0:
  // TTFT 0.8, 2.0 and 3.2 s, mean 2.0 s.
  const StreamRun open = serve_requests(reqs, 8, Batching::continuous, c);
  RequestStreamSection o;
  fill_stream_metrics(open.requests, o);
  CHECK(o.ttft_s.mean == Approx(2.0));
  CHECK(o.ttft_s.p99 == Approx(3.2));
  CHECK(o.makespan_s == Approx(3.6));
}

TEST_CASE("stream metrics: ITL over tokens, throughputs over the measured window", "[inference][stream][metrics]") {
  // Two requests: A sent at 1, first token 2, tokens at 3 and 7 (gaps 1
  // and 4); B sent at 2, first token 4, tokens at 5, 6, 7, 8 (gaps 1 each).
  RequestOutcome a, b;
  a.arrival_s = 1, a.first_token_s = 2, a.finish_s = 7, a.prompt_len = 100, a.decode_len = 2, a.token_s = {3, 7};
  b.arrival_s = 2, b.first_token_s = 4, b.finish_s = 8, b.prompt_len = 50, b.decode_len = 4, b.token_s = {5, 6, 7, 8};
  RequestStreamSection m;
  fill_stream_metrics({a, b}, m);
  CHECK(m.ttft_s.mean == Approx(1.5));  // 1 and 2
  CHECK(m.ttft_s.p50 == 1.0);
  CHECK(m.ttft_s.p99 == 2.0);
  CHECK(m.tpot_s.mean == Approx((2.5 + 1.0) / 2));  // 5/2 and 4/4
  // Six gaps: 1, 4, 1, 1, 1, 1. Over tokens the median is 1 and the p99 4;
  // over requests (TPOT) the median would be 1 and the p99 2.5.
  CHECK(m.itl_s.mean == Approx(9.0 / 6));
  CHECK(m.itl_s.p50 == 1.0);
  CHECK(m.itl_s.p99 == 4.0);
  CHECK(m.makespan_s == 7.0);  // first send 1 to last finish 8
  CHECK(m.requests_per_s == Approx(2.0 / 7));
  CHECK(m.tokens_per_s == Approx(6.0 / 7));
  CHECK(m.total_tokens_per_s == Approx(156.0 / 7));
}

TEST_CASE("closed-loop stream of simulated steps reduces to the one-batch run", "[inference][stream][closed]") {
  // Four clients, four slots, eight requests of the workload's own
  // lengths: two rounds, each the one-batch run's prefill and 64 decode
  // steps. With the first round as warm-up, the measured requests are the
  // second round's: every TTFT is the one-batch prefill (sent at the first
  // round's end, prefilled at once), and tokens/s the one-batch run's
  // (within 1%: the interpolated steps against the step at the mean context).
  const Dense model{2, 1024, 4096, 16, 4, 64, 32000};
  const std::string yaml = "name: closed\nchip: tpu-v5e\nworkload:\n  kind: inference\n  model: " + model.yaml(4096) +
                           "\n  batch: 4\n  prompt_len: 1024\n  decode_len: 64\n  requests: {count: 8, concurrency: "
                           "4, warmup: 4, prompt_len: 1024, decode_len: 64}\n";
  const nlohmann::json r = run(write_yaml("closed", yaml))["result"]["inference"];
  const nlohmann::json& s = r["stream"];
  CHECK(s["concurrency"] == 4);
  CHECK(s["warmup"] == 4);
  CHECK(s["prefill_steps"] == 2);
  CHECK(s["decode_steps"] == 128);
  CHECK(s["mean_batch"] == 4.0);
  CHECK(s["ttft_s"]["p50"].get<double>() == Approx(r["ttft_s"].get<double>()).epsilon(1e-9));
  CHECK(s["ttft_s"]["p99"].get<double>() == Approx(r["ttft_s"].get<double>()).epsilon(1e-9));
  CHECK(s["tokens_per_s"].get<double>() == Approx(r["tokens_per_s"].get<double>()).epsilon(0.01));
  CHECK(s["requests_per_s"].get<double>() == Approx(s["tokens_per_s"].get<double>() / 64).epsilon(1e-12));
  CHECK(s["itl_s"]["p50"].get<double>() == Approx(r["tpot_s"].get<double>()).epsilon(0.01));
}

}  // namespace test_closed_loop
