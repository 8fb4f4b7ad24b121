#pragma once
// `kind: cluster` (docs/cluster.md): jobs, each an experiment on named
// slices of a data center, sharing its network. Each job's step runs alone
// once (its own experiment, as `tpusim run` runs it); the DCN phases of
// that step then replay on the shared fabric (workloads/cluster/timeline.h),
// each job alone on it and all of them together.
#include <nlohmann/json.hpp>

#include <memory>

#include "sim/yaml_node.h"
#include "workloads/experiment.h"

namespace workloads {

std::unique_ptr<Workload> load_cluster_workload(const sim::YamlNode& node, const Experiment& exp);
// Its keys (tpusim explain cluster).
nlohmann::json cluster_workload_keys();

}  // namespace workloads
