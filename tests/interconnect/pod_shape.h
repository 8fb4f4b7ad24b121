#pragma once
// A pod's network of a given shape with default links: the interconnect
// tests' common start, each test setting the link figures it needs.
#include <utility>
#include <vector>

#include "interconnect/pod_config.h"

namespace interconnect {

inline PodNetworkConfig pod_shape(TopologyKind kind, std::vector<int> shape, std::vector<bool> wrap) {
  PodNetworkConfig p;
  p.topology = kind;
  p.shape = std::move(shape);
  p.wraparound = std::move(wrap);
  return p;
}

}  // namespace interconnect
