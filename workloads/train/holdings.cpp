#include "workloads/train/holdings.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "sim/units.h"
#include "workloads/train/tensor_split.h"

namespace workloads {

namespace {

bool repeated(const models::ModelSpec& model, std::size_t l) { return l > 0 && is_repeated_layer(model.layers[l]); }

bool any_at(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l, TensorPlace place) {
  const models::LayerSpec& layer = model.layers[l];
  return std::any_of(layer.stash.begin(), layer.stash.end(),
                     [&](const models::StashSpec& s) { return stash_place(spec, model, l, s) == place; });
}

// The forward items of `layer` a per-tensor policy recomputes: the
// producers of every stash entry it recomputes, and theirs, back to what
// the backward finds kept or fetched from the host (or the layer's input).
models::LayerSpec recompute_walk(const TrainSpec& spec, const models::LayerSpec& layer) {
  const TensorPlaces places = policy_places(spec.remat, spec.remat_tensors);
  std::set<std::string> available;  // tensors the backward has without recomputing
  for (const auto& s : layer.stash)
    if (stash_place(places, layer, s) != TensorPlace::remat) available.insert(s.name);
  std::map<std::string, std::string> op_of_output, output_of_op;
  std::map<std::string, std::vector<std::string>> after_of;
  const auto index = [&](const auto& items) {
    for (const auto& it : items) {
      op_of_output[it.output] = it.name;
      output_of_op[it.name] = it.output;
      after_of[it.name] = it.after;
    }
  };
  index(layer.forward);
  index(layer.elementwise_fwd);
  index(layer.exchange_fwd);
  std::set<std::string> redo;  // op names
  std::vector<std::string> todo;
  for (const auto& s : layer.stash) {
    if (available.count(s.name)) continue;
    auto it = op_of_output.find(s.name);
    // Flash attention's log-sum-exp comes out of the kernel's softmax.
    if (it == op_of_output.end() && s.name.size() > 4 && s.name.compare(s.name.size() - 4, 4, ".lse") == 0)
      it = op_of_output.find(s.name.substr(0, s.name.size() - 4) + ".probs");
    if (it == op_of_output.end())
      throw std::logic_error("stash entry '" + s.name + "' of " + layer.name + " has no forward op writing it");
    todo.push_back(it->second);
  }
  while (!todo.empty()) {
    const std::string op = todo.back();
    todo.pop_back();
    if (!redo.insert(op).second) continue;
    for (const auto& a : after_of.at(op)) {
      auto o = output_of_op.find(a);  // not an op of the layer: a ring attention permute, which stays
      if (o != output_of_op.end() && !available.count(o->second)) todo.push_back(a);
    }
  }
  models::LayerSpec out = layer;
  const auto keep = [&](auto& items) {
    items.erase(std::remove_if(items.begin(), items.end(), [&](const auto& it) { return !redo.count(it.name); }),
                items.end());
    for (auto& it : items)
      it.after.erase(std::remove_if(it.after.begin(), it.after.end(),
                                    [&](const std::string& a) { return output_of_op.count(a) && !redo.count(a); }),
                     it.after.end());
  };
  keep(out.forward);
  keep(out.elementwise_fwd);
  keep(out.exchange_fwd);
  return out;
}

}  // namespace

TensorPlace stash_place(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l,
                        const models::StashSpec& s) {
  const models::LayerSpec& layer = model.layers[l];
  if (!repeated(model, l) || spec.remat == Remat::none) return TensorPlace::device;
  if (spec.remat == Remat::offload) return TensorPlace::offload;
  if (per_tensor(spec.remat)) return stash_place(policy_places(spec.remat, spec.remat_tensors), layer, s);
  return s.name == layer.name + ".in" ? TensorPlace::device : TensorPlace::remat;  // full, minimal
}

std::uint64_t stash_bytes(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l, TensorPlace place) {
  const models::LayerSpec& layer = model.layers[l];
  return local_stash_bytes(layer, spec.parallelism.tensor.degree, sequence_split(layer, spec.parallelism.sequence),
                           [&](const models::StashSpec& s) { return stash_place(spec, model, l, s) == place; });
}

bool rematerialized(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l) {
  if (per_tensor(spec.remat)) return repeated(model, l) && any_at(spec, model, l, TensorPlace::remat);
  return (spec.remat == Remat::full || spec.remat == Remat::minimal) && repeated(model, l);
}

bool offloaded(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l) {
  return repeated(model, l) && any_at(spec, model, l, TensorPlace::offload);
}

models::LayerSpec recomputed_forward(const TrainSpec& spec, const models::LayerSpec& layer) {
  if (per_tensor(spec.remat)) return recompute_walk(spec, layer);
  models::LayerSpec redo = layer;
  if (spec.remat != Remat::minimal) return redo;
  std::set<std::string> saved;
  std::vector<models::MatmulSpec> kept;
  for (const auto& mm : layer.forward) {
    if (mm.kind == models::MatmulKind::linear) {
      saved.insert(mm.name);
    } else {
      kept.push_back(mm);
    }
  }
  redo.forward = std::move(kept);
  const auto drop_saved = [&](std::vector<std::string>& after) {
    after.erase(std::remove_if(after.begin(), after.end(), [&](const std::string& a) { return saved.count(a) > 0; }),
                after.end());
  };
  for (auto& mm : redo.forward) drop_saved(mm.after);
  for (auto& e : redo.elementwise_fwd) drop_saved(e.after);
  for (auto& x : redo.exchange_fwd) drop_saved(x.after);
  return redo;
}

std::uint64_t held_elements(const models::ModelSpec& model, const StageLayers& stage, std::size_t layer,
                            std::uint32_t tp) {
  std::uint64_t n = 0;
  for (const auto* p : held_params(model, stage, layer)) n += local_param_elements(*p, tp);
  return n;
}

std::uint64_t gathered_elements(std::uint64_t elements, std::uint32_t ranks) {
  return sim::ceil_div(elements, ranks) * ranks;
}

std::vector<const models::ParamSpec*> held_params(const models::ModelSpec& model, const StageLayers& stage,
                                                  std::size_t layer) {
  std::vector<const models::ParamSpec*> out;
  const models::LayerSpec& l = model.layers[layer];
  for (const auto& p : l.params) out.push_back(&p);
  // A weight is the layer's own but for a tied one (the unembedding reads
  // the embedding's table): only those are looked up in the whole model,
  // so a model of L layers costs O(L), not O(L^2).
  const auto own = [&l](const std::string& name) {
    return std::any_of(l.params.begin(), l.params.end(), [&](const models::ParamSpec& p) { return p.name == name; });
  };
  for (const auto& mm : l.forward) {
    if (mm.weight.empty() || own(mm.weight)) continue;
    const models::LayerSpec* owner = model.owner_of(mm.weight);
    if (!owner) continue;
    const std::size_t at = static_cast<std::size_t>(owner - model.layers.data());
    if (stage.holds(at)) continue;
    for (const auto& p : owner->params)
      if (p.name == mm.weight && std::find(out.begin(), out.end(), &p) == out.end()) out.push_back(&p);
  }
  return out;
}

std::optional<TiedParam> tied_param(const models::ModelSpec& model, const TrainLayout& layout) {
  const auto stage_of = [&](std::size_t layer) {
    for (std::uint32_t s = 0; s < layout.stages.size(); ++s)
      if (layout.stages[s].holds(layer)) return s;
    throw std::logic_error("layer on no pipeline stage");
  };
  for (std::uint32_t s = 0; s < layout.stages.size(); ++s)
    for (std::size_t l : layout.stages[s].layers())
      for (const auto* p : held_params(model, layout.stages[s], l)) {
        if (std::find_if(model.layers[l].params.begin(), model.layers[l].params.end(),
                         [p](const models::ParamSpec& own) { return &own == p; }) != model.layers[l].params.end())
          continue;  // its own
        const models::LayerSpec* owner = model.owner_of(p->name);
        if (!owner || owner == &model.layers[l]) continue;  // its own
        const std::size_t at = static_cast<std::size_t>(owner - model.layers.data());
        return TiedParam{p, stage_of(at), s, at, l};
      }
  return std::nullopt;
}

}  // namespace workloads
