#pragma once
// One simulation of a pod, in the steps run_pod (pod_run.h) takes it
// through: elaborate (plan the collectives, pick the chips to simulate,
// build the modules), run (until every program is done, a limit is reached
// or nothing can move), check that the simulated chips stood for their
// replicas, and collect what the run measured.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/chip.h"
#include "hw/sequencer.h"
#include "interconnect/collective.h"
#include "interconnect/mesh.h"
#include "interconnect/network.h"
#include "interconnect/reduction.h"
#include "interconnect/slice_traffic.h"
#include "interconnect/topology.h"
#include "runtime/chip_engines.h"
#include "runtime/chip_reduction.h"
#include "runtime/collective_replay.h"
#include "runtime/limits.h"
#include "runtime/pod_config.h"
#include "runtime/pod_program.h"
#include "runtime/pod_result.h"
#include "runtime/point_to_point.h"
#include "sim/trace.h"

namespace runtime {

struct Shortcuts {
  bool replicas = false;  // one chip per group of replicas
  bool replays = false;   // collectives replayed (collective_replay.h)
  // With replicas: the network simulates one chip per orbit of the pod's
  // symmetries (interconnect/translations.h) where the programs allow.
  bool translations = false;
};

// What elaborate() will hold per chip of the pod, for the run budget: the
// chips whose collective schedules are planned, as a fraction of the pod's
// (averaged over the distinct plans; 1 without symmetric axes), and the
// chips each simulated collective end stands for (the orbit's, with them).
struct PlanCover {
  double planned_fraction = 1;
  double chips_per_end = 1;
};
PlanCover plan_cover(const PodConfig& config, const PodProgram& program, Shortcuts use);

class PodSimulation {
 public:
  // `config` and `program` must outlive the simulation.
  PodSimulation(const PodConfig& config, const PodProgram& program, Shortcuts use);
  ~PodSimulation();

  // Plans the collectives (equal specs share a plan), groups the chips that
  // share a program when replicas are used, and builds one chip, one
  // sequencer and one engine adapter per simulated chip, and the network.
  void elaborate(const Observers& observers);
  // Runs the kernel; throws sim::SimFailure on a deadlock or a runaway,
  // naming the ops the chips wait in.
  void run();

  struct ReplicaCheck {
    std::string inexact;          // why the replicas may differ from their representative; "" when they cannot
    std::uint64_t spread_ps = 0;  // summed over collectives: the largest gap between members' end times
    // How far replicas may drift apart on top of spread_ps: what the
    // reductions of representatives coupled to their kernels take alone
    // (ChipReduction::coupled), where replicas are not exactly in step.
    std::uint64_t drift_ps = 0;
    bool replay_conflict = false;  // a collective started while a replayed one ran
    bool asymmetric = false;       // a route was not invariant under the translations used
  };
  // Whether every replica took part in each collective as its
  // representative did, and how far their end times differ.
  ReplicaCheck check_replicas() const;

  PodRunResult collect(const sim::TraceRequest& trace) const;
  // PodRunResult::link_rates of `chips`.
  std::vector<PodRunResult::LinkRates> link_rates(const std::vector<std::uint32_t>& chips) const;

 private:
  const PodConfig& config_;
  const PodProgram& pp_;
  Shortcuts use_;
  interconnect::Topology topology_;
  std::vector<int> rep_of_;                 // per chip
  std::vector<std::vector<int>> group_of_;  // per representative: its group, in chip order
  // Per representative: the members of its group the network simulates
  // (with translations, those standing for an orbit; else the group).
  std::vector<std::vector<int>> net_members_;
  interconnect::Translations translations_;
  std::vector<interconnect::Invariance> uneven_;                      // per collective, with translations
  std::vector<JoinSpan> joins_;                                       // per collective
  std::vector<char> across_slices_;                                   // per collective: whether its groups span slices
  std::vector<std::vector<interconnect::SliceTraffic>> dcn_traffic_;  // per collective: bytes between slices
  // Modules, destroyed in the reverse order of their members (sequencers
  // before chips, collectives before the network) before the next run
  // resets the kernel.
  std::unique_ptr<interconnect::Network> net_;
  // The calendar model (interconnect::VectorUnitReduction), and at kernel
  // fidelity the chips' own (ChipReduction, the calendar for the chips not
  // simulated).
  // The collectives offloaded to the SparseCores reduce at their rate: on
  // the chips' own (reduction_->sparsecore()), the replicas on the calendar
  // of sparsecore_calendar_ (set only where a collective is offloaded).
  std::unique_ptr<interconnect::ReductionModel> calendar_, sparsecore_calendar_;
  std::unique_ptr<ChipReduction> reduction_;
  interconnect::ReductionModel& reduction() const { return reduction_ ? *reduction_ : *calendar_; }
  interconnect::ReductionModel& sparsecore_reduction() const {
    return reduction_ ? reduction_->sparsecore() : sparsecore_calendar_ ? *sparsecore_calendar_ : *calendar_;
  }
  std::unique_ptr<PodCollectives> collectives_;
  std::unique_ptr<PointToPoint> p2p_;
  std::unique_ptr<NextDelta> next_delta_;
  std::vector<std::unique_ptr<hw::Chip>> chips_;
  std::vector<std::unique_ptr<ChipEngines>> engines_;
  std::vector<std::unique_ptr<hw::Sequencer>> seqs_;
};

}  // namespace runtime
