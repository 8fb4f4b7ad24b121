#pragma once
// The bytes a planned collective sends from each slice to each other slice
// of a multislice pod: every send of every chip's schedule whose peer sits
// in another slice, summed per (source slice, destination slice). What the
// algorithm sends, counted from its plan, not measured on the network; a
// cluster of jobs sharing a data-center fabric (workloads/cluster/) places
// these bytes on its links.
#include <cstdint>
#include <vector>

#include "interconnect/algorithms.h"
#include "interconnect/topology.h"
#include "interconnect/translations.h"

namespace interconnect {

struct SliceTraffic {
  int from = 0, to = 0;  // slice indices of the pod
  std::uint64_t bytes = 0;
};

// In (from, to) order; empty when no send crosses slices. Of a plan with
// images_along, a chip that was not planned sends what the chip it moves
// onto there does, moved.
std::vector<SliceTraffic> slice_traffic(const CollectivePlan& plan, const Topology& topology);

}  // namespace interconnect
