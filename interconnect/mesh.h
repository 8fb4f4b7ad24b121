#pragma once
// Named mesh axes over the physical axes of a topology, and the groups of
// chips a collective over some of them runs in (one group per combination of
// the other axes' coordinates, all groups at once, as jax.lax.psum does).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "interconnect/topology.h"

namespace interconnect {

// A named mesh axis over the pod. Mesh axes take the physical axes in order
// (x, y, z), the first mesh axis the fastest-varying chips: each takes what
// is left of the current physical axis and of the next ones until its size
// is reached, and when its size divides what is left of a physical axis it
// takes that axis's inner factor (consecutive chips), leaving the outer one
// (a stride) to the next mesh axis; a 16-chip ring as {a: 4, b: 4} gives a
// chips 0-3 and b chips 0, 4, 8, 12. A DCN mesh axis (pod.dcn_axes) spans
// slices: it takes the next DCN axis of the topology, whose size is its own.
struct MeshAxis {
  std::string name;
  int size = 1;
  bool dcn = false;
};

// A factor of one physical axis: the digit (coordinate / stride) % size of
// the chip's coordinate along `axis`; the whole axis has stride 1 and the
// axis's size.
struct AxisPart {
  int axis = 0;
  int stride = 1;
  int size = 1;

  bool operator==(const AxisPart& o) const { return axis == o.axis && stride == o.stride && size == o.size; }
  bool whole(const Topology& t) const { return stride == 1 && size == t.size(axis); }
  // The part ends at the axis's last coordinate, so a ring over it closes
  // through the axis's wraparound link where the axis wraps.
  bool outermost(const Topology& t) const { return stride * size == t.size(axis); }
  int digit(const Topology& t, int chip) const { return (t.coord(chip, axis) / stride) % size; }
  // `coords` with this part's digit set to `value`.
  void set_digit(std::vector<int>& coords, int value) const {
    coords[axis] += (value - (coords[axis] / stride) % size) * stride;
  }
};

class Mesh {
 public:
  // Maps each mesh axis onto factors of consecutive physical axes (x, y, z
  // order, see MeshAxis), and each DCN mesh axis onto the next DCN axis;
  // empty `axes` names the physical axes x, y, z and the DCN axes dcn,
  // dcn1, ...
  // Throws sim::ConfigError at "mesh.<name>" when an axis does not map.
  Mesh(const Topology& topology, const std::vector<MeshAxis>& axes);

  const std::vector<MeshAxis>& axes() const { return axes_; }
  const std::vector<AxisPart>& physical_axes(int mesh_axis) const { return physical_[mesh_axis]; }

  // Parts of physical axes (ascending axis, then stride) of the named mesh
  // axes, adjacent parts of one axis joined (both halves of a split axis are
  // the whole axis); empty names = all. Throws sim::ConfigError at key_path
  // for unknown or repeated names.
  std::vector<AxisPart> resolve(const std::vector<std::string>& names, const std::string& key_path) const;

 private:
  std::vector<MeshAxis> axes_;
  std::vector<std::vector<AxisPart>> physical_;
};

// The factors of physical axes that ICI mesh axes of `sizes`, in this
// order, take on a slice of `shape` by the rule of MeshAxis (or, with
// whole_axes_only, each whole physical axes); empty when they do not cover
// the slice.
std::optional<std::vector<std::vector<AxisPart>>> mesh_parts(const std::vector<int>& shape,
                                                             const std::vector<long long>& sizes, bool whole_axes_only);
// Whether they cover it.
bool mesh_maps(const std::vector<int>& shape, const std::vector<long long>& sizes, bool whole_axes_only);

// The first order of the ICI mesh axes of `sizes` (listed least
// communication-heavy first, as MaxText lists its mesh axes) that covers a
// slice of `shape`, as indices into `sizes`: on whole physical axes, the
// orders from the given one on (lexicographically); splitting physical
// axes, from the reverse one on, so that the busiest axes take the inner
// factors (consecutive chips), as JAX's mesh_utils lays them with
// allow_split_physical_axes. Empty when no order covers it.
std::optional<std::vector<std::size_t>> mesh_order(const std::vector<int>& shape, const std::vector<long long>& sizes,
                                                   bool whole_axes_only);

// Chips grouped by their digits on the parts not in `parts`; each group
// lists its chips in ascending id (x fastest), which is the order of shards.
std::vector<std::vector<int>> chip_groups(const Topology& topology, const std::vector<AxisPart>& parts);

}  // namespace interconnect
