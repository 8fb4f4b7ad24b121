#pragma once
// Named mesh axes over the physical axes of a topology, and the groups of
// chips a collective over some of them runs in (one group per combination of
// the other axes' coordinates, all groups at once, as jax.lax.psum does).
#include <string>
#include <vector>

#include "interconnect/topology.h"

namespace interconnect {

// A named mesh axis over the pod. Mesh axes take the physical axes in order
// (x, y, z), each mesh axis the consecutive physical axes whose sizes
// multiply to its size. A DCN mesh axis (pod.dcn_axes) spans slices: it
// takes the next DCN axis of the topology, whose size is its own.
struct MeshAxis {
  std::string name;
  int size = 1;
  bool dcn = false;
};

class Mesh {
 public:
  // Maps each mesh axis onto consecutive physical axes (x, y, z order) whose
  // sizes multiply to its size, and each DCN mesh axis onto the next DCN
  // axis; empty `axes` names the physical axes x, y, z and the DCN axes
  // dcn, dcn1, ...
  // Throws sim::ConfigError at "mesh.<name>" when an axis does not map.
  Mesh(const Topology& topology, const std::vector<MeshAxis>& axes);

  const std::vector<MeshAxis>& axes() const { return axes_; }
  const std::vector<int>& physical_axes(int mesh_axis) const { return physical_[mesh_axis]; }

  // Physical axes (ascending) of the named mesh axes; empty names = all.
  // Throws sim::ConfigError at key_path for unknown or repeated names.
  std::vector<int> resolve(const std::vector<std::string>& names, const std::string& key_path) const;

 private:
  std::vector<MeshAxis> axes_;
  std::vector<std::vector<int>> physical_;
};

// Chips grouped by their coordinates on the axes not in `axes`; each group
// lists its chips in ascending id (x fastest), which is the order of shards.
std::vector<std::vector<int>> chip_groups(const Topology& topology, const std::vector<int>& axes);

}  // namespace interconnect
