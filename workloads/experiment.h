#pragma once
// An experiment file: which chip, which pod, which workload. Everything is
// validated up front, with each problem located (file:line:column, key path).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/chip_config.h"
#include "interconnect/pod_config.h"
#include "runtime/limits.h"
#include "runtime/pod_run.h"
#include "sim/params.h"
#include "sim/yaml_node.h"
#include "workloads/what_if.h"
#include "workloads/workload.h"

namespace workloads {

// auto: simulate one chip per group of identical replicas when that is
// exact (runtime/pod_run.h); all: every chip, always.
enum class Replicas { automatic, all };
const sim::EnumNames<Replicas>& replicas_names();  // the YAML spellings: auto, all
const char* to_string(Replicas r);

// `pod.dcn`: overrides of the chip's host figures and the fabric between
// slices (docs/interconnect.md, "DCN").
struct DcnSpec {
  std::optional<double> nic_bandwidth;   // bytes/s each way per host; else the chip's host.nic_bandwidth
  std::optional<double> host_bandwidth;  // bytes/s each way per chip; else the chip's host.pcie_bandwidth
  double latency = 1.0e-5;               // s per message between slices; an assumption (docs/reference/dcn.md)
  double oversubscription = 1.0;
};

// The `pod:` mapping (pod_params() declares every key; multislice_params()
// the keys of a pod of several slices, whose `slice` is read with
// pod_params() into the same PodSpec).
struct PodSpec {
  interconnect::TopologyKind topology = interconnect::TopologyKind::ring;
  std::vector<std::uint32_t> shape{1};
  std::vector<bool> wraparound{false};
  // Overrides of the chip's ICI link; the loader writes them into
  // Experiment::chip.ici, which is what the run uses.
  std::optional<double> link_bandwidth;  // bytes/s per direction
  std::optional<double> link_latency;    // seconds per hop
  std::uint64_t packet_bytes = 4096;     // ICI packet; an assumption (docs/interconnect.md)
  interconnect::Switching switching = interconnect::Switching::cut_through;
  interconnect::NetworkModel network_model = interconnect::NetworkModel::fluid;  // packet: the slow reference
  std::vector<interconnect::LinkFault> links;                                    // degraded and failed links
  std::uint32_t slices = 1;                                                      // slices of `shape` joined by DCN
  std::vector<std::string> dcn_axes;                                             // mesh axes placed across the slices
  DcnSpec dcn;
  std::uint32_t slice_chips() const {
    std::uint32_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
  std::uint32_t chips() const { return slice_chips() * slices; }
  // JAX devices per chip (the chip's `devices`): the simulated units.
  std::uint32_t devices_per_chip = 1;
  std::uint32_t devices() const { return chips() * devices_per_chip; }
};

// One entry of `stragglers:`: chips slower than the rest (a throttled or
// degraded part), each simulated on its own (runtime::ChipScale).
struct StragglerSpec {
  std::vector<std::uint32_t> chips;  // as per_chip[].chip counts them (devices); chosen, with `fraction`
  double compute = 1.0;              // share of the MXU and vector throughput
  double hbm = 1.0;                  // share of the HBM bandwidth
  // Instead of chips: round(fraction x devices) chips drawn from `seed`
  // among those no earlier entry took (choose_stragglers); the loader
  // writes them into `chips`.
  std::optional<double> fraction;
  std::uint64_t seed = 0;
};
// `count` of `candidates` (ascending), drawn by a Fisher-Yates shuffle
// driven by std::mt19937_64(seed), whose outputs the C++ standard fixes:
// the same on every platform. Returned ascending.
std::vector<std::uint32_t> choose_stragglers(std::vector<std::uint32_t> candidates, std::size_t count,
                                             std::uint64_t seed);
const sim::ParamTable<StragglerSpec>& straggler_params();

struct Experiment {
  std::string name;
  std::string config_path;
  // What the run was made of: every file it read (the experiment, its chip
  // and pod files), the --set overrides, and the workload mapping after them
  // (one-line YAML); report.json's `experiment` section, --resume's digest.
  std::vector<std::string> inputs;
  std::vector<std::string> overrides;
  std::string workload_yaml;
  std::string chip_ref;  // file name or "inline"
  std::optional<WhatIf> chip_what_if, pod_what_if;
  // One simulated device: the chip file's chip, or with devices > 1 its
  // share (hw::ChipConfig::device); chip_file keeps the whole chip.
  hw::ChipConfig chip;
  hw::ChipConfig chip_file;
  PodSpec pod;
  std::vector<std::pair<std::string, std::uint32_t>> mesh;  // axis name -> size, in file order
  hw::Fidelity fidelity = hw::Fidelity::kernel;
  bool functional = false;
  Replicas replicas = Replicas::automatic;
  std::vector<StragglerSpec> stragglers;
  runtime::Limits limits;
  // Not a key: a test's (runtime::PodConfig::elaborate_backwards).
  bool elaborate_backwards = false;
  std::unique_ptr<Workload> workload;
};

// Every field of `exp` but its workload: the experiment a kind hands on to
// another kind's runner with some settings changed (kind: maxtext runs its
// translation as kind: train on its own mesh).
Experiment experiment_settings(const Experiment& exp);

// The tables that load, check and document an experiment file's top level
// (with `limits`), a `pod:` mapping and `limits:` (tpusim explain
// experiment, tpusim explain pod).
const sim::ParamTable<Experiment>& experiment_params();
const sim::ParamTable<PodSpec>& pod_params();
const sim::ParamTable<PodSpec>& multislice_params();
const sim::ParamTable<runtime::Limits>& limits_params();
// {"chip": ..., "pod": ...}: the tables --set paths on a named chip or pod
// are checked against (open_for_overrides, workloads/what_if.h).
std::map<std::string, nlohmann::json> what_if_tables();

// The experiment's pod as the interconnect sees it, and as the runtime runs it.
interconnect::PodNetworkConfig pod_network_config(const Experiment& exp);
runtime::PodConfig pod_config(const Experiment& exp);
// One device of the experiment's one-chip pod, as a single-device kernel
// (kind: matmul) runs: the chip's other devices are idle and not simulated.
runtime::PodConfig one_device_config(const Experiment& exp);

// A matmul number format the experiment's chip lacks (chip.formats) is a
// located error at `at`, naming the formats it has.
void check_chip_format(const sim::YamlNode& at, const hw::ChipConfig& chip, hw::NumberFormat format);

// Loads, applies overrides ("key.path=value"), validates. Throws sim::ConfigError.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides = {});
// The same for YAML text that `path` names in messages (chip and pod files
// are looked up relative to it, as for a file there). For tests and fuzzing.
Experiment load_experiment_text(const std::string& text, const std::string& path,
                                const std::vector<std::string>& overrides = {});

// The file a `chip:` or `pod:` value names: a path (relative to
// `experiment_path`'s folder), or "<name>.yaml" in config_search_dirs(sub);
// fails at `ref` with the nearest known name ("what": "chip", "pod").
std::string resolve_named_file(const sim::YamlNode& ref, const std::string& experiment_path, const std::string& sub,
                               const std::string& what);

// The same for a parsed document (a validation case's inline experiment,
// workloads/validation_case.h); `path` names it as for a file there.
Experiment load_experiment_node(sim::YamlNode root, const std::string& path,
                                const std::vector<std::string>& overrides = {});

// Where chip files are looked up: next to the experiment, in
// $TPUSIM_CONFIG_DIR/chips, and in the source tree's configs/chips.
std::vector<std::string> chip_search_dirs(const std::string& experiment_path);
// The same for any folder of configs/ (e.g. "maxtext/models").
std::vector<std::string> config_search_dirs(const std::string& experiment_path, const std::string& sub);
// The chip a command-line option (`option`, e.g. "--chip") names: a path,
// or a name looked up as `chip:` is, the current directory standing for
// the experiment's. Throws sim::ConfigError.
hw::ChipConfig load_chip_option(const std::string& name, const std::string& option);
// The file that chip is (load_chip_option's lookup, without loading it).
std::string chip_file_option(const std::string& name, const std::string& option);

// Detects what a YAML file is (chip, pod, experiment, sweep) and validates
// a chip, pod or experiment; returns the kind. A sweep's points are checked
// by sweep::expand_sweep (the sweep layer sits above this one). Throws
// sim::ConfigError.
std::string validate_file(const std::string& path);
// The same for chip, pod and experiment text that `path` names (sweeps are
// read from their file: use validate_file).
std::string validate_text(const std::string& text, const std::string& path);

}  // namespace workloads
