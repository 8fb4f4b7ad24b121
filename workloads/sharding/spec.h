#pragma once
// A `kind: sharded_matmul` experiment's workload: the matmul, its
// operands' and output's PartitionSpecs, and how it runs.
#include <cstdint>

#include "hw/number_format.h"
#include "workloads/sharding/planner.h"

namespace workloads {

struct ShardedMatmulSpec {
  ShardedMatmulShape shape;
  PartitionSpec a, b, out;
  bool collective_matmul = false;
  // The format of A and B (hw::NumberFormat): an 8-bit one runs the local
  // matmul at the chip's rate for it, A and B one byte an element, C and its
  // partial sums in the accumulator's format (accumulator_bytes).
  hw::NumberFormat dtype = hw::NumberFormat::bf16;
  std::uint64_t seed = 1;  // operands of functional runs
  ShardedMatmulPlan plan;
};

}  // namespace workloads
