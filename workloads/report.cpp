#include "workloads/report.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "sim/error.h"
#include "sim/host.h"
#include "sim/output.h"
#include "workloads/per_chip_summary.h"
#include "workloads/verdict.h"

namespace workloads {

namespace {

using nlohmann::json;

// An optional field: its value, or null.
template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// Sets j[key] when the optional has a value.
template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

json to_json(const Roofline& r) {
  return {{"peak_flops_per_s", r.peak_flops_per_s},
          {"hbm_bytes_per_s", r.hbm_bytes_per_s},
          {"ridge_intensity", r.ridge_intensity},
          {"bound", r.bound},
          {"bound_predicted", r.bound_predicted},
          {"verdict", r.verdict},
          {"time_lower_bound_s", r.time_lower_bound_s},
          {"busy_fraction", {{"mxu", r.busy_mxu}, {"hbm", r.busy_hbm}, {"ici", r.busy_ici}}}};
}

json to_json(const Communication& c) {
  json j = {{"collective_time_s", c.collective_time_s},
            {"exposed_time_s", c.exposed_time_s},
            {"overlap_fraction", or_null(c.overlap_fraction)}};
  put(j, "compute_time_s", c.compute_time_s);
  if (c.waiting) {
    json ops = json::array();
    for (const Waiting& w : *c.waiting) {
      json chips = json::array();
      for (const Waiting::Chip& g : w.chips)
        chips.push_back({{"chip", g.chip}, {"gated", g.gated}, {"wait_s", g.wait_s}});
      ops.push_back({{"op", interconnect::to_string(w.op)},
                     {"collectives", w.collectives},
                     {"gated", w.gated},
                     {"wait_s", w.wait_s},
                     {"wait_max_s", w.wait_max_s},
                     {"gated_by", chips}});
    }
    j["waiting"] = ops;
  }
  return j;
}

json to_json(const Pipeline& p) {
  return {{"stages", p.stages},
          {"microbatches", p.microbatches},
          {"schedule", p.schedule},
          {"virtual_stages", p.virtual_stages},
          {"bubble_fraction", p.bubble_fraction},
          {"bubble_fraction_ideal", p.bubble_fraction_ideal},
          {"span_s", p.span_s},
          {"stage_busy_s", p.stage_busy_s},
          {"peak_microbatches_in_flight", p.peak_microbatches_in_flight}};
}

json to_json(const Memory& m) {
  json j = {{"per_chip_bytes", m.per_chip_bytes},   {"capacity_bytes", m.capacity_bytes},
            {"params_bytes", m.params_bytes},       {"grads_bytes", m.grads_bytes},
            {"optimizer_bytes", m.optimizer_bytes}, {"activations_bytes", m.activations_bytes}};
  put(j, "activations_per_microbatch_bytes", m.activations_per_microbatch_bytes);
  put(j, "microbatches_in_flight", m.microbatches_in_flight);
  put(j, "peak_pass", m.peak_pass);
  put(j, "gathered_weights_bytes", m.gathered_weights_bytes);
  put(j, "rematerialized_bytes", m.rematerialized_bytes);
  put(j, "ring_buffers_bytes", m.ring_buffers_bytes);
  put(j, "host_bytes", m.host_bytes);
  put(j, "host_capacity_bytes", m.host_capacity_bytes);
  put(j, "offload_buffers_bytes", m.offload_buffers_bytes);
  if (m.bytes_per_param)
    j["bytes_per_param"] = {{"params", m.bytes_per_param->params},
                            {"grads", m.bytes_per_param->grads},
                            {"optimizer", m.bytes_per_param->optimizer}};
  put(j, "chip", m.chip);
  put(j, "fits", m.fits);
  return j;
}

json to_json(const FunctionalCheck& f) {
  json j = {{"matches_reference", f.matches_reference}, {"max_abs_error", or_null(f.max_abs_error)}};
  put(j, "mismatches", f.mismatches);
  put(j, "first_mismatch", f.first_mismatch);
  return j;
}

json to_json(const TrainFunctional& f) {
  json ref = nullptr;
  if (f.reference_step1)
    ref = {{"max_abs_diff", f.reference_step1->max_abs_diff},
           {"bound", f.reference_step1->bound},
           {"matches", f.reference_step1->matches}};
  return {{"steps", f.steps},
          {"learning_rate", f.learning_rate},
          {"seed", f.seed},
          {"sync_gradients", f.sync_gradients},
          {"loss_per_step", f.loss_per_step},
          {"final_loss", f.final_loss},
          {"replicas_max_weight_diff", f.replicas_max_weight_diff},
          {"reference_step1", ref},
          {"matches_reference", or_null(f.matches_reference)}};
}

json to_json(const KernelSection& k) {
  return {{"m", k.m},
          {"k", k.k},
          {"n", k.n},
          {"bm", k.bm},
          {"bk", k.bk},
          {"bn", k.bn},
          {"buffers", k.buffers},
          {"accumulators", k.accumulators},
          {"vmem_bytes_per_core", k.vmem_bytes_per_core},
          {"vmem_capacity_bytes", k.vmem_capacity_bytes},
          {"ops", k.ops},
          {"hbm_bytes_planned", k.hbm_bytes_planned}};
}

json to_json(const ShardingSection& s) {
  return {{"a_spec", s.a_spec},
          {"b_spec", s.b_spec},
          {"out_spec", s.out_spec},
          {"case", s.case_summary},
          {"collective_matmul", s.collective_matmul},
          {"local_matmul", s.local_matmul},
          {"local_shapes", {{"A", s.a_shard}, {"B", s.b_shard}, {"C", s.c_shard}}}};
}

json to_json(const SyntheticSection& s) {
  return {{"serial_fraction", s.serial_fraction},
          {"units", s.units},
          {"serial_units", s.serial_units},
          {"parallel_units", s.parallel_units},
          {"parallel_units_max_per_chip", s.parallel_units_max_per_chip},
          {"unit", s.unit},
          {"broadcast_bytes", s.broadcast_bytes}};
}

json to_json(const ConvSection& c) {
  json layers = json::array();
  for (const auto& l : c.layers)
    layers.push_back({{"name", l.name},
                      {"ofmap", {l.ofmap_h, l.ofmap_w}},
                      {"m", l.m},
                      {"k", l.k},
                      {"n", l.n},
                      {"macs", l.macs},
                      {"energy_j", l.energy_j}});
  return {{"batch", c.batch}, {"macs", c.macs}, {"layers", layers}};
}

json to_json(const ScaleSimLayerRecord& l) {
  return {{"name", l.name},
          {"m", l.m},
          {"k", l.k},
          {"n", l.n},
          {"macs", l.macs},
          {"row_folds", l.row_folds},
          {"col_folds", l.col_folds},
          {"cycles", l.cycles},
          {"scalesim_cycles", l.scalesim_cycles},
          {"stall_cycles", l.stall_cycles},
          {"overall_util_pct", l.overall_util_pct},
          {"mapping_efficiency_pct", l.mapping_efficiency_pct},
          {"compute_util_pct", l.compute_util_pct},
          {"sram",
           {{"ifmap_reads", l.sram_ifmap_reads},
            {"filter_reads", l.sram_filter_reads},
            {"ofmap_writes", l.sram_ofmap_writes}}},
          {"dram",
           {{"ifmap_reads", l.dram_ifmap_reads},
            {"filter_reads", l.dram_filter_reads},
            {"ofmap_writes", l.dram_ofmap_writes}}},
          {"energy_j", or_null(l.energy_j)}};
}

json to_json(const ScaleSimSection& s) {
  json layers = json::array();
  std::uint64_t cycles = 0, scalesim_cycles = 0, macs = 0;
  std::optional<double> energy_j;
  for (const auto& l : s.layers) {
    layers.push_back(to_json(l));
    cycles += l.cycles;
    scalesim_cycles += l.scalesim_cycles;
    macs += l.macs;
    if (l.energy_j) energy_j = energy_j.value_or(0.0) + *l.energy_j;
  }
  return {{"run_name", s.run_name},
          {"array", {{"height", s.array_height}, {"width", s.array_width}}},
          {"sram_kb", {{"ifmap", s.ifmap_sram_kb}, {"filter", s.filter_sram_kb}, {"ofmap", s.ofmap_sram_kb}}},
          {"dataflow", s.dataflow},
          {"interface_bandwidth", s.interface_bandwidth},
          {"bandwidth_words_per_cycle", or_null(s.bandwidth_words_per_cycle)},
          {"topology_format", s.topology_format},
          {"total",
           {{"cycles", cycles}, {"scalesim_cycles", scalesim_cycles}, {"macs", macs}, {"energy_j", or_null(energy_j)}}},
          {"layers", layers}};
}

json to_json(const TrainSection::Axes& a) { return {{"axes", a.axes}, {"degree", a.degree}}; }

// kind: maxtext's fields of `result`: the run as MaxText named it, and
// every key read without effect or run without its effect.
void add_maxtext(json& res, const MaxTextSection& m) {
  json mesh = json::object();
  for (const auto& [axis, size] : m.mesh) mesh[axis] = size;
  res["maxtext"] = {{"model_name", m.model_name}, {"remat_policy", m.remat_policy}, {"mesh", mesh}};
  const auto listed = [](const std::vector<MaxTextSection::Listed>& keys) {
    json out = json::array();
    for (const auto& k : keys) out.push_back({{"key", k.key}, {"value", k.value}, {"where", k.where}, {"why", k.why}});
    return out;
  };
  res["ignored_keys"] = listed(m.ignored_keys);
  res["approximations"] = listed(m.approximations);
}

// The train kind's fields of `result`.
void add_train(json& res, const TrainSection& t) {
  res["model_flops"] = t.model_flops;
  res["tokens"] = t.tokens;
  res["tokens_per_s"] = t.tokens_per_s;
  res["parallelism"] = {{"data", to_json(t.data)},
                        {"fsdp", to_json(t.fsdp)},
                        {"zero", t.zero},
                        {"tensor", to_json(t.tensor)},
                        {"pipeline", to_json(t.pipeline)},
                        {"context", to_json(t.context)},
                        {"expert", to_json(t.expert)},
                        {"microbatches", t.microbatches},
                        {"microbatch_size", t.microbatch_size},
                        {"global_batch", t.global_batch},
                        {"schedule", t.schedule},
                        {"optimizer", t.optimizer},
                        {"overlap", t.overlap},
                        {"sync_gradients", t.sync_gradients},
                        {"elementwise", t.elementwise},
                        {"remat", t.remat}};
  res["hfu"] = t.hfu;
  res["precision"] = {
      {"params", t.precision_params}, {"optimizer", t.precision_optimizer}, {"matmul", t.precision_matmul}};
  res["phases"] = {{"forward_s", t.forward_s}, {"backward_s", t.backward_s}, {"optimizer_s", t.optimizer_s}};
  res["model"] = {
      {"type", t.model_type}, {"params", t.model_params}, {"layers", t.model_layers}, {"seq_len", t.seq_len}};
  if (!t.remat_tensors.empty()) res["parallelism"]["remat_tensors"] = t.remat_tensors;
  if (const auto& h = t.host_offload)
    res["host_offload"] = {{"bytes", h->bytes}, {"time_s", h->time_s}, {"exposed_s", h->exposed_s}};
  if (const auto& e = t.experts)
    res["experts"] = {{"experts", e->experts},
                      {"top_k", e->top_k},
                      {"experts_per_chip", e->experts_per_chip},
                      {"capacity_factor", e->capacity_factor},
                      {"distribution", e->distribution},
                      {"busiest_share", e->busiest_share},
                      {"busiest_expert", e->busiest_expert},
                      {"busiest_layer", e->busiest_layer},
                      {"chip_imbalance", e->chip_imbalance},
                      {"routed_tokens", e->routed_tokens},
                      {"dropped_tokens", e->dropped_tokens}};
  if (const auto& in = t.input)
    res["input"] = {{"distribution", in->distribution},
                    {"seed", in->seed},
                    {"bucket", in->bucket},
                    {"tokens", in->tokens},
                    {"longest_tokens", in->longest_tokens},
                    {"longest_replica", in->longest_replica},
                    {"shortest_tokens", in->shortest_tokens},
                    {"shortest_replica", in->shortest_replica},
                    {"mean_tokens", in->mean_tokens},
                    {"wait_s", in->wait_s},
                    {"wait_max_s", in->wait_max_s},
                    {"wait_max_gated_by", or_null(in->wait_max_gated_by)}};
}

json to_json(const InferenceStep& s) {
  return {{"step_s", s.step_s},
          {"flops", s.flops},
          {"hbm_bytes", s.hbm_bytes},
          {"weights_bytes", s.weights_bytes},
          {"kv_bytes", s.kv_bytes},
          {"split",
           {{"weights_s", s.weights_s},
            {"kv_s", s.kv_s},
            {"compute_s", s.compute_s},
            {"communication_s", s.communication_s}}},
          {"bound", s.bound},
          {"experts_read", or_null(s.experts_read)}};
}

json to_json(const RequestStreamSection::Latency& l) { return {{"mean", l.mean}, {"p50", l.p50}, {"p99", l.p99}}; }

json to_json(const RequestStreamSection::Pool& p) {
  return {{"chips", p.chips}, {"replicas", p.replicas}, {"utilization", p.utilization}};
}

json to_json(const RequestStreamSection::Disaggregated& d) {
  return {{"prefill", to_json(d.prefill)},
          {"decode", to_json(d.decode)},
          {"link", d.link},
          {"kv_bytes_mean", d.kv_bytes_mean},
          {"kv_transfer_s_mean", d.kv_transfer_s_mean}};
}

json to_json(const RequestStreamSection::Chunked& c) {
  return {{"max_batched_tokens", c.max_batched_tokens}, {"chunks", c.chunks}, {"mixed_steps", c.mixed_steps}};
}

json to_json(const RequestStreamSection& s) {
  return {{"requests", s.requests},
          {"rate", s.rate},
          {"batching", s.batching},
          {"slots_per_replica", s.slots_per_replica},
          {"concurrency", or_null(s.concurrency)},
          {"warmup", s.warmup},
          {"ttft_s", to_json(s.ttft_s)},
          {"tpot_s", to_json(s.tpot_s)},
          {"itl_s", to_json(s.itl_s)},
          {"makespan_s", s.makespan_s},
          {"requests_per_s", s.requests_per_s},
          {"tokens_per_s", s.tokens_per_s},
          {"total_tokens_per_s", s.total_tokens_per_s},
          {"tokens_per_s_per_chip", s.tokens_per_s_per_chip},
          {"prefill_steps", s.prefill_steps},
          {"decode_steps", s.decode_steps},
          {"mean_batch", s.mean_batch},
          {"steps_simulated", s.steps_simulated},
          {"chunked_prefill", s.chunked_prefill ? to_json(*s.chunked_prefill) : json(nullptr)},
          {"disaggregated", s.disaggregated ? to_json(*s.disaggregated) : json(nullptr)}};
}

json to_json(const InferenceSection& i) {
  return {{"phase", i.phase},
          {"batch", i.batch},
          {"prompt_len", i.prompt_len},
          {"decode_len", i.decode_len},
          {"decode_context", i.decode_context},
          {"dtype", {{"weights", i.weights_dtype}, {"kv_cache", i.kv_cache_dtype}, {"activations", i.activations}}},
          {"parallelism", {{"data", to_json(i.data)}, {"tensor", to_json(i.tensor)}, {"expert", to_json(i.expert)}}},
          {"ttft_s", or_null(i.ttft_s)},
          {"tpot_s", or_null(i.tpot_s)},
          {"scheduling", i.scheduling},
          {"host_step_s", i.host_step_s},
          {"tokens_per_s", i.tokens_per_s},
          {"tokens_per_s_per_chip", i.tokens_per_s_per_chip},
          {"weights_bytes", i.weights_bytes},
          {"kv_cache_bytes", i.kv_cache_bytes},
          {"kv_cache_bytes_per_token", i.kv_cache_bytes_per_token},
          {"max_batch_that_fits", i.max_batch_that_fits},
          {"prefill", i.prefill ? to_json(*i.prefill) : json(nullptr)},
          {"decode", i.decode ? to_json(*i.decode) : json(nullptr)},
          {"stream", i.stream ? to_json(*i.stream) : json(nullptr)}};
}

json to_json(const Result& r) {
  json j = {{"step_time_s", r.step_time_s},
            {"cycles", r.cycles},
            {"clock_hz", r.clock_hz},
            {"flops", r.flops},
            {"hbm_bytes", r.hbm_bytes},
            {"ici_bytes", r.ici_bytes},
            {"arithmetic_intensity", r.arithmetic_intensity},
            {"achieved_flops_per_s", r.achieved_flops_per_s},
            {"mfu", r.mfu},
            {"mxu_utilization", r.mxu_utilization},
            {"roofline", to_json(r.roofline)},
            {"communication", to_json(r.communication)},
            {"pipeline", r.pipeline ? to_json(*r.pipeline) : json(nullptr)},
            {"memory", r.memory ? to_json(*r.memory) : json(nullptr)}};
  if (r.dcn) {
    j["dcn"] = {{"bytes", r.dcn->bytes},
                {"nic_busy_max_s", r.dcn->nic_busy_max_s},
                {"nic_utilization_max", r.dcn->nic_utilization_max},
                {"time_s", r.dcn->time_s},
                {"exposed_time_s", r.dcn->exposed_time_s}};
  }
  j["functional"] = std::visit(
      [](const auto& f) -> json {
        if constexpr (std::is_same_v<std::decay_t<decltype(f)>, std::monostate>)
          return nullptr;
        else
          return to_json(f);
      },
      r.functional);
  if (r.kernel) j["kernel"] = to_json(*r.kernel);
  if (r.sharding) j["sharding"] = to_json(*r.sharding);
  if (r.synthetic) j["synthetic"] = to_json(*r.synthetic);
  if (r.train) add_train(j, *r.train);
  if (r.maxtext) add_maxtext(j, *r.maxtext);
  if (r.inference) j["inference"] = to_json(*r.inference);
  if (r.conv) j["conv"] = to_json(*r.conv);
  if (r.scalesim) j["scalesim"] = to_json(*r.scalesim);
  if (r.links) j["links"] = {{"utilization_max", r.links->max}, {"utilization_mean", r.links->mean}};
  if (r.energy)
    j["energy"] = {{"total_j", r.energy->total_j},
                   {"mac_j", r.energy->mac_j},
                   {"vmem_j", r.energy->vmem_j},
                   {"hbm_j", r.energy->hbm_j},
                   {"average_power_w", r.energy->average_power_w},
                   {"per_chip_j", r.energy->per_chip_j}};
  if (r.energy && r.energy->train) {
    json layers = json::array();
    for (const auto& l : r.energy->train->layers)
      layers.push_back({{"name", l.name}, {"forward_j", l.forward_j}, {"backward_j", l.backward_j}});
    j["energy"]["layers"] = layers;
    j["energy"]["optimizer_j"] = r.energy->train->optimizer_j;
    j["energy"]["collective_reductions_j"] = r.energy->train->collective_reductions_j;
  }
  return j;
}

json to_json(const CollectiveRecord& c) {
  json j = {{"op", interconnect::to_string(c.op)},
            {"algorithm", interconnect::to_string(c.algorithm)},
            {"participants", c.participants},
            {"bytes", c.bytes},
            {"time_s", c.time_s},
            {"algbw_bytes_per_s", c.algbw_bytes_per_s},
            {"busbw_bytes_per_s", c.busbw_bytes_per_s}};
  put(j, "name", c.name);
  put(j, "groups", c.groups);
  if (c.name) j["axes"] = c.axes;  // pod runs
  put(j, "start_s", c.start_s);
  if (c.wait_s) {
    j["wait_s"] = *c.wait_s;
    j["gated_by"] = or_null(c.gated_by);
  }
  put(j, "exposed_s", c.exposed_s);
  put(j, "messages", c.messages);
  put(j, "network_model", c.network_model);
  put(j, "purpose", c.purpose);
  if (!c.dcn_traffic.empty()) {
    json traffic = json::array();
    for (const auto& t : c.dcn_traffic)
      traffic.push_back({{"from_slice", t.from}, {"to_slice", t.to}, {"bytes", t.bytes}});
    j["dcn_traffic"] = traffic;
  }
  return j;
}

json to_json(const CollectiveGroup& g) {
  json j = {{"op", interconnect::to_string(g.op)},
            {"algorithm", interconnect::to_string(g.algorithm)},
            {"axes", g.axes},
            {"participants", g.participants},
            {"bytes", g.bytes},
            {"count", g.count},
            {"total_bytes", g.total_bytes},
            {"time_s", g.time_s}};
  put(j, "exposed_s", g.exposed_s);
  put(j, "wait_s", g.wait_s);
  put(j, "purpose", g.purpose);
  return j;
}

json to_json(const PerChip& p) {
  json j = {{"chip", p.chip},
            {"coords", p.coords},
            {"busy", {{"mxu_s", p.mxu_s}, {"vector_s", p.vector_s}, {"dma_s", p.dma_s}, {"ici_s", p.ici_s}}}};
  put(j, "compute_s", p.compute_s);
  put(j, "exposed_communication_s", p.exposed_communication_s);
  put(j, "hbm_bytes", p.hbm_bytes);
  put(j, "ici_bytes_out", p.ici_bytes_out);
  put(j, "ici_bytes_in", p.ici_bytes_in);
  put(j, "reduce_hbm_bytes", p.reduce_hbm_bytes);
  put(j, "end_s", p.end_s);
  if (p.shape_a) j["local_shapes"] = {{"A", *p.shape_a}, {"B", *p.shape_b}, {"C", *p.shape_c}};
  put(j, "units", p.units);
  if (p.ranks)
    j["ranks"] = {
        {"data", p.ranks->data}, {"fsdp", p.ranks->fsdp}, {"tensor", p.ranks->tensor}, {"stage", p.ranks->stage}};
  put(j, "forward_s", p.forward_s);
  put(j, "backward_s", p.backward_s);
  put(j, "optimizer_s", p.optimizer_s);
  put(j, "ops", p.ops);
  put(j, "mxu_flops", p.mxu_flops);
  put(j, "vector_flops", p.vector_flops);
  if (p.memory) {
    const ChipMemoryRecord& m = *p.memory;
    j["memory"] = {{"total_bytes", m.total_bytes},
                   {"params_bytes", m.params_bytes},
                   {"grads_bytes", m.grads_bytes},
                   {"optimizer_bytes", m.optimizer_bytes},
                   {"activations_bytes", m.activations_bytes},
                   {"activations_per_microbatch_bytes", m.activations_per_microbatch_bytes},
                   {"microbatches_in_flight", m.microbatches_in_flight},
                   {"gathered_weights_bytes", m.gathered_weights_bytes},
                   {"rematerialized_bytes", m.rematerialized_bytes},
                   {"ring_buffers_bytes", m.ring_buffers_bytes}};
    if (m.offload_buffers_bytes) j["memory"]["offload_buffers_bytes"] = m.offload_buffers_bytes;
  }
  return j;
}

json to_json(const LinkRecord& l) {
  return {{"link", l.link}, {"from", l.from},   {"to", l.to},         {"axis", l.axis},
          {"dir", l.dir},   {"bytes", l.bytes}, {"busy_s", l.busy_s}, {"utilization", l.utilization}};
}

json to_json(const Simulator& s) {
  json j = {{"fidelity", s.fidelity},
            {"wall_time_s", s.wall_time_s},
            {"events", s.events},
            {"events_per_s", s.wall_time_s > 0 ? double(s.events) / s.wall_time_s : 0.0},
            {"peak_rss_bytes", s.peak_rss_bytes}};
  put(j, "network_events", s.network_events);
  put(j, "messages", s.messages);
  put(j, "chips_simulated", s.chips_simulated);
  put(j, "replicas", s.replicas);
  put(j, "replica_spread_s", s.replica_spread_s);
  put(j, "replica_drift_s", s.replica_drift_s);
  put(j, "collectives_replayed", s.collectives_replayed);
  put(j, "symmetric_axes", s.symmetric_axes);
  put(j, "ops", s.ops);
  if (s.trace) {
    const TraceSummary& t = *s.trace;
    const std::size_t chips = t.written.size(), pod_chips = t.representative.size();
    json tr = {{"events", t.events}, {"dropped", t.dropped}, {"chips", chips}, {"aggregated_bin_s", t.bin_ps * 1e-12}};
    // Each written chip: the chips it stands for (a simulated chip), or the
    // simulated chip whose ops it shows (a replica; --trace-chips).
    json written = json::array();
    for (const std::uint32_t c : t.written) {
      const std::uint32_t rep = t.representative.at(c);
      if (rep == c)
        written.push_back(
            {{"chip", c}, {"represents", std::count(t.representative.begin(), t.representative.end(), c)}});
      else
        written.push_back({{"chip", c}, {"replica_of", rep}});
    }
    tr["written"] = written;
    std::string note;
    if (chips < pod_chips)
      note = "shows " + std::to_string(chips) + " of the " + std::to_string(pod_chips) +
             " chips (each simulated chip stands for its replicas; see written)";
    if (t.bin_ps > 0)
      note += (note.empty() ? "" : "; ") + std::string("aggregated: each track's ops that start in one bin of ") +
              sim::si(t.bin_ps * 1e-12, "s") + " are one slice, counters their mean over each bin, no flows " +
              "(--trace-chips LIST writes those chips op by op)";
    if (t.dropped > 0)
      note += (note.empty() ? "" : "; ") + std::string("stopped at ") + std::to_string(t.events) + " events, " +
              std::to_string(t.dropped) + " ops not recorded";
    if (!note.empty()) tr["note"] = note;
    j["trace"] = tr;
  }
  return j;
}

}  // namespace

Roofline make_roofline(const hw::ChipConfig& chip, double flops, double hbm_bytes, double mxu_busy_fraction,
                       double hbm_busy_fraction, double ici_busy_fraction) {
  Roofline r;
  r.peak_flops_per_s = chip.peak_flops_per_s();
  r.hbm_bytes_per_s = chip.hbm.bandwidth_bytes_per_s;
  r.ridge_intensity = r.peak_flops_per_s / r.hbm_bytes_per_s;
  const double intensity = hbm_bytes > 0 ? flops / hbm_bytes : 0.0;
  // The unit nearest its limit bounds the run; HBM's limit is what it
  // sustains (hbm.efficiency), while busy_hbm stays against the peak.
  r.bound = "compute";
  double busiest = mxu_busy_fraction;
  if (hbm_busy_fraction / chip.hbm.efficiency > busiest) {
    r.bound = "memory";
    busiest = hbm_busy_fraction / chip.hbm.efficiency;
  }
  if (ici_busy_fraction > busiest) r.bound = "communication";
  r.bound_predicted = hbm_bytes > 0 && intensity < r.ridge_intensity ? "memory" : "compute";
  r.time_lower_bound_s = std::max(flops / r.peak_flops_per_s, hbm_bytes / r.hbm_bytes_per_s);
  r.busy_mxu = mxu_busy_fraction;
  r.busy_hbm = hbm_busy_fraction;
  r.busy_ici = ici_busy_fraction;
  r.verdict = verdict(mxu_busy_fraction, hbm_busy_fraction, ici_busy_fraction, chip.hbm.efficiency);
  return r;
}

Report report_for(const Experiment& exp) {
  Report r;
  r.name = exp.name;
  r.config_path = exp.config_path;
  r.inputs = exp.inputs;
  r.overrides = exp.overrides;
  r.workload = exp.workload_yaml;
  r.chips = exp.pod.chips();
  r.devices = exp.pod.devices();
  r.slices = exp.pod.slices;
  r.topology = interconnect::to_string(exp.pod.topology);
  r.chip = exp.chip.name;
  r.shape = exp.pod.shape;
  r.wraparound = exp.pod.wraparound;
  r.pod_links = exp.pod.links;
  r.stragglers = exp.stragglers;
  r.chip_what_if = exp.chip_what_if;
  r.pod_what_if = exp.pod_what_if;
  r.result.clock_hz = exp.chip.clock;
  r.validation = validation_for(exp);
  return r;
}

Simulator simulator_for(const Experiment& exp, double wall_time_s, std::uint64_t events) {
  Simulator s;
  s.fidelity = hw::to_string(exp.fidelity);
  s.wall_time_s = wall_time_s;
  s.events = events;
  s.peak_rss_bytes = sim::peak_rss_bytes();
  return s;
}

std::vector<CollectiveGroup> summarize_collectives(const std::vector<CollectiveRecord>& collectives) {
  using Key = std::tuple<interconnect::CollectiveOp, interconnect::Algorithm, std::vector<std::string>, int,
                         std::uint64_t, std::optional<std::string>>;
  std::vector<CollectiveGroup> groups;
  std::map<Key, std::size_t> index;
  for (const CollectiveRecord& c : collectives) {
    const auto [it, added] =
        index.emplace(Key{c.op, c.algorithm, c.axes, c.participants, c.bytes, c.purpose}, groups.size());
    if (added) groups.push_back({c.op, c.algorithm, c.axes, c.participants, c.bytes, c.purpose, 0, 0, 0, {}, {}});
    CollectiveGroup& g = groups[it->second];
    ++g.count;
    g.total_bytes += c.bytes;
    g.time_s += c.time_s;
    if (c.exposed_s) g.exposed_s = g.exposed_s.value_or(0.0) + *c.exposed_s;
    if (c.wait_s) g.wait_s = g.wait_s.value_or(0.0) + *c.wait_s;
  }
  return groups;
}

const sim::EnumNames<ReportDetail>& report_detail_names() {
  static const sim::EnumNames<ReportDetail> names(
      "report detail", {{ReportDetail::summary, "summary",
                         "collective_summary (per op, axes and size); per_chip past 64 chips: chip 0 and the outliers"},
                        {ReportDetail::full, "full", "also every collective (collectives) and every chip (per_chip)"}});
  return names;
}

json to_json(const ClusterSection& c) {
  json jobs = json::array();
  for (const auto& job : c.jobs) {
    json steps = json::array();
    for (const auto& s : job.steps)
      steps.push_back({{"start_s", s.start_s},
                       {"time_s", s.time_s},
                       {"alone_s", s.alone_s},
                       {"dcn_time_s", s.dcn_time_s},
                       {"dcn_alone_s", s.dcn_alone_s}});
    jobs.push_back({{"name", job.name},
                    {"kind", job.kind},
                    {"slices", job.slices},
                    {"start_s", job.start_s},
                    {"step_time_s", job.step_time_s},
                    {"step_alone_s", job.step_alone_s},
                    {"step_s", job.step_s},
                    {"slowdown", job.slowdown},
                    {"dcn_alone_s", job.dcn_alone_s},
                    {"dcn_s", job.dcn_s},
                    {"dcn_phases", job.dcn_phases},
                    {"steps", steps},
                    {"report", job.report}});
    if (job.serving)
      jobs.back()["serving"] = {{"ttft_alone_s", to_json(job.serving->ttft_alone_s)},
                                {"ttft_s", to_json(job.serving->ttft_s)},
                                {"tpot_alone_s", to_json(job.serving->tpot_alone_s)},
                                {"tpot_s", to_json(job.serving->tpot_s)}};
  }
  json links = json::array();
  for (const auto& l : c.links) {
    json by_job = json::object();
    for (const auto& [name, bytes] : l.by_job) by_job[name] = bytes;
    json rate = json::array();
    for (const auto& [t, r] : l.rate) rate.push_back({t, r});
    links.push_back({{"name", l.name},
                     {"bytes_per_s", l.bytes_per_s},
                     {"bytes", l.bytes},
                     {"utilization", l.utilization},
                     {"by_job", by_job},
                     {"rate", rate}});
  }
  return {{"jobs", jobs}, {"links", links}, {"makespan_s", c.makespan_s}};
}

nlohmann::json to_json(const Report& r) {
  json wrap = json::array();
  for (bool w : r.wraparound) wrap.push_back(w);
  json j = {{"schema", kReportSchema},
            {"tpusim_version", TPUSIM_VERSION},
            {"experiment",
             {{"name", r.name},
              {"config_path", r.config_path},
              {"inputs", r.inputs},
              {"overrides", r.overrides},
              {"workload", r.workload}}},
            {"pod",
             {{"chips", r.chips},
              {"devices", r.devices},
              {"slices", r.slices},
              {"topology", r.topology},
              {"shape", r.shape},
              {"wraparound", wrap},
              {"chip", r.chip}}},
            {"result", to_json(r.result)},
            {"simulator", to_json(r.simulator)}};
  // What-ifs: the shipped file and the keys laid over it, each value as
  // JSON where its YAML is JSON too (numbers, lists), else as its text.
  for (const auto& [section, what_if] : {std::pair{"chip", &r.chip_what_if}, std::pair{"pod", &r.pod_what_if}}) {
    if (!*what_if) continue;
    json keys = json::object();
    for (const auto& [key, yaml] : (*what_if)->keys) {
      json v = json::parse(yaml, nullptr, false);
      keys[key] = v.is_discarded() ? json(yaml) : v;
    }
    j["experiment"][section] = {{"base", (*what_if)->base}, {"overridden", keys}};
  }
  for (const interconnect::LinkFault& f : r.pod_links)
    j["pod"]["links"].push_back(
        {{"from", f.from}, {"to", f.to}, {"bandwidth", f.fraction()}, {"failed", f.failed}, {"one_way", f.one_way}});
  for (const StragglerSpec& s : r.stragglers) {
    json e = {{"chips", s.chips}, {"compute", s.compute}, {"hbm", s.hbm}};
    if (s.fraction) {
      e["fraction"] = *s.fraction;
      e["seed"] = s.seed;
    }
    j["stragglers"].push_back(e);
  }
  json colls = json::array();
  for (const auto& c : r.collectives) colls.push_back(to_json(c));
  j["collectives"] = colls;
  json groups = json::array();
  for (const CollectiveGroup& g : summarize_collectives(r.collectives)) groups.push_back(to_json(g));
  j["collective_summary"] = groups;
  json chips = json::array();
  for (const auto& p : r.per_chip) chips.push_back(to_json(p));
  j["per_chip_summary"] = summarize_per_chip(chips);
  j["per_chip"] = std::move(chips);
  if (r.links) {
    json links = json::array();
    for (const auto& l : *r.links) links.push_back(to_json(l));
    j["links"] = links;
  }
  if (r.validation)
    j["result"]["validation"] = {{"group", r.validation->group},
                                 {"cases", r.validation->cases},
                                 {"median_abs_error", or_null(r.validation->median_abs_error)},
                                 {"signed_mean_error", or_null(r.validation->signed_mean_error)}};
  if (r.stats) j["stats"] = r.stats->to_json();
  if (r.cluster) j["cluster"] = to_json(*r.cluster);
  return j;
}

namespace {

// Whether every number in `j` is finite: one pass that builds no key paths
// (a pod's stats hold millions of numbers), so that non_finite_at walks
// only a report that has a bad one.
bool all_finite(const nlohmann::json& j) {
  if (j.is_number_float()) return std::isfinite(j.get<double>());
  if (j.is_structured())
    for (const auto& v : j)
      if (!all_finite(v)) return false;
  return true;
}

// The key path of the first number in `j` that is not finite, or "".
std::string non_finite_at(const nlohmann::json& j, const std::string& path) {
  if (j.is_number_float()) return std::isfinite(j.get<double>()) ? "" : path;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string at = non_finite_at(it.value(), path.empty() ? it.key() : path + "." + it.key());
      if (!at.empty()) return at;
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      const std::string at = non_finite_at(j[i], path + "[" + std::to_string(i) + "]");
      if (!at.empty()) return at;
    }
  }
  return "";
}

// Summary detail's per_chip: chip 0 and the outliers of a large pod (workloads/per_chip_summary.h).
void keep_summary(nlohmann::json& report) {
  if (report.contains("per_chip") && report.contains("per_chip_summary"))
    report["per_chip"] = listed_per_chip(report["per_chip"], report["per_chip_summary"]);
}

// The report as report.json holds it, `report` already trimmed to `detail`
// at its top level: a cluster's jobs' reports trimmed the same way, the
// detail named, every number checked finite.
std::string finished_text(nlohmann::json& report, ReportDetail detail) {
  if (detail != ReportDetail::full && report.contains("cluster"))
    for (auto& job : report["cluster"]["jobs"]) {
      job["report"].erase("collectives");
      keep_summary(job["report"]);
    }
  report["report_detail"] = report_detail_names().name(detail);
  if (!all_finite(report)) {
    const std::string at = non_finite_at(report, "");
    throw sim::SimFailure("the run's " + at +
                          " is not a finite number (inf or nan): the simulated quantity is beyond what the model "
                          "can state, from an input far outside its range; report.json is not written");
  }
  return report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string report_text(const nlohmann::json& full, ReportDetail detail) {
  // A copy without the lists, not of them (tens of megabytes in a large
  // step's collectives; a row per chip, 1.4 GB for 16 TPU7x superpods'
  // 294,912 devices): per_chip's listed rows are picked from the original.
  const bool summary = detail != ReportDetail::full;
  nlohmann::json report = nlohmann::json::object();
  for (auto it = full.begin(); it != full.end(); ++it) {
    if (summary && it.key() == "collectives") continue;
    if (summary && it.key() == "per_chip" && full.contains("per_chip_summary")) {
      report[it.key()] = listed_per_chip(it.value(), full["per_chip_summary"]);
      continue;
    }
    report[it.key()] = it.value();
  }
  return finished_text(report, detail);
}

std::string report_text(nlohmann::json&& given, ReportDetail detail) {
  nlohmann::json report = std::move(given);  // freed on return, before the caller reads the text back
  if (detail != ReportDetail::full) {
    report.erase("collectives");
    keep_summary(report);
  }
  return finished_text(report, detail);
}

}  // namespace workloads
