#pragma once
// An experiment file: which chip, which pod, which workload. Everything is
// validated up front, with each problem located (file:line:column, key path).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/chip_config.h"
#include "sim/yaml_node.h"
#include "workloads/workload.h"

namespace workloads {

struct PodSpec {
  std::string topology = "ring";          // ring | torus2d | torus3d
  std::vector<std::uint32_t> shape{1};
  std::vector<bool> wraparound{false};
  std::uint64_t packet_bytes = 4096;        // ICI packet; an assumption (docs/interconnect.md)
  std::string switching = "cut_through";    // cut_through | store_and_forward
  std::string network_model = "fluid";      // fluid | packet (the slow reference)
  std::uint32_t chips() const {
    std::uint32_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
};

struct Limits {
  double max_sim_time_s = 3600.0;  // simulated seconds before a run is called runaway
};

struct Experiment {
  std::string name;
  std::string config_path;
  std::string chip_ref;  // file name or "inline"
  hw::ChipConfig chip;
  PodSpec pod;
  std::vector<std::pair<std::string, std::uint32_t>> mesh;  // axis name -> size, in file order
  std::string fidelity = "tile";
  bool functional = false;
  Limits limits;
  std::unique_ptr<Workload> workload;
};

// Loads, applies overrides ("key.path=value"), validates. Throws sim::ConfigError.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides = {});

// Where chip files are looked up: next to the experiment, in
// $TPUSIM_CONFIG_DIR/chips, and in the source tree's configs/chips.
std::vector<std::string> chip_search_dirs(const std::string& experiment_path);

// Detects what a YAML file is (chip, pod, experiment, sweep) and validates it.
// Returns the kind. Throws sim::ConfigError.
std::string validate_file(const std::string& path);

}  // namespace workloads
