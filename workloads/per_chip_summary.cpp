#include "workloads/per_chip_summary.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace workloads {

namespace {

using nlohmann::json;

struct Distribution {
  std::uint64_t count = 0;
  double min = 0, max = 0, sum = 0;
  std::uint64_t min_chip = 0, max_chip = 0;
};

// Adds every number under `node` to `fields` by its dotted key.
void add_numbers(const json& node, const std::string& prefix, std::uint64_t chip,
                 std::map<std::string, Distribution>& fields) {
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = prefix + it.key();
    if (prefix.empty() && (it.key() == "chip" || it.key() == "coords" || it.key() == "ranks")) continue;
    if (it->is_object()) {
      add_numbers(*it, key + ".", chip, fields);
    } else if (it->is_number()) {
      const double v = it->get<double>();
      Distribution& d = fields[key];
      // Entries come in chip order, so a strict comparison keeps the lowest chip of a tie.
      if (d.count == 0 || v < d.min) {
        d.min = v;
        d.min_chip = chip;
      }
      if (d.count == 0 || v > d.max) {
        d.max = v;
        d.max_chip = chip;
      }
      d.sum += v;
      ++d.count;
    }
  }
}

}  // namespace

json summarize_per_chip(const json& per_chip) {
  std::map<std::string, Distribution> fields;
  for (const json& entry : per_chip) add_numbers(entry, "", entry.value("chip", std::uint64_t{0}), fields);
  json out = json::object();
  for (const auto& [key, d] : fields)
    out[key] = {{"count", d.count},       {"min", d.min},
                {"min_chip", d.min_chip}, {"mean", d.sum / double(d.count)},
                {"max", d.max},           {"max_chip", d.max_chip}};
  return {{"chips", per_chip.size()}, {"fields", out}};
}

json listed_per_chip(const json& per_chip, const json& summary) {
  if (per_chip.size() <= kPerChipListedAll) return per_chip;
  std::set<std::uint64_t> named{0};
  for (const auto& [key, d] : summary.at("fields").items()) {
    named.insert(d.at("min_chip").get<std::uint64_t>());
    named.insert(d.at("max_chip").get<std::uint64_t>());
  }
  json out = json::array();
  for (const json& entry : per_chip)
    if (named.count(entry.value("chip", std::uint64_t{0}))) out.push_back(entry);
  return out;
}

}  // namespace workloads
