#pragma once
// A pod's network of a given shape with default links: the interconnect
// tests' common start, each test setting the link figures it needs; a
// collective of an op, algorithm, size and axes; and the TPU v4 ICI
// figures the timing tests' hand formulas use.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "interconnect/collective_spec.h"
#include "interconnect/pod_config.h"

namespace interconnect {

inline PodNetworkConfig pod_shape(TopologyKind kind, std::vector<int> shape, std::vector<bool> wrap) {
  PodNetworkConfig p;
  p.topology = kind;
  p.shape = std::move(shape);
  p.wraparound = std::move(wrap);
  return p;
}

inline CollectiveSpec collective_spec(CollectiveOp op, Algorithm a, std::uint64_t bytes,
                                      std::vector<std::string> axes = {}) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = a;
  s.bytes = bytes;
  s.axes = std::move(axes);
  return s;
}

namespace v4_ici {
constexpr double kW = 4.5e10;  // bytes/s per direction (docs/reference/tpu-specs.md#v4.ici.bw_per_link_one_way)
constexpr double kL = 1.0e-6;  // s per hop (docs/reference/tpu-specs.md#common.ici_hop_latency)
constexpr std::uint64_t kMiB = 1 << 20;
}  // namespace v4_ici

}  // namespace interconnect
