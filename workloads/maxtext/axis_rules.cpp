#include "workloads/maxtext/axis_rules.h"

#include <algorithm>

namespace workloads {

LogicalAxisRules read_axis_rules(const sim::YamlNode& n) {
  if (!n.is_sequence()) n.fail("expected a list of [logical name, mesh axes] pairs");
  LogicalAxisRules rules;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const sim::YamlNode r = n[i];
    if (!r.is_sequence() || r.size() != 2) r.fail("expected [logical name, mesh axes]");
    AxisRule rule;
    rule.logical = r[0].as_string();
    const sim::YamlNode axes = r[1];
    if (axes.is_scalar()) {
      rule.mesh.push_back(mesh_axis_names().parse(axes));
    } else {
      if (!axes.is_sequence()) axes.fail("expected a mesh axis or a list of them");
      for (std::size_t j = 0; j < axes.size(); ++j) rule.mesh.push_back(mesh_axis_names().parse(axes[j]));
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

LogicalAxisRules merge_model_axis_rules(const LogicalAxisRules& base, const LogicalAxisRules& model) {
  auto in = [](const LogicalAxisRules& rs, const std::string& name) {
    return std::any_of(rs.begin(), rs.end(), [&](const AxisRule& r) { return r.logical == name; });
  };
  LogicalAxisRules replacements;
  for (const auto& r : model)
    if (in(base, r.logical)) replacements.push_back(r);
  LogicalAxisRules out;
  for (const auto& r : base)
    if (!in(replacements, r.logical)) out.push_back(r);
  out.insert(out.end(), replacements.begin(), replacements.end());
  return out;
}

std::vector<std::vector<MeshAxis>> logical_to_mesh_axes(const LogicalAxisRules& rules,
                                                        const std::vector<std::string>& dims) {
  std::vector<std::vector<MeshAxis>> out(dims.size());
  std::vector<bool> assigned(dims.size(), false);
  for (const auto& rule : rules) {
    const auto it = std::find(dims.begin(), dims.end(), rule.logical);
    if (it == dims.end()) continue;
    const auto pos = static_cast<std::size_t>(it - dims.begin());
    if (assigned[pos]) continue;
    bool free = true;
    for (std::size_t d = 0; d < dims.size() && free; ++d)
      for (const MeshAxis a : rule.mesh)
        if (std::find(out[d].begin(), out[d].end(), a) != out[d].end()) free = false;
    if (!free) continue;
    out[pos] = rule.mesh;
    assigned[pos] = true;
  }
  return out;
}

Sharding sharded_over(const MaxTextConfig& cfg, const std::vector<std::string>& dims, std::size_t dim) {
  Sharding s;
  const auto assigned = logical_to_mesh_axes(cfg.logical_axis_rules, dims);
  for (const MeshAxis a : assigned.at(dim)) {
    if (cfg.mesh.size(a) <= 1) continue;
    s.axes.push_back(a);
    s.shards *= cfg.mesh.size(a);
  }
  return s;
}

Sharding sharded_over(const MaxTextConfig& cfg, const std::string& logical) {
  return sharded_over(cfg, std::vector<std::string>{logical}, 0);
}

}  // namespace workloads
