#pragma once
// A `kind: sharded_matmul` experiment's workload: the matmul, its
// operands' and output's PartitionSpecs, and how it runs.
#include <cstdint>

#include "workloads/sharding/planner.h"

namespace workloads {

struct ShardedMatmulSpec {
  ShardedMatmulShape shape;
  PartitionSpec a, b, out;
  bool collective_matmul = false;
  std::uint64_t seed = 1;  // operands of functional runs
  ShardedMatmulPlan plan;
};

}  // namespace workloads
