#pragma once
// `kind: hlo`: the program XLA compiled, from its HLO text (docs/hlo.md).
// Every partition runs the same SPMD program: its instructions in schedule
// order, each one a kernel of the chip's engines (matmuls on the MXUs,
// streams on the vector units and HBM), each collective a collective on the
// pod's ICI over the mesh axes its replica groups name; an async pair's
// collective runs beside the instructions scheduled between its start and
// done.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hlo/cost.h"
#include "hlo/module.h"
#include "runtime/pod_program.h"
#include "workloads/experiment.h"

namespace workloads {

struct HloSpec {
  std::string file;        // as resolved (relative to the experiment file)
  std::string entry;       // the computation to run; empty: the module's ENTRY
  bool cut_short = false;  // the file is the head of a longer dump (hlo::parse_module)
  // FLOPs of custom-calls without a cost_estimate, by instruction name or
  // name without its `.N` (hlo::CostModel).
  std::map<std::string, double> custom_call_flops;
  std::shared_ptr<const hlo::Module> module;
};

// One executed instruction and the ops that stand for it.
struct HloStep {
  const hlo::Instruction* instruction = nullptr;
  hlo::Cost cost;
  std::uint32_t first_op = 0, end_op = 0;  // [first, end) in the chip's program
  int collective = -1;                     // index in PodProgram::collectives
  std::vector<std::string> axes;           // a collective's mesh axes
};

struct HloProgram {
  runtime::PodProgram pod;
  std::vector<HloStep> steps;
  std::vector<std::string> approximations;
};

nlohmann::json hlo_params();
std::unique_ptr<Workload> load_hlo_workload(const sim::YamlNode& node, const Experiment& exp);

// The per-chip program (exposed for tests). Throws sim::ConfigError at the
// HLO's file:line:column when the module does not fit the pod.
HloProgram build_hlo_program(const Experiment& exp, const HloSpec& spec);

RunOutput run_hlo(const Experiment& exp, const HloSpec& spec, const RunOptions& opts);

}  // namespace workloads
