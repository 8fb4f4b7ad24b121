#include "workloads/what_if.h"

namespace workloads {

namespace {

// The names a table's level declares, and the nested table of one of them
// (null when it is not a mapping), from ParamTable::describe().
const nlohmann::json* nested(const nlohmann::json& level, const std::string& name) {
  for (const auto& p : level["params"])
    if (p["name"] == name) return p.contains("params") ? &p : nullptr;
  return nullptr;
}

std::vector<std::string> names(const nlohmann::json& level) {
  std::vector<std::string> out;
  for (const auto& p : level["params"]) out.push_back(p["name"].get<std::string>());
  return out;
}

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

// Adds the mappings `parts` (all but the last, the key set) go through
// under `node`, each checked against `table`.
void open_path(YAML::Node node, const std::vector<std::string>& parts, const nlohmann::json& table,
               const std::string& section, const std::string& assignment) {
  const nlohmann::json* level = &table;
  std::string walked = section;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    walked += "." + parts[i];
    const nlohmann::json* sub = nested(*level, parts[i]);
    if (!sub) {
      const std::string hint = sim::did_you_mean(parts[i], names(*level));
      throw sim::ConfigError(
          {"--set " + assignment, 0, 0}, walked,
          "the " + section + " has no mapping '" + parts[i] + "'" + (hint.empty() ? "" : "; " + hint));
    }
    const YAML::Node& view = node;
    if (!view[parts[i]]) node[parts[i]] = YAML::Node(YAML::NodeType::Map);
    if (!view[parts[i]].IsMap()) return;  // the override says what is wrong with it
    node.reset(node[parts[i]]);
    level = sub;
  }
}

void record_leaves(const YAML::Node& node, const std::string& prefix, WhatIf& out) {
  for (const auto& kv : node) {
    const std::string key = prefix + kv.first.Scalar();
    if (key == "base") continue;
    if (kv.second.IsMap())
      record_leaves(kv.second, key + ".", out);
    else
      out.keys.emplace_back(key, sim::flow_yaml(kv.second));
  }
}

void lay_under(YAML::Node over, const YAML::Node& under) {
  for (const auto& kv : under) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& view = over;
    if (!view[key])
      over[key] = kv.second;
    else if (view[key].IsMap() && kv.second.IsMap())
      lay_under(over[key], kv.second);
  }
}

}  // namespace

void open_for_overrides(const sim::YamlNode& root, const std::vector<std::string>& overrides,
                        const std::map<std::string, nlohmann::json>& tables) {
  if (!root.is_map()) return;
  YAML::Node doc = root.raw();
  for (const std::string& o : overrides) {
    const std::size_t eq = o.find('=');
    if (eq == std::string::npos) continue;  // apply_override says what is wrong
    const std::vector<std::string> parts = split(o.substr(0, eq));
    if (parts.size() < 2 || !tables.count(parts[0])) continue;
    const YAML::Node& view = doc;
    if (!view[parts[0]]) continue;  // no chip (pod) to change: the override's own message
    if (view[parts[0]].IsScalar()) {
      YAML::Node opened(YAML::NodeType::Map);
      opened["base"] = doc[parts[0]];  // the name's node, with its place in the file
      doc[parts[0]] = opened;
    }
    if (!view[parts[0]].IsMap()) continue;
    open_path(doc[parts[0]], std::vector<std::string>(parts.begin() + 1, parts.end()), tables.at(parts[0]), parts[0],
              o);
  }
}

WhatIf lay_over_base(const sim::YamlNode& node, const sim::YamlNode& base_doc, const std::string& base_name) {
  WhatIf w;
  w.base = base_name;
  record_leaves(node.raw(), "", w);
  YAML::Node over = node.raw();
  over.remove("base");
  lay_under(over, base_doc.raw());
  return w;
}

}  // namespace workloads
