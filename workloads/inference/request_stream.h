#pragma once
// A stream of serving requests (`workload.requests`, docs/serving.md
// "Request stream"): arrivals, each request's prompt and output lengths,
// and the server's batching, replayed over step times the simulator gives.
// The scheduler here is pure (it takes the step times as functions), so it
// is tested against schedules worked out by hand; the inference workload
// hands it simulated prefill and decode steps.
#include <cstdint>
#include <functional>
#include <vector>

#include "models/transformer.h"
#include "sim/params.h"

namespace workloads {

enum class Batching { continuous, static_batch };
const sim::EnumNames<Batching>& batching_names();

// Chunked prefill (Sarathi-Serve, Agrawal et al., OSDI 2024; vLLM's
// enable_chunked_prefill with max_num_batched_tokens): each step takes at
// most `max_batched_tokens` tokens, every running decode's one first and
// prompt chunks the rest (0: prefills run whole, stalling the decode).
struct ChunkedPrefill {
  std::uint64_t max_batched_tokens = 0;
};

// How a server without chunked prefill runs the prompts it admits.
// JetStream's orchestrator (AI-Hypercomputer/JetStream
// jetstream/core/orchestrator.py, _prefill_thread) prefills one request at
// a time (batch 1), its tokens padded up to the nearest of a list of
// lengths (jetstream/engine/token_utils.py, tokenize_and_pad: 16, 32, ...,
// up to the server's max_prefill_length).
struct PrefillPolicy {
  std::uint64_t batch = 0;             // requests a prefill step at most; 0: every admitted one of a length
  std::vector<std::uint64_t> buckets;  // increasing; empty: prompts run unpadded
  // The length a prompt of `length` tokens runs at: the smallest bucket at
  // least as long (the loader checks one is).
  std::uint64_t padded(std::uint64_t length) const;
};

// What a decode step runs. live: the running sequences, each over its
// cache so far (ragged or paged attention). fixed: one compiled shape, every
// slot of the replica over the whole cache (model.seq_len tokens), empty
// slots and unwritten positions masked rather than skipped, as
// JetStream-PyTorch's generate step did through 2024 (jetstream_pt/engine.py
// and layers.py at 84ac213: the cache is one (batch, heads,
// max_cache_length, head_dim) array per layer, attended whole).
enum class DecodeStep { live, fixed };
const sim::EnumNames<DecodeStep>& decode_step_names();

struct RequestStreamSpec {
  std::uint64_t count = 0;  // 0: no stream
  double rate = 0;          // requests per second (Poisson); 0: all arrive at once
  // Each request's lengths, drawn uniformly from these values.
  std::vector<std::uint64_t> prompt_len, decode_len;
  std::uint64_t seed = 1;
  Batching batching = Batching::continuous;
  // Chips of the prefill pool (0: prefill and decode share every replica).
  std::uint64_t prefill_chips = 0;
  // Closed-loop clients (0: open loop, arrivals at `rate`): each sends its
  // next request when its previous one has finished.
  std::uint64_t concurrency = 0;
  // The first `warmup` requests are served but left out of the metrics.
  std::uint64_t warmup = 0;
  ChunkedPrefill chunked;
  PrefillPolicy prefill;
  DecodeStep decode_step = DecodeStep::live;
};
const sim::ParamTable<ChunkedPrefill>& chunked_prefill_params();
const sim::ParamTable<PrefillPolicy>& prefill_policy_params();
const sim::ParamTable<RequestStreamSpec>& request_stream_params();

struct Request {
  double arrival_s = 0;
  std::uint64_t prompt_len = 0, decode_len = 0;
};

// The requests of a stream, in arrival order. Gaps between arrivals are
// exponential with mean 1 / rate (inverse transform of 53-bit uniforms from
// std::mt19937_64, so the stream is the same on every platform); lengths
// are picked uniformly from the lists.
std::vector<Request> generate_requests(const RequestStreamSpec& spec);

// What the server's steps cost, in seconds: a prefill of `sequences`
// prompts of `prompt_len` tokens each (one batch), and a decode step of
// `batch` sequences whose caches hold `mean_context` tokens on average.
struct StepCosts {
  std::function<double(std::uint64_t sequences, std::uint64_t prompt_len)> prefill_s;
  std::function<double(std::uint64_t batch, double mean_context)> decode_s;
  // Chunked prefill only: a step of `batch` decoding sequences (their mean
  // context as decode_s's; batch 0: none) and the prompt chunks `chunks`.
  std::function<double(std::uint64_t batch, double mean_context, const std::vector<models::PromptChunk>& chunks)>
      mixed_s;
  // Disaggregated serving only: moving request `request`'s KV cache of
  // `prompt_len` tokens from its prefill replica to its decode replica.
  std::function<double(std::size_t request, std::uint64_t prompt_len)> kv_transfer_s;
  // Called with the end of every step and transfer the scheduler stamps (the
  // stream's simulated time): the caller's budgets (limits.max_sim_time,
  // max_wall_time, progress lines) act inside the scheduler's loops, and
  // may end the run by throwing. Unset: no check.
  std::function<void(double t)> at_step;
};

struct RequestOutcome {
  double arrival_s = 0, first_token_s = 0, finish_s = 0;  // arrival: when its client sent it
  std::uint64_t prompt_len = 0, decode_len = 0;
  // When each decode step's token came (decode_len of them, after the
  // first token's): the inter-token latencies are their gaps.
  std::vector<double> token_s;
  double ttft_s() const { return first_token_s - arrival_s; }
  // Time per output token after the first: the decode steps' span over
  // their count.
  double tpot_s() const { return (finish_s - first_token_s) / double(decode_len); }
};

// Disaggregated serving: one request's KV transfer as the stream ran it.
struct KvTransfer {
  std::size_t request = 0;                              // in arrival order
  std::uint64_t prefill_server = 0, decode_server = 0;  // replicas, counted within their pools
  double start_s = 0, time_s = 0;
};

struct StreamRun {
  std::vector<RequestOutcome> requests;  // in arrival order
  std::vector<KvTransfer> transfers;     // disaggregated: per decode replica, in the order they ran
  double makespan_s = 0;                 // first arrival to last finish
  std::uint64_t prefill_steps = 0, decode_steps = 0;
  double prefill_s = 0, decode_s = 0;  // time spent in each kind of step
  double mean_batch = 0;               // sequences per decode step, averaged over steps
  // Chunked prefill: prompt chunks run, and steps that ran chunks beside
  // decoding sequences (prefill_steps: every step that ran a chunk;
  // decode_steps: every step with a decoding sequence).
  std::uint64_t chunks = 0, mixed_steps = 0;
  double kv_transfer_s = 0;  // disaggregated: the KV transfers' time, summed over requests
};

// Serves `requests` (arrival order) with at most `slots` sequences at once.
// `clients` 0: open loop, each request arrives at its arrival_s. `clients`
// N > 0: a closed loop of N clients (vLLM's and JetStream's benchmark
// clients with --max-concurrency N): the first N requests are sent at the
// first one's arrival_s, and each time a request finishes (its last token,
// at the end of a step) its client sends the next unsent one at once, so
// the others' arrival_s are ignored; RequestOutcome::arrival_s is the send.
// A request's first token comes with its prefill; then one decode step per
// output token (decode_len of them), as `kind: inference` counts them.
// Prefills batch the admitted requests of one prompt length (lengths in
// increasing order; `prefill`: of one padded length, at most prefill.batch
// a step, and with batch 1 one request a step in admission order), and a
// step's context is the tokens a sequence's next
// token attends over: prompt + tokens generated so far + 1.
//  continuous: iteration-level scheduling (Orca, OSDI 2022; vLLM): before
//    each step, requests that have arrived take the free slots and are
//    prefilled first, stalling the running sequences' decode (no chunking);
//    a finished sequence frees its slot at once.
//  static_batch: when the server is idle, it takes up to `slots` requests
//    that have arrived, prefills them and decodes until the longest is done;
//    finished sequences keep their slots (padding), so every step of the
//    batch runs at its starting batch size.
StreamRun serve_requests(const std::vector<Request>& requests, std::uint64_t slots, Batching batching,
                         const StepCosts& costs, std::uint64_t clients = 0, const PrefillPolicy& prefill = {});

// Continuous batching with chunked prefill, `max_batched_tokens` a step
// (at least `slots`, so that every decode fits): before each step, arrivals
// take the free slots (arrival order); the step gives each decoding
// sequence its one token first, then the prompts being prefilled, in
// admission order, a chunk each of what is left of the budget (a prompt's
// chunks run in consecutive steps while the budget lasts). A step with no
// chunk costs decode_s, one with chunks mixed_s. A request's first token
// comes at the end of the step that runs its prompt's last chunk; it
// decodes from the next step. `clients` as serve_requests.
StreamRun serve_chunked(const std::vector<Request>& requests, std::uint64_t slots, std::uint64_t max_batched_tokens,
                        const StepCosts& costs, std::uint64_t clients = 0);

// Disaggregated serving (DistServe, Zhong et al., OSDI 2024; Splitwise,
// Patel et al., ISCA 2024): `prefill_servers` replicas only prefill,
// `decode_servers` replicas only decode, each with `slots` sequences.
//  prefill pool: the replica free first takes up to `slots` requests that
//    have arrived (arrival order) and prefills them as the continuous
//    scheduler does (one step per prompt length, shorter first).
//  KV transfer: requests go to the decode replicas in turn, in the order
//    their prefills end; a request takes a free decode slot (first come,
//    first served), then its cache crosses that replica's incoming link,
//    one transfer after another, in costs.kv_transfer_s(request, prompt_len).
//  decode pool: continuous batching that no prefill ever stalls; a request
//    whose cache has landed joins before the next step. Its first token is
//    counted when it joins (prefill, transfer and the wait for the step in
//    flight: TTFT), so its TPOT is its decode steps' mean.
struct Pools {
  std::uint64_t prefill_servers = 1, decode_servers = 1, slots = 1;
};
StreamRun serve_disaggregated(const std::vector<Request>& requests, const Pools& pools, const StepCosts& costs);

// The nearest-rank percentile (the smallest value with at least p% of the
// values at or below it), of a non-empty list.
double percentile(std::vector<double> values, double p);

}  // namespace workloads
