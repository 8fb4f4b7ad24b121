#include "workloads/train_layout.h"

#include <stdexcept>

#include "interconnect/mesh.h"
#include "workloads/experiment.h"
#include "workloads/pod_runtime.h"

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

TrainLayout make_train_layout(const Experiment& exp, const TrainParallelism& par, const models::ModelSpec& model) {
  const interconnect::PodNetworkConfig cfg = pod_network_config(exp);
  const interconnect::Topology topology = cfg.make_topology();
  const interconnect::Mesh mesh(topology, cfg.mesh);
  TrainLayout layout;
  layout.roles.resize(topology.chips());
  layout.pipeline_of.resize(topology.chips());
  struct Rank {
    const ParallelAxes& axes;
    std::uint32_t ChipRole::*field;
  };
  const Rank ranks[] = {{par.data, &ChipRole::data}, {par.tensor, &ChipRole::tensor}, {par.pipeline, &ChipRole::stage}};
  for (const auto& r : ranks) {
    if (r.axes.axes.empty()) {  // degree 1: everyone is rank 0, a pipeline of one stage
      if (r.field == &ChipRole::stage)
        for (std::uint32_t c = 0; c < layout.chips(); ++c) layout.pipeline_of[c] = {c};
      continue;
    }
    for (const auto& group : interconnect::chip_groups(topology, mesh.resolve(r.axes.axes, "workload.parallelism"))) {
      std::vector<std::uint32_t> chips(group.begin(), group.end());
      for (std::uint32_t i = 0; i < chips.size(); ++i) {
        layout.roles[chips[i]].*r.field = i;
        if (r.field == &ChipRole::stage) layout.pipeline_of[chips[i]] = chips;
      }
    }
  }
  layout.stages = split_stages(model, par.pipeline.degree);
  return layout;
}

}  // namespace workloads
