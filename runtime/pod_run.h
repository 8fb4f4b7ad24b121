#pragma once
// A pod in one simulation: N chips, the ICI network between them, and one
// sequencer per chip running that chip's program. Communication ops (CommOp)
// join pod-wide collectives on the network, SendOp/RecvOp move point-to-point
// messages over it; everything else runs on the chip's engines. Overlap of
// communication and compute is whatever the programs' dependencies allow,
// measured from the ops' timings.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/chip_config.h"
#include "hw/mxu.h"
#include "hw/program.h"
#include "interconnect/collective_spec.h"
#include "interconnect/pod_config.h"
#include "runtime/limits.h"
#include "runtime/pod_program.h"

namespace runtime {

// What the runtime needs of an experiment: the chip, the network, the MXU
// engine's fidelity, the runaway limits, and whether identical replicas
// may be simulated once.
struct PodConfig {
  hw::ChipConfig chip;
  interconnect::PodNetworkConfig network;
  hw::Fidelity fidelity = hw::Fidelity::tile;
  Limits limits;
  bool simulate_every_chip = false;  // `replicas: all`
};

struct CollectiveTiming {
  std::string name, op, algorithm;
  int participants = 0;
  std::uint64_t bytes = 0;
  double start_s = 0, end_s = 0;  // first join .. last chip done
  double time_s() const { return end_s - start_s; }
};

struct ChipTiming {
  // Replicas simulated once share their representative's timings.
  std::shared_ptr<const std::vector<hw::OpTiming>> ops;
  double end_s = 0;
  double mxu_busy_s = 0, vector_busy_s = 0, dma_busy_s = 0;  // mean per engine instance
  double ici_busy_s = 0;      // union of this chip's communication ops (collectives, sends; receives only wait)
  double compute_busy_s = 0;  // union of its MXU and vector ops
  double comm_hidden_s = 0;   // communication time under the chip's own work (MXU, vector or DMA ops)
  std::uint64_t hbm_bytes = 0, ici_bytes_out = 0, ici_bytes_in = 0;
  double mxu_busy_max_s = 0;
};

struct PodRunResult {
  double step_time_s = 0;
  // Chips whose programs the kernel ran: every chip, or one per group of
  // identical replicas when that is exact (see run_pod).
  int chips_simulated = 0;
  std::string replicas;  // "one per group" | "all (why)"
  // With one per group: the largest difference between replicas' end times
  // of each collective, summed over collectives (0 when they all agree).
  double replica_spread_s = 0;
  int collectives_replayed = 0;  // collective_replay.h
  std::vector<ChipTiming> chips;
  std::vector<CollectiveTiming> collectives;
  std::uint64_t kernel_events = 0, network_events = 0, messages = 0;
  double link_utilization_max = 0, link_utilization_mean = 0;
  std::string trace_json;  // when asked for
};

// Runs the programs; throws sim::SimFailure on deadlock or runaway.
//
// Replicas: chips that share a program and exchange no point-to-point
// messages behave identically as long as every collective they take part in
// ends at the same time on all of them (on a torus with wraparound it does,
// by symmetry). Unless config.simulate_every_chip, run_pod then simulates one
// representative per group: the others join each collective on the network
// at the instant their representative does, so the network carries every
// chip's traffic, and after the run it checks that each collective ended
// at the same time on every member. Where a buffer does not divide evenly
// into ring chunks, end times differ by a few bytes' worth of link time;
// up to a summed 1e-2 of the step (kReplicaSpreadTolerance) that is
// accepted and reported (replica_spread_s). Beyond it, or if replicas did not take part in the
// same collectives, it runs again with every chip.
PodRunResult run_pod(const PodConfig& config, const PodProgram& program, bool trace);

}  // namespace runtime
