#include "interconnect/topology.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "sim/error.h"
#include "sim/params.h"

namespace interconnect {

namespace {
std::string join_key(const std::string& prefix, const std::string& field) {
  return prefix.empty() ? field : prefix + "." + field;
}
}  // namespace

const sim::EnumNames<TopologyKind>& topology_kinds() {
  static const sim::EnumNames<TopologyKind> names("topology", {{TopologyKind::ring, "ring", "1 axis"},
                                                               {TopologyKind::torus2d, "torus2d", "2 axes"},
                                                               {TopologyKind::torus3d, "torus3d", "3 axes"}});
  return names;
}

TopologyKind parse_topology_kind(const std::string& name, const std::string& key_path) {
  return topology_kinds().parse(name, key_path);
}

const char* to_string(TopologyKind kind) { return topology_kinds().name(kind); }

int axes_of(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::ring: return 1;
    case TopologyKind::torus2d: return 2;
    case TopologyKind::torus3d: return 3;
  }
  return 0;
}

const char* axis_name(int axis) {
  static const char* const names[] = {"core", "x", "y", "z"};
  return axis >= -1 && axis < 3 ? names[axis + 1] : "?";
}

void validate_topology(TopologyKind kind, const std::vector<int>& shape, const std::vector<bool>& wraparound,
                       const std::string& key_prefix) {
  const std::string shape_key = join_key(key_prefix, "shape");
  const int axes = axes_of(kind);
  if (static_cast<int>(shape.size()) != axes) {
    sim::reject(shape_key, std::string(to_string(kind)) + " needs " + std::to_string(axes) + " dimension" +
                               (axes > 1 ? "s" : "") + ", got " + std::to_string(shape.size()));
  }
  long long chips = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1) {
      sim::reject(shape_key, "dimension " + std::to_string(i) + " is " + std::to_string(shape[i]) +
                                 "; every dimension must be >= 1");
    }
    chips *= shape[i];
    if (chips > (1 << 22)) sim::reject(shape_key, "more than 4194304 chips");
  }
  if (!wraparound.empty()) {
    const std::string wrap_key = join_key(key_prefix, "wraparound");
    if (wraparound.size() != shape.size()) {
      sim::reject(wrap_key, "has " + std::to_string(wraparound.size()) + " entries for " +
                                std::to_string(shape.size()) + " dimensions");
    }
    for (std::size_t i = 0; i < shape.size(); ++i) {
      // A wraparound link on an axis of 1 or 2 chips would join a chip to
      // itself or duplicate the link that already joins the pair.
      if (wraparound[i] && shape[i] < 3) {
        sim::reject(wrap_key, "axis " + std::string(axis_name(static_cast<int>(i))) + " has " +
                                  std::to_string(shape[i]) + " chip(s); wraparound needs at least 3");
      }
    }
  }
}

Topology::Topology(TopologyKind kind, std::vector<int> shape, std::vector<bool> wraparound, SliceLayout slices)
    : kind_(kind), shape_(std::move(shape)), wrap_(std::move(wraparound)) {
  if (wrap_.empty()) {
    wrap_.assign(shape_.size(), true);
    for (std::size_t i = 0; i < shape_.size(); ++i) wrap_[i] = shape_[i] >= 3;
  }
  validate_topology(kind_, shape_, wrap_, "pod");
  devices_per_chip_ = std::max(slices.devices_per_chip, 1);
  if (devices_per_chip_ > 1) {
    // The core axis: the chip's devices in a line, joined by its on-die path.
    shape_.insert(shape_.begin(), devices_per_chip_);
    wrap_.insert(wrap_.begin(), devices_per_chip_ >= 3);
  }
  ici_axes_ = axes();
  chips_ = 1;
  for (int s : shape_) {
    stride_.push_back(chips_);
    chips_ *= s;
  }
  slice_chips_ = chips_;
  // A slice smaller than a host still has a host of its own. Hosts matter
  // only between slices: one slice of any size has no DCN.
  long long across = 1;
  for (int s : slices.dcn_shape) across *= s;
  chips_per_host_ = std::min(std::max(slices.chips_per_host, 1), slice_chips_);
  if (across == 1) chips_per_host_ = 1;
  if (slice_chips_ % chips_per_host_ != 0) {
    sim::reject("pod.slice", "a slice of " + std::to_string(slice_chips_) +
                                 " chips is not a whole number of hosts of " + std::to_string(chips_per_host_) +
                                 " chips");
  }
  for (int s : slices.dcn_shape) {
    if (s < 1) sim::reject("pod.dcn_axes", "every DCN axis needs at least 1 slice, got " + std::to_string(s));
    // A ring across the slices: every message between slices is one DCN
    // route, so two slices form a ring as well.
    shape_.push_back(s);
    wrap_.push_back(s >= 2);
    stride_.push_back(chips_);
    chips_ *= s;
    if (chips_ > (1 << 22)) sim::reject("pod.slices", "more than 4194304 chips");
  }
}

std::vector<int> Topology::coords(int chip) const {
  std::vector<int> c(shape_.size());
  for (int a = 0; a < axes(); ++a) c[a] = coord(chip, a);
  return c;
}

int Topology::chip_at(const std::vector<int>& c) const {
  int id = 0;
  for (int a = 0; a < axes(); ++a) id += c[a] * stride_[a];
  return id;
}

std::string Topology::describe(int chip) const {
  std::string s = "chip " + std::to_string(chip) + " (";
  for (int a = 0; a < axes(); ++a) s += (a ? "," : "") + std::to_string(coord(chip, a));
  return s + ")";
}

int Topology::neighbor(int chip, int axis, int dir) const {
  const int c = coord(chip, axis);
  int n = c + dir;
  if (n < 0 || n >= shape_[axis]) {
    if (!wrap_[axis]) return -1;
    n = (n + shape_[axis]) % shape_[axis];
  }
  return chip + (n - c) * stride_[axis];
}

namespace {
// DCN server ids after the ICI links, in this order: per chip (host_up,
// host_down), per host (nic_out, nic_in), per slice (fabric_up, fabric_down).
constexpr int kUp = 0, kDown = 1;
}  // namespace

LinkClass Topology::link_class(int link) const {
  int l = link - ici_link_slots();
  if (l < 0) return is_core_axis((link / 2) % ici_axes_) ? LinkClass::on_die : LinkClass::ici;
  if (l < 2 * chips_) return l % 2 == kUp ? LinkClass::host_up : LinkClass::host_down;
  l -= 2 * chips_;
  if (l < 2 * hosts()) return l % 2 == kUp ? LinkClass::nic_out : LinkClass::nic_in;
  l -= 2 * hosts();
  return l % 2 == kUp ? LinkClass::fabric_up : LinkClass::fabric_down;
}

bool Topology::link_exists(int link) const {
  if (link >= ici_link_slots()) return false;
  const LinkEnds e = link_ends(link);
  return e.to >= 0;
}

LinkEnds Topology::link_ends(int link) const {
  LinkEnds e;
  if (link >= ici_link_slots()) return e;  // a DCN server: no pair of chips
  e.from = link / (2 * ici_axes_);
  e.axis = (link / 2) % ici_axes_;
  e.dir = (link % 2) ? -1 : +1;
  e.to = neighbor(e.from, e.axis, e.dir);
  return e;
}

int Topology::links() const {
  int n = 0;
  for (int l = 0; l < ici_link_slots(); ++l) n += link_exists(l) ? 1 : 0;
  return n;
}

void Topology::set_link_fraction(int link, double fraction) {
  if (!link_exists(link) || !(fraction >= 0.0 && fraction <= 1.0))
    throw std::invalid_argument("Topology::set_link_fraction: link " + std::to_string(link) + ", fraction " +
                                std::to_string(fraction));
  if (fraction_.empty()) fraction_.assign(static_cast<std::size_t>(ici_link_slots()), 1.0);
  double& f = fraction_[static_cast<std::size_t>(link)];
  failed_ += (fraction == 0.0 ? 1 : 0) - (f == 0.0 ? 1 : 0);
  f = fraction;
}

std::string Topology::describe_link(int link) const {
  const LinkEnds e = link_ends(link);
  return describe(e.from) + " -> " + describe(e.to);
}

int Topology::steps(int axis, int a, int b) const {
  const int size = shape_[axis];
  if (!wrap_[axis]) return b - a;
  // (b - a) mod size without a division: both are in [0, size).
  const int forward = b >= a ? b - a : b - a + size;
  const int backward = size - forward;
  if (forward == 0) return 0;
  if (forward < backward) return forward;
  if (backward < forward) return -backward;
  return (a % 2 == 0) ? forward : -backward;
}

void Topology::route(int src, int dst, std::vector<int>& out) const {
  out.clear();
  if (slice_of(src) != slice_of(dst)) {
    const int chip_base = ici_link_slots(), host_base = chip_base + 2 * chips_, slice_base = host_base + 2 * hosts();
    out.push_back(chip_base + 2 * src + kUp);
    out.push_back(host_base + 2 * host_of(src) + kUp);
    out.push_back(slice_base + 2 * slice_of(src) + kUp);
    out.push_back(slice_base + 2 * slice_of(dst) + kDown);
    out.push_back(host_base + 2 * host_of(dst) + kDown);
    out.push_back(chip_base + 2 * dst + kDown);
    return;
  }
  if (failed_ > 0) {
    route_around(src, dst, out);
    return;
  }
  int at = src;
  // Coordinates of both ends, axis by axis, one division each.
  int s_rest = src, d_rest = dst;
  for (int axis = 0; axis < ici_axes_; ++axis) {
    const int size = shape_[axis];
    int c = s_rest % size;
    const int d = d_rest % size;
    s_rest /= size;
    d_rest /= size;
    const int s = steps(axis, c, d);
    const int dir = s > 0 ? +1 : -1;
    for (int i = 0, n = s > 0 ? s : -s; i < n; ++i) {
      out.push_back(link_id(at, axis, dir));
      // One step along the axis, wrapping at the ends.
      int next = c + dir;
      if (next == size) next = 0;
      if (next < 0) next = size - 1;
      at += (next - c) * stride_[axis];
      c = next;
    }
  }
}

bool Topology::leg_around(int at, int axis, int dir, int n, std::vector<int>& out, int& blocked) const {
  for (int i = 0; i < n; ++i) {
    const int hop = link_id(at, axis, dir);
    const int next = neighbor(at, axis, dir);
    if (!link_failed(hop)) {
      out.push_back(hop);
      at = next;
      continue;
    }
    // Three hops instead of one: off along another axis, across, and back.
    bool detoured = false;
    for (int b = 0; b < ici_axes_ && !detoured; ++b) {
      if (b == axis) continue;
      for (const int side : {+1, -1}) {
        const int off = neighbor(at, b, side);
        if (off < 0) continue;
        const int across = neighbor(off, axis, dir);
        const int step_off = link_id(at, b, side), step_across = link_id(off, axis, dir);
        const int step_back = link_id(across, b, -side);
        if (link_failed(step_off) || link_failed(step_across) || link_failed(step_back)) continue;
        out.insert(out.end(), {step_off, step_across, step_back});
        detoured = true;
        break;
      }
    }
    if (!detoured) {
      blocked = hop;
      return false;
    }
    at = next;
  }
  return true;
}

void Topology::route_around(int src, int dst, std::vector<int>& out) const {
  int at = src;
  for (int axis = 0; axis < ici_axes_; ++axis) {
    const int c = coord(at, axis), d = coord(dst, axis);
    const int s = steps(axis, c, d);
    if (s == 0) continue;
    const int dir = s > 0 ? +1 : -1, n = std::abs(s);
    const std::size_t mark = out.size();
    int blocked = -1, other = -1;
    if (!leg_around(at, axis, dir, n, out, blocked)) {
      out.resize(mark);
      if (!wrap_[axis] || !leg_around(at, axis, -dir, shape_[axis] - n, out, other)) {
        std::string links = "the failed link " + describe_link(blocked);
        if (other >= 0 && other != blocked) links += " and the failed link " + describe_link(other);
        throw sim::SimFailure("no route from " + describe(src) + " to " + describe(dst) + " along " + axis_name(axis) +
                              " avoids " + links +
                              " (pod.links): no detour over another axis, and the other way round is cut too");
      }
    }
    at += (d - c) * stride_[axis];
  }
}

int Topology::hops(int src, int dst) const {
  int h = 0;
  if (slice_of(src) != slice_of(dst)) return 0;
  for (int axis = 0; axis < ici_axes_; ++axis) h += std::abs(steps(axis, coord(src, axis), coord(dst, axis)));
  return h;
}

}  // namespace interconnect
