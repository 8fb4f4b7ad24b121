#pragma once
// The forward pass of a model alone, as a serving step runs it
// (workloads/inference/): its tensor-parallel all-reduces over the step's
// tensor axes and, for a mixture of experts with `routing` (moe_routing,
// experts.h), each expert's matmuls on the tokens routed to it (none for
// an expert that got none: its weights are not read) and, over the expert
// axes, the dispatch and combine all-to-alls; nothing else (no pipeline,
// backward or optimizer). The same program on every chip but for
// expert-parallel ranks whose experts take different tokens.
#include <vector>

#include "hw/chip_config.h"
#include "models/model_spec.h"
#include "models/routing.h"
#include "runtime/pod_run.h"
#include "workloads/experiment.h"
#include "workloads/train/forward_step.h"
#include "workloads/train/pass_context.h"

namespace workloads {

struct ForwardProgram {
  runtime::PodProgram pod;
  // The chip the programs run on: with 8-bit matmuls (step.matmul) the
  // chip as that format sees it (kernels::MatmulPrograms::simulated_chip).
  hw::ChipConfig chip;
  // Per program: the index of each of the model's layers' first op (the
  // ops of layer l are layer_begin[p][l] .. layer_begin[p][l + 1], the last
  // layer's up to the program's end).
  std::vector<std::vector<std::uint32_t>> layer_begin;
};
ForwardProgram build_forward_program(const Experiment& exp, const ForwardStep& step, const models::ModelSpec& model,
                                     QuantizedMatmuls quantize, const std::vector<models::LayerRouting>& routing = {});

}  // namespace workloads
