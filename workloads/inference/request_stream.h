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

#include "sim/params.h"

namespace workloads {

enum class Batching { continuous, static_batch };
const sim::EnumNames<Batching>& batching_names();

struct RequestStreamSpec {
  std::uint64_t count = 0;  // 0: no stream
  double rate = 0;          // requests per second (Poisson); 0: all arrive at once
  // Each request's lengths, drawn uniformly from these values.
  std::vector<std::uint64_t> prompt_len, decode_len;
  std::uint64_t seed = 1;
  Batching batching = Batching::continuous;
  // Chips of the prefill pool (0: prefill and decode share every replica).
  std::uint64_t prefill_chips = 0;
};
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
  // Disaggregated serving only: moving one request's KV cache of
  // `prompt_len` tokens from its prefill replica to its decode replica.
  std::function<double(std::uint64_t prompt_len)> kv_transfer_s;
  // Called with the end of every step and transfer the scheduler stamps (the
  // stream's simulated time): the caller's budgets (limits.max_sim_time,
  // max_wall_time, progress lines) act inside the scheduler's loops, and
  // may end the run by throwing. Unset: no check.
  std::function<void(double t)> at_step;
};

struct RequestOutcome {
  double arrival_s = 0, first_token_s = 0, finish_s = 0;
  std::uint64_t prompt_len = 0, decode_len = 0;
  double ttft_s() const { return first_token_s - arrival_s; }
  // Time per output token after the first: the decode steps' span over
  // their count.
  double tpot_s() const { return (finish_s - first_token_s) / double(decode_len); }
};

struct StreamRun {
  std::vector<RequestOutcome> requests;  // in arrival order
  double makespan_s = 0;                 // first arrival to last finish
  std::uint64_t prefill_steps = 0, decode_steps = 0;
  double prefill_s = 0, decode_s = 0;  // time spent in each kind of step
  double mean_batch = 0;               // sequences per decode step, averaged over steps
  double kv_transfer_s = 0;            // disaggregated: the KV transfers' time, summed over requests
};

// Serves `requests` (arrival order) with at most `slots` sequences at once.
// A request's first token comes with its prefill; then one decode step per
// output token (decode_len of them), as `kind: inference` counts them.
// Prefills batch the admitted requests of one prompt length (lengths in
// increasing order), and a step's context is the tokens a sequence's next
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
                         const StepCosts& costs);

// Disaggregated serving (DistServe, Zhong et al., OSDI 2024; Splitwise,
// Patel et al., ISCA 2024): `prefill_servers` replicas only prefill,
// `decode_servers` replicas only decode, each with `slots` sequences.
//  prefill pool: the replica free first takes up to `slots` requests that
//    have arrived (arrival order) and prefills them as the continuous
//    scheduler does (one step per prompt length, shorter first).
//  KV transfer: requests go to the decode replicas in turn, in the order
//    their prefills end; a request takes a free decode slot (first come,
//    first served), then its cache crosses that replica's incoming link,
//    one transfer after another, in costs.kv_transfer_s(prompt_len).
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
