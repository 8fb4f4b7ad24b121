#pragma once
// The key tables of every input file, as `tpusim explain` lists them, and a
// walk over their key paths: shared by the tests that hold the tables
// against the fuzz dictionary, explain, and the simulator itself.
#include <nlohmann/json.hpp>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hw/chip_config.h"
#include "sweep/spec.h"
#include "workloads/experiment.h"
#include "workloads/scalesim.h"
#include "workloads/validation_case.h"
#include "workloads/workload.h"

namespace config_topics {

struct Topic {
  std::string name;
  nlohmann::json keys;
};

inline std::vector<Topic> topics() {
  std::vector<Topic> t = {{"chip", hw::chip_params().describe()},
                          {"experiment", workloads::experiment_params().describe()},
                          {"pod", workloads::pod_params().describe()},
                          {"multislice", workloads::multislice_params().describe()},
                          {"sweep", sweep::sweep_params().describe()},
                          {"scalesim", workloads::scalesim_config_params().describe()},
                          {"case", workloads::validation_case_params().describe()}};
  for (const auto& k : workloads::workload_kinds()) t.push_back({k.name, k.keys()});
  return t;
}

// Key paths ("limits.max_events") and the words of enum types ("tile | pe").
inline void walk(const nlohmann::json& table, const std::string& prefix, std::vector<std::string>& paths,
                 std::set<std::string>& words) {
  for (const auto& p : table["params"]) {
    const std::string name = p["name"];
    paths.push_back(prefix + name);
    words.insert(name);
    const std::string type = p["type"];
    if (type.find(" | ") != std::string::npos || p["name"] == "dtype") {
      std::stringstream s(type);
      std::string w;
      while (s >> w)
        if (w != "|") words.insert(w);
    }
    if (p.contains("params")) walk(p, prefix + name + ".", paths, words);
  }
}

}  // namespace config_topics
