#pragma once
// Collective algorithms: each turns a CollectiveSpec into one schedule per
// chip (schedule.h). Every group of chips (one per combination of the axes
// not taking part) runs the algorithm on its own, all groups at once.
//
//  ring                one ring through the group (a snake over its axes, so
//                      every hop is one link where the axes wrap): all_reduce
//                      = reduce-scatter then all-gather, 2(n-1) steps.
//  bidirectional_ring  the same ring both ways, half the data each way.
//  torus               the data cut into 2k streams (k = axes of more than
//                      one chip): stream (j, d) reduce-scatters along the
//                      axes in the order j, j+1, ... (mod k) in direction d,
//                      then all-gathers in reverse, so every axis carries a
//                      stream in each direction at once. A wrapping axis is a
//                      ring; a mesh axis is a line driven both ways.
//  direct              every message straight to its destination, routed
//                      dimension-order (all_to_all, permute).
//  dimension_ordered   all_to_all in one phase per axis of the group: a
//                      direct all-to-all along each line of the axis, the
//                      blocks bound for a coordinate aggregated into one
//                      message, stored and forwarded in the next phase.
//  broadcast           a pipelined chain along the ring from the root (both
//                      ways with half the data each for bidirectional_ring).
#include <cstdint>
#include <vector>

#include "interconnect/collective_spec.h"
#include "interconnect/mesh.h"
#include "interconnect/schedule.h"
#include "interconnect/topology.h"

namespace interconnect {

struct CollectivePlan {
  CollectiveOp op = CollectiveOp::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  std::uint64_t elements = 0;  // each participant's full buffer
  int element_bytes = 4;
  bool functional = false;               // the layouts real values need were planned
  std::vector<AxisPart> axes;            // parts of physical axes taking part
  std::vector<std::vector<int>> groups;  // chips of each group, ascending
  std::vector<int> group_of;             // per chip
  std::vector<int> rank;                 // per chip: index in its group (shard order)
  std::vector<char> receives;            // permute: the chip has a source
  std::vector<ChipSchedule> chips;

  int group_size() const { return static_cast<int>(groups.front().size()); }
  std::uint64_t shard_elements() const { return elements / static_cast<std::uint64_t>(group_size()); }
};

// The spec must be valid for this pod (CollectiveSpec::validate).
CollectivePlan plan_collective(const Topology& topology, const Mesh& mesh, const LinkConfig& link,
                               const CollectiveSpec& spec);

}  // namespace interconnect
