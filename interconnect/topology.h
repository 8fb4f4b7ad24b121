#pragma once
// Chips on a ring or a 2D/3D torus: coordinates, neighbours, the link
// directions between them and dimension-order routes.
//
// Chip ids are row-major with axis 0 (x) fastest: id = x + X*(y + Y*z).
// An axis either wraps (torus) or not (mesh). Every neighbour pair is joined
// by two link directions, each a server of its own (docs/architecture.md, "Timing model").
//
// Several slices (each the ICI ring or torus above) joined by the
// data-center network (DCN) add DCN axes after the ICI axes: the slice
// index, row-major over them, is the outermost part of a chip id. No ICI
// link runs along a DCN axis. A message between slices leaves its chip for
// the host (PCIe), the host's NICs, the slice's share of the fabric core,
// and enters the other slice the same way (docs/interconnect.md, "DCN").
//
// A chip that exposes each TensorCore as a device (v2, v3, 7x) puts a core
// axis first, so the devices of a chip are consecutive ids (as jax.devices()
// lists them) and the unit of a "chip" id below is a device. Its links are
// the chip's on-die path between the cores (LinkClass::on_die), not ICI
// (docs/interconnect.md, "Devices and chips").
#include <array>
#include <string>
#include <vector>

namespace sim {
template <class E>
class EnumNames;
}

namespace interconnect {

enum class TopologyKind { ring, torus2d, torus3d };

// The YAML spellings: ring, torus2d, torus3d.
const sim::EnumNames<TopologyKind>& topology_kinds();
// Throws sim::ConfigError at key_path for a word that is not one of them.
TopologyKind parse_topology_kind(const std::string& name, const std::string& key_path);
const char* to_string(TopologyKind kind);
int axes_of(TopologyKind kind);  // 1, 2, 3

const char* axis_name(int axis);  // "x", "y", "z"; -1: "core"

// Checks a shape against its kind; key_prefix is prepended to field names in
// messages ("pod" gives "pod.shape"). Throws sim::ConfigError.
void validate_topology(TopologyKind kind, const std::vector<int>& shape, const std::vector<bool>& wraparound,
                       const std::string& key_prefix);

// How the slices of a multislice pod are arranged: the DCN axes (their
// sizes multiply to the slice count; empty: one slice) and how many chips
// share a host and its NICs.
struct SliceLayout {
  std::vector<int> dcn_shape;
  int chips_per_host = 1;  // devices per host when devices_per_chip > 1
  int devices_per_chip = 1;
};

// What a link id stands for: an ICI link direction, or one of the DCN
// servers a message between slices crosses, in route order.
enum class LinkClass { ici, on_die, host_up, nic_out, fabric_up, fabric_down, nic_in, host_down };

// The two ends of one link direction.
struct LinkEnds {
  int from = -1;
  int to = -1;
  int axis = 0;
  int dir = +1;  // +1: towards higher coordinates
};

class Topology {
 public:
  // wraparound empty: every axis of 3 or more chips wraps. Validates
  // (sim::ConfigError).
  Topology(TopologyKind kind, std::vector<int> shape, std::vector<bool> wraparound, SliceLayout slices = {});

  TopologyKind kind() const { return kind_; }
  int chips() const { return chips_; }
  // Every axis: the ICI axes, then the DCN axes.
  int axes() const { return static_cast<int>(shape_.size()); }
  int ici_axes() const { return ici_axes_; }
  bool is_dcn_axis(int axis) const { return axis >= ici_axes_; }
  // The axis along a chip's devices (axis 0), when it has more than one.
  bool is_core_axis(int axis) const { return axis == 0 && devices_per_chip_ > 1; }
  int devices_per_chip() const { return devices_per_chip_; }
  // "core" for the core axis, then "x", "y", "z" for the chip axes.
  const char* axis_name(int axis) const { return interconnect::axis_name(axis - (devices_per_chip_ > 1 ? 1 : 0)); }
  int slices() const { return chips_ / slice_chips_; }
  int slice_chips() const { return slice_chips_; }
  int slice_of(int chip) const { return chip / slice_chips_; }
  int chips_per_host() const { return chips_per_host_; }
  int host_of(int chip) const { return chip / chips_per_host_; }
  int hosts() const { return chips_ / chips_per_host_; }
  int size(int axis) const { return shape_[axis]; }
  bool wraps(int axis) const { return wrap_[axis]; }
  const std::vector<int>& shape() const { return shape_; }
  const std::vector<bool>& wraparound() const { return wrap_; }

  int coord(int chip, int axis) const { return (chip / stride_[axis]) % shape_[axis]; }
  std::vector<int> coords(int chip) const;
  int chip_at(const std::vector<int>& coords) const;
  // "chip 5 (1,1,0)"
  std::string describe(int chip) const;

  // The chip one step along `axis` in direction `dir` (+1/-1), or -1 at a
  // mesh edge.
  int neighbor(int chip, int axis, int dir) const;

  // ICI link directions are numbered (chip*ici_axes + axis)*2 + (dir < 0).
  // Ids whose neighbour is missing (mesh edges) exist in the numbering but
  // carry no traffic; link_exists tells them apart. With several slices the
  // DCN servers follow: per chip its PCIe up and down, per host its NICs out
  // and in, per slice its share of the fabric core up and down.
  int ici_link_slots() const { return chips_ * ici_axes_ * 2; }
  int link_slots() const { return ici_link_slots() + (slices() > 1 ? 2 * (chips_ + hosts() + slices()) : 0); }
  int link_id(int chip, int axis, int dir) const { return (chip * ici_axes_ + axis) * 2 + (dir < 0 ? 1 : 0); }
  LinkClass link_class(int link) const;
  // An ICI link direction between two chips (not a DCN server).
  bool link_exists(int link) const;
  LinkEnds link_ends(int link) const;
  int links() const;  // existing ICI link directions

  // Degraded and failed links (pod.links, docs/interconnect.md "Degraded
  // and failed links"): the share of its nominal bandwidth an ICI link
  // direction keeps, 0 for a failed one. Every link starts at 1.
  void set_link_fraction(int link, double fraction);
  double link_fraction(int link) const {
    return fraction_.empty() || link >= ici_link_slots() ? 1.0 : fraction_[static_cast<std::size_t>(link)];
  }
  bool link_failed(int link) const { return link_fraction(link) == 0.0; }
  // Whether every ICI link runs at its nominal bandwidth: only then is a
  // translation of the pod a symmetry of its network.
  bool uniform_links() const { return fraction_.empty(); }
  // "(1,0) -> (2,0)": a link direction by its two chips' coordinates.
  std::string describe_link(int link) const;

  // Dimension-order route, axis 0 first: on a wrapping axis the shorter way
  // round; a tie (distance exactly half the ring) goes + from an even source
  // coordinate and - from an odd one, so all-to-all traffic loads both
  // directions equally. Fills `out` with link ids; src == dst gives none.
  // Between slices: the six DCN servers of LinkClass, no ICI link.
  // Around failed links: a hop over a failed link becomes a detour of three
  // (a step off along the lowest other axis whose three links work, + side
  // first, the hop, the step back); where no axis offers one, the axis's
  // whole leg goes the other way round (a wrapping axis), again with
  // detours; else the message cannot be routed: sim::SimFailure (exit 3)
  // naming the failed link.
  void route(int src, int dst, std::vector<int>& out) const;
  int hops(int src, int dst) const;  // ICI hops of the dimension-order route (no detours); 0 between slices

 private:
  // Signed steps along one axis from coordinate a to b (its sign is the
  // direction taken).
  int steps(int axis, int a, int b) const;
  // route() where some link has failed: the leg along `axis` from `at`
  // (`n` hops in direction `dir`) appended to `out`; false if a failed hop
  // of it has no detour (`blocked` names it).
  bool leg_around(int at, int axis, int dir, int n, std::vector<int>& out, int& blocked) const;
  void route_around(int src, int dst, std::vector<int>& out) const;

  TopologyKind kind_;
  std::vector<int> shape_;
  std::vector<bool> wrap_;
  std::vector<int> stride_;
  int chips_ = 0;
  int ici_axes_ = 0;
  int slice_chips_ = 0;
  int chips_per_host_ = 1;
  int devices_per_chip_ = 1;
  std::vector<double> fraction_;  // per ICI link slot; empty: all nominal
  int failed_ = 0;                // ICI link directions at fraction 0
};

}  // namespace interconnect
