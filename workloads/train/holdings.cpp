#include "workloads/train/holdings.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "sim/units.h"
#include "workloads/train/tensor_split.h"

namespace workloads {

bool rematerialized(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l) {
  return (spec.remat == Remat::full || spec.remat == Remat::minimal) && l > 0 && is_repeated_layer(model.layers[l]);
}

bool offloaded(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l) {
  return spec.remat == Remat::offload && l > 0 && is_repeated_layer(model.layers[l]);
}

models::LayerSpec recomputed_forward(const TrainSpec& spec, const models::LayerSpec& layer) {
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
