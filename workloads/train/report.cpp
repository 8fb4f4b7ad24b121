#include "workloads/train/report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "runtime/program_trace.h"
#include "sim/kernel.h"
#include "sim/mean.h"
#include "sim/output.h"
#include "sim/trace.h"
#include "workloads/pod_report.h"
#include "workloads/report.h"
#include "workloads/train/holdings.h"

namespace workloads {

namespace {

// The step's work, over all chips.
struct Work {
  double flops = 0;        // model training FLOPs (forward + backward, matmuls + elementwise)
  double model_flops = 0;  // matmul FLOPs only: PaLM's MFU numerator (appendix B)
  double tokens = 0;
  double mxu_flops = 0;  // what the MXUs executed (padding included)
  // model_flops and the matmuls recomputed: flash attention's scores in
  // the backward, remat's forward passes (HFU's numerator).
  double executed_matmul_flops = 0;
};

struct ProgramFlops {
  double mxu = 0, vector = 0;
};

// FLOPs of each of the pod's programs.
std::vector<ProgramFlops> program_flops(const runtime::PodProgram& pod) {
  std::vector<ProgramFlops> out(pod.programs.size());
  for (std::size_t i = 0; i < pod.programs.size(); ++i)
    for (const auto& op : pod.programs[i].ops) {
      if (op.engine.kind == hw::EngineKind::mxu) out[i].mxu += op.flops;
      if (op.engine.kind == hw::EngineKind::vector) out[i].vector += op.flops;
    }
  return out;
}

Work work(const TrainRun& r) {
  Work w;
  // The model's work is that of whole sequences: with context parallelism
  // a chip runs 1/N of each (its attention is 1/N of the causal square,
  // ring_attention.h), so the model at the full seq_len counts it.
  const bool context = r.spec.parallelism.context.degree > 1;
  const models::ModelSpec whole =
      context ? models::build_model(r.spec.model, r.spec.microbatch_size()) : models::ModelSpec{};
  const models::ModelSpec& model = context ? whole : r.micro;
  // Per-replica input lengths (input.h): each replica's work at its own
  // tokens per sequence; replicas of one length counted together.
  std::map<std::uint64_t, double> replicas_of_length{{model.seq_len, 0.0}};
  if (r.spec.input.enabled) {
    for (std::uint64_t length : r.spec.replica_lengths()) replicas_of_length[length] += 1;
  } else {
    replicas_of_length[model.seq_len] = r.spec.parallelism.batch_shards();
  }
  const double micro = r.spec.parallelism.microbatches;
  for (const auto& [length, replicas] : replicas_of_length) {
    if (replicas == 0) continue;
    models::ModelSpec at_length;
    if (length != model.seq_len) {
      models::ModelConfig c = r.spec.chip_model();
      c.transformer.seq_len = length;
      at_length = models::build_model(c, r.spec.microbatch_size());
    }
    const models::ModelSpec& m = length == model.seq_len ? model : at_length;
    const double times = replicas * micro;
    w.flops += m.flops_per_step() * times;
    w.model_flops += m.matmul_flops_per_step() * times;
    w.tokens += double(m.tokens()) * times;
    double recomputed = 0;
    for (std::size_t l = 0; l < m.layers.size(); ++l) {
      const models::LayerSpec& layer = m.layers[l];
      recomputed += layer.extra_matmul_flops();
      if (rematerialized(r.spec, m, l)) recomputed += recomputed_forward(r.spec, layer).executed_forward_matmul_flops();
    }
    w.executed_matmul_flops += m.matmul_flops_per_step() * times + recomputed * times;
  }
  const runtime::PodProgram& pod = r.program.pod;
  const std::vector<ProgramFlops> flops = program_flops(pod);
  for (std::uint32_t c = 0; c < pod.chip_count(); ++c) w.mxu_flops += flops[pod.program_of[c]].mxu;
  return w;
}

TrainSection::Axes axes_of(const ParallelAxes& a) { return {a.axes, a.degree}; }

std::size_t fullest_chip(const std::vector<ChipMemory>& memory) {
  std::size_t worst = 0;
  for (std::size_t c = 1; c < memory.size(); ++c)
    if (memory[c].total() > memory[worst].total()) worst = c;
  return worst;
}

// result.energy's parts (docs/training.md#energy): every program's ops by
// layer pass and optimizer, once per chip that runs the program, and each
// chip's collective reductions, which are no op of its program; their HBM
// bytes are in the chip's own only when the chip does them (kernel
// fidelity), as result.energy counts them.
Energy::TrainParts energy_parts(const TrainRun& r) {
  const hw::EnergyParams& e = r.exp.chip.energy;
  const runtime::PodProgram& pod = r.program.pod;
  Energy::TrainParts parts;
  for (const auto& l : r.micro.layers) parts.layers.push_back({l.name, 0.0, 0.0});
  std::vector<double> chips(pod.programs.size(), 0.0);
  for (std::uint32_t c = 0; c < pod.chip_count(); ++c) chips[pod.program_of[c]] += 1;
  for (std::size_t p = 0; p < pod.programs.size(); ++p) {
    const auto joules = [&](std::uint32_t begin, std::uint32_t end) {
      return chips[p] * ops_energy_j(e, pod.programs[p], begin, end);
    };
    const ChipProgramMap& map = r.program.maps[p];
    for (const LayerOps& l : map.layers)
      (l.backward ? parts.layers[l.layer].backward_j : parts.layers[l.layer].forward_j) += joules(l.begin, l.end);
    parts.optimizer_j += joules(map.optimizer_begin, map.optimizer_end);
  }
  if (r.run.reductions_on_chip)
    for (double bytes : r.run.reduce_hbm_bytes) parts.collective_reductions_j += e.hbm_j(bytes);
  return parts;
}

// The step's routing (TrainProgram::routing): the busiest expert and chip
// of any layer, and the tokens routed and dropped, counted over every
// microbatch of every data-parallel group.
std::optional<ExpertsSection> experts_section(const TrainRun& r) {
  const auto& routing = r.program.routing;
  if (routing.empty()) return std::nullopt;
  const models::TransformerConfig& c = r.spec.model.transformer;
  const TrainParallelism& par = r.spec.parallelism;
  ExpertsSection e;
  e.experts = c.experts;
  e.top_k = c.top_k;
  e.experts_per_chip = c.experts / par.expert.degree;
  e.capacity_factor = c.capacity_factor;
  e.distribution = c.routing.distribution;
  const std::uint64_t groups = std::uint64_t{par.microbatches} * par.data.degree;
  for (std::size_t b = 0; b < routing.size(); ++b) {
    const models::LayerRouting& l = routing[b];
    e.routed_tokens += groups * l.assignments();
    e.dropped_tokens += groups * l.dropped();
    for (std::uint32_t x = 0; x < l.experts; ++x) {
      const double share = double(l.routed_to(x)) / double(l.assignments());
      if (share > e.busiest_share) {
        e.busiest_share = share;
        e.busiest_expert = x;
        e.busiest_layer = b;
      }
    }
    std::uint64_t busiest = 0, kept = 0;
    for (std::uint64_t chip = 0; chip < par.expert.degree; ++chip) {
      std::uint64_t n = 0;
      for (std::uint64_t x = chip * e.experts_per_chip; x < (chip + 1) * e.experts_per_chip; ++x)
        n += l.kept_by(static_cast<std::uint32_t>(x));
      busiest = std::max(busiest, n);
      kept += n;
    }
    if (kept > 0) e.chip_imbalance = std::max(e.chip_imbalance, double(busiest) * par.expert.degree / double(kept));
  }
  return e;
}

// The step's input lengths (input.h) and the waits of the collectives over
// the data axes, the replicas' meeting points.
std::optional<InputSection> input_section(const TrainRun& r) {
  const InputSpec& in = r.spec.input;
  if (!in.enabled) return std::nullopt;
  InputSection s;
  s.distribution = in.distribution;
  s.seed = in.seed;
  s.bucket = in.bucket;
  s.tokens = r.spec.replica_lengths();
  const auto [shortest, longest] = std::minmax_element(s.tokens.begin(), s.tokens.end());
  s.shortest_tokens = *shortest;
  s.longest_tokens = *longest;
  s.shortest_replica = static_cast<std::uint32_t>(shortest - s.tokens.begin());
  s.longest_replica = static_cast<std::uint32_t>(std::find(s.tokens.begin(), s.tokens.end(), *longest) -
                                                 s.tokens.begin());  // minmax_element takes the last
  for (std::uint64_t t : s.tokens) s.mean_tokens += double(t) / double(s.tokens.size());
  for (std::size_t i = 0; i < r.run.collectives.size(); ++i) {
    const CollectivePurpose p = r.program.collective_purpose[i];
    const runtime::CollectiveTiming& c = r.run.collectives[i];
    if ((p != CollectivePurpose::gradients && p != CollectivePurpose::weights) || c.gated_by < 0) continue;
    s.wait_s += c.wait_s;
    if (c.wait_s > s.wait_max_s) {
      s.wait_max_s = c.wait_s;
      s.wait_max_gated_by = static_cast<std::uint32_t>(c.gated_by);
    }
  }
  return s;
}

// The fullest chip's memory at its peak (memory.h).
Memory memory_section(const TrainRun& r) {
  const std::size_t worst = fullest_chip(r.memory);
  const ChipMemory& mem = r.memory[worst];
  Memory memory;
  memory.per_chip_bytes = mem.total();
  memory.capacity_bytes = r.exp.chip.hbm.capacity_bytes;
  memory.params_bytes = mem.params;
  memory.grads_bytes = mem.grads;
  memory.optimizer_bytes = mem.optimizer;
  memory.activations_bytes = mem.activations;
  memory.activations_per_microbatch_bytes = mem.activations_per_microbatch;
  memory.microbatches_in_flight = mem.microbatches_in_flight;
  memory.peak_pass = mem.peak_pass;
  memory.gathered_weights_bytes = mem.gathered;
  memory.rematerialized_bytes = mem.rematerialized;
  if (r.spec.parallelism.context.degree > 1) memory.ring_buffers_bytes = mem.ring;
  if (mem.host > 0) {
    memory.host_bytes = mem.host;
    memory.host_capacity_bytes = r.exp.chip.host.memory_per_chip();
    memory.offload_buffers_bytes = mem.offload_buffers;
  }
  const double stored = bytes_of(r.spec.precision.params);
  memory.bytes_per_param = Memory::BytesPerParam{stored, stored, r.spec.optimizer.state_bytes_per_param};
  memory.chip = worst;
  memory.fits = mem.total() <= r.exp.chip.hbm.capacity_bytes;
  return memory;
}

}  // namespace

Report train_report(const TrainRun& r) {
  const Work w = work(r);
  const hw::ChipConfig& chip = r.exp.chip;
  const TrainParallelism& par = r.spec.parallelism;
  const double step = r.run.step_time_s;
  const double peak = chip.peak_flops_per_s() * double(r.layout.chips());

  Report rep = report_for(r.exp);
  Result& res = rep.result;
  res = pod_result(r.exp, summarize(r.exp, r.run), w.flops);
  res.mfu = step > 0 ? w.model_flops / step / peak : 0.0;
  res.mxu_utilization = step > 0 ? w.mxu_flops / step / peak : 0.0;
  res.energy->train = energy_parts(r);
  const TrainMeasurement& m = r.measured;
  if (par.pipeline.degree > 1)
    res.pipeline = Pipeline{
        par.pipeline.degree, par.microbatches,  to_string(par.schedule),
        par.virtual_stages,  m.bubble_fraction, ideal_bubble(par.pipeline.degree, par.microbatches, par.virtual_stages),
        m.span_s(),          m.stage_busy_s,    m.peak_in_flight};
  res.memory = memory_section(r);
  TrainSection t;
  t.model_flops = w.model_flops;
  t.tokens = w.tokens;
  t.tokens_per_s = step > 0 ? w.tokens / step : 0.0;
  t.data = axes_of(par.data);
  t.fsdp = axes_of(par.fsdp);
  t.zero = par.zero;
  t.tensor = axes_of(par.tensor);
  t.pipeline = axes_of(par.pipeline);
  t.context = axes_of(par.context);
  t.expert = axes_of(par.expert);
  t.experts = experts_section(r);
  t.input = input_section(r);
  t.microbatches = par.microbatches;
  t.microbatch_size = r.spec.microbatch_size();
  t.global_batch = r.spec.global_batch;
  t.schedule = to_string(par.schedule);
  t.optimizer = r.spec.optimizer.name;
  t.overlap = r.spec.overlap;
  t.sync_gradients = par.sync_gradients;
  t.elementwise = to_string(r.spec.elementwise);
  t.remat = to_string(r.spec.remat);
  if (r.spec.remat == Remat::custom)
    for (const auto& [name, place] : r.spec.remat_tensors) t.remat_tensors[name] = tensor_place_names().name(place);
  if (const sim::StatGroup& g = r.run.chip_stats(static_cast<std::uint32_t>(*res.memory->chip));
      res.memory->host_bytes) {
    const double time = g.value("program.host_transfer_time");
    t.host_offload = TrainSection::HostOffload{g.value("program.host_transfer_bytes"), time,
                                               time - g.value("program.hidden_host_transfer_time")};
  }
  t.precision_params = to_string(r.spec.precision.params);
  t.precision_optimizer = to_string(r.spec.precision.optimizer);
  t.precision_matmul = hw::to_string(r.spec.precision.matmul);
  t.hfu = step > 0 ? w.executed_matmul_flops / step / peak : 0.0;
  t.forward_s = sim::mean(m.forward_s);
  t.backward_s = sim::mean(m.backward_s);
  t.optimizer_s = sim::mean(m.optimizer_s);
  t.model_type = r.micro.type;
  t.model_params = double(r.micro.param_count());
  t.model_layers = r.micro.layers.size();
  t.seq_len = r.micro.seq_len * par.context.degree;  // the chip holds 1/N of each sequence
  res.train = t;

  rep.collectives = pod_collectives(r.run);
  for (std::size_t i = 0; i < rep.collectives.size(); ++i)
    rep.collectives[i].purpose = to_string(r.program.collective_purpose[i]);

  rep.per_chip = pod_per_chip(r.exp, r.run);
  const std::vector<ProgramFlops> flops = program_flops(r.program.pod);
  for (std::uint32_t c = 0; c < r.layout.chips(); ++c) {
    const ChipRole& role = r.layout.roles[c];
    const ChipMemory& cm = r.memory[c];
    const ProgramFlops& f = flops[r.program.pod.program_of[c]];
    PerChip& pc = rep.per_chip[c];
    pc.ranks = PerChip::Ranks{role.data, role.fsdp, role.tensor, role.stage};
    pc.forward_s = m.forward_s[c];
    pc.backward_s = m.backward_s[c];
    pc.optimizer_s = m.optimizer_s[c];
    pc.end_s = r.run.end_s[c];
    pc.ops = r.program.pod.chip(c).ops.size();
    pc.mxu_flops = f.mxu;
    pc.vector_flops = f.vector;
    pc.memory = ChipMemoryRecord{cm.total(),
                                 cm.params,
                                 cm.grads,
                                 cm.optimizer,
                                 cm.activations,
                                 cm.activations_per_microbatch,
                                 cm.microbatches_in_flight,
                                 cm.gathered,
                                 cm.rematerialized,
                                 cm.ring,
                                 cm.offload_buffers};
  }
  rep.stats = r.run.stats;
  rep.simulator = pod_simulator(r.exp, r.wall_time_s, r.run);
  return rep;
}

}  // namespace workloads
