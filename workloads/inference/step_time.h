#pragma once
// A serving step as a pod run, and a request stream's step time from a run
// of its model's first blocks (docs/serving.md, "Steps from their first
// blocks"). A stream runs a pod simulation for every distinct step shape,
// each of a whole model (80 blocks for Llama 3 70B) whose blocks are alike
// and end in the same all-reduces: its cost grows with the blocks, not
// with the decisions. A step of L alike blocks is run with three: where
// every op of the third block ran exactly (to the picosecond, on every
// chip) as its counterpart of the second, shifted by one block's period,
// each further block adds that period, and the step of L blocks is the
// probe's plus L - 3 periods, the picosecond the whole run gives.
#include <cstdint>
#include <functional>
#include <vector>

#include "models/model_spec.h"
#include "models/routing.h"
#include "models/transformer_config.h"
#include "runtime/pod_config.h"
#include "workloads/experiment.h"
#include "workloads/inference/spec.h"
#include "workloads/train/forward_program.h"

namespace workloads {

// One serving step's forward pass (build_forward_program with the spec's
// formats and, for a mixture of experts, `routing`) and the pod it runs on.
struct StepProgram {
  ForwardProgram program;
  runtime::PodConfig config;
};
StepProgram step_program(const Experiment& exp, const InferenceSpec& spec, const models::ModelSpec& model,
                         const std::vector<models::LayerRouting>& routing);

// The model of a step for a configuration (its `layers` blocks).
using StepModel = std::function<models::ModelSpec(const models::TransformerConfig&)>;

// The time of the step `model` gives for the spec's model, in seconds, as
// its pod run gives it. From a run of kProbeBlocks blocks (`probed`) when
// the blocks are alike (no mixture of experts, whose blocks route their
// own tokens; every block local or every one global) and the probe shows
// the period on every chip, with nothing in it that the step's length
// decides (one chip per group of replicas exact with spread 0, or every
// chip for a reason of the programs'), and the whole step within
// limits.max_sim_time and max_events. The host budget checks are the whole
// program's, so a step too big to run stops as its whole run would. Else,
// and with `whole`, the whole model is run.
struct StepTime {
  double s = 0;
  bool probed = false;
};
StepTime step_time(const Experiment& exp, const InferenceSpec& spec, const StepModel& model, bool whole = false);

// Blocks the probe runs: the first may be set apart by the embedding before
// it; the second and third show the period.
inline constexpr std::uint64_t kProbeBlocks = 3;

}  // namespace workloads
