#include "interconnect/mesh.h"

#include <algorithm>
#include <map>

#include "sim/error.h"

namespace interconnect {

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
  int next = 0;                        // first ICI axis not yet taken
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
      physical_.push_back({next_dcn++});
      continue;
    }
    std::vector<int> taken;
    long long product = 1;
    while (product < m.size && next < topology.ici_axes()) {
      product *= topology.size(next);
      taken.push_back(next++);
    }
    if (product != m.size) {
      std::string dims;
      for (int a = 0; a < topology.ici_axes(); ++a) dims += (a ? "x" : "") + std::to_string(topology.size(a));
      throw sim::ConfigError({}, key,
                             "size " + std::to_string(m.size) + " does not map onto whole physical axes of the " +
                                 dims + (topology.slices() > 1 ? " slice" : "") +
                                 " topology (mesh axes take consecutive axes x, y, z)");
    }
    physical_.push_back(taken);
  }
  if (next_dcn < topology.axes()) {
    throw sim::ConfigError({}, "pod.dcn_axes",
                           "the " + std::to_string(topology.slices()) + " slices need mesh axes placed across them");
  }
  for (; next < topology.ici_axes(); ++next) {
    if (topology.size(next) != 1) {
      throw sim::ConfigError({}, "mesh",
                             "mesh axes cover fewer chips than the pod: physical axis " +
                                 std::string(topology.axis_name(next)) + " (" + std::to_string(topology.size(next)) +
                                 " chips) is left over");
    }
  }
}

std::vector<int> Mesh::resolve(const std::vector<std::string>& names, const std::string& key_path) const {
  std::vector<int> out;
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
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::vector<int>> chip_groups(const Topology& topology, const std::vector<int>& axes) {
  std::vector<bool> in_group(topology.axes(), false);
  for (int a : axes) in_group[a] = true;
  std::map<int, std::size_t> index;  // key: id of the chip with group coordinates zeroed
  std::vector<std::vector<int>> groups;
  for (int chip = 0; chip < topology.chips(); ++chip) {
    std::vector<int> c = topology.coords(chip);
    for (int a = 0; a < topology.axes(); ++a) {
      if (in_group[a]) c[a] = 0;
    }
    const int key = topology.chip_at(c);
    auto [it, fresh] = index.emplace(key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(chip);
  }
  return groups;
}

}  // namespace interconnect
