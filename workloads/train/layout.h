#pragma once
// Who does what in a training step: each chip's rank along data, tensor and
// pipeline parallelism (its index in the group of chips that differ only in
// that parallelism's mesh axes, as a collective over those axes ranks them),
// and which model layers each pipeline stage runs.
#include <cstdint>
#include <vector>

#include "models/model_spec.h"
#include "workloads/train/spec.h"
#include "workloads/train/stages.h"

namespace workloads {

struct ChipRole {
  std::uint32_t data = 0, fsdp = 0, tensor = 0, stage = 0, context = 0, expert = 0;
};

// A chip's data-parallel replica: the replica_lengths index (spec.h) of
// the batch share it works on, data rank major.
inline std::uint32_t replica_of(const ChipRole& r, const TrainParallelism& p) {
  return r.data * p.fsdp.degree + r.fsdp;
}

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
