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

// Runaway protection (`limits:` in an experiment). A run that reaches either
// limit with work left fails with exit 3, naming what was still pending.
struct Limits {
  double max_sim_time_s = 3600.0;         // simulated seconds
  std::uint64_t max_events = 1000000000;  // SystemC delta cycles + ICI network events
};

// How a bounded simulation (simulate_within) ended.
struct SimulationEnd {
  enum class Reason { idle, stopped, time_limit, event_limit };
  Reason reason = Reason::idle;  // idle: nothing left to happen; stopped: sc_stop() (an op failed)
  std::uint64_t events = 0;      // as counted against limits.max_events
  double sim_time_s = 0;
  bool runaway() const { return reason == Reason::time_limit || reason == Reason::event_limit; }
  // "runaway: ..." naming the limit that was reached (for runaway ends).
  std::string describe(const Limits& limits) const;
};

// Runs the elaborated simulation in slices of simulated time until nothing
// is pending, an op stops it, or a limit is reached; `extra_events` counts
// events the kernel does not see (the ICI network's). The limits are
// checked between slices, so a run may overshoot max_events by part of one
// slice (slices shrink as the budget runs out); the outcome is deterministic.
SimulationEnd simulate_within(const Limits& limits, const std::function<std::uint64_t()>& extra_events = nullptr);

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
  Limits limits;
  std::unique_ptr<Workload> workload;
};

// Loads, applies overrides ("key.path=value"), validates. Throws sim::ConfigError.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides = {});
// The same for YAML text that `path` names in messages (chip and pod files
// are looked up relative to it, as for a file there). For tests and fuzzing.
Experiment load_experiment_text(const std::string& text, const std::string& path,
                                const std::vector<std::string>& overrides = {});

// Where chip files are looked up: next to the experiment, in
// $TPUSIM_CONFIG_DIR/chips, and in the source tree's configs/chips.
std::vector<std::string> chip_search_dirs(const std::string& experiment_path);

// Detects what a YAML file is (chip, pod, experiment, sweep) and validates it
// (a sweep: every point's experiment). Returns the kind. Throws sim::ConfigError.
std::string validate_file(const std::string& path);
// The same for chip, pod and experiment text that `path` names (sweeps are
// read from their file: use validate_file).
std::string validate_text(const std::string& text, const std::string& path);

}  // namespace workloads
