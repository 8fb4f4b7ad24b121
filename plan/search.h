#pragma once
// The planner (docs/plan.md): enumerates a plan's candidates
// (candidates.h), writes each as an experiment file, loads it and counts
// its memory and its lower bound (estimate.h), and simulates what fits as
// `tpusim run` processes (sweep/runner.h, -j at a time), lowest bound
// first, skipping a candidate once its bound is at or above the best step
// simulated so far (unless exhaustive).
//
// What it reports does not depend on -j or on which process finished
// first: with B the best simulated step, a candidate whose bound is at or
// above B is reported as pruned by its bound whether or not a worker ran
// it before B was known (it cannot beat B), and every candidate whose
// bound is below B was simulated (the running best never fell below B).
// The same holds under mpirun: the i-th fitting candidate (lowest bound
// first) goes to rank i mod K, which prunes by the best it has seen itself
// (never below B, so it skips nothing that could win); rank 0 gathers every
// outcome and alone writes the plan (docs/plan.md#under-mpirun).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/candidates.h"
#include "plan/estimate.h"
#include "plan/slice.h"
#include "plan/spec.h"
#include "sweep/mpi.h"

namespace plan {

enum class Outcome { invalid, does_not_fit, pruned_by_bound, over_cap, failed, simulated };
const char* to_string(Outcome o);

struct CandidateResult {
  Estimate estimate;
  Outcome outcome = Outcome::invalid;
  std::string path;   // its experiment file
  std::string error;  // failed: what its run said
  // Simulated: from its report.json.
  double step_s = 0, tokens_per_s_per_chip = 0, mfu = 0, exposed_communication_s = 0;
  double bubble_fraction = -1;  // -1: no pipeline
  std::uint64_t memory_per_chip = 0;
};

struct PlanResult {
  PlanSpec spec;
  Slice slice;
  CandidateSet set;
  std::vector<CandidateResult> results;  // one per candidate
  std::vector<std::size_t> ranking;      // simulated candidates, best first
  std::size_t processes = 0;             // simulations run (some may be reported as pruned)
  double wall_time_s = 0;
};

struct SearchOptions {
  std::string out_dir;
  std::string executable;  // the tpusim binary that simulates candidates
  int jobs = 1;
  // Under mpirun: this rank's share of the simulations. Only rank 0's
  // result is whole (the others return after handing theirs over).
  sweep::MpiSweep* mpi = nullptr;
};

// Throws sim::ConfigError for a plan no candidate can come from.
PlanResult run_plan(const PlanSpec& spec, const SearchOptions& opts);

// A simulated candidate's objective, smaller is better.
double objective_key(const PlanSpec& spec, const CandidateResult& r);

}  // namespace plan
