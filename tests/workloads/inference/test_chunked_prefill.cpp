// Chunked prefill (requests.chunked_prefill): the scheduler against
// schedules worked out by hand (a long prompt arriving during decode: its
// chunks, the decode steps they share, each step's tokens), the mixed
// step's model against a hand count of its FLOPs, and a stream of simulated
// mixed steps.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/transformer.h"
#include "serving_model.h"
#include "workloads/experiment_fixture.h"
#include "workloads/inference/request_stream.h"

namespace test_chunked_prefill {

using namespace workloads;
using namespace testing_serving;
using models::PromptChunk;
using testing_workloads::run;
using testing_workloads::write_yaml;

namespace {

// One step as the scheduler asked for it.
struct Step {
  std::uint64_t batch = 0;
  double context = 0;
  std::vector<PromptChunk> chunks;
};

// A decode step costs 0.1 s; a step with chunks 0.1 s + 0.01 s per chunk
// token. Every step asked for is recorded in `log`.
StepCosts logged_costs(std::vector<Step>& log) {
  StepCosts c;
  c.decode_s = [&log](std::uint64_t batch, double context) {
    log.push_back({batch, context, {}});
    return 0.1;
  };
  c.mixed_s = [&log](std::uint64_t batch, double context, const std::vector<PromptChunk>& chunks) {
    log.push_back({batch, context, chunks});
    double tokens = 0;
    for (const PromptChunk& k : chunks) tokens += double(k.tokens);
    return 0.1 + 0.01 * tokens;
  };
  return c;
}

std::uint64_t step_tokens(const Step& s) {
  std::uint64_t n = s.batch;
  for (const PromptChunk& k : s.chunks) n += k.tokens;
  return n;
}

}  // namespace

TEST_CASE("chunked prefill: a long prompt arriving during decode", "[inference][stream][chunked]") {
  // 8 tokens a step, 4 slots. A (prompt 4, 6 tokens) at 0: one chunk of 4
  // (0.14 s), first token at 0.14; decode steps end 0.24, 0.34, 0.44. B
  // (prompt 10, 2 tokens) arrives at 0.35, during the third: from 0.44 each
  // step gives A its token first and B the other 7, then the last 3 (after
  // the 7 in the cache): steps of 0.17 and 0.13 s, ending 0.61 and 0.74,
  // when B's first token comes. Then two decode steps: 0.84 (A's sixth
  // token, A done) and 0.94 (B done).
  std::vector<Step> log;
  const std::vector<Request> reqs = {{0.0, 4, 6}, {0.35, 10, 2}};
  const StreamRun r = serve_chunked(reqs, 4, 8, logged_costs(log));
  const std::uint64_t tokens[] = {4, 1, 1, 1, 8, 4, 2, 1};
  REQUIRE(log.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) CHECK(step_tokens(log[i]) == tokens[i]);
  // B's two chunks and the decode steps they share with A (context: prompt
  // 4 + 3 tokens generated + 1, then + 1).
  CHECK(log[4].batch == 1);
  CHECK(log[4].context == 8);
  CHECK(log[4].chunks == std::vector<PromptChunk>{{7, 0}});
  CHECK(log[5].batch == 1);
  CHECK(log[5].context == 9);
  CHECK(log[5].chunks == std::vector<PromptChunk>{{3, 7}});
  CHECK(log[0].chunks == std::vector<PromptChunk>{{4, 0}});
  CHECK(log[0].batch == 0);
  CHECK(r.chunks == 3);
  CHECK(r.mixed_steps == 2);
  CHECK(r.prefill_steps == 3);
  CHECK(r.decode_steps == 7);
  CHECK(r.requests[0].first_token_s == Approx(0.14));
  CHECK(r.requests[0].finish_s == Approx(0.84));
  CHECK(r.requests[0].tpot_s() == Approx(0.70 / 6));
  REQUIRE(r.requests[0].token_s.size() == 6);
  CHECK(r.requests[0].token_s[3] == Approx(0.61));  // gaps 0.1, 0.1, 0.1, 0.17, 0.13, 0.1
  CHECK(r.requests[1].ttft_s() == Approx(0.74 - 0.35));
  CHECK(r.requests[1].finish_s == Approx(0.94));
  CHECK(r.makespan_s == Approx(0.94));
}

TEST_CASE("chunked prefill: prompts share a step's budget in admission order", "[inference][stream][chunked]") {
  // 8 tokens a step; A and B (prompt 5, 1 token) at 0. Step 1: A's 5 and
  // B's first 3; step 2: A's token, B's last 2; step 3: B's token.
  std::vector<Step> log;
  const std::vector<Request> reqs = {{0.0, 5, 1}, {0.0, 5, 1}};
  const StreamRun r = serve_chunked(reqs, 4, 8, logged_costs(log));
  REQUIRE(log.size() == 3);
  CHECK(log[0].chunks == std::vector<PromptChunk>{{5, 0}, {3, 0}});
  CHECK(log[1].batch == 1);
  CHECK(log[1].chunks == std::vector<PromptChunk>{{2, 3}});
  CHECK(log[2].batch == 1);
  CHECK(log[2].chunks.empty());
  CHECK(r.requests[0].first_token_s == Approx(0.18));
  CHECK(r.requests[0].finish_s == Approx(0.18 + 0.12));
  CHECK(r.requests[1].first_token_s == Approx(0.30));
  CHECK(r.requests[1].finish_s == Approx(0.40));
}

TEST_CASE("chunked prefill: closed-loop clients send into the chunked server", "[inference][stream][chunked]") {
  // One client, 8 tokens a step: A (prompt 4, 1 token): chunk 0.14, decode
  // 0.24, done; B sent at 0.24: chunk 0.38, decode 0.48.
  std::vector<Step> log;
  const StreamRun r = serve_chunked({{0.0, 4, 1}, {0.0, 4, 1}}, 2, 8, logged_costs(log), 1);
  CHECK(r.requests[1].arrival_s == Approx(0.24));
  CHECK(r.requests[1].ttft_s() == Approx(0.14));
  CHECK(r.makespan_s == Approx(0.48));
}

TEST_CASE("chunked prefill: the mixed step's FLOPs by hand", "[inference][chunked][shapes]") {
  // 3 decoding sequences at context 100 and a chunk of 7 prompt tokens
  // after 20 cached: 10 rows through every weight matmul, logits for 3 + 1
  // rows; attention per block: the decode's 2 matmuls x 2 FLOPs x heads x
  // head_dim per cached key of each sequence, the chunk's per key each of
  // its queries sees (20 + j for the j-th, 7 x 24 in all).
  const Dense d{2, 1024, 4096, 16, 4, 64, 32000};
  models::TransformerConfig cfg;
  cfg.layers = 2, cfg.d_model = 1024, cfg.d_ff = 4096, cfg.heads = 16, cfg.kv_heads = 4, cfg.head_dim = 64;
  cfg.seq_len = 4096, cfg.vocab = 32000, cfg.mlp = "swiglu", cfg.attention = "flash";
  const models::ModelSpec m = models::build_transformer_mixed(cfg, 3, 100, {{7, 20}});
  double flops = 0;
  for (const auto& layer : m.layers)
    for (const auto& mm : layer.forward) flops += mm.flops();
  const double weights = 2.0 * 10 * double(d.layers * d.block_matrix_params()) + 2.0 * 4 * double(d.d_model * d.vocab);
  const double attention = 2.0 * 2 * 2 * 16 * 64 * (3 * 100 + 7 * 24);
  CHECK(flops == Approx(weights + attention).epsilon(1e-12));
  // No chunks: the decode step itself.
  const models::ModelSpec plain = models::build_transformer_mixed(cfg, 3, 100, {});
  const models::ModelSpec decode = models::build_transformer_decode(cfg, 3, 100);
  REQUIRE(plain.layers.size() == decode.layers.size());
  for (std::size_t i = 0; i < plain.layers.size(); ++i)
    CHECK(plain.layers[i].forward.size() == decode.layers[i].forward.size());
}

TEST_CASE("chunked prefill: a stream of simulated mixed steps", "[inference][stream][chunked]") {
  // Four requests at once into four slots, prompt 1024, 64 tokens, 512
  // tokens a step. Step 1: A 512 (all four admitted); 2: A's last 512 (A's
  // first token); 3, 4: A's token and B 511, 511; 5: A's token, B's last
  // 2, C 509; 6: A, B, C 510; 7: A, B, C's last 5, D 505; 8: A, B, C, D
  // 509; 9: A, B, C, D's last 10. So 11 chunks in 9 steps, 7 of them beside
  // decode tokens; A decodes in steps 3..66, B 6..69, C 8..71, D 10..73:
  // 71 steps with decode tokens. Pod runs: the two chunk-only steps, the
  // seven mixed steps at the stream's shortest and longest context (14),
  // and the decode steps of 4, 3, 2 and 1 sequences at both (8).
  const Dense model{2, 1024, 4096, 16, 4, 64, 32000};
  const std::string head = "name: chunked\nchip: tpu-v5e\nworkload:\n  kind: inference\n  model: " + model.yaml(4096) +
                           "\n  batch: 4\n  prompt_len: 1024\n  decode_len: 64\n";
  const nlohmann::json r =
      run(write_yaml("chunked", head + "  requests: {count: 4, prompt_len: 1024, decode_len: 64, chunked_prefill: "
                                       "{max_batched_tokens: 512}}\n"))["result"]["inference"]["stream"];
  CHECK(r["chunked_prefill"]["max_batched_tokens"] == 512);
  CHECK(r["chunked_prefill"]["chunks"] == 11);
  CHECK(r["chunked_prefill"]["mixed_steps"] == 7);
  CHECK(r["prefill_steps"] == 9);
  CHECK(r["decode_steps"] == 71);
  CHECK(r["steps_simulated"] == 24);
}

}  // namespace test_chunked_prefill
