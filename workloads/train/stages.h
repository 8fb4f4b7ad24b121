#pragma once
// How a pipeline splits a model: which layers repeat (and so split evenly
// over stages) and which layers each stage runs.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/model_spec.h"

namespace workloads {

// Layer indices [begin, end) of one pipeline stage.
struct StageLayers {
  std::size_t begin = 0, end = 0;
};

// The layers a pipeline splits evenly: Transformer blocks, MLP dense layers.
// Layers before the first of them (the embedding) go with the first stage,
// layers after the last (output, loss) with the last stage, as Megatron-LM
// places them.
bool is_repeated_layer(const models::LayerSpec& layer);
std::size_t repeated_layers(const models::ModelSpec& model);
// Throws std::invalid_argument when `stages` does not divide the repeated layers.
std::vector<StageLayers> split_stages(const models::ModelSpec& model, std::uint32_t stages);

}  // namespace workloads
