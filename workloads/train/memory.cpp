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

std::vector<ChipMemory> train_memory(const TrainSpec& spec, const TrainLayout& layout, const models::ModelSpec& micro) {
  const TrainParallelism& par = spec.parallelism;
  const std::uint32_t tp = par.tensor.degree, fsdp = par.fsdp.degree;
  std::vector<ChipMemory> per_stage(layout.stages.size());
  for (std::uint32_t s = 0; s < per_stage.size(); ++s) {
    ChipMemory& m = per_stage[s];
    const StageLayers& stage = layout.stages[s];
    std::uint64_t params = 0, optimized = 0, largest = 0;            // elements
    std::vector<std::uint64_t> chunk_stash(stage.chunks.size(), 0);  // per microbatch
    std::vector<std::uint64_t> chunk_host(stage.chunks.size(), 0);   // offloaded, per microbatch
    for (std::size_t l : stage.layers()) {
      std::size_t chunk = 0;
      while (l >= stage.chunks[chunk].end) ++chunk;
      const std::uint64_t n = held_elements(micro, stage, l, tp);
      params += ceil_div(n, fsdp);
      optimized += ceil_div(n, par.optimizer_shards());
      largest = std::max(largest, gathered_elements(n, fsdp));
      if (par.context.degree > 1) m.ring = std::max(m.ring, kRingBuffers * ring_block_bytes(micro.layers[l], tp));
      const LayerMemory lm = layer_memory(spec, micro, l);
      m.activations_per_microbatch += lm.stash;
      m.rematerialized = std::max(m.rematerialized, lm.rematerialized);
      m.offload_buffers = std::max(m.offload_buffers, lm.offload_buffers);
      chunk_stash[chunk] += lm.stash;
      chunk_host[chunk] += lm.host;
    }
    const std::uint64_t stored = bytes_of(spec.precision.params);
    m.chunks = static_cast<std::uint32_t>(stage.chunks.size());
    m.params = stored * params;
    m.grads = stored * params;  // accumulated over the microbatches
    m.optimizer = static_cast<std::uint64_t>(spec.optimizer.state_bytes_per_param * double(optimized));
    if (fsdp > 1) m.gathered = 3 * hw::kBf16Bytes * largest;  // gathered as BF16 (program_builder.cpp)
    // The stashes the schedule holds at once: a chunk's from its forward
    // to its backward (without interleaving, the stage's one chunk, so
    // the microbatches in flight times one microbatch's stash).
    const auto tasks = stage_tasks(par.schedule, par.pipeline.degree, s, par.microbatches, par.virtual_stages);
    m.microbatches_in_flight = peak_in_flight(tasks);
    std::uint64_t live = 0, host = 0;
    for (const auto& t : tasks) {
      if (t.backward) {
        live -= chunk_stash[t.chunk];
        host -= chunk_host[t.chunk];
      } else {
        live += chunk_stash[t.chunk];
        host += chunk_host[t.chunk];
        m.activations = std::max(m.activations, live);
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
                                                                   const hw::Program& prog, const ChipProgramMap& map,
                                                                   const std::vector<hw::OpTiming>& timings) {
  // What a layer's backward holds again comes and goes with it; the
  // offload buffers are held all step.
  const std::uint64_t held = m.total() - m.activations - m.rematerialized;
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
    const auto stash = static_cast<std::int64_t>(lm.stash), redo = static_cast<std::int64_t>(lm.rematerialized);
    if (!pass.backward) {
      changes.emplace_back(first, stash);
    } else {
      if (redo > 0) changes.insert(changes.end(), {{first, redo}, {last, -redo}});
      changes.emplace_back(last, -stash);
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

std::string memory_breakdown(const ChipMemory& m, std::uint64_t capacity) {
  return "needs " + binary_bytes(double(m.total())) + " of " + binary_bytes(double(capacity)) + ": parameters " +
         binary_bytes(double(m.params)) + ", gradients " + binary_bytes(double(m.grads)) + ", optimizer " +
         binary_bytes(double(m.optimizer)) + ", activations " + binary_bytes(double(m.activations)) + " (" +
         std::to_string(m.microbatches_in_flight) + (m.chunks > 1 ? " chunk passes" : " microbatch") +
         (m.microbatches_in_flight == 1 || m.chunks > 1 ? "" : "es") + " in flight" +
         (m.chunks > 1 ? ", " + binary_bytes(double(m.activations_per_microbatch)) + " per microbatch over " +
                             std::to_string(m.chunks) + " chunks)"
                       : " x " + binary_bytes(double(m.activations_per_microbatch)) + ")") +
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
