#pragma once
// `kind: collective`: one collective over the pod (or some mesh axes), timed
// on the ICI model; reports time, algbw/busbw (NCCL-tests convention),
// per-link utilization and bytes per chip.
#include <memory>

#include "interconnect/collective_spec.h"
#include "sim/params.h"
#include "workloads/experiment.h"

namespace workloads {

// Every key of `kind: collective` (tpusim explain collective).
const sim::ParamTable<interconnect::CollectiveSpec>& collective_params();

std::unique_ptr<Workload> load_collective_workload(const sim::YamlNode& node, const Experiment& exp);

}  // namespace workloads
