#pragma once
// `kind: cluster` (docs/cluster.md): a data center of TPU pods joined by a
// data-center network, and jobs, each an experiment of its own, placed on
// named slices of the pods, with a start time and a number of steps.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/params.h"
#include "workloads/experiment.h"

namespace workloads::cluster {

// A pod of the data center: slices of one shape behind one uplink into the
// fabric's core (a machine aggregation block of the fabric).
struct PodOfSlices {
  std::string name;
  std::vector<std::uint32_t> slice;  // the shape of each slice, in chips
  std::vector<std::string> slices;   // their names, unique in the data center
  // Bytes/s each way between the pod and the core; absent: its hosts' NICs
  // together over `oversubscription`.
  std::optional<double> uplink_bandwidth;
  double oversubscription = 1.0;
};

struct DataCenter {
  std::vector<PodOfSlices> pods;
  // Bytes/s the core carries between pods, all pods' traffic together;
  // absent: the core never binds (docs/cluster.md).
  std::optional<double> core_bandwidth;
};

struct Job {
  std::string name;
  std::shared_ptr<const Experiment> experiment;  // loaded and checked
  std::vector<std::string> slices;               // where its slices run, in its slice order
  double start_s = 0;
  std::uint32_t steps = 1;
};

struct ClusterSpec {
  DataCenter datacenter;
  std::vector<Job> jobs;
};

// Every key of `kind: cluster` (tpusim explain cluster).
const sim::ParamTable<ClusterSpec>& cluster_params();

// Loads and checks the mapping: every job's experiment loads; slices are
// named once; no two jobs share a slice; a job's pod is as many slices, of
// its pods' shape, as it is placed on, of the data center's chip. Throws
// sim::ConfigError, located.
ClusterSpec load_cluster(const sim::YamlNode& node, const Experiment& exp);

// Which pod holds each slice of the job (index into datacenter.pods).
std::vector<std::size_t> pods_of(const DataCenter& dc, const Job& job);

}  // namespace workloads::cluster
