#include "workloads/train/layout.h"

#include "interconnect/mesh.h"
#include "runtime/pod_run.h"
#include "workloads/experiment.h"

namespace workloads {

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
  const Rank ranks[] = {{par.data, &ChipRole::data},       {par.fsdp, &ChipRole::fsdp},
                        {par.tensor, &ChipRole::tensor},   {par.pipeline, &ChipRole::stage},
                        {par.context, &ChipRole::context}, {par.expert, &ChipRole::expert}};
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
  layout.stages = split_stages(model, par.pipeline.degree, par.virtual_stages);
  return layout;
}

}  // namespace workloads
