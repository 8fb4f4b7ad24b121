#pragma once
// An experiment file: which chip, which pod, which workload. Everything is
// validated up front, with each problem located (file:line:column, key path).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/chip_config.h"
#include "interconnect/pod_config.h"
#include "runtime/limits.h"
#include "runtime/pod_run.h"
#include "sim/yaml_node.h"
#include "workloads/workload.h"

namespace workloads {

struct PodSpec {
  std::string topology = "ring";  // ring | torus2d | torus3d
  std::vector<std::uint32_t> shape{1};
  std::vector<bool> wraparound{false};
  std::uint64_t packet_bytes = 4096;      // ICI packet; an assumption (docs/interconnect.md)
  std::string switching = "cut_through";  // cut_through | store_and_forward
  std::string network_model = "fluid";    // fluid | packet (the slow reference)
  std::uint32_t chips() const {
    std::uint32_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
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
  // auto: simulate one chip per group of identical replicas when that is
  // exact (pod_runtime.h); all: every chip, always.
  std::string replicas = "auto";
  runtime::Limits limits;
  std::unique_ptr<Workload> workload;
};

// The experiment's pod as the interconnect sees it, and as the runtime runs it.
interconnect::PodNetworkConfig pod_network_config(const Experiment& exp);
runtime::PodConfig pod_config(const Experiment& exp);

// Loads, applies overrides ("key.path=value"), validates. Throws sim::ConfigError.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides = {});
// The same for YAML text that `path` names in messages (chip and pod files
// are looked up relative to it, as for a file there). For tests and fuzzing.
Experiment load_experiment_text(const std::string& text, const std::string& path,
                                const std::vector<std::string>& overrides = {});

// Where chip files are looked up: next to the experiment, in
// $TPUSIM_CONFIG_DIR/chips, and in the source tree's configs/chips.
std::vector<std::string> chip_search_dirs(const std::string& experiment_path);

// Detects what a YAML file is (chip, pod, experiment, sweep) and validates
// a chip, pod or experiment; returns the kind. A sweep's points are checked
// by sweep::expand_sweep (the sweep layer sits above this one). Throws
// sim::ConfigError.
std::string validate_file(const std::string& path);
// The same for chip, pod and experiment text that `path` names (sweeps are
// read from their file: use validate_file).
std::string validate_text(const std::string& text, const std::string& path);

}  // namespace workloads
