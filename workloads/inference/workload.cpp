#include "workloads/inference/workload.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/limits.h"
#include "runtime/pod_run.h"
#include "sim/error.h"
#include "sim/host.h"
#include "sim/output.h"
#include "workloads/inference/step_time.h"
#include "workloads/inference/stream_metrics.h"
#include "workloads/pod_report.h"
#include "workloads/report.h"
#include "workloads/train/experts.h"
#include "workloads/train/forward_program.h"
#include "workloads/train/memory.h"
#include "workloads/train/tensor_split.h"
#include "workloads/validation.h"

namespace workloads {

struct StreamStepTimes {
  std::map<std::pair<std::uint64_t, std::uint64_t>, double> prefills, decodes;  // (sequences or batch, length)
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::vector<models::PromptChunk>>, double> mixed;
};

std::shared_ptr<StreamStepTimes> make_stream_step_times() { return std::make_shared<StreamStepTimes>(); }

namespace {

class InferenceWorkload : public Workload {
 public:
  explicit InferenceWorkload(InferenceSpec s) : spec_(std::move(s)) {}
  std::string kind() const override { return "inference"; }
  RunOutput run(const Experiment& exp, const RunOptions& opts) const override {
    return run_inference(exp, spec_, opts);
  }
  const InferenceSpec& spec() const { return spec_; }

 private:
  InferenceSpec spec_;
};

// A mixture of experts' routing in one step (moe_routing; empty without
// experts) over `ep` expert-parallel chips.
struct StepRouting {
  std::vector<models::LayerRouting> layers;  // per block
  std::uint32_t ep = 1;
  // The experts block `b`'s tokens go to (over the expert group).
  std::uint64_t touched(std::uint64_t b) const {
    std::uint64_t n = 0;
    for (std::uint32_t e = 0; e < layers[b].experts; ++e) n += layers[b].kept_by(e) > 0;
    return n;
  }
  // The token-expert pairs block `b`'s experts keep, mean per chip.
  double chip_tokens(std::uint64_t b) const {
    std::uint64_t n = 0;
    for (std::uint32_t e = 0; e < layers[b].experts; ++e) n += layers[b].kept_by(e);
    return double(n) / ep;
  }
};

// Whether `mm` is an expert's matmul (its tokens routed to it).
bool is_expert_matmul(const models::MatmulSpec& mm) { return mm.tokens != models::Dim::none; }

// Elements of the model's parameters on one tensor-parallel rank, and of
// those a step reads whole: all but an embedding table no matmul reads (an
// untied one), of which a step gathers only its tokens' rows, and (a
// mixture of experts) but the experts no token goes to, whose matmuls do
// not run: of a block's E experts the step reads the `touched` its tokens
// go to, so a chip reads its experts' weights x touched / E, on the mean
// over the expert-parallel chips.
struct WeightElements {
  std::uint64_t held = 0;
  double read = 0;
};
WeightElements weight_elements(const models::ModelSpec& model, std::uint32_t tp, const StepRouting& routing = {}) {
  const auto matmul_reads = [&model](const std::string& param) {
    for (const auto& layer : model.layers)
      for (const auto& mm : layer.forward)
        if (mm.weight == param) return true;
    return false;
  };
  WeightElements w;
  for (const auto& layer : model.layers) {
    const auto expert_weight = [&layer](const std::string& param) {
      return std::any_of(layer.forward.begin(), layer.forward.end(),
                         [&](const models::MatmulSpec& mm) { return is_expert_matmul(mm) && mm.weight == param; });
    };
    for (const auto& p : layer.params) {
      const std::uint64_t n = local_param_elements(p, tp);
      w.held += n;
      if (!routing.layers.empty() && expert_weight(p.name)) {
        const models::LayerRouting& r = routing.layers[layer.routing_layer];
        w.read += double(n) * double(routing.touched(layer.routing_layer)) / r.experts;
      } else if (layer.kind != models::LayerKind::embedding || matmul_reads(p.name)) {
        w.read += double(n);
      }
    }
  }
  return w;
}

// FLOPs of the model's forward ops on one tensor-parallel rank; a mixture
// of experts' on the tokens its experts keep (mean per chip) rather than
// the model's even share (models/transformer.cpp sizes each of a chip's
// experts at ceil(tokens x top_k / experts), one token each at batch 1).
double local_flops(const models::ModelSpec& model, std::uint32_t tp, const StepRouting& routing) {
  double f = 0;
  for (const auto& layer : model.layers) {
    const bool routed = !routing.layers.empty() && layer.kind == models::LayerKind::transformer_block;
    for (const auto& mm : layer.forward) {
      const double flops = local_matmul(mm, tp).flops() * mm.causal_fraction();
      f += routed && is_expert_matmul(mm) ? flops / double(mm.count * mm.m) * routing.chip_tokens(layer.routing_layer)
                                          : flops;
    }
    for (const auto& e : layer.elementwise_fwd) {
      const double elements = routed && e.routed_width ? routing.chip_tokens(layer.routing_layer) * e.routed_width
                                                       : double(local_elements(e, tp));
      f += elements * e.flops_per_element;
    }
  }
  return f;
}

struct PhaseRun {
  runtime::PodRunResult run;
  InferenceStep step;
  double pod_flops = 0;
};

// One phase's model as a pod run, and its step split into roofline terms.
PhaseRun run_phase(const Experiment& exp, const InferenceSpec& spec, const models::ModelSpec& model,
                   double kv_bytes_per_chip, const sim::TraceRequest& trace) {
  const std::uint32_t tp = spec.parallelism.tensor.degree;
  const ForwardStep forward = spec.forward_step();
  const StepRouting routing{moe_routing(forward, model), forward.parallelism.expert.degree};
  const StepProgram program = step_program(exp, spec, model, routing.layers);
  PhaseRun r;
  r.run = runtime::run_pod(program.config, program.program.pod, trace);
  const PodSummary s = summarize(exp, r.run);
  const double chips = exp.pod.devices();
  const double hbm = exp.chip.hbm.bandwidth_bytes_per_s;
  InferenceStep& st = r.step;
  st.step_s = r.run.step_time_s;
  st.flops = local_flops(model, tp, routing);
  st.hbm_bytes = s.hbm_bytes / chips;
  st.weights_bytes = weight_elements(model, tp, routing).read * double(hw::element_bytes(spec.dtype.weights));
  if (!routing.layers.empty()) {
    double touched = 0;
    for (std::uint64_t b = 0; b < routing.layers.size(); ++b) touched += double(routing.touched(b));
    st.experts_read = touched / double(routing.layers.size());
  }
  st.kv_bytes = kv_bytes_per_chip;
  st.weights_s = st.weights_bytes / hbm;
  st.kv_s = st.kv_bytes / hbm;
  st.compute_s = st.flops / exp.chip.for_format(spec.mxu_format()).peak_flops_per_s();
  st.communication_s = s.comm_s;
  const double memory_s = st.weights_s + st.kv_s;
  st.bound = st.communication_s > std::max(memory_s, st.compute_s) ? "communication"
             : st.compute_s > memory_s                             ? "compute"
                                                                   : "memory";
  r.pod_flops = st.flops * chips;
  return r;
}

// Disaggregated serving's KV transfer: each of the prefill replica's `tp`
// chips sends its share of the cache (per_token x prompt_len bytes) to its
// counterpart in the decode replica, all at once, as a point-to-point
// message (no collective launch, docs/interconnect.md#launch-cost).
//  one slice: over one ICI link, bytes / link bandwidth + one hop's
//    latency: pools on neighbouring chips (farther pools pay a hop each,
//    and routes may share links: not modelled).
//  slices: DCN uncontended, latency + bytes / min(host link, the NICs
//    shared by the host's sending chips, the slice's fabric share shared by
//    all `tp`), the max-min fair rates docs/interconnect.md#dcn gives.
std::function<double(std::uint64_t)> kv_transfer(const Experiment& exp, std::uint32_t tp, std::uint64_t per_token) {
  if (exp.pod.slices == 1) {
    const double bw = exp.chip.ici.link_bandwidth, hop = exp.chip.ici.link_latency;
    return [=](std::uint64_t prompt_len) { return double(per_token * prompt_len) / bw + hop; };
  }
  const interconnect::DcnConfig dcn = pod_network_config(exp).link.dcn;
  const double per_host = exp.chip.host.chips * exp.pod.devices_per_chip;
  const double hosts = std::ceil(double(exp.pod.slice_chips() * exp.pod.devices_per_chip) / per_host);
  const double bw = std::min({dcn.host_bandwidth, dcn.nic_bandwidth / std::min(per_host, double(tp)),
                              hosts * dcn.nic_bandwidth / dcn.oversubscription / double(tp)});
  const double max_s = exp.limits.max_sim_time_s;
  return [=](std::uint64_t prompt_len) {
    // In closed form, not simulated: held to the simulation's limit here
    // (pod.dcn.nic_bandwidth: 1e-300 gave inf and nan in the report).
    const double bytes = double(per_token * prompt_len), t = dcn.latency + bytes / bw;
    if (!(t <= max_s))
      throw sim::SimFailure("runaway: the KV transfer of a " + std::to_string(prompt_len) + "-token prompt (" +
                            sim::g3(bytes, "B") + " per chip at " + sim::g3(bw, "B/s") + " over DCN) takes " +
                            sim::g3(t, "s") + ", past limits.max_sim_time (" + sim::g3(max_s, "s") + ")");
    return t;
  };
}

// The stream's steps and metrics from the servers' runs: the measured
// requests are all but the first `warmup` (request i is the
// (i / stride)-th of run i mod stride; disaggregated: one run, stride 1).
void summarize_runs(const RequestStreamSpec& rs, const std::vector<StreamRun>& runs, std::size_t stride,
                    RequestStreamSection& out) {
  std::vector<RequestOutcome> measured;
  double batch_steps = 0;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const StreamRun& run = runs[k];
    for (std::size_t j = 0; j < run.requests.size(); ++j)
      if (j * stride + k >= rs.warmup) measured.push_back(run.requests[j]);
    out.prefill_steps += run.prefill_steps;
    out.decode_steps += run.decode_steps;
    batch_steps += run.mean_batch * double(run.decode_steps);
    if (rs.chunked.max_batched_tokens > 0) {
      if (!out.chunked_prefill) out.chunked_prefill = RequestStreamSection::Chunked{rs.chunked.max_batched_tokens};
      out.chunked_prefill->chunks += run.chunks;
      out.chunked_prefill->mixed_steps += run.mixed_steps;
    }
  }
  out.mean_batch = out.decode_steps ? batch_steps / double(out.decode_steps) : 0;
  fill_stream_metrics(measured, out);
}

// The request stream over simulated steps. Each replica (data-parallel
// rank) serves every data-th request with batch / data slots, or with
// prefill_chips the replicas split into the two pools of
// serve_disaggregated, which runs the same steps; a step of
// each shape is one pod run, memoized, of its model's first blocks when
// they stand for the whole (step_time.h). A decode step's time is linear in
// its mean context (it reads each sequence's cache once, as
// decode_context() relies on), so per batch size the pod runs the shortest
// and longest context a stream can have and interpolates between them.
RequestStreamSection run_stream(const Experiment& exp, const InferenceSpec& spec, std::uint64_t per_token,
                                const KvTransferHook& hook) {
  const RequestStreamSpec& rs = spec.requests;
  const models::TransformerConfig& cfg = spec.model.transformer;
  const std::uint64_t shortest = *std::min_element(rs.prompt_len.begin(), rs.prompt_len.end()) + 1;
  const std::uint64_t longest = *std::max_element(rs.prompt_len.begin(), rs.prompt_len.end()) +
                                *std::max_element(rs.decode_len.begin(), rs.decode_len.end());
  StreamStepTimes own;
  StreamStepTimes& memo = hook.steps ? *hook.steps : own;
  auto& prefills = memo.prefills;
  auto& decodes = memo.decodes;
  auto& mixed = memo.mixed;
  StepCosts costs;
  // Each shape's time, from its first blocks where they show the period (step_time.h).
  const auto timed = [&](const StepModel& model) { return step_time(exp, spec, model, hook.whole_steps).s; };
  // A server step: the device's (memoized above, interpolated below) and the host's work (host_step.h).
  const auto served = [&exp, &spec](double device_s) {
    return server_step_s(device_s, exp.chip.host.serve_step, spec.scheduling);
  };
  costs.prefill_s = [&](std::uint64_t sequences, std::uint64_t prompt_len) {
    auto [at, fresh] = prefills.try_emplace({sequences, prompt_len}, 0.0);
    if (fresh)
      at->second = timed([&](models::TransformerConfig c) {
        c.seq_len = prompt_len;
        return models::build_transformer_prefill(c, sequences);
      });
    return served(at->second);
  };
  const auto decode_at = [&](std::uint64_t batch, std::uint64_t context) {
    auto [at, fresh] = decodes.try_emplace({batch, context}, 0.0);
    if (fresh)
      at->second = timed(
          [&](const models::TransformerConfig& c) { return models::build_transformer_decode(c, batch, context); });
    return at->second;
  };
  const auto decode_device = [&](std::uint64_t batch, double context) {
    // A fixed step runs every slot over the whole cache, however many are
    // decoding and however long their contexts are.
    if (rs.decode_step == DecodeStep::fixed) return decode_at(spec.replica_batch(), cfg.seq_len);
    const double lo = decode_at(batch, shortest);
    if (longest == shortest) return lo;
    const double hi = decode_at(batch, longest);
    return lo + (hi - lo) * (context - double(shortest)) / double(longest - shortest);
  };
  costs.decode_s = [&](std::uint64_t batch, double context) { return served(decode_device(batch, context)); };
  // Chunked prefill's mixed steps: one pod run per decode batch, decode
  // context (the stream's two ends, interpolated as decode_s) and chunks.
  const auto mixed_at = [&](std::uint64_t batch, std::uint64_t context,
                            const std::vector<models::PromptChunk>& chunks) {
    auto [at, fresh] = mixed.try_emplace({batch, context, chunks}, 0.0);
    if (fresh)
      at->second = timed([&](const models::TransformerConfig& c) {
        return models::build_transformer_mixed(c, batch, context, chunks);
      });
    return at->second;
  };
  const auto mixed_device = [&](std::uint64_t batch, double context, const std::vector<models::PromptChunk>& chunks) {
    if (batch == 0) return mixed_at(0, 0, chunks);
    const double lo = mixed_at(batch, shortest, chunks);
    if (longest == shortest) return lo;
    const double hi = mixed_at(batch, longest, chunks);
    return lo + (hi - lo) * (context - double(shortest)) / double(longest - shortest);
  };
  costs.mixed_s = [&](std::uint64_t batch, double context, const std::vector<models::PromptChunk>& chunks) {
    return served(mixed_device(batch, context, chunks));
  };

  // The scheduler's loops under the run's limits (simulated time, host
  // time, progress lines): a stream of 1e-12 requests/s reached 1e12 s,
  // where a double no longer resolves a step (TTFT came out 0 s).
  runtime::LoopGuard guard(exp.limits, "the request stream");
  costs.at_step = [&guard](double t) { guard.check(t); };
  const std::vector<Request> requests = generate_requests(rs);
  const std::uint32_t replicas = spec.parallelism.batch_shards();
  std::vector<StreamRun> runs;
  RequestStreamSection out;
  if (rs.prefill_chips > 0) {
    RequestStreamSection::Disaggregated d;
    const std::uint64_t replica_chips = exp.pod.devices() / replicas;
    d.prefill = {rs.prefill_chips, rs.prefill_chips / replica_chips, 0};
    d.decode = {exp.pod.devices() - rs.prefill_chips, replicas - d.prefill.replicas, 0};
    d.link = exp.pod.slices > 1 ? "dcn" : "ici";
    const auto alone = kv_transfer(exp, spec.parallelism.tensor.degree, per_token);
    costs.kv_transfer_s = [&alone, &hook](std::size_t r, std::uint64_t prompt_len) {
      const double t = alone(prompt_len);
      return hook.time_s ? hook.time_s(r, t) : t;
    };
    runs.push_back(serve_disaggregated(requests, {d.prefill.replicas, d.decode.replicas, spec.replica_batch()}, costs));
    const StreamRun& run = runs.back();
    if (hook.ran) *hook.ran = run.transfers;
    d.prefill.utilization = run.prefill_s / (double(d.prefill.replicas) * run.makespan_s);
    d.decode.utilization = run.decode_s / (double(d.decode.replicas) * run.makespan_s);
    d.kv_transfer_s_mean = run.kv_transfer_s / double(requests.size());
    for (const Request& r : requests)
      d.kv_bytes_mean +=
          double(kv_bytes_per_token(cfg, spec.dtype.kv_cache, 1) * r.prompt_len) / double(requests.size());
    out.disaggregated = d;
  } else {
    // Request i goes to replica i mod replicas, and so does client i.
    for (std::uint32_t replica = 0; replica < replicas; ++replica) {
      std::vector<Request> mine;
      for (std::size_t r = replica; r < requests.size(); r += replicas) mine.push_back(requests[r]);
      const std::uint64_t clients = rs.concurrency / replicas + (replica < rs.concurrency % replicas);
      if (mine.empty()) continue;
      const std::uint64_t budget = rs.chunked.max_batched_tokens;
      runs.push_back(budget > 0 ? serve_chunked(mine, spec.replica_batch(), budget, costs, clients)
                                : serve_requests(mine, spec.replica_batch(), rs.batching, costs, clients, rs.prefill));
    }
  }
  summarize_runs(rs, runs, rs.prefill_chips > 0 ? 1 : replicas, out);
  out.requests = rs.count;
  out.rate = rs.rate;
  if (rs.concurrency > 0) out.concurrency = rs.concurrency;
  out.warmup = rs.warmup;
  out.batching = batching_names().name(rs.batching);
  out.slots_per_replica = spec.replica_batch();
  out.tokens_per_s_per_chip = out.tokens_per_s / double(exp.pod.devices());
  out.steps_simulated = prefills.size() + decodes.size() + mixed.size();
  return out;
}

}  // namespace

InferenceMemory inference_memory(const Experiment& exp, const InferenceSpec& spec) {
  const std::uint32_t tp = spec.parallelism.tensor.degree;
  const models::TransformerConfig& cfg = spec.model.transformer;
  InferenceMemory m;
  m.capacity = exp.chip.hbm.capacity_bytes;
  m.weights =
      weight_elements(models::build_transformer_decode(cfg, 1, 1), tp).held * hw::element_bytes(spec.dtype.weights);
  const std::uint64_t per_sequence = kv_bytes_per_token(cfg, spec.dtype.kv_cache, tp) * cfg.seq_len;
  m.kv_cache = per_sequence * spec.replica_batch();
  m.max_batch = m.weights > m.capacity ? 0 : (m.capacity - m.weights) / per_sequence * spec.parallelism.batch_shards();
  return m;
}

std::unique_ptr<Workload> load_inference_workload(const sim::YamlNode& node, const Experiment& exp) {
  return std::make_unique<InferenceWorkload>(load_inference_spec(node, exp));
}

const InferenceSpec* inference_spec_of(const Workload& workload) {
  const auto* w = dynamic_cast<const InferenceWorkload*>(&workload);
  return w ? &w->spec() : nullptr;
}

namespace {

// Throws sim::SimFailure when the weights and the KV cache of the batch
// do not fit (unless simulate_anyway), naming the largest batch that does.
void check_inference_fits(const InferenceSpec& spec, const InferenceMemory& mem) {
  if (spec.simulate_anyway || mem.total() <= mem.capacity) return;
  const models::TransformerConfig& cfg = spec.model.transformer;
  throw sim::SimFailure(
      "does not fit in HBM: each chip needs " + binary_bytes(double(mem.total())) + " of " +
          binary_bytes(double(mem.capacity)) + ": weights " + binary_bytes(double(mem.weights)) + ", KV cache " +
          binary_bytes(double(mem.kv_cache)) + " (" + std::to_string(spec.replica_batch()) + " sequences x " +
          std::to_string(cfg.seq_len) + " tokens of model.seq_len x " +
          std::to_string(kv_bytes_per_token(cfg, spec.dtype.kv_cache, spec.parallelism.tensor.degree)) + " B). " +
          (mem.max_batch > 0 ? "The largest batch that fits is " + std::to_string(mem.max_batch) + " (workload.batch)"
                             : std::string("The weights alone do not fit")) +
          "; or use more tensor parallelism, 8-bit weights or KV cache, or set workload.simulate_anyway: true to "
          "simulate it regardless",
      {{"needed_bytes", double(mem.total())},
       {"capacity_bytes", double(mem.capacity)},
       {"max_batch", double(mem.max_batch)}});
}

// result.inference's fields known before simulating.
InferenceSection inference_section(const Experiment& exp, const InferenceSpec& spec, const InferenceMemory& mem) {
  const TrainParallelism& par = spec.parallelism;
  InferenceSection sec;
  sec.phase = to_string(spec.phase);
  sec.weights_dtype = hw::to_string(spec.dtype.weights);
  sec.kv_cache_dtype = hw::to_string(spec.dtype.kv_cache);
  sec.activations = activations_names().name(spec.dtype.activations);
  sec.batch = spec.batch;
  sec.prompt_len = spec.prompt_len;
  sec.decode_len = spec.decode_len;
  sec.decode_context = spec.decode_context();
  sec.data = {par.data.axes, par.data.degree};
  sec.tensor = {par.tensor.axes, par.tensor.degree};
  sec.expert = {par.expert.axes, par.expert.degree};
  sec.weights_bytes = mem.weights;
  sec.kv_cache_bytes = mem.kv_cache;
  sec.kv_cache_bytes_per_token = kv_bytes_per_token(spec.model.transformer, spec.dtype.kv_cache, 1);
  sec.max_batch_that_fits = mem.max_batch;
  sec.scheduling = scheduling_names().name(spec.scheduling);
  sec.host_step_s = exp.chip.host.serve_step;
  return sec;
}

// The rows of a request stream's section of the table.
void stream_rows(sim::Table& t, const RequestStreamSection& st) {
  const std::string clients = st.concurrency ? std::to_string(*st.concurrency) + " clients, " : "";
  const std::string warmup = st.warmup ? ", the first " + std::to_string(st.warmup) + " not measured" : "";
  t.section("request stream (" + std::to_string(st.requests) + " requests, " + clients + st.batching + " batching, " +
            std::to_string(st.slots_per_replica) + " slots per replica" + warmup + ")");
  const auto latency_row = [&t](const char* what, const RequestStreamSection::Latency& l) {
    t.row(what, sim::si(l.mean, "s") + " mean", sim::si(l.p50, "s") + " median, " + sim::si(l.p99, "s") + " p99");
  };
  latency_row("time to first token", st.ttft_s);
  latency_row("time per output token", st.tpot_s);
  latency_row("inter-token latency", st.itl_s);
  t.row("request throughput", sim::si(st.requests_per_s, "req/s"), "over " + sim::si(st.makespan_s, "s"));
  t.row("output tokens/s", sim::si(st.tokens_per_s, ""), sim::si(st.tokens_per_s_per_chip, "") + " per chip");
  t.row("total tokens/s", sim::si(st.total_tokens_per_s, ""), "prompt and output tokens");
  t.row("steps", std::to_string(st.prefill_steps) + " prefills, " + std::to_string(st.decode_steps) + " decodes",
        "mean batch " + sim::fixed(st.mean_batch, 1) + "; " + std::to_string(st.steps_simulated) + " simulated");
  if (st.chunked_prefill)
    t.row("chunked prefill", std::to_string(st.chunked_prefill->max_batched_tokens) + " tokens a step",
          std::to_string(st.chunked_prefill->chunks) + " prompt chunks, " +
              std::to_string(st.chunked_prefill->mixed_steps) + " steps mixed with decode");
  if (!st.disaggregated) return;
  const RequestStreamSection::Disaggregated& d = *st.disaggregated;
  const auto pool = [](const RequestStreamSection::Pool& p) {
    return std::to_string(p.chips) + (p.chips == 1 ? " chip, " : " chips, ") + std::to_string(p.replicas) +
           (p.replicas == 1 ? " replica, " : " replicas, ") + sim::fixed(100 * p.utilization, 1) + "% busy";
  };
  t.row("prefill pool", pool(d.prefill));
  t.row("decode pool", pool(d.decode));
  t.row("KV transfer (" + d.link + ")", sim::si(d.kv_transfer_s_mean, "s") + " mean",
        sim::si(d.kv_bytes_mean, "B") + " per request");
}

std::string inference_table(const Experiment& exp, const InferenceSpec& spec, const InferenceMemory& mem,
                            const InferenceSection& sec, double wall_time_s) {
  sim::Table t("tpusim: " + exp.name + " (inference: batch " + std::to_string(spec.batch) + ", prompt " +
               std::to_string(spec.prompt_len) + ", decode " + std::to_string(spec.decode_len) + " on " +
               pod_label(exp) + ")");
  const auto step_rows = [&t, &exp](const char* what, const InferenceStep& s) {
    t.section(what);
    t.row("step time", sim::si(s.step_s, "s"), "bound: " + s.bound + "  " + validation_remark(exp));
    t.row("weights", sim::si(s.weights_s, "s"),
          sim::si(s.weights_bytes, "B") + " / HBM bandwidth" +
              (s.experts_read ? " (" + sim::fixed(*s.experts_read, 2) + " experts a block)" : ""));
    t.row("KV cache", sim::si(s.kv_s, "s"), sim::si(s.kv_bytes, "B") + " / HBM bandwidth");
    t.row("compute", sim::si(s.compute_s, "s"), sim::si(s.flops, "FLOP") + " / peak");
    t.row("communication", sim::si(s.communication_s, "s"), "collectives, mean per chip");
  };
  if (sec.prefill) step_rows("prefill (per chip)", *sec.prefill);
  if (sec.decode) step_rows("decode step at the mean context (per chip)", *sec.decode);
  t.section("serving");
  if (sec.ttft_s) t.row("time to first token", sim::si(*sec.ttft_s, "s"));
  if (sec.tpot_s) t.row("time per output token", sim::si(*sec.tpot_s, "s"));
  if (sec.host_step_s > 0)
    t.row("host time per step", sim::si(sec.host_step_s, "s"),
          spec.scheduling == Scheduling::sync ? "in series with each step (sync)" : "beside each step (async)");
  t.row("tokens/s", sim::si(sec.tokens_per_s, ""),
        sim::si(sec.tokens_per_s_per_chip, "") + " per chip  " + validation_remark(exp));
  t.row("memory per chip", binary_bytes(double(mem.total())),
        "weights " + binary_bytes(double(mem.weights)) + ", KV cache " + binary_bytes(double(mem.kv_cache)) + " of " +
            binary_bytes(double(mem.capacity)));
  t.row("largest batch that fits", std::to_string(mem.max_batch));
  if (sec.stream) stream_rows(t, *sec.stream);
  t.row("wall time", sim::fixed(wall_time_s, 3), "s");
  return t.str();
}

}  // namespace

RunOutput run_inference(const Experiment& exp, const InferenceSpec& spec, const RunOptions& opts,
                        const KvTransferHook& hook) {
  sim::WallTimer wall;
  const models::TransformerConfig& cfg = spec.model.transformer;
  const InferenceMemory mem = inference_memory(exp, spec);
  check_inference_fits(spec, mem);
  InferenceSection sec = inference_section(exp, spec, mem);

  const std::uint64_t b = spec.replica_batch();
  const std::uint64_t per_token = kv_bytes_per_token(cfg, spec.dtype.kv_cache, spec.parallelism.tensor.degree);
  std::optional<PhaseRun> prefill, decode;
  if (spec.prefill()) {
    models::TransformerConfig prompt = cfg;
    prompt.seq_len = spec.prompt_len;
    prefill = run_phase(exp, spec, models::build_transformer_prefill(prompt, b),
                        double(per_token * spec.prompt_len * b), spec.decode() ? sim::TraceRequest{} : opts.trace);
    sec.prefill = prefill->step;
    // A server step: the device's and the host's work (host_step.h).
    sec.ttft_s = server_step_s(prefill->step.step_s, sec.host_step_s, spec.scheduling);
  }
  if (spec.decode()) {
    decode = run_phase(exp, spec, models::build_transformer_decode(cfg, b, spec.decode_context()),
                       double(per_token * spec.decode_context() * b), opts.trace);
    sec.decode = decode->step;
    sec.tpot_s = server_step_s(decode->step.step_s, sec.host_step_s, spec.scheduling);
  }
  // Prefill alone: prompt tokens per second; else generated tokens per
  // second, over the prefill and the decode steps when both run.
  const double chips = exp.pod.devices();
  if (!decode) {
    sec.tokens_per_s = double(spec.batch * spec.prompt_len) / *sec.ttft_s;
  } else {
    const double gen = double(spec.batch * spec.decode_len);
    sec.tokens_per_s = gen / (sec.ttft_s.value_or(0.0) + double(spec.decode_len) * *sec.tpot_s);
  }
  sec.tokens_per_s_per_chip = sec.tokens_per_s / chips;
  if (spec.requests.count > 0) sec.stream = run_stream(exp, spec, per_token, hook);

  // result's shared fields describe the decode step when there is one.
  const PhaseRun& main = decode ? *decode : *prefill;
  Report rep = report_for(exp);
  Result& res = rep.result;
  res = pod_result(exp, summarize(exp, main.run), main.pod_flops);
  Memory memory;
  memory.per_chip_bytes = mem.total();
  memory.capacity_bytes = mem.capacity;
  memory.params_bytes = mem.weights;
  memory.fits = mem.total() <= mem.capacity;
  res.memory = memory;
  res.inference = sec;
  rep.per_chip = pod_per_chip(exp, main.run);
  rep.collectives = pod_collectives(main.run);
  rep.stats = main.run.stats;
  rep.simulator = pod_simulator(exp, wall.seconds(), main.run);
  const std::string table = inference_table(exp, spec, mem, sec, rep.simulator.wall_time_s);
  return RunOutput{to_json(rep), table, main.run.trace_json};
}

}  // namespace workloads
