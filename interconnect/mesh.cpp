#include "interconnect/mesh.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "sim/error.h"
#include "sim/text.h"

namespace interconnect {

namespace {

// Where the next ICI mesh axis starts: physical axis `axis`, of which the
// factor `used` (its inner digits) is taken already.
struct Cursor {
  int axis = 0;
  int used = 1;
};

// Takes `size` chips of the ICI axes of `shape` from the cursor on
// (MeshAxis has the rule), or only whole axes; false when the size does not
// map there.
bool take(const std::vector<int>& shape, Cursor& at, long long size, std::vector<AxisPart>& out,
          bool whole_axes_only = false) {
  const int axes = static_cast<int>(shape.size());
  while (size > 1 && at.axis < axes) {
    const int left = shape[at.axis] / at.used;
    if (left == 1) {
      at = {at.axis + 1, 1};
    } else if (size % left == 0) {
      out.push_back({at.axis, at.used, left});
      size /= left;
      at = {at.axis + 1, 1};
    } else if (left % size == 0 && !whole_axes_only) {
      out.push_back({at.axis, at.used, static_cast<int>(size)});
      at.used *= static_cast<int>(size);
      size = 1;
    } else {
      return false;
    }
  }
  return size == 1;
}

// The sizes a mesh axis could take from the cursor on, ascending.
std::string sizes_that_map(const std::vector<int>& shape, const Cursor& at) {
  long long chips = shape[at.axis] / at.used;
  for (std::size_t a = at.axis + 1; a < shape.size(); ++a) chips *= shape[a];
  std::string out;
  for (long long v = 1; v <= chips; ++v) {
    Cursor c = at;
    std::vector<AxisPart> parts;
    if (chips % v == 0 && take(shape, c, v, parts)) out += (out.empty() ? "" : ", ") + std::to_string(v);
  }
  return out;
}

}  // namespace

Mesh::Mesh(const Topology& topology, const std::vector<MeshAxis>& axes) : axes_(axes) {
  if (axes_.empty()) {
    for (int a = 0; a < topology.axes(); ++a) {
      const int d = a - topology.ici_axes();
      if (d < 0) {
        axes_.push_back({topology.axis_name(a), topology.size(a)});
      } else {
        axes_.push_back({d == 0 ? "dcn" : "dcn" + std::to_string(d), topology.size(a), true});
      }
    }
  }
  std::vector<int> ici;  // the ICI axes' sizes
  for (int a = 0; a < topology.ici_axes(); ++a) ici.push_back(topology.size(a));
  Cursor next;                         // first ICI chips not yet taken
  int next_dcn = topology.ici_axes();  // first DCN axis not yet taken
  for (const MeshAxis& m : axes_) {
    const std::string key = "mesh." + m.name;
    if (m.name.empty()) throw sim::ConfigError({}, "mesh", "a mesh axis has an empty name");
    if (m.size < 1) throw sim::ConfigError({}, key, "size must be >= 1, got " + std::to_string(m.size));
    for (const MeshAxis& other : axes_) {
      if (&other != &m && other.name == m.name) throw sim::ConfigError({}, key, "axis named twice");
    }
    if (m.dcn) {
      if (next_dcn >= topology.axes() || topology.size(next_dcn) != m.size) {
        throw sim::ConfigError({}, key,
                               "a DCN axis of size " + std::to_string(m.size) + " does not match the slices (" +
                                   std::to_string(topology.slices()) + ")");
      }
      physical_.push_back({{next_dcn++, 1, m.size}});
      continue;
    }
    std::vector<AxisPart> taken;
    const Cursor from = next;
    if (!take(ici, next, m.size, taken)) {
      const std::string dims = sim::shape_text(ici);
      const std::string options = from.axis < topology.ici_axes() ? sizes_that_map(ici, from) : "1";
      throw sim::ConfigError({}, key,
                             "size " + std::to_string(m.size) + " does not map onto the " + dims +
                                 (topology.slices() > 1 ? " slice" : "") +
                                 " topology (mesh axes take consecutive axes x, y, z, or a factor that divides "
                                 "one); sizes that map here: " +
                                 options);
    }
    physical_.push_back(taken);
  }
  if (next_dcn < topology.axes()) {
    throw sim::ConfigError({}, "pod.dcn_axes",
                           "the " + std::to_string(topology.slices()) + " slices need mesh axes placed across them");
  }
  for (; next.axis < topology.ici_axes(); next = {next.axis + 1, 1}) {
    const int left = topology.size(next.axis) / next.used;
    if (left != 1) {
      throw sim::ConfigError({}, "mesh",
                             "mesh axes cover fewer chips than the pod: " + std::to_string(left) +
                                 " chips of physical axis " + std::string(topology.axis_name(next.axis)) + " (" +
                                 std::to_string(topology.size(next.axis)) + " chips) are left over");
    }
  }
}

std::vector<AxisPart> Mesh::resolve(const std::vector<std::string>& names, const std::string& key_path) const {
  std::vector<AxisPart> out;
  if (names.empty()) {
    for (const auto& p : physical_) out.insert(out.end(), p.begin(), p.end());
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto it = std::find_if(axes_.begin(), axes_.end(), [&](const MeshAxis& m) { return m.name == names[i]; });
    if (it == axes_.end()) {
      std::string known;
      for (const MeshAxis& m : axes_) known += (known.empty() ? "" : ", ") + m.name;
      throw sim::ConfigError({}, key_path, "unknown mesh axis '" + names[i] + "' (mesh axes: " + known + ")");
    }
    if (std::count(names.begin(), names.end(), names[i]) > 1) {
      throw sim::ConfigError({}, key_path, "mesh axis '" + names[i] + "' listed twice");
    }
    const auto& p = physical_[static_cast<std::size_t>(it - axes_.begin())];
    out.insert(out.end(), p.begin(), p.end());
  }
  std::sort(out.begin(), out.end(), [](const AxisPart& a, const AxisPart& b) {
    return a.axis != b.axis ? a.axis < b.axis : a.stride < b.stride;
  });
  std::vector<AxisPart> joined;
  for (const AxisPart& p : out) {
    if (!joined.empty() && joined.back().axis == p.axis && joined.back().stride * joined.back().size == p.stride) {
      joined.back().size *= p.size;
    } else {
      joined.push_back(p);
    }
  }
  return joined;
}

std::optional<std::vector<std::vector<AxisPart>>> mesh_parts(const std::vector<int>& shape,
                                                             const std::vector<long long>& sizes,
                                                             bool whole_axes_only) {
  Cursor at;
  std::vector<std::vector<AxisPart>> out;
  for (long long s : sizes) {
    out.emplace_back();
    if (!take(shape, at, s, out.back(), whole_axes_only)) return std::nullopt;
  }
  for (; at.axis < static_cast<int>(shape.size()); at = {at.axis + 1, 1})
    if (shape[at.axis] / at.used != 1) return std::nullopt;
  return out;
}

bool mesh_maps(const std::vector<int>& shape, const std::vector<long long>& sizes, bool whole_axes_only) {
  return mesh_parts(shape, sizes, whole_axes_only).has_value();
}

std::optional<std::vector<std::size_t>> mesh_order(const std::vector<int>& shape, const std::vector<long long>& sizes,
                                                   bool whole_axes_only) {
  std::vector<std::size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  if (!whole_axes_only) std::reverse(order.begin(), order.end());
  const auto before = [&](std::size_t x, std::size_t y) { return whole_axes_only ? x < y : x > y; };
  do {
    std::vector<long long> ordered;
    for (std::size_t k : order) ordered.push_back(sizes[k]);
    if (mesh_maps(shape, ordered, whole_axes_only)) return order;
  } while (std::next_permutation(order.begin(), order.end(), before));
  return std::nullopt;
}

std::vector<std::vector<int>> chip_groups(const Topology& topology, const std::vector<AxisPart>& parts) {
  std::map<int, std::size_t> index;  // key: id of the chip with the parts' digits zeroed
  std::vector<std::vector<int>> groups;
  for (int chip = 0; chip < topology.chips(); ++chip) {
    std::vector<int> c = topology.coords(chip);
    for (const AxisPart& p : parts) p.set_digit(c, 0);
    const int key = topology.chip_at(c);
    auto [it, fresh] = index.emplace(key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(chip);
  }
  return groups;
}

}  // namespace interconnect
