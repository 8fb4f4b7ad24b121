#include "plan/estimate.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/model_config.h"
#include "sim/error.h"
#include "workloads/experiment.h"
#include "workloads/maxtext/config.h"
#include "workloads/maxtext/to_train.h"
#include "workloads/train/layout.h"
#include "workloads/train/memory.h"
#include "workloads/train/spec.h"

namespace plan {

namespace {

using workloads::ChipMemory;
using workloads::Experiment;
using workloads::TrainSpec;

}  // namespace

TrainStep train_step_of(const std::string& text, const std::string& path, const std::vector<std::string>& overrides) {
  Experiment loaded = workloads::load_experiment_text(text, path, overrides);  // every check tpusim run makes
  sim::YamlNode root = sim::YamlNode::load_string(text, path);
  for (const auto& o : overrides)  // the workload's (the loader above took the rest: what-ifs on a named chip)
    if (o.rfind("workload", 0) == 0) root.apply_override(o);
  const sim::YamlNode w = root["workload"];
  TrainStep s{w["kind"].as_string(), workloads::experiment_settings(loaded), {}};
  if (s.kind == "train") {
    s.spec = workloads::load_train_spec(w, loaded);
    return s;
  }
  const sim::YamlNode flags = w["xla_flags"];
  workloads::MaxTextConfig cfg = workloads::load_maxtext_config(w["config"], flags.present() ? &flags : nullptr,
                                                                loaded.pod.devices(), loaded.pod.slices, false);
  workloads::MaxTextTrain train =
      workloads::maxtext_to_train(cfg, w["config"], flags.present() ? &flags : nullptr, loaded);
  s.exp.mesh = train.mesh;
  s.exp.pod.dcn_axes = train.dcn_axes;
  s.spec = std::move(train.spec);
  return s;
}

namespace {

// The fullest chip's largest item, as memory_breakdown names them.
std::pair<std::string, std::uint64_t> largest_item(const ChipMemory& m) {
  const std::pair<const char*, std::uint64_t> items[] = {
      {"parameters", m.params},           {"gradients", m.grads},
      {"optimizer state", m.optimizer},   {"activations", m.activations},
      {"gathered weights", m.gathered},   {"rematerialized layer", m.rematerialized},
      {"ring attention buffers", m.ring}, {"host offload buffers", m.offload_buffers}};
  std::pair<std::string, std::uint64_t> best{"", 0};
  for (const auto& [name, bytes] : items)
    if (bytes > best.second) best = {name, bytes};
  return best;
}

struct ModelTotals {
  double matmul_flops = 0;         // forward + backward matmuls the chips must run, the whole batch
  double block_forward_flops = 0;  // the blocks' forward matmuls (remat full's recompute)
  // Parameters of the repeated blocks one chip holds before tensor and
  // pipeline parallelism split them, the experts' weights apart: with
  // expert parallelism of e a chip holds 1 / e of them (whole experts),
  // and FSDP gathers and the gradient reduction move only those, the
  // latter over the data and context axes alone (the expert ranks hold
  // other experts; TrainParallelism::gradient_axes).
  double dense_block_params = 0, expert_block_params = 0;
  std::uint64_t blocks = 0;
};

// The share of a causal attention matmul's square that any kernel runs:
// the causal triangle, half of it, or with a sliding window of W keys over
// T queries the band, (W / T)(1 - W / 2T). A fused kernel skips the rest
// (docs/matmul.md "Fused kernels"); a materialized one runs all of it.
double causal_share(const models::MatmulSpec& mm) {
  const double t = double(mm.m);
  if (mm.window == 0 || double(mm.window) >= t) return 0.5;
  const double w = double(mm.window);
  return w / t * (1.0 - w / (2.0 * t));
}

// `micro`: the chip's model of a microbatch (TrainSpec::chip_model, the
// model estimate_candidate lays out), whose expert weights name their shards.
ModelTotals totals_of(const TrainSpec& spec, const models::ModelSpec& micro) {
  const models::ModelSpec whole = models::build_model(spec.model, spec.global_batch);
  ModelTotals t;
  for (const models::LayerSpec& l : whole.layers) {
    double fwd = 0, all = 0;
    for (const auto* list : {&l.forward, &l.backward})
      for (const models::MatmulSpec& mm : *list) {
        const double share = mm.causal == models::Causal::none ? 1.0 : causal_share(mm);
        const double f = share * 2.0 * double(mm.count) * double(mm.m) * double(mm.k) * double(mm.n);
        all += f;
        if (list == &l.forward) fwd += f;
      }
    t.matmul_flops += all;
    if (l.kind == models::LayerKind::transformer_block) {
      t.block_forward_flops += fwd;
      ++t.blocks;
    }
  }
  // The chip's model (expert_shards = e) names each expert weight's shards.
  for (const models::LayerSpec& l : micro.layers)
    if (l.kind == models::LayerKind::transformer_block)
      for (const models::ParamSpec& ps : l.params)
        (ps.shards > 1 ? t.expert_block_params : t.dense_block_params) += double(ps.elements()) / double(ps.shards);
  return t;
}

void bound(Estimate& e, const Experiment& exp, const TrainSpec& spec, const models::ModelSpec& micro) {
  const auto& par = spec.parallelism;
  const hw::ChipConfig& chip = exp.chip;
  const ModelTotals t = totals_of(spec, micro);
  const double chips = double(exp.pod.devices());
  std::uint32_t rate = 1;
  if (spec.precision.matmul != hw::NumberFormat::bf16)
    rate = std::max<std::uint32_t>(1, chip.format_rate(spec.precision.matmul));
  const double peak = chip.peak_flops_per_s() * chip.compute_efficiency * double(rate);
  const double flops = t.matmul_flops + (recomputes_forward(spec) ? t.block_forward_flops : 0.0);
  const double p = par.pipeline.degree, m = par.microbatches;
  e.compute_s = flops / chips / peak * (m + p - 1) / m;

  // Bytes one chip moves, per step.
  const double split = double(par.tensor.degree) * double(par.pipeline.degree);
  // The chip's tensor and stage share of the blocks' BF16 weights.
  const double dense_bf16 = 2.0 * t.dense_block_params / split, expert_bf16 = 2.0 * t.expert_block_params / split;
  const double bandwidth = double(chip.ici.links_per_chip) * chip.ici.link_bandwidth;
  std::vector<std::pair<std::string, double>> moves;
  if (par.fsdp.degree > 1) {
    const double n = par.fsdp.degree;
    moves.push_back({"fsdp weight gathers", 2.0 * m * (dense_bf16 + expert_bf16) * (n - 1) / n});
  }
  // (N - 1)/N of what a chip holds leaves it, N the reducing chips.
  const auto leaves = [&](double bf16, double n) { return bf16 / double(par.fsdp.degree) * (n - 1) / n; };
  const double grads =
      leaves(dense_bf16, par.gradient_axes().degree) + leaves(expert_bf16, par.gradient_axes(true).degree);
  if (grads > 0) moves.push_back({"gradient reduction", grads});
  if (par.tensor.degree > 1) {
    const double n = par.tensor.degree;
    const double tokens = double(spec.microbatch_size()) * double(spec.chip_model().transformer.seq_len);
    const double act = 2.0 * tokens * double(spec.model.transformer.d_model);
    const double blocks = double(t.blocks) / double(par.pipeline.degree);
    moves.push_back({"tensor-parallel reductions", 4.0 * blocks * m * act * (n - 1) / n});
  }
  for (const auto& [what, bytes] : moves) {
    const double s = bandwidth > 0 ? bytes / bandwidth : 0;
    if (s > e.communication_s) {
      e.communication_s = s;
      e.communication_by = what;
    }
  }
}

}  // namespace

bool recomputes_forward(const TrainSpec& spec) {
  // remat: full (kind: train) and remat_policy: full (kind: maxtext, a
  // custom policy with every tensor recomputed) run each block's forward
  // again; other policies recompute less, which the bound leaves out.
  if (spec.remat == workloads::Remat::full) return true;
  if (spec.remat != workloads::Remat::custom) return false;
  return std::all_of(spec.remat_tensors.begin(), spec.remat_tensors.end(),
                     [](const auto& t) { return t.second == workloads::TensorPlace::remat; });
}

Estimate estimate_candidate(const std::string& text, const std::string& path, double max_memory_fraction,
                            const std::vector<std::string>& overrides) {
  Estimate e;
  TrainStep s;
  try {
    s = train_step_of(text, path, overrides);
  } catch (const sim::ConfigError& err) {
    e.message = err.detail().empty() ? err.what() : err.key_path() + ": " + err.detail();
    return e;
  }
  const models::ModelSpec micro = models::build_model(s.spec.chip_model(), s.spec.microbatch_size());
  workloads::TrainLayout layout;
  try {
    layout = workloads::make_train_layout(s.exp, s.spec.parallelism, micro);
  } catch (const std::logic_error& err) {
    // What the loader let through and the step cannot lay out (kind:
    // maxtext does not check that the stages divide the layers): tpusim
    // run would stop with an internal error, so the planner skips it.
    e.message = std::string("tpusim cannot lay this step out: ") + err.what();
    return e;
  }
  const std::vector<ChipMemory> memory = workloads::train_memory(s.spec, layout, micro);
  const auto fullest = std::max_element(memory.begin(), memory.end(),
                                        [](const ChipMemory& a, const ChipMemory& b) { return a.total() < b.total(); });
  e.memory_bytes = fullest->total();
  e.capacity_bytes = std::uint64_t(double(s.exp.chip.hbm.capacity_bytes) * max_memory_fraction);
  std::tie(e.largest_item, e.largest_item_bytes) = largest_item(*fullest);
  bound(e, s.exp, s.spec, micro);
  e.status = Estimate::Status::fits;
  try {
    workloads::check_memory_fits(memory, layout, e.capacity_bytes);
  } catch (const sim::SimFailure& f) {
    e.status = Estimate::Status::does_not_fit;
    e.message = f.what();
    return e;
  }
  try {
    workloads::check_host_memory_fits(memory, s.exp.chip.host);
  } catch (const sim::SimFailure& f) {
    // HBM fits; the activations offloaded to the host do not: the figures
    // are the host's (an HBM excess here was negative: "does not fit by
    // -10 GiB").
    e.status = Estimate::Status::does_not_fit;
    e.message = f.what();
    e.memory = "host memory";
    for (const auto& [name, value] : f.numbers()) {
      if (name == "needed_bytes") e.memory_bytes = static_cast<std::uint64_t>(value);
      if (name == "capacity_bytes") e.capacity_bytes = static_cast<std::uint64_t>(value);
    }
    e.largest_item = "activations offloaded to host memory";
    e.largest_item_bytes = e.memory_bytes;
  }
  return e;
}

}  // namespace plan
