#pragma once
// `kind: sharded_matmul`: C = A x B over a pod, each tensor split by a
// PartitionSpec over the named mesh. The planner (sharding.h) picks local
// shapes and collectives; each chip runs the same program (SPMD): gathers,
// its local blocked matmul, reductions. With `collective_matmul: true` a
// single all-gather is instead split into permute steps interleaved with
// partial matmuls, so the communication hides under compute.
#include <memory>

#include "runtime/pod_run.h"
#include "workloads/experiment.h"
#include "workloads/sharding/planner.h"
#include "workloads/sharding/spec.h"

namespace workloads {

class ShardedMatmulData;

// Every key of `kind: sharded_matmul` (tpusim explain sharded_matmul).
nlohmann::json sharded_matmul_params();

std::unique_ptr<Workload> load_sharded_matmul_workload(const sim::YamlNode& node, const Experiment& exp);

// The per-chip programs (exposed for tests).
// With `data`, ops carry real operands and collectives move real values.
runtime::PodProgram build_sharded_matmul_program(const Experiment& exp, const ShardedMatmulSpec& spec,
                                                 ShardedMatmulData* data = nullptr);

RunOutput run_sharded_matmul(const Experiment& exp, const ShardedMatmulSpec& spec, const RunOptions& opts);

}  // namespace workloads
