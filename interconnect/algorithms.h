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
#include <optional>
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
  // Axes along which only the chips at coordinate 0 have schedules
  // (plan_collective's images_along): every other chip's schedule is, by
  // construction, the image of the one it is moved onto there, so on a
  // symmetric pod (interconnect/translations.h) a plan costs what its
  // orbit chips' schedules do, not what every chip's would. Empty: every
  // chip's schedule is planned.
  std::vector<int> images_along;
  bool planned(const Topology& topology, int chip) const;  // whether `chip`'s schedule was planned

  int group_size() const { return static_cast<int>(groups.front().size()); }
  std::uint64_t shard_elements() const { return elements / static_cast<std::uint64_t>(group_size()); }
};

// The spec must be valid for this pod (CollectiveSpec::validate). With
// `images_along` (from images_along()), only the chips at coordinate 0 on
// those axes get their schedules; the groups, ranks and the rest of the
// plan are the whole pod's.
CollectivePlan plan_collective(const Topology& topology, const Mesh& mesh, const LinkConfig& link,
                               const CollectiveSpec& spec, const std::vector<int>& images_along = {});

// Of `axes` (wrapping axes, along which a pod's translations move chips),
// those along which the spec's plan makes each chip's schedule the image of
// the one a step down the axis, with the same counts, by the way the
// planner builds it, so that plan_collective need not plan them. A torus or
// ring all-reduce, reduce-scatter or all-gather qualifies if its parts on
// each of `axes` are none (a translation moves its groups onto groups,
// schedule for schedule: the axis is returned) or, for the torus, the whole
// axis (each chip's ring along it is the next chip's, one place on:
// returned where the buffer divides evenly over the group at every level,
// as a reduce-scatter's or all-gather's, shard times group, always does;
// else its chips are planned and Translations::invariance compares them).
// nullopt where some axis is neither: every chip is planned and checked.
// tests/interconnect/test_translations.cpp checks that planning so gives
// what planning every chip and checking them does.
std::optional<std::vector<int>> images_along(const Topology& topology, const Mesh& mesh, const CollectiveSpec& spec,
                                             const std::vector<int>& axes);
}  // namespace interconnect
