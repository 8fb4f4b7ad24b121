#pragma once
// How a pipeline splits a model: which layers repeat (and so split evenly
// over stages) and which layers each stage runs.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/model_spec.h"

namespace workloads {

// Layer indices [begin, end) of one chunk of a pipeline stage.
struct LayerRange {
  std::size_t begin = 0, end = 0;
};

// The layers one pipeline stage runs: one contiguous chunk, or with an
// interleaved schedule V chunks (its virtual stages), chunk v being the
// model's (v p + s)-th range of layers (Narayanan et al. 2021 s.2.2.2).
struct StageLayers {
  std::vector<LayerRange> chunks;
  bool holds(std::size_t layer) const;
  std::vector<std::size_t> layers() const;  // every layer of every chunk, in model order
};

// The layers a pipeline splits evenly: Transformer blocks, MLP dense layers.
// Layers before the first of them (the embedding) go with the first chunk,
// layers after the last (output, loss) with the last chunk, as Megatron-LM
// places them.
bool is_repeated_layer(const models::LayerSpec& layer);
std::size_t repeated_layers(const models::ModelSpec& model);
// `stages` stages of `virtual_stages` chunks each. Throws
// std::invalid_argument when stages x virtual_stages does not divide the
// repeated layers.
std::vector<StageLayers> split_stages(const models::ModelSpec& model, std::uint32_t stages,
                                      std::uint32_t virtual_stages);

}  // namespace workloads
