#include "app/chip_diff.h"

#include <algorithm>
#include <array>
#include <sstream>
#include <vector>

#include "hw/chip_config.h"
#include "sim/yaml_node.h"
#include "workloads/experiment.h"

namespace app {

namespace {

// Every key the table declares, as a dotted path, with its default.
void leaves(const nlohmann::json& level, const std::string& prefix,
            std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& p : level["params"]) {
    const std::string name = prefix + p["name"].get<std::string>();
    if (p.contains("params"))
      leaves(p, name + ".", out);
    else
      out.emplace_back(name, p["default"].get<std::string>());
  }
}

// The value a chip file gives `path`, as one-line YAML, or "" when absent.
std::string value_at(const sim::YamlNode& doc, const std::string& path) {
  YAML::Node n = doc.raw();  // a handle; rebound with reset(), never assigned (that would rewrite the document)
  for (std::size_t start = 0;;) {
    const std::size_t dot = path.find('.', start);
    const YAML::Node& view = n;
    const YAML::Node child = view[path.substr(start, dot - start)];
    if (!child || child.IsNull()) return "";
    n.reset(child);
    if (dot == std::string::npos) return sim::flow_yaml(n);
    start = dot + 1;
  }
}

}  // namespace

std::string chip_diff(const std::string& a, const std::string& b) {
  std::vector<std::pair<std::string, std::string>> keys;
  leaves(hw::chip_params().describe(), "", keys);
  std::array<sim::YamlNode, 2> docs = {sim::YamlNode::load_file(workloads::chip_file_option(a, "--diff")),
                                       sim::YamlNode::load_file(workloads::chip_file_option(b, "--diff"))};
  for (const auto& d : docs) hw::load_chip(d);  // both valid chips, or a located error
  std::vector<std::array<std::string, 4>> rows = {{"", "key", a, b}};
  std::size_t differ = 0;
  for (const auto& [key, def] : keys) {
    if (key == "base") continue;  // an experiment's what-if, never in a chip file
    std::array<std::string, 4> row{"", key, value_at(docs[0], key), value_at(docs[1], key)};
    // Equal when the values are, a missing key counting as its default.
    const bool same = (row[2].empty() ? def : row[2]) == (row[3].empty() ? def : row[3]);
    for (std::size_t i : {2, 3})
      if (row[i].empty()) row[i] = def.rfind('(', 0) == 0 ? def : "(" + def + ")";
    if (!same && key != "name") {
      row[0] = "*";
      ++differ;
    }
    rows.push_back(row);
  }
  std::array<std::size_t, 4> width{};
  for (const auto& r : rows)
    for (std::size_t i = 0; i < 4; ++i) width[i] = std::max(width[i], r[i].size());
  std::ostringstream s;
  s << "chip " << a << " vs " << b << ": " << differ << " keys differ (*); (a default) where the file gives none\n";
  for (const auto& r : rows) {
    std::string line = r[0] + std::string(width[0] - r[0].size() + 1, ' ');
    for (std::size_t i = 1; i < 4; ++i) line += r[i] + std::string(width[i] - r[i].size() + 2, ' ');
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s << line << "\n";
  }
  return s.str();
}

}  // namespace app
