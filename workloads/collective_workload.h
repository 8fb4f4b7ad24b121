#pragma once
// `kind: collective`: one collective over the pod (or some mesh axes), timed
// on the ICI model; reports time, algbw/busbw (NCCL-tests convention),
// per-link utilization and bytes per chip.
#include <memory>

#include "workloads/experiment.h"

namespace workloads {

std::unique_ptr<Workload> load_collective_workload(const sim::YamlNode& node, const Experiment& exp);

}  // namespace workloads
