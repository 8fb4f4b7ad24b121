#pragma once
// What-ifs on a shipped chip or pod: `chip: {base: tpu-v5e, hbm: {bandwidth:
// 2.4e12}}` lays the mapping's keys over the named file, and `--set
// chip.hbm.bandwidth=2.4e12` on `chip: tpu-v5e` does the same from the
// command line (and `pod:` likewise). The chip (pod) then loads as an inline
// one, through the same table, so every key is checked and located as
// usual; report.json records the base and the keys changed
// (experiment.chip, experiment.pod; docs/interface.md).
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/yaml_node.h"

namespace workloads {

// A chip or pod given as a shipped file with some of its keys changed
// (Experiment::chip_what_if, pod_what_if).
struct WhatIf {
  std::string base;                                       // the file name the keys were laid over
  std::vector<std::pair<std::string, std::string>> keys;  // key path in that file -> value (one-line YAML)
};

// Before `overrides` apply to an experiment document: for each `chip.KEY=...`
// (`pod.KEY=...`), `chip: NAME` becomes `chip: {base: NAME}` and the
// mappings the key path goes through are added where missing, so that the
// override lands where an inline key would. Each step of the path is checked
// against `tables` ("chip", "pod": their ParamTable::describe()) first: an
// unknown one is a sim::ConfigError located at the --set, with the nearest key.
void open_for_overrides(const sim::YamlNode& root, const std::vector<std::string>& overrides,
                        const std::map<std::string, nlohmann::json>& tables);

// `node`, a `chip:` or `pod:` mapping with `base`, becomes the inline mapping
// it stands for: the keys it sets (recorded in the returned WhatIf, in file
// order), over every key of `base_doc` (the named file's mapping, already
// checked on its own) it does not set, nested mappings merged key by key;
// `base` itself is removed.
WhatIf lay_over_base(const sim::YamlNode& node, const sim::YamlNode& base_doc, const std::string& base_name);

}  // namespace workloads
