#pragma once
// What a pod simulation gives back: the step, how it was simulated, each
// chip's times and traffic, the collectives, the links, and the statistics
// of every simulated chip.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hw/program.h"
#include "interconnect/collective_spec.h"
#include "interconnect/slice_traffic.h"
#include "sim/stats.h"

namespace runtime {

struct CollectiveTiming {
  std::string name;
  interconnect::CollectiveOp op = interconnect::CollectiveOp::all_reduce;
  interconnect::Algorithm algorithm = interconnect::Algorithm::automatic;  // as resolved: never automatic
  int participants = 0;
  std::vector<std::string> axes;  // the mesh axes taking part (CollectiveSpec::axes; empty: every chip)
  std::uint64_t bytes = 0;
  int groups = 0;                 // groups of participants (one per combination of the other axes)
  double start_s = 0, end_s = 0;  // first join .. last chip done
  // The chip that joined last, when it joined after the first (-1: all at
  // once), and how long the first chips waited for it.
  int gated_by = -1;
  double wait_s = 0;
  // Its time on a chip while the chip ran no op of its own on another
  // engine (MXU, vector, DMA): the exposed part, as
  // chip<N>.program.hidden_communication_time counts the hidden one; mean
  // over the chips that took part (a replica's is its representative's).
  double exposed_s = 0;
  // The chips that took part, in chip order, and when each one's part was
  // done (a pipeline stage's collective is its chips' only). With symmetric
  // axes, the orbit chips' only: every other chip's end is its orbit
  // chip's (PodRunResult::chip_end_s), so a superpod's thousands of
  // collectives do not each hold a row per chip.
  std::vector<std::pair<std::uint32_t, double>> chip_ends;
  // Bytes its schedule sends from each slice to each other (empty within
  // one slice), as interconnect::slice_traffic counts them.
  std::vector<interconnect::SliceTraffic> dcn_traffic;
  double time_s() const { return end_s - start_s; }
};

// What the network carried on one link direction.
struct LinkTraffic {
  int link = 0;
  std::uint64_t bytes = 0;
  std::uint64_t busy_ps = 0;
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
  // With one per group, at kernel fidelity: how much further apart replicas
  // not exactly in step may drift where their collective reductions share
  // HBM with their kernels (PodSimulation::ReplicaCheck::drift_ps; 0 else).
  double replica_drift_s = 0;
  // Every chip was simulated because one per group's replicas ended their
  // collectives too far apart (over kReplicaSpreadTolerance of the step):
  // a decision the step's length takes part in, unlike the other reasons.
  bool spread_rejected = false;
  int collectives_replayed = 0;  // collective_replay.h
  std::uint64_t ops = 0;         // ops in the longest program of a simulated chip
  // Per chip: the chip whose simulation stands for it (itself when it was
  // simulated), when its program ended, and its ops' times (shared by the
  // members of a group of replicas).
  std::vector<std::uint32_t> representative;
  std::vector<double> end_s;
  std::vector<std::shared_ptr<const std::vector<hw::OpTiming>>> timings;
  // Per chip, every chip: ICI bytes it sent and received, and the work its
  // collective reductions took (interconnect/reduction.h).
  std::vector<std::uint64_t> ici_bytes_out, ici_bytes_in;
  std::vector<double> reduce_vector_s, reduce_hbm_bytes;
  bool reductions_on_chip = false;  // kernel fidelity: reduce_hbm_bytes are in the chips' hbm_bytes
  std::vector<CollectiveTiming> collectives;
  // With symmetric axes, per chip: the orbit chip the network simulated for
  // it (interconnect::Translations::rep); empty: every chip for itself.
  std::vector<std::uint32_t> orbit_chip;
  // When `chip`'s part of a collective was done; 0: it took no part.
  double chip_end_s(const CollectiveTiming& collective, std::uint32_t chip) const;
  std::vector<LinkTraffic> links;  // every ICI link direction of the pod
  double link_utilization_max = 0, link_utilization_mean = 0;
  // Between slices: the bytes of every message (each crosses one NIC out),
  // and the busiest host's NICs out: the time they spent serializing.
  std::uint64_t dcn_bytes = 0;
  double dcn_nic_busy_max_s = 0;
  // Statistics of every simulated chip, grouped like the modules
  // (chip<N>.mxu<i>.busy_cycles, chip<N>.hbm.bytes_read, ...), with the
  // chip's figures over its program in chip<N>.program (see program_stats in pod_simulation.cpp).
  sim::StatGroup stats{"pod"};
  std::string network_model;  // fluid | packet
  // messages: simulated; messages_carried: on the pod's links (with
  // symmetric axes each simulated message stands for its orbit's).
  std::uint64_t kernel_events = 0, network_events = 0, messages = 0, messages_carried = 0;
  // The axes along which the network simulated one chip per orbit
  // (interconnect/translations.h); empty: every chip's traffic.
  std::vector<std::string> symmetric_axes;
  std::string trace_json;                             // when asked for: the simulated chips' ops
  std::uint64_t trace_events = 0, trace_dropped = 0;  // recorded, and past sim::TraceWriter::kMaxEvents
  std::uint64_t trace_bin_ps = 0;                     // aggregated in bins of this (sim::TraceWriter::aggregate)
  std::vector<std::uint32_t> trace_chips;             // the chips the trace writes (sim::chips_to_trace)
  // With a trace, each ICI link direction leaving a written chip: its rate
  // in use over the run (interconnect::Network::log_link_rates), as (time
  // in ps, bytes per second) at each change; empty with the packet model.
  struct LinkRates {
    std::uint32_t chip = 0;
    int link = 0;
    std::string name;        // the axis and direction it leaves by: "x+"
    double bytes_per_s = 0;  // its bandwidth
    std::vector<std::pair<std::uint64_t, double>> rate;
  };
  std::vector<LinkRates> link_rates;

  // The statistics group standing for chip `c`.
  const sim::StatGroup& chip_stats(std::uint32_t c) const;
};

}  // namespace runtime
