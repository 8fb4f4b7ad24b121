// A server's fixed shapes (docs/serving.md "Servers of fixed shapes"):
// prefills one request at a time padded to a bucket (JetStream's
// orchestrator and tokenizer padding), and a decode step that runs every
// slot over the whole cache (JetStream-PyTorch's generate). Schedules are
// worked out by hand; the fixed step is held to a separate run of the
// decode step at full batch and full context.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "serving_model.h"
#include "workloads/experiment_fixture.h"
#include "workloads/inference/request_stream.h"

namespace test_server_shape {

using namespace workloads;
using namespace testing_serving;
using testing_workloads::run;
using testing_workloads::write_yaml;

// JetStream's prefill lengths up to a max_prefill_length of 1024
// (jetstream/engine/token_utils.py, tokenize_and_pad).
const std::vector<std::uint64_t> kJetStreamBuckets = {16, 32, 64, 128, 256, 512, 1024};

TEST_CASE("server shape: a prompt runs at the smallest bucket that holds it", "[inference][stream][server]") {
  const PrefillPolicy p{1, kJetStreamBuckets};
  CHECK(p.padded(1) == 16);
  CHECK(p.padded(16) == 16);
  CHECK(p.padded(17) == 32);
  CHECK(p.padded(162) == 256);  // ShareGPT's mean prompt with its BOS token
  CHECK(p.padded(1024) == 1024);
  CHECK(PrefillPolicy{}.padded(162) == 162);  // no buckets: unpadded
}

TEST_CASE("server shape: one prefill a request, in arrival order", "[inference][stream][server]") {
  // Prefill costs 1 ms per padded token per request, a decode step 10 ms.
  // Three requests of a 100-token prompt and 2 output tokens at 0, two
  // slots. One at a time, padded to 128: r0's first token at 0.128, r1's at
  // 0.256; two steps (0.266, 0.276) finish both; r2 is prefilled (0.404)
  // and decoded (0.414, 0.424).
  StepCosts c;
  c.prefill_s = [](std::uint64_t sequences, std::uint64_t length) { return 1e-3 * double(sequences * length); };
  c.decode_s = [](std::uint64_t, double) { return 0.01; };
  const std::vector<Request> reqs = {{0.0, 100, 2}, {0.0, 100, 2}, {0.0, 100, 2}};
  const StreamRun one = serve_requests(reqs, 2, Batching::continuous, c, 0, {1, kJetStreamBuckets});
  CHECK(one.requests[0].first_token_s == Approx(0.128));
  CHECK(one.requests[1].first_token_s == Approx(0.256));
  CHECK(one.requests[1].finish_s == Approx(0.276));
  CHECK(one.requests[2].first_token_s == Approx(0.404));
  CHECK(one.requests[2].finish_s == Approx(0.424));
  CHECK(one.prefill_steps == 3);
  CHECK(one.decode_steps == 4);
  // Batched and unpadded (the default): r0 and r1 in one 0.2 s prefill,
  // steps at 0.21 and 0.22, r2 at 0.32, 0.33, 0.34.
  const StreamRun batched = serve_requests(reqs, 2, Batching::continuous, c);
  CHECK(batched.requests[1].first_token_s == Approx(0.2));
  CHECK(batched.requests[2].finish_s == Approx(0.34));
  CHECK(batched.prefill_steps == 2);
}

TEST_CASE("server shape: prefill batches split by padded length and batch", "[inference][stream][server]") {
  // Prompts of 20, 30 and 40 tokens (three each, nine slots)
  // with buckets {32, 64} and at most two a step: the 20s and 30s pad to 32
  // (six requests: steps of 2, 2, 2), the 40s to 64 (steps of 2, 1).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  StepCosts c;
  c.prefill_s = [&calls](std::uint64_t sequences, std::uint64_t length) {
    calls.push_back({sequences, length});
    return 1.0;
  };
  c.decode_s = [](std::uint64_t, double) { return 0.1; };
  std::vector<Request> reqs;
  for (std::uint64_t len : {20, 30, 40, 20, 30, 40, 20, 30, 40}) reqs.push_back({0.0, len, 1});
  const StreamRun r = serve_requests(reqs, 9, Batching::continuous, c, 0, {2, {32, 64}});
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> want = {{2, 32}, {2, 32}, {2, 32}, {2, 64}, {1, 64}};
  CHECK(calls == want);
  CHECK(r.prefill_steps == 5);
  CHECK(r.requests[0].first_token_s == Approx(1.0));  // the first 32-token step: requests 0 and 1
  CHECK(r.requests[8].first_token_s == Approx(5.0));  // the last 40-token one, alone
}

TEST_CASE("server shape: a fixed decode step is the full batch over the whole cache", "[inference][stream][server]") {
  // Two requests on four slots, a cache of 512 tokens: every decode step of
  // the stream costs what the decode step of 4 sequences at context 512
  // costs, run on its own (prompt 511 and one output token: decode context
  // 511 + 1 = 512), however few sequences decode and however short their
  // contexts: it reads 4 x 512 tokens of cache, where the live step of the
  // two sequences reads 2 x 65 to 2 x 72.
  const Dense model{2, 1024, 4096, 16, 4, 64, 32000};
  const std::string head = "chip: tpu-v5e\nworkload:\n  kind: inference\n  model: " + model.yaml(512) + "\n";
  const nlohmann::json full =
      run(write_yaml("full", "name: full\n" + head + "  batch: 4\n  prompt_len: 511\n  decode_len: 1\n"));
  const double full_step = full["result"]["inference"]["tpot_s"].get<double>();
  const std::string stream =
      "  batch: 4\n  prompt_len: 64\n  decode_len: 8\n  requests: {count: 2, prompt_len: 64, "
      "decode_len: 8, decode_step: fixed}\n";
  const nlohmann::json fixed = run(write_yaml("fixed", "name: fixed\n" + head + stream));
  const nlohmann::json& s = fixed["result"]["inference"]["stream"];
  CHECK(s["decode_steps"] == 8);
  CHECK(s["itl_s"]["p50"].get<double>() == Approx(full_step).epsilon(1e-12));
  CHECK(s["tpot_s"]["p99"].get<double>() == Approx(full_step).epsilon(1e-12));
  // The live step of the same stream is faster (its KV read is smaller).
  const nlohmann::json live =
      run(write_yaml("live", "name: live\n" + head + stream), {"workload.requests.decode_step=live"});
  CHECK(live["result"]["inference"]["stream"]["tpot_s"]["p50"].get<double>() < full_step);
}

}  // namespace test_server_shape
