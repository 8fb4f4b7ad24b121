#include "workloads/inference/request_stream.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <stdexcept>
#include <utility>

#include "sim/random.h"

namespace workloads {

namespace {

const sim::Range kLengths = sim::between(1, 1 << 24);

std::uint64_t pick(std::mt19937_64& rng, const std::vector<std::uint64_t>& values) {
  return values[std::size_t(sim::uniform01(rng) * double(values.size()))];
}

// A running sequence.
struct Sequence {
  std::size_t request = 0;
  std::uint64_t generated = 0;  // decode steps done
};

// Prefills `admitted` (request indices) as one step per padded prompt
// length, in increasing length, at most `policy.batch` requests a step
// (batch 1: one request a step in admission order, JetStream's prefill
// thread taking its backlog first in, first out); each request's first
// token comes at the end of its own step.
double prefill(const std::vector<Request>& requests, const std::vector<std::size_t>& admitted, double t,
               const StepCosts& costs, StreamRun& run, const PrefillPolicy& policy = {}) {
  std::vector<std::pair<std::uint64_t, std::vector<std::size_t>>> steps;
  if (policy.batch == 1) {
    for (std::size_t r : admitted) steps.push_back({policy.padded(requests[r].prompt_len), {r}});
  } else {
    std::map<std::uint64_t, std::vector<std::size_t>> by_length;
    for (std::size_t r : admitted) by_length[policy.padded(requests[r].prompt_len)].push_back(r);
    for (const auto& [length, group] : by_length) {
      const std::size_t per_step = policy.batch > 0 ? policy.batch : group.size();
      for (std::size_t at = 0; at < group.size(); at += per_step)
        steps.push_back({length,
                         {group.begin() + std::ptrdiff_t(at),
                          group.begin() + std::ptrdiff_t(std::min(group.size(), at + per_step))}});
    }
  }
  for (const auto& [length, group] : steps) {
    const double dt = costs.prefill_s(group.size(), length);
    t += dt;
    if (costs.at_step) costs.at_step(t);
    run.prefill_s += dt;
    ++run.prefill_steps;
    for (std::size_t r : group) run.requests[r].first_token_s = t;
  }
  return t;
}

// One step of `running` and the prompt chunks `chunks` (none: a decode
// step); `padded` sequences (finished, still holding a slot) count in the
// batch and keep growing their context. Returns the step's end.
double step(const std::vector<Request>& requests, std::vector<Sequence>& running,
            const std::vector<models::PromptChunk>& chunks, double t, const StepCosts& costs, StreamRun& run) {
  double context = 0;
  for (const Sequence& s : running) context += double(requests[s.request].prompt_len + s.generated + 1);
  const std::uint64_t batch = running.size();
  const double mean_context = batch > 0 ? context / double(batch) : 0.0;
  const double dt = chunks.empty() ? costs.decode_s(batch, mean_context) : costs.mixed_s(batch, mean_context, chunks);
  t += dt;
  if (costs.at_step) costs.at_step(t);
  if (chunks.empty()) {
    run.decode_s += dt;
  } else {
    run.prefill_s += dt;
    ++run.prefill_steps;
    run.chunks += chunks.size();
    run.mixed_steps += batch > 0;
  }
  if (batch > 0) {
    run.mean_batch += double(batch);
    ++run.decode_steps;
  }
  for (Sequence& s : running) {
    ++s.generated;
    if (s.generated > requests[s.request].decode_len) continue;  // a static batch's padding
    run.requests[s.request].token_s.push_back(t);
    if (s.generated == requests[s.request].decode_len) run.requests[s.request].finish_s = t;
  }
  return t;
}

double decode(const std::vector<Request>& requests, std::vector<Sequence>& running, double t, const StepCosts& costs,
              StreamRun& run) {
  return step(requests, running, {}, t, costs, run);
}

// A closed loop of `clients` (serve_requests): requests past the first
// `clients` have not been sent; returns how many have.
std::size_t hold_unsent(std::vector<Request>& requests, std::uint64_t clients) {
  if (clients == 0) return requests.size();
  const std::size_t sent = std::min<std::size_t>(clients, requests.size());
  for (std::size_t r = sent; r < requests.size(); ++r) requests[r].arrival_s = HUGE_VAL;
  return sent;
}

// After a step ending at `t`: the client of each request whose last token
// it gave sends the next unsent request (a static batch's padded slots
// were answered before).
void answer(std::vector<Request>& requests, const std::vector<Sequence>& running, double t, std::size_t& sent,
            StreamRun& run) {
  for (const Sequence& s : running) {
    if (s.generated != requests[s.request].decode_len || sent == requests.size()) continue;
    requests[sent].arrival_s = run.requests[sent].arrival_s = t;
    ++sent;
  }
}

// Whether the sequence has generated all its tokens.
bool finished(const std::vector<Request>& requests, const Sequence& s) {
  return s.generated >= requests[s.request].decode_len;
}

// Drops the finished sequences from `running`; returns how many.
std::size_t retire(const std::vector<Request>& requests, std::vector<Sequence>& running) {
  const std::size_t before = running.size();
  running.erase(
      std::remove_if(running.begin(), running.end(), [&requests](const Sequence& s) { return finished(requests, s); }),
      running.end());
  return before - running.size();
}

StreamRun outcomes(const std::vector<Request>& requests) {
  StreamRun run;
  run.requests.resize(requests.size());
  for (std::size_t r = 0; r < requests.size(); ++r) {
    run.requests[r].arrival_s = requests[r].arrival_s;
    run.requests[r].prompt_len = requests[r].prompt_len;
    run.requests[r].decode_len = requests[r].decode_len;
  }
  return run;
}

void finish(const std::vector<Request>& requests, StreamRun& run) {
  if (run.decode_steps > 0) run.mean_batch /= double(run.decode_steps);
  for (const RequestOutcome& o : run.requests) run.makespan_s = std::max(run.makespan_s, o.finish_s);
  if (!requests.empty()) run.makespan_s -= requests.front().arrival_s;
}

// One decode replica of disaggregated serving: `mine` (request indices, in
// the order their prefills end, at `prefilled`) into `slots`.
void serve_decode_replica(const std::vector<Request>& requests, const std::vector<std::size_t>& mine,
                          const std::vector<double>& prefilled, const std::vector<std::uint64_t>& prefill_server,
                          std::uint64_t server, std::uint64_t slots, const StepCosts& costs, StreamRun& run) {
  if (mine.empty()) return;
  std::deque<std::size_t> pending(mine.begin(), mine.end());
  std::vector<std::pair<double, std::size_t>> landing;  // (cache landed, request), in transfer order
  std::vector<Sequence> running;
  double t = prefilled[mine.front()], link_free = t;
  std::size_t done = 0;
  while (done < mine.size()) {
    // Slots free up only at step ends, so a slot taken at t has been free
    // since t at the latest; the transfer starts once the prefill is done
    // and the link is free.
    while (!pending.empty() && running.size() + landing.size() < slots) {
      const std::size_t r = pending.front();
      pending.pop_front();
      const double dt = costs.kv_transfer_s(r, requests[r].prompt_len);
      const double start = std::max({prefilled[r], link_free, t});
      run.transfers.push_back({r, prefill_server[r], server, start, dt});
      link_free = start + dt;
      if (costs.at_step) costs.at_step(link_free);
      run.kv_transfer_s += dt;
      landing.push_back({link_free, r});
    }
    if (running.empty() && !landing.empty()) t = std::max(t, landing.front().first);
    // Transfers end in the order they started (one link, one at a time).
    while (!landing.empty() && landing.front().first <= t) {
      running.push_back({landing.front().second, 0});
      run.requests[landing.front().second].first_token_s = t;
      landing.erase(landing.begin());
    }
    t = decode(requests, running, t, costs, run);
    done += retire(requests, running);
  }
}

}  // namespace

const sim::EnumNames<Batching>& batching_names() {
  static const sim::EnumNames<Batching> names(
      "batching", {{Batching::continuous, "continuous",
                    "iteration-level: arrivals take free slots before each step and are prefilled first (Orca, vLLM)"},
                   {Batching::static_batch, "static",
                    "a batch starts when the server is idle and runs until its longest sequence is done"}});
  return names;
}

const sim::ParamTable<ChunkedPrefill>& chunked_prefill_params() {
  static const sim::ParamTable<ChunkedPrefill> t = [] {
    sim::ParamTable<ChunkedPrefill> p("chunked_prefill",
                                      "chunked prefill (Sarathi-Serve, OSDI 2024; vLLM's enable_chunked_prefill): "
                                      "each step runs every decoding sequence's token first, then prompt chunks "
                                      "up to a token budget");
    p.integer<std::uint64_t>("max_batched_tokens", &ChunkedPrefill::max_batched_tokens, "tokens", std::nullopt,
                             sim::between(1, 1 << 24),
                             "tokens a step processes at most (vLLM's max_num_batched_tokens), decode tokens "
                             "first; at least the slots per replica, so that every decode fits");
    return p;
  }();
  return t;
}

std::uint64_t PrefillPolicy::padded(std::uint64_t length) const {
  const auto at = std::lower_bound(buckets.begin(), buckets.end(), length);
  if (buckets.empty()) return length;
  if (at == buckets.end()) throw std::invalid_argument("prefill: a prompt longer than every bucket");
  return *at;
}

const sim::EnumNames<DecodeStep>& decode_step_names() {
  static const sim::EnumNames<DecodeStep> names(
      "decode step", {{DecodeStep::live, "live", "a step runs the sequences decoding, each over its cache so far"},
                      {DecodeStep::fixed, "fixed",
                       "one compiled shape: every slot of the replica over the whole cache (model.seq_len), "
                       "empty slots and positions masked, not skipped (JetStream-PyTorch's generate, 2024)"}});
  return names;
}

const sim::ParamTable<PrefillPolicy>& prefill_policy_params() {
  static const sim::ParamTable<PrefillPolicy> t = [] {
    sim::ParamTable<PrefillPolicy> p("prefill",
                                     "how whole prefills run: requests a step and the lengths prompts are padded "
                                     "to (JetStream: one request a step, padded to a power of two)");
    p.integer<std::uint64_t>("batch", &PrefillPolicy::batch, "requests", 0, sim::between(1, 1 << 20),
                             "requests a prefill step at most (JetStream's orchestrator: 1, in arrival order); "
                             "absent: every admitted request of one length in one step")
        .list("buckets", &PrefillPolicy::buckets, sim::integer_item<std::uint64_t>("tokens", kLengths), {1, 64, false},
              "prompts run unpadded",
              "increasing lengths a prompt is padded up to, the smallest that holds it (JetStream's "
              "token_utils: 16, 32, ..., max_prefill_length)");
    return p;
  }();
  return t;
}

const sim::ParamTable<RequestStreamSpec>& request_stream_params() {
  static const sim::ParamTable<RequestStreamSpec> t = [] {
    sim::ParamTable<RequestStreamSpec> p(
        "requests",
        "a stream of requests served with at most `batch` sequences at once: time to first token and time per "
        "output token per request (p50, p99), tokens/s");
    p.integer<std::uint64_t>("count", &RequestStreamSpec::count, "requests", std::nullopt, sim::between(1, 100000),
                             "requests in the stream")
        .real("rate", &RequestStreamSpec::rate, "1/s", 0.0, sim::at_least(0),
              "mean arrivals per second (Poisson: exponential gaps); 0: every request arrives at time 0")
        .list("prompt_len", &RequestStreamSpec::prompt_len, sim::integer_item<std::uint64_t>("tokens", kLengths),
              {1, 64, true}, nullptr, "each request's prompt length, picked uniformly from these values")
        .list("decode_len", &RequestStreamSpec::decode_len, sim::integer_item<std::uint64_t>("tokens", kLengths),
              {1, 64, true}, nullptr, "each request's output tokens, picked uniformly from these values")
        .integer<std::uint64_t>("seed", &RequestStreamSpec::seed, "", 1, sim::between(0, 1e18),
                                "seeds the arrivals and lengths (same seed, same stream)")
        .enumeration("batching", &RequestStreamSpec::batching, batching_names(), Batching::continuous,
                     "how requests join the running batch")
        .integer<std::uint64_t>("prefill_chips", &RequestStreamSpec::prefill_chips, "chips", 0,
                                sim::between(1, 1 << 20),
                                "disaggregated serving (DistServe, OSDI 2024; Splitwise, ISCA 2024): this many chips "
                                "(whole model replicas) only prefill and the rest only decode, each request's KV "
                                "cache crossing between them over ICI (one slice) or DCN (whole slices); absent (0): "
                                "every replica does both")
        .integer<std::uint64_t>("concurrency", &RequestStreamSpec::concurrency, "clients", 0, sim::between(1, 100000),
                                "closed loop (vLLM's and JetStream's benchmark clients, --max-concurrency): this many "
                                "clients, each sending its next request when its previous one has finished (TTFT "
                                "from the send); absent (0): open loop, arrivals at `rate`")
        .integer<std::uint64_t>("warmup", &RequestStreamSpec::warmup, "requests", 0, sim::between(0, 100000),
                                "the first this many requests are served but left out of the latencies and "
                                "throughputs, which then span the first measured send to the last measured finish")
        .optional_group("chunked_prefill", &RequestStreamSpec::chunked, chunked_prefill_params(),
                        "none: each prefill runs whole before the next step, stalling the decode")
        .optional_group("prefill", &RequestStreamSpec::prefill, prefill_policy_params(),
                        "every admitted request of one length in one step, unpadded")
        .enumeration("decode_step", &RequestStreamSpec::decode_step, decode_step_names(), DecodeStep::live,
                     "what a decode step runs: the live sequences over their caches, or the server's one fixed "
                     "shape (every slot over the whole cache)");
    return p;
  }();
  return t;
}

std::vector<Request> generate_requests(const RequestStreamSpec& spec) {
  std::mt19937_64 rng(spec.seed);
  std::vector<Request> out(spec.count);
  double t = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (spec.rate > 0 && i > 0) t += -std::log1p(-sim::uniform01(rng)) / spec.rate;
    out[i].arrival_s = t;
    out[i].prompt_len = pick(rng, spec.prompt_len);
    out[i].decode_len = pick(rng, spec.decode_len);
  }
  return out;
}

StreamRun serve_requests(const std::vector<Request>& given, std::uint64_t slots, Batching batching,
                         const StepCosts& costs, std::uint64_t clients, const PrefillPolicy& policy) {
  if (slots == 0) throw std::invalid_argument("serve_requests: no slots");
  std::vector<Request> requests = given;
  std::size_t sent = hold_unsent(requests, clients);
  StreamRun run = outcomes(requests);
  std::deque<std::size_t> waiting;
  std::vector<Sequence> running;
  std::size_t next = 0, done = 0;
  double t = requests.empty() ? 0 : requests.front().arrival_s;
  while (done < requests.size()) {
    while (next < requests.size() && requests[next].arrival_s <= t) waiting.push_back(next++);
    if (running.empty() && waiting.empty()) {
      t = requests[next].arrival_s;
      if (costs.at_step) costs.at_step(t);
      continue;
    }
    const bool admit = batching == Batching::continuous ? running.size() < slots : running.empty();
    if (admit && !waiting.empty()) {
      std::vector<std::size_t> admitted;
      while (!waiting.empty() && running.size() < slots) {
        admitted.push_back(waiting.front());
        running.push_back({waiting.front(), 0});
        waiting.pop_front();
      }
      t = prefill(requests, admitted, t, costs, run, policy);
      continue;
    }
    t = decode(requests, running, t, costs, run);
    answer(requests, running, t, sent, run);
    // Continuous batching frees a slot as soon as its sequence is done;
    // a static batch ends when all of them are.
    if (batching == Batching::continuous) {
      done += retire(requests, running);
    } else if (std::all_of(running.begin(), running.end(),
                           [&requests](const Sequence& s) { return finished(requests, s); })) {
      done += running.size();
      running.clear();
    }
  }
  finish(requests, run);
  return run;
}

StreamRun serve_chunked(const std::vector<Request>& given, std::uint64_t slots, std::uint64_t max_batched_tokens,
                        const StepCosts& costs, std::uint64_t clients) {
  if (slots == 0 || max_batched_tokens < slots)
    throw std::invalid_argument("serve_chunked: fewer tokens a step than slots");
  std::vector<Request> requests = given;
  std::size_t sent = hold_unsent(requests, clients);
  StreamRun run = outcomes(requests);
  struct Prefilling {
    std::size_t request = 0;
    std::uint64_t done = 0;  // prompt tokens in the cache
  };
  std::deque<std::size_t> waiting;
  std::vector<Prefilling> prefilling;  // admission order
  std::vector<Sequence> running;       // decoding
  std::size_t next = 0, done = 0;
  double t = requests.empty() ? 0 : requests.front().arrival_s;
  while (done < requests.size()) {
    while (next < requests.size() && requests[next].arrival_s <= t) waiting.push_back(next++);
    if (running.empty() && prefilling.empty() && waiting.empty()) {
      t = requests[next].arrival_s;
      if (costs.at_step) costs.at_step(t);
      continue;
    }
    while (!waiting.empty() && running.size() + prefilling.size() < slots) {
      prefilling.push_back({waiting.front(), 0});
      waiting.pop_front();
    }
    // Decode tokens first (one per running sequence), then chunks.
    std::uint64_t budget = max_batched_tokens - running.size();
    std::vector<models::PromptChunk> chunks;
    for (Prefilling& p : prefilling) {
      if (budget == 0) break;
      const std::uint64_t take = std::min(requests[p.request].prompt_len - p.done, budget);
      chunks.push_back({take, p.done});
      p.done += take;
      budget -= take;
    }
    t = step(requests, running, chunks, t, costs, run);
    answer(requests, running, t, sent, run);
    done += retire(requests, running);
    // Prompts whose last chunk ran give their first token and decode next.
    for (const Prefilling& p : prefilling)
      if (p.done == requests[p.request].prompt_len) {
        run.requests[p.request].first_token_s = t;
        running.push_back({p.request, 0});
      }
    prefilling.erase(
        std::remove_if(prefilling.begin(), prefilling.end(),
                       [&requests](const Prefilling& p) { return p.done == requests[p.request].prompt_len; }),
        prefilling.end());
  }
  finish(requests, run);
  return run;
}

StreamRun serve_disaggregated(const std::vector<Request>& requests, const Pools& pools, const StepCosts& costs) {
  if (pools.prefill_servers == 0 || pools.decode_servers == 0 || pools.slots == 0)
    throw std::invalid_argument("serve_disaggregated: an empty pool");
  StreamRun run = outcomes(requests);
  // The prefill pool: prefill() stamps each request's prefill end.
  std::vector<double> free_at(pools.prefill_servers, requests.empty() ? 0 : requests.front().arrival_s);
  std::vector<std::uint64_t> prefill_server(requests.size(), 0);
  for (std::size_t next = 0; next < requests.size();) {
    const auto server = std::min_element(free_at.begin(), free_at.end());
    const double t = std::max(*server, requests[next].arrival_s);
    std::vector<std::size_t> admitted;
    while (next < requests.size() && requests[next].arrival_s <= t && admitted.size() < pools.slots)
      admitted.push_back(next++);
    for (const std::size_t r : admitted) prefill_server[r] = std::uint64_t(server - free_at.begin());
    *server = prefill(requests, admitted, t, costs, run);
  }
  std::vector<double> prefilled(requests.size());
  std::vector<std::size_t> order(requests.size());
  for (std::size_t r = 0; r < requests.size(); ++r) {
    prefilled[r] = run.requests[r].first_token_s;
    order[r] = r;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&prefilled](std::size_t a, std::size_t b) { return prefilled[a] < prefilled[b]; });
  for (std::uint64_t d = 0; d < pools.decode_servers; ++d) {
    std::vector<std::size_t> mine;
    for (std::size_t k = d; k < order.size(); k += pools.decode_servers) mine.push_back(order[k]);
    serve_decode_replica(requests, mine, prefilled, prefill_server, d, pools.slots, costs, run);
  }
  finish(requests, run);
  return run;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) throw std::invalid_argument("percentile of no values");
  std::sort(values.begin(), values.end());
  const std::size_t rank = std::size_t(std::ceil(p / 100.0 * double(values.size())));
  return values[std::min(values.size(), std::max<std::size_t>(rank, 1)) - 1];
}

}  // namespace workloads
