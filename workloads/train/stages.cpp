#include "workloads/train/stages.h"

#include <stdexcept>

namespace workloads {

bool StageLayers::holds(std::size_t layer) const {
  for (const auto& c : chunks)
    if (layer >= c.begin && layer < c.end) return true;
  return false;
}

std::vector<std::size_t> StageLayers::layers() const {
  std::vector<std::size_t> out;
  for (const auto& c : chunks)
    for (std::size_t l = c.begin; l < c.end; ++l) out.push_back(l);
  return out;
}

bool is_repeated_layer(const models::LayerSpec& layer) {
  return layer.kind == models::LayerKind::transformer_block || layer.kind == models::LayerKind::dense;
}

std::size_t repeated_layers(const models::ModelSpec& model) {
  std::size_t n = 0;
  for (const auto& l : model.layers) n += is_repeated_layer(l) ? 1 : 0;
  return n;
}

std::vector<StageLayers> split_stages(const models::ModelSpec& model, std::uint32_t stages,
                                      std::uint32_t virtual_stages) {
  const std::size_t repeated = repeated_layers(model);
  const std::size_t ranges = std::size_t{stages} * virtual_stages;
  if (ranges == 0 || repeated % ranges != 0)
    throw std::invalid_argument("split_stages: stages x virtual stages do not divide the layers");
  std::size_t first = 0;
  while (first < model.layers.size() && !is_repeated_layer(model.layers[first])) ++first;
  const std::size_t per_range = repeated / ranges;
  std::vector<StageLayers> out(stages);
  for (std::size_t k = 0; k < ranges; ++k) {
    LayerRange r;
    r.begin = k == 0 ? 0 : first + k * per_range;
    r.end = k + 1 == ranges ? model.layers.size() : first + (k + 1) * per_range;
    out[k % stages].chunks.push_back(r);  // range k is chunk k / p of stage k % p
  }
  return out;
}

}  // namespace workloads
