#pragma once
// report.json sections every pod workload shares, computed from a
// runtime::PodRunResult: the step's totals and roofline, communication overlap,
// the collectives, and per-chip busy times.
#include <optional>
#include <string>
#include <vector>

#include "runtime/pod_run.h"
#include "sim/output.h"
#include "workloads/experiment.h"
#include "workloads/report.h"

namespace workloads {

// Means over chips (communication, compute) and busiest-chip fractions.
struct PodSummary {
  double step_s = 0;
  double hbm_bytes = 0, ici_bytes = 0;                          // all chips; ici_bytes without DCN
  double comm_s = 0, hidden_s = 0, compute_s = 0;               // per chip, mean
  double mxu_fraction = 0, hbm_fraction = 0, ici_fraction = 0;  // busiest chip / step
  std::optional<DcnSection> dcn;                                // pods of several slices
  Energy energy;                                                // average_power_w left to pod_result
  std::vector<Waiting> waiting;                                 // result.communication.waiting
  double exposed_s() const { return comm_s - hidden_s; }
  double overlap_fraction() const { return comm_s > 0 ? hidden_s / comm_s : 0.0; }
};

PodSummary summarize(const Experiment& exp, const runtime::PodRunResult& run);

// result: step_time_s, cycles, clock_hz, flops, hbm_bytes, ici_bytes,
// arithmetic_intensity, achieved_flops_per_s, mfu, mxu_utilization,
// roofline, communication. `flops` counts the useful work of the whole pod.
Result pod_result(const Experiment& exp, const PodSummary& s, double flops);

// Adds one chip's MACs, VMEM bytes and HBM bytes to `e` (a per_chip_j
// entry and the parts), at `chip`'s energy per operation.
void add_chip_energy(Energy& e, const hw::ChipConfig& chip, double macs, double vmem_bytes, double hbm_bytes);
// Joules of ops [begin, end) of `program` (their hw::op_work) at `energy`'s figures.
double ops_energy_j(const hw::EnergyParams& energy, const hw::Program& program, std::size_t begin, std::size_t end);

// DCN bytes and the busiest NICs of a pod of several slices; nullopt for one slice.
std::optional<DcnSection> dcn_section(const Experiment& exp, const runtime::PodRunResult& run, double step_s);

// "32 x tpu-v5e", or with several slices "2 slices x 16 x tpu-v5e", for
// table titles.
std::string pod_label(const Experiment& exp);

std::vector<CollectiveRecord> pod_collectives(const runtime::PodRunResult& run);
// Table rows for collectives a late chip gated (communication.waiting), one
// per op: which chips, how many collectives, how long the others waited.
void waiting_rows(sim::Table& t, const Communication& comm);
// The rows "MXU / HBM / ICI busy" (busy and idle per cent of the step) and
// "verdict" (roofline.verdict, workloads/verdict.h, and why) of a run's table.
void verdict_rows(sim::Table& t, const Roofline& r);
// The report's simulator section for a pod run: kernel and network events,
// messages, and how many chips the kernel simulated (runtime::run_pod's replicas).
Simulator pod_simulator(const Experiment& exp, double wall_time_s, const runtime::PodRunResult& run);

// per_chip: chip, coords, busy {mxu_s, vector_s, dma_s, ici_s}, compute_s,
// exposed_communication_s, hbm_bytes, ici_bytes_out, ici_bytes_in.
std::vector<PerChip> pod_per_chip(const Experiment& exp, const runtime::PodRunResult& run);

// Coordinates of a chip on the pod's axes (x fastest).
std::vector<int> chip_coords(const Experiment& exp, std::uint32_t chip);

}  // namespace workloads
