#pragma once
// The interconnect layer's own test and benchmark driver (experiments run
// through the pod runtime instead, runtime/pod_run.h): build the pod's network,
// run the collective on every chip from time 0, and return what the report
// needs. Throws sim::ConfigError for bad input (exit 2) and sim::SimFailure
// for a deadlock (exit 3).
#include <cstdint>
#include <string>
#include <vector>

#include "interconnect/collective_spec.h"
#include "interconnect/pod_config.h"

namespace interconnect {

struct LinkReport {
  int link = 0;
  int from = 0, to = 0;
  std::string axis;  // "x", "y", "z"
  int dir = +1;
  std::uint64_t bytes = 0;
  double busy_s = 0.0;
  double utilization = 0.0;  // busy / collective time
};

struct ChipReport {
  int chip = 0;
  std::vector<int> coords;
  std::uint64_t bytes_out = 0;   // ICI bytes this chip injected
  std::uint64_t bytes_in = 0;    // ICI bytes delivered to this chip
  double reduce_vector_s = 0.0;  // vector-unit time spent reducing
  double reduce_hbm_bytes = 0.0;
  double finish_s = 0.0;
};

struct FunctionalCheck {
  bool checked = false;
  bool matches = false;
  std::uint64_t mismatches = 0;
  std::string first_mismatch;
};

struct CollectiveResult {
  std::string op, algorithm, network_model;
  int chips = 0;
  int participants = 0;  // chips in one group
  int groups = 0;
  std::uint64_t bytes = 0;
  double time_s = 0.0;
  double algbw_bytes_per_s = 0.0;  // bytes / time_s
  double busbw_bytes_per_s = 0.0;  // NCCL-tests convention
  double link_utilization_max = 0.0;
  double link_utilization_mean = 0.0;  // over every link direction of the pod
  std::uint64_t ici_bytes = 0;         // sum of bytes_out
  std::vector<LinkReport> links;
  std::vector<ChipReport> per_chip;
  std::uint64_t messages = 0;               // simulated
  std::uint64_t messages_carried = 0;       // on the pod's links (each simulated one stands for its orbit's)
  std::vector<std::string> symmetric_axes;  // one chip per orbit along these (translations.h)
  double symmetry_error_s = 0;      // how far a chip's finish may lie from what simulating it gives (uneven chunks)
  std::uint64_t events = 0;         // network events acted on
  std::uint64_t kernel_events = 0;  // SystemC delta cycles
  FunctionalCheck functional;
};

// With `translations` (and the fluid model, a timing-only spec and a plan
// invariant under every wrapping axis) the network simulates one chip per
// orbit (translations.h); false simulates every chip, the reference.
CollectiveResult run_collective(const PodNetworkConfig& pod, const CollectiveSpec& spec, bool translations = true);

}  // namespace interconnect
