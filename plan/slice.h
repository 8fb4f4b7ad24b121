#pragma once
// The slice a plan's candidates run on: the plan's own `pod:`, or the
// shape the chip's slices of that many chips have (docs/plan.md, "The
// slice"): a 2D torus for chips of 4 ICI links (v5e, v6e), a 3D one for
// chips of 6 (v4, v5p), as square as the chip count allows, each axis
// wrapping where docs/reference/tpu-specs.md#common.wraparound_rules says.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/chip_config.h"
#include "plan/spec.h"

namespace plan {

struct Slice {
  std::vector<std::uint32_t> shape;  // physical axes of one slice, x first
  std::string pod_yaml;              // the experiment's `pod:` mapping, one line ({slices, slice} for several)
  bool alike_wraparound = true;      // every axis wraps, or none does
};

// Throws sim::ConfigError (located at the plan's chips) when the chip
// count does not lay out as a slice of the chip's topology.
Slice plan_slice(const PlanSpec& spec);

// The squarest slice of `chips` chips of `chip` (the planner's layout).
Slice squarest_slice(const hw::ChipConfig& chip, std::uint32_t chips);

// A slice of `chip` with physical axes `shape` (x first; a ring, 2D or 3D
// torus by their count), each axis wrapping by the same rules.
Slice slice_of_shape(const hw::ChipConfig& chip, const std::vector<std::uint32_t>& shape);

}  // namespace plan
