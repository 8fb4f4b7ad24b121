#pragma once
// A pod in one simulation: N chips, the ICI network between them, and one
// sequencer per chip running that chip's program. Communication ops (CommOp)
// join pod-wide collectives on the network, SendOp/RecvOp move point-to-point
// messages over it; everything else runs on the chip's engines. Overlap of communication and compute is whatever the
// programs' dependencies allow, measured from the ops' timings.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/program.h"
#include "interconnect/collective_spec.h"
#include "interconnect/pod_config.h"
#include "workloads/experiment.h"

namespace workloads {

// Functional runs: where a collective's values come from on each chip
// (read when the chip joins) and where its result goes (when it is done).
struct CollectiveData {
  std::function<std::vector<double>(int chip)> input;
  std::function<void(int chip, const std::vector<double>& output)> output;
};

struct PodProgram {
  std::vector<hw::Program> chips;                         // one per chip
  std::vector<interconnect::CollectiveSpec> collectives;  // referenced by CommOp index
  std::vector<std::string> collective_names;              // for reports and traces
  std::vector<CollectiveData> collective_data;            // functional runs: one per collective
  std::shared_ptr<void> buffers;                          // what functional ops point into
};

struct CollectiveTiming {
  std::string name, op, algorithm;
  int participants = 0;
  std::uint64_t bytes = 0;
  double start_s = 0, end_s = 0;  // first join .. last chip done
  double time_s() const { return end_s - start_s; }
};

struct ChipTiming {
  std::vector<hw::OpTiming> ops;
  double end_s = 0;
  double mxu_busy_s = 0, vector_busy_s = 0, dma_busy_s = 0;  // mean per engine instance
  double ici_busy_s = 0;      // union of this chip's communication ops (collectives, sends; receives only wait)
  double compute_busy_s = 0;  // union of its MXU and vector ops
  double comm_hidden_s = 0;   // communication time under compute
  std::uint64_t hbm_bytes = 0, ici_bytes_out = 0, ici_bytes_in = 0;
  double mxu_busy_max_s = 0;
};

struct PodRunResult {
  double step_time_s = 0;
  std::vector<ChipTiming> chips;
  std::vector<CollectiveTiming> collectives;
  std::uint64_t kernel_events = 0, network_events = 0, messages = 0;
  double link_utilization_max = 0, link_utilization_mean = 0;
  std::string trace_json;  // when asked for
};

// The experiment's pod as the interconnect sees it.
interconnect::PodNetworkConfig pod_network_config(const Experiment& exp);

// Runs the programs; throws sim::SimFailure on deadlock or runaway.
PodRunResult run_pod(const Experiment& exp, const PodProgram& program, bool trace);

}  // namespace workloads
