#include "plan/fit_advice.h"

#include <algorithm>
#include <utility>

#include "plan/estimate.h"
#include "sim/text.h"
#include "workloads/train/memory.h"
#include "workloads/train/remat_policy.h"

namespace plan {

namespace {

using workloads::Remat;
using workloads::TrainSpec;

// A mesh-axes value as the loader reads it: 1 for none, a name, or a list.
std::string axes_value(const std::vector<std::string>& axes) {
  if (axes.empty()) return "1";
  return axes.size() == 1 ? axes[0] : sim::flow_list(axes, ",");
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// kind: train's levers, each as the --set arguments that pull it.
std::vector<FitChange> train_levers(const TrainSpec& spec,
                                    const std::vector<std::pair<std::string, std::uint32_t>>& mesh) {
  const workloads::TrainParallelism& par = spec.parallelism;
  const std::string p = "workload.parallelism.";
  std::vector<FitChange> out;
  const std::vector<std::string>& data = par.data.degree > 1 ? par.data.axes : std::vector<std::string>{};
  if (!data.empty()) {
    out.push_back({"FSDP over the data axes", {p + "fsdp=" + axes_value(joined(par.fsdp.axes, data)), p + "data=1"}});
    if (par.zero == 0 && par.fsdp.degree == 1) out.push_back({"ZeRO-1 over the data axes", {p + "zero=1"}});
  }
  if (spec.remat != Remat::full && spec.remat != Remat::offload)
    out.push_back({"remat: full", {"workload.remat=full"}});
  if (!workloads::offloads_to_host(spec.remat, spec.remat_tensors)) {
    out.push_back({"remat: offload (stashes to host memory)", {"workload.remat=offload"}});
    // MaxText's most used policy in the published recipes: each block's
    // input to host memory, everything else recomputed.
    out.push_back({"blocks' inputs to host memory, the rest recomputed",
                   {"workload.remat=custom", "workload.remat_tensors={decoder_layer_input: offload}"}});
  }
  const std::uint64_t batch = spec.replica_batch();
  for (std::uint32_t k : {2u, 4u, 8u}) {
    const std::uint64_t m = std::uint64_t(par.microbatches) * k;
    if (m <= batch && batch % m == 0)
      out.push_back({std::to_string(m) + " microbatches", {p + "microbatches=" + std::to_string(m)}});
  }
  for (const std::string& axis : data) {
    std::vector<std::string> rest;
    for (const std::string& a : data)
      if (a != axis) rest.push_back(a);
    out.push_back({"tensor parallelism over axis " + axis,
                   {p + "tensor=" + axes_value(joined(par.tensor.axes, {axis})), p + "data=" + axes_value(rest)}});
    out.push_back({"context parallelism over axis " + axis,
                   {p + "context=" + axes_value(joined(par.context.axes, {axis})), p + "data=" + axes_value(rest)}});
  }
  // Context parallelism carved out of a data or FSDP mesh axis: the axis
  // split in two, its minor part (f chips) a new axis the sequences are
  // split over (the loader refuses splits that cut a physical axis).
  for (const auto& [axis, size] : mesh) {
    const bool batch_axis = std::count(data.begin(), data.end(), axis) > 0 ||
                            std::count(par.fsdp.axes.begin(), par.fsdp.axes.end(), axis) > 0;
    if (!batch_axis) continue;
    for (std::uint32_t f : {2u, 4u, 8u}) {
      if (f >= size || size % f != 0) continue;
      const std::string ctx = axis + "_context";
      std::string text = "mesh={";
      for (const auto& [a, n] : mesh) {
        text += (text.back() == '{' ? "" : ", ") + a + ": " + std::to_string(a == axis ? n / f : n);
        if (a == axis) text += ", " + ctx + ": " + std::to_string(f);
      }
      out.push_back({"context parallelism over " + std::to_string(f) + " chips of axis " + axis,
                     {text + "}", p + "context=" + axes_value(joined(par.context.axes, {ctx}))}});
    }
  }
  return out;
}

// kind: maxtext's, in MaxText's keys.
std::vector<FitChange> maxtext_levers(const TrainSpec& spec) {
  const std::string c = "workload.config.";
  std::vector<FitChange> out;
  if (spec.parallelism.data.degree > 1)
    out.push_back({"FSDP over the data axis (ici)", {c + "ici_fsdp_parallelism=-1", c + "ici_data_parallelism=1"}});
  if (!recomputes_forward(spec)) out.push_back({"remat_policy: full", {c + "remat_policy=full"}});
  if (!workloads::offloads_to_host(spec.remat, spec.remat_tensors)) {
    out.push_back(
        {"remat_policy: minimal_offloaded (projections to host memory)", {c + "remat_policy=minimal_offloaded"}});
    out.push_back({"blocks' inputs to host memory, the rest recomputed",
                   {c + "remat_policy=custom", c + "decoder_layer_input=offload"}});
  }
  if (spec.parallelism.context.degree == 1)
    for (std::uint32_t f : {2u, 4u})
      out.push_back({"context parallelism over " + std::to_string(f) + " chips",
                     {c + "ici_context_parallelism=" + std::to_string(f), c + "ici_fsdp_parallelism=-1"}});
  return out;
}

// Whether two changes set the same key (they cannot be combined).
bool overlap(const FitChange& a, const FitChange& b) {
  for (const std::string& x : a.sets)
    for (const std::string& y : b.sets)
      if (x.substr(0, x.find('=')) == y.substr(0, y.find('='))) return true;
  return false;
}

}  // namespace

FitAdvice fit_advice(const std::string& text, const std::string& path, const std::vector<std::string>& overrides) {
  const TrainStep step = train_step_of(text, path, overrides);
  const Estimate now = estimate_candidate(text, path, 1.0, overrides);
  FitAdvice advice{now.largest_item, now.largest_item_bytes, now.capacity_bytes, {}};
  const std::vector<FitChange> levers =
      step.kind == "train" ? train_levers(step.spec, step.exp.mesh) : maxtext_levers(step.spec);
  // The changes that fit among `tried`, each estimated with the run's own
  // overrides first and its sets after them.
  const auto fitting = [&](std::vector<FitChange> tried) {
    std::vector<FitChange> fit;
    for (FitChange& change : tried) {
      const Estimate e = estimate_candidate(text, path, 1.0, joined(overrides, change.sets));
      if (e.status != Estimate::Status::fits) continue;
      change.memory_bytes = e.memory_bytes;
      change.bound_s = e.bound_s();
      fit.push_back(std::move(change));
    }
    return fit;
  };
  std::vector<FitChange> fit = fitting(levers);
  if (fit.empty()) {
    std::vector<FitChange> pairs;
    for (std::size_t i = 0; i < levers.size(); ++i)
      for (std::size_t j = i + 1; j < levers.size(); ++j)
        if (!overlap(levers[i], levers[j]))
          pairs.push_back({levers[i].what + " and " + levers[j].what, joined(levers[i].sets, levers[j].sets)});
    fit = fitting(std::move(pairs));
  }
  std::stable_sort(fit.begin(), fit.end(), [](const FitChange& a, const FitChange& b) {
    if (a.bound_s != b.bound_s) return a.bound_s < b.bound_s;
    return a.sets.size() < b.sets.size();
  });
  if (fit.size() > 3) fit.resize(3);
  advice.fits = std::move(fit);
  return advice;
}

std::string describe(const FitAdvice& advice) {
  std::string s =
      "Largest item: " + advice.largest_item + ", " + workloads::binary_bytes(double(advice.largest_item_bytes)) + ".";
  if (advice.fits.empty())
    return s +
           " No change of one or two of this step's memory levers (FSDP, ZeRO-1, remat, host offload, "
           "microbatches, a data axis to tensor or context parallelism) fits: it needs more chips (tpusim plan "
           "searches every mesh)";
  s += " Changes that fit, fastest lower bound first:";
  for (std::size_t i = 0; i < advice.fits.size(); ++i) {
    const FitChange& f = advice.fits[i];
    s += " (" + std::to_string(i + 1) + ") " + f.what + ":";
    for (const std::string& set : f.sets)  // quoted where a shell would split it
      s += set.find(' ') == std::string::npos ? " --set " + set : " --set \"" + set + "\"";
    s += " (" + workloads::binary_bytes(double(f.memory_bytes)) + " of " +
         workloads::binary_bytes(double(advice.capacity_bytes)) + ");";
  }
  s.back() = '.';
  return s;
}

}  // namespace plan
