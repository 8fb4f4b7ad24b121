#pragma once
// Named meshes and PartitionSpecs, as jax.sharding.Mesh / PartitionSpec
// define them, and the planner that turns the shardings of a matmul's two
// operands and output into per-chip local shapes and the collectives needed
// (docs/sharding.md has the rules as a table).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hw/bf16.h"
#include "interconnect/collective_spec.h"
#include "sim/yaml_node.h"

namespace workloads {

// mesh axis name -> size, in declaration order.
using MeshAxes = std::vector<std::pair<std::string, std::uint32_t>>;

// One entry per tensor dimension: the mesh axes it is split over, major
// first (empty = replicated along that dimension).
struct PartitionSpec {
  std::vector<std::vector<std::string>> dims;
  std::string str() const;  // "[data, null]", "[[x, y], null]"
};

// Reads a spec such as [data, null] or [[x, y], null]. Throws
// sim::ConfigError for a wrong rank, an unknown axis (with a suggestion) or
// an axis used twice in one spec.
PartitionSpec parse_partition_spec(const sim::YamlNode& node, std::size_t rank, const MeshAxes& mesh,
                                   const std::string& tensor);

std::uint64_t axes_size(const std::vector<std::string>& axes, const MeshAxes& mesh);

// One collective of the plan, in NCCL-tests terms: `bytes` is each
// participant's full buffer (the gathered output of an all_gather, the input
// of a reduce_scatter, the array of an all_reduce).
struct ShardingStep {
  interconnect::CollectiveOp op;  // all_gather | reduce_scatter | all_reduce
  std::string tensor;             // A | B | C
  int dim = 0;                    // tensor dimension it gathers / scatters
  std::vector<std::string> axes;  // mesh axes taking part
  std::uint64_t bytes = 0;
  std::string why;
};

struct ShardedMatmulPlan {
  std::uint64_t local_m = 0, local_k = 0, local_n = 0;  // each chip's matmul
  std::vector<ShardingStep> before;                     // gathers of A and B
  std::vector<ShardingStep> after;                      // reductions and resharding of C
  std::vector<std::string> k_axes;                      // axes the contraction is split over
  // Local shard shapes (as jax.Array.addressable_data would show them).
  std::vector<std::uint64_t> a_shard, b_shard, c_shard;
  std::string summary;  // which textbook case this is
};

struct ShardedMatmulShape {
  std::uint64_t m = 0, k = 0, n = 0;
  int element_bytes = static_cast<int>(hw::kBf16Bytes);      // of A and B: BF16, or 1 for an 8-bit format
  int out_element_bytes = static_cast<int>(hw::kBf16Bytes);  // of C and its partial sums: the accumulator's
};

// Throws sim::ConfigError (at `where`) when a dimension does not divide by
// the mesh axes it is split over, naming tensor, dimension, axis and sizes.
ShardedMatmulPlan plan_sharded_matmul(const ShardedMatmulShape& shape, const PartitionSpec& a, const PartitionSpec& b,
                                      const PartitionSpec& out, const MeshAxes& mesh, const sim::YamlNode& where);

}  // namespace workloads
