#include "workloads/train/memory.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "hw/bf16.h"
#include "sim/error.h"
#include "sim/units.h"
#include "workloads/train/holdings.h"
#include "workloads/train/pipeline_schedule.h"
#include "workloads/train/ring_attention.h"
#include "workloads/train/tensor_split.h"

namespace workloads {

using sim::ceil_div;

LayerMemory layer_memory(const TrainSpec& spec, const models::ModelSpec& micro, std::size_t l) {
  const std::uint32_t tp = spec.parallelism.tensor.degree;
  const models::LayerSpec& layer = micro.layers[l];
  const bool seq = sequence_split(layer, spec.parallelism.sequence);
  LayerMemory m;
  if (per_tensor(spec.remat)) {
    // Each stash entry where the policy puts it (remat_policy.h); the
    // offloaded ones pass through two HBM buffers as with remat: offload.
    m.stash = stash_bytes(spec, micro, l, TensorPlace::device);
    m.host = stash_bytes(spec, micro, l, TensorPlace::offload);
    m.offload_buffers = 2 * m.host;
    m.rematerialized = stash_bytes(spec, micro, l, TensorPlace::remat);
    return m;
  }
  if (rematerialized(spec, micro, l)) {
    const std::uint64_t input = micro.layers[l - 1].output_bytes;
    m.stash = seq ? hw::kBf16Bytes * ceil_div(input / hw::kBf16Bytes, tp) : input;  // Korthikanti s.5: 2sbh/t
    if (spec.remat == Remat::minimal) {
      // It keeps its weight matmuls' outputs too; while its backward
      // runs it holds the rest of its stash again (as full holds all).
      std::set<std::string> kept;
      for (const auto& mm : layer.forward)
        if (mm.kind == models::MatmulKind::linear) {
          kept.insert(mm.output);
          m.stash += local_output_bytes(mm, tp, seq);
        }
      m.rematerialized =
          local_stash_bytes(layer, tp, seq, [&](const models::StashSpec& s) { return kept.count(s.name) == 0; });
    } else {
      m.rematerialized = local_stash_bytes(layer, tp, seq);
    }
  } else if (offloaded(spec, micro, l)) {
    // Its stash lives in host memory from its forward to its backward;
    // in HBM, the stash fetched back for the backward running and the
    // next one, prefetched (the offloads of the forward fit the same
    // two buffers while the host link keeps up).
    m.host = local_stash_bytes(layer, tp, seq);
    m.offload_buffers = 2 * m.host;
  } else {
    m.stash = local_stash_bytes(layer, tp, seq);
  }
  return m;
}

namespace {

// FSDP's BF16 weights and full gradients while a pass of a stage's layer
// runs, weight by weight as XLA holds them. The program (fsdp.h) gathers a
// layer's weights in one all-gather and reduce-scatters its gradients in
// one, the same bytes as XLA's per-weight collectives; the count follows
// XLA's buffers instead, so that a block's weights are never all gathered
// at once:
// - the SPMD partitioner gives each weight of a dot its own all-gather and
//   each weight gradient its own reduce-scatter (MaxText's weights are one
//   array per projection, a mixture of experts' stacked [experts, ...]),
//   and the latency hiding scheduler keeps at most one all-gather and one
//   reduce-scatter in flight (openxla/xla xla/service/
//   latency_hiding_scheduler.h, SchedulerConfig: all_gather_overlap_limit
//   = reduce_scatter_overlap_limit = 1), each started under the compute
//   before its use or after its producer (the recipes' async collective
//   fusion, AI-Hypercomputer/maxtext benchmarks/xla_flags_library.py
//   CF_FOR_ALL_GATHER);
// - so while a forward matmul reads weight k, k and k + 1 (prefetched) are
//   gathered; while a backward pass runs weight k's matmuls, k (read by its
//   data gradient), k - 1 (prefetched: the backward runs in reverse), k's
//   full gradient (produced) and k + 1's (being reduce-scattered) are live.
//   Weights follow the stage's order of use (a layer's forward matmuls;
//   parameters no matmul reads, a norm's scale and bias, before them),
//   across layer boundaries, and a layer without weights holds the next
//   weight prefetched (backward: the previous one and the gradient in
//   flight). ASSUMPTION: the backward gathers each weight again for its own
//   matmuls rather than keeping the copy its rematerialized forward
//   gathered (the recipes ask the scheduler to track memory pressure and
//   pipeline the backward's gathers: xla_tpu_enable_scheduler_memory_
//   pressure_tracking, xla_tpu_enable_ag_backward_pipelining).
// A pass's figure is its largest instant: the count and the trace's
// counter (memory_in_use) hold it for the whole pass.
class GatheredWeights {
 public:
  GatheredWeights(const TrainSpec& spec, const models::ModelSpec& micro, const StageLayers& stage)
      : at_(micro.layers.size(), 0) {
    const std::uint32_t fsdp = spec.parallelism.fsdp.degree, tp = spec.parallelism.tensor.degree;
    const std::vector<std::size_t> order = stage.layers();
    for (std::size_t i = 0; i < order.size(); ++i) {
      at_[order[i]] = i;
      begin_.push_back(bytes_.size());
      if (fsdp == 1) continue;
      const auto held = held_params(micro, stage, order[i]);
      std::vector<const models::ParamSpec*> used;
      for (const auto& mm : micro.layers[order[i]].forward)
        for (const auto* p : held)
          if (p->name == mm.weight && std::find(used.begin(), used.end(), p) == used.end()) used.push_back(p);
      const auto gathered = [&](const models::ParamSpec* p) {
        return hw::kBf16Bytes * gathered_elements(local_param_elements(*p, tp), fsdp);
      };
      for (const auto* p : held)
        if (std::find(used.begin(), used.end(), p) == used.end()) bytes_.push_back(gathered(p));
      for (const auto* p : used) bytes_.push_back(gathered(p));
    }
    begin_.push_back(bytes_.size());
  }
  std::uint64_t forward(std::size_t l) const {
    const std::size_t b = begin_[at_[l]], e = begin_[at_[l] + 1];
    std::uint64_t most = weight(b);  // a layer without weights: the next one, prefetched
    for (std::size_t k = b; k < e; ++k) most = std::max(most, weight(k) + weight(k + 1));
    return most;
  }
  std::uint64_t backward(std::size_t l) const {
    const std::size_t b = begin_[at_[l]], e = begin_[at_[l] + 1];
    std::uint64_t most = (b > 0 ? weight(b - 1) : 0) + weight(b);  // without weights
    for (std::size_t k = b; k < e; ++k)
      most = std::max(most, 2 * weight(k) + (k > 0 ? weight(k - 1) : 0) + weight(k + 1));
    return most;
  }

 private:
  std::uint64_t weight(std::size_t k) const { return k < bytes_.size() ? bytes_[k] : 0; }
  std::vector<std::size_t> at_;       // a model layer's place in the stage's order
  std::vector<std::size_t> begin_;    // per place (and one past the last): its first weight in bytes_
  std::vector<std::uint64_t> bytes_;  // the stage's weights in order of use, gathered (BF16)
};

}  // namespace

std::vector<ChipMemory> train_memory(const TrainSpec& spec, const TrainLayout& layout, const models::ModelSpec& micro) {
  const TrainParallelism& par = spec.parallelism;
  const std::uint32_t tp = par.tensor.degree, fsdp = par.fsdp.degree;
  std::vector<ChipMemory> per_stage(layout.stages.size());
  for (std::uint32_t s = 0; s < per_stage.size(); ++s) {
    ChipMemory& m = per_stage[s];
    const StageLayers& stage = layout.stages[s];
    std::uint64_t params = 0, optimized = 0;                        // elements
    std::vector<LayerMemory> layer(micro.layers.size());            // per microbatch
    std::vector<std::uint64_t> chunk_host(stage.chunks.size(), 0);  // offloaded, per microbatch
    for (std::size_t l : stage.layers()) {
      std::size_t chunk = 0;
      while (l >= stage.chunks[chunk].end) ++chunk;
      const std::uint64_t n = held_elements(micro, stage, l, tp);
      params += ceil_div(n, fsdp);
      optimized += ceil_div(n, par.optimizer_shards());
      if (par.context.degree > 1) m.ring = std::max(m.ring, kRingBuffers * ring_block_bytes(micro.layers[l], tp));
      layer[l] = layer_memory(spec, micro, l);
      m.activations_per_microbatch += layer[l].stash;
      m.offload_buffers = std::max(m.offload_buffers, layer[l].offload_buffers);
      chunk_host[chunk] += layer[l].host;
    }
    const std::uint64_t stored = bytes_of(spec.precision.params);
    m.chunks = static_cast<std::uint32_t>(stage.chunks.size());
    m.params = stored * params;
    m.grads = stored * params;  // accumulated over the microbatches
    m.optimizer = static_cast<std::uint64_t>(spec.optimizer.state_bytes_per_param * double(optimized));
    // The step's peak, pass by pass in the schedule's order, as XLA's
    // buffer assignment sees it: a buffer is live from the op that defines
    // it to its last use, so a pass's stash from its forward to its
    // backward, what a rematerialized pass recomputes and the weights it
    // gathers only while it runs. The peak is the largest sum at one
    // instant, not the sum of each part's largest (the logits' stash is
    // freed before the first block recomputes anything).
    const GatheredWeights gathered(spec, micro, stage);
    const auto tasks = stage_tasks(par.schedule, par.pipeline.degree, s, par.microbatches, par.virtual_stages);
    m.microbatches_in_flight = peak_in_flight(tasks);
    std::uint64_t live = 0, host = 0, peak = 0;
    const auto instant = [&](std::size_t l, bool backward, std::uint64_t redo, std::uint64_t weights) {
      if (live + redo + weights <= peak && !m.peak_pass.empty()) return;
      peak = live + redo + weights;
      m.activations = live;
      m.rematerialized = redo;
      m.gathered = weights;
      m.peak_pass = (backward ? "backward of " : "forward of ") + micro.layers[l].name;
    };
    for (const auto& t : tasks) {
      const LayerRange& chunk = stage.chunks[t.chunk];
      if (t.backward) {
        for (std::size_t l = chunk.end; l-- > chunk.begin;) {
          instant(l, true, layer[l].rematerialized, gathered.backward(l));
          live -= layer[l].stash;
        }
        host -= chunk_host[t.chunk];
      } else {
        for (std::size_t l = chunk.begin; l < chunk.end; ++l) {
          live += layer[l].stash;
          instant(l, false, 0, gathered.forward(l));
        }
        host += chunk_host[t.chunk];
        m.host = std::max(m.host, host);
      }
    }
  }
  std::vector<ChipMemory> out;
  out.reserve(layout.chips());
  for (const auto& role : layout.roles) out.push_back(per_stage[role.stage]);
  return out;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> memory_in_use(const TrainSpec& spec,
                                                                   const models::ModelSpec& micro, const ChipMemory& m,
                                                                   const StageLayers& stage, const hw::Program& prog,
                                                                   const ChipProgramMap& map,
                                                                   const std::vector<hw::OpTiming>& timings) {
  // What a pass holds while it runs (recomputed stash, gathered weights)
  // comes and goes with it; the offload and ring buffers are held all step.
  const std::uint64_t held = m.params + m.grads + m.optimizer + m.ring + m.offload_buffers;
  const GatheredWeights gathered(spec, micro, stage);
  std::vector<std::pair<std::uint64_t, std::int64_t>> changes;  // (time, bytes allocated or freed)
  for (const LayerOps& pass : map.layers) {
    std::uint64_t first = UINT64_MAX, last = 0;
    for (std::uint32_t i = pass.begin; i < pass.end; ++i) {
      if (!is_task_work(prog.ops[i])) continue;
      first = std::min(first, timings[i].start_ps);
      last = std::max(last, timings[i].end_ps);
    }
    if (first > last) continue;
    const LayerMemory lm = layer_memory(spec, micro, pass.layer);
    const auto stash = static_cast<std::int64_t>(lm.stash);
    if (!pass.backward) {
      const auto weights = static_cast<std::int64_t>(gathered.forward(pass.layer));
      changes.insert(changes.end(), {{first, stash + weights}, {last, -weights}});
    } else {
      const auto during = static_cast<std::int64_t>(lm.rematerialized + gathered.backward(pass.layer));
      changes.insert(changes.end(), {{first, during}, {last, -during - stash}});
    }
  }
  std::sort(changes.begin(), changes.end());  // at one instant, frees first
  std::vector<std::pair<std::uint64_t, std::uint64_t>> samples{{0, held}};
  std::int64_t level = 0;
  for (std::size_t k = 0; k < changes.size(); ++k) {
    level += changes[k].second;
    if (k + 1 < changes.size() && changes[k + 1].first == changes[k].first) continue;
    const std::uint64_t bytes = held + static_cast<std::uint64_t>(level);
    if (samples.back().first == changes[k].first)
      samples.back().second = bytes;
    else if (samples.back().second != bytes)
      samples.emplace_back(changes[k].first, bytes);
  }
  return samples;
}

std::string binary_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::string in_flight(const ChipMemory& m) {
  return std::to_string(m.microbatches_in_flight) + (m.chunks > 1 ? " chunk passes" : " microbatch") +
         (m.microbatches_in_flight == 1 || m.chunks > 1 ? "" : "es") + " in flight" +
         (m.chunks > 1 ? ", " + binary_bytes(double(m.activations_per_microbatch)) + " per microbatch over " +
                             std::to_string(m.chunks) + " chunks"
                       : " x " + binary_bytes(double(m.activations_per_microbatch)));
}

std::string memory_breakdown(const ChipMemory& m, std::uint64_t capacity) {
  return "needs " + binary_bytes(double(m.total())) + " of " + binary_bytes(double(capacity)) + " at its peak (the " +
         m.peak_pass + "): parameters " + binary_bytes(double(m.params)) + ", gradients " +
         binary_bytes(double(m.grads)) + ", optimizer " + binary_bytes(double(m.optimizer)) + ", activations " +
         binary_bytes(double(m.activations)) + " (stashes held then, of " + in_flight(m) + ")" +
         (m.gathered ? ", gathered weights " + binary_bytes(double(m.gathered)) : "") +
         (m.rematerialized ? ", rematerialized layer " + binary_bytes(double(m.rematerialized)) : "") +
         (m.offload_buffers ? ", host offload buffers " + binary_bytes(double(m.offload_buffers)) : "") +
         (m.ring ? ", ring attention buffers " + binary_bytes(double(m.ring)) : "");
}

void check_host_memory_fits(const std::vector<ChipMemory>& memory, const hw::HostParams& host) {
  std::size_t worst = 0;
  for (std::size_t c = 1; c < memory.size(); ++c)
    if (memory[c].host > memory[worst].host) worst = c;
  const std::uint64_t share = host.memory_per_chip();
  if (memory.empty() || memory[worst].host <= share) return;
  throw sim::SimFailure(
      "does not fit in host memory: chip " + std::to_string(worst) + " offloads " +
          binary_bytes(double(memory[worst].host)) + " of activations (remat: offload), its share of " +
          "the host's DRAM is " + binary_bytes(double(share)) + " (host.memory " + binary_bytes(double(host.memory)) +
          " over " + std::to_string(host.chips) +
          " chips). Use remat: full, fewer microbatches in flight, more chips, or set "
          "workload.simulate_anyway: true to simulate it regardless",
      {{"chip", double(worst)}, {"needed_bytes", double(memory[worst].host)}, {"capacity_bytes", double(share)}});
}

void check_memory_fits(const std::vector<ChipMemory>& memory, const TrainLayout& layout, std::uint64_t capacity) {
  std::size_t worst = 0;
  for (std::size_t c = 1; c < memory.size(); ++c)
    if (memory[c].total() > memory[worst].total()) worst = c;
  if (memory.empty() || memory[worst].total() <= capacity) return;
  throw DoesNotFitInHbm("does not fit in HBM: chip " + std::to_string(worst) + " (pipeline stage " +
                            std::to_string(layout.roles[worst].stage) + ") " +
                            memory_breakdown(memory[worst], capacity) +
                            " (set workload.simulate_anyway: true to simulate it regardless)",
                        {{"chip", double(worst)},
                         {"stage", double(layout.roles[worst].stage)},
                         {"needed_bytes", double(memory[worst].total())},
                         {"capacity_bytes", double(capacity)}});
}

}  // namespace workloads
