#include "workloads/train/stages.h"

#include <stdexcept>

namespace workloads {

bool is_repeated_layer(const models::LayerSpec& layer) {
  return layer.kind == models::LayerKind::transformer_block || layer.kind == models::LayerKind::dense;
}

std::size_t repeated_layers(const models::ModelSpec& model) {
  std::size_t n = 0;
  for (const auto& l : model.layers) n += is_repeated_layer(l) ? 1 : 0;
  return n;
}

std::vector<StageLayers> split_stages(const models::ModelSpec& model, std::uint32_t stages) {
  const std::size_t repeated = repeated_layers(model);
  if (stages == 0 || repeated % stages != 0)
    throw std::invalid_argument("split_stages: stages do not divide the layers");
  std::size_t first = 0;
  while (first < model.layers.size() && !is_repeated_layer(model.layers[first])) ++first;
  const std::size_t per_stage = repeated / stages;
  std::vector<StageLayers> out(stages);
  for (std::uint32_t s = 0; s < stages; ++s) {
    out[s].begin = s == 0 ? 0 : first + s * per_stage;
    out[s].end = s + 1 == stages ? model.layers.size() : first + (s + 1) * per_stage;
  }
  return out;
}

}  // namespace workloads
