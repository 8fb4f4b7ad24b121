#pragma once
// Who does what in a training step: each chip's rank along data, tensor and
// pipeline parallelism (its index in the group of chips that differ only in
// that parallelism's mesh axes, as a collective over those axes ranks them),
// and which model layers each pipeline stage runs.
#include <cstdint>
#include <vector>

#include "models/model_spec.h"
#include "workloads/train_spec.h"

namespace workloads {

struct ChipRole {
  std::uint32_t data = 0, tensor = 0, stage = 0;
};

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

struct TrainLayout {
  std::vector<ChipRole> roles;      // per chip
  std::vector<StageLayers> stages;  // per stage
  // Per chip, the chips of its pipeline in stage order (itself included).
  std::vector<std::vector<std::uint32_t>> pipeline_of;

  std::uint32_t chips() const { return static_cast<std::uint32_t>(roles.size()); }
};

// Throws sim::ConfigError when a mesh axis does not map onto the pod.
TrainLayout make_train_layout(const Experiment& exp, const TrainParallelism& par, const models::ModelSpec& model);

}  // namespace workloads
