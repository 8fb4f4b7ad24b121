#include "workloads/inference/step_time.h"

#include <cmath>
#include <optional>

#include "runtime/limits.h"
#include "runtime/pod_run.h"
#include "sim/error.h"
#include "sim/units.h"
#include "workloads/train/experts.h"

namespace workloads {

StepProgram step_program(const Experiment& exp, const InferenceSpec& spec, const models::ModelSpec& model,
                         const std::vector<models::LayerRouting>& routing) {
  const QuantizedMatmuls q{spec.dtype.weights != hw::NumberFormat::bf16, spec.dtype.kv_cache != hw::NumberFormat::bf16};
  StepProgram s{build_forward_program(exp, spec.forward_step(), model, q, routing), pod_config(exp)};
  s.config.chip = s.program.chip;
  return s;
}

namespace {

// Whether every block of the model is the same layer: a mixture of experts
// routes each block's tokens by a draw of its own, and sliding-window
// models may alternate local and global blocks.
bool blocks_alike(const models::TransformerConfig& cfg) {
  if (cfg.moe()) return false;
  for (std::uint64_t i = 1; i < cfg.layers; ++i)
    if (cfg.local_layer(i) != cfg.local_layer(0)) return false;
  return true;
}

// How much later every op of the probe's last block ran than its
// counterpart of the block before it, on every chip (the same shift for
// the start and the end of each), or nothing when they did not run so.
// The probe's layers: the embedding, kProbeBlocks blocks, the output.
std::optional<std::uint64_t> block_period(const ForwardProgram& fp, const runtime::PodRunResult& r) {
  std::optional<std::uint64_t> period;
  for (std::size_t c = 0; c < r.timings.size(); ++c) {
    const std::vector<std::uint32_t>& begin = fp.layer_begin.at(fp.pod.program_of.at(c));
    const std::uint32_t a = begin.at(kProbeBlocks - 1), b = begin.at(kProbeBlocks), end = begin.at(kProbeBlocks + 1);
    if (end - b != b - a) return std::nullopt;
    const std::vector<hw::OpTiming>& t = *r.timings[c];
    for (std::uint32_t j = 0; j < b - a; ++j) {
      const hw::OpTiming& x = t.at(a + j);
      const hw::OpTiming& y = t.at(b + j);
      if (y.start_ps < x.start_ps) return std::nullopt;
      const std::uint64_t d = y.start_ps - x.start_ps;
      if (!period) period = d;
      if (d != *period || y.end_ps != x.end_ps + d) return std::nullopt;
    }
  }
  return period;
}

// Whether the whole run passes run_pod's host budget checks (run_budget.h;
// `every_chip` as check_pod_run_budget): each of their terms (chips, ops,
// collective ends, PE cycles) grows at most as the blocks do, so the probe
// within `share` (its blocks over the whole model's) of every limit puts
// the whole run within them. Else the whole model runs and its own checks
// decide.
bool within_budget(const StepProgram& probe, double share, bool every_chip) {
  runtime::PodConfig scaled = probe.config;
  scaled.limits.max_memory_bytes = runtime::memory_limit_bytes(probe.config.limits) * share;
  scaled.limits.max_pe_cycles = probe.config.limits.max_pe_cycles * share;
  try {
    runtime::check_pod_run_budget(scaled, probe.program.pod, every_chip);
  } catch (const sim::SimFailure&) {
    return false;
  }
  return true;
}

// The probe's answer for the whole model, or nothing when it does not
// stand for the whole run (step_time).
std::optional<double> from_probe(const Experiment& exp, const InferenceSpec& spec, const StepModel& model) {
  const models::TransformerConfig& cfg = spec.model.transformer;
  models::TransformerConfig few = cfg;
  few.layers = kProbeBlocks;
  const models::ModelSpec probe_model = model(few);
  if (probe_model.layers.size() != kProbeBlocks + 2) return std::nullopt;
  for (std::uint64_t b = 1; b <= kProbeBlocks; ++b)
    if (probe_model.layers[b].kind != models::LayerKind::transformer_block) return std::nullopt;
  const StepProgram probe = step_program(exp, spec, probe_model, {});
  const double share = double(kProbeBlocks) / double(cfg.layers);
  if (!within_budget(probe, share, false)) return std::nullopt;
  const runtime::PodRunResult r = runtime::run_pod(probe.config, probe.program.pod, false);
  if (r.chips_simulated == int(r.timings.size()) && !within_budget(probe, share, true)) return std::nullopt;
  if (r.replica_spread_s != 0 || r.spread_rejected) return std::nullopt;
  const std::optional<std::uint64_t> period = block_period(probe.program, r);
  const auto probe_ps = static_cast<std::uint64_t>(std::llround(r.step_time_s * sim::kPsPerSecond));
  if (!period || sim::ps_to_seconds(probe_ps) != r.step_time_s) return std::nullopt;
  const double step_s = sim::ps_to_seconds(probe_ps + (cfg.layers - kProbeBlocks) * *period);
  // Where the whole run would stop: its simulated time, and its events (a
  // block's are at most the probe's over its kProbeBlocks blocks, so
  // probe x layers bounds them thrice over).
  const double events = double(r.kernel_events + r.network_events);
  if (!(step_s < exp.limits.max_sim_time_s) || events * double(cfg.layers) >= double(exp.limits.max_events))
    return std::nullopt;
  return step_s;
}

}  // namespace

StepTime step_time(const Experiment& exp, const InferenceSpec& spec, const StepModel& model, bool whole) {
  const models::TransformerConfig& cfg = spec.model.transformer;
  if (!whole && cfg.layers > kProbeBlocks && blocks_alike(cfg)) {
    if (const std::optional<double> s = from_probe(exp, spec, model)) {
      return {*s, true};
    }
  }
  const models::ModelSpec m = model(cfg);
  const StepProgram p = step_program(exp, spec, m, moe_routing(spec.forward_step(), m));
  return {runtime::run_pod(p.config, p.program.pod, false).step_time_s, false};
}

}  // namespace workloads
