#pragma once
// `kind: conv`: convolution layers (models/conv_layer.h: no padding, SCALE-Sim's
// output size) run one after another on one chip, each lowered by im2col to a
// BF16 matmul (M = batch x Ho x Wo, K = Fh x Fw x C, N = filters) through the
// matmul path of kind: matmul (kernels::matmul_program).
#include <cstdint>
#include <memory>
#include <vector>

#include "models/conv_layer.h"
#include "sim/params.h"
#include "workloads/experiment.h"

namespace workloads {

struct ConvWorkloadSpec {
  std::uint64_t batch = 1;
  std::vector<models::ConvLayer> layers;
};

// Every key of `kind: conv` (tpusim explain conv).
const sim::ParamTable<ConvWorkloadSpec>& conv_params();

std::unique_ptr<Workload> load_conv_workload(const sim::YamlNode& node, const Experiment& exp);

RunOutput run_conv(const Experiment& exp, const ConvWorkloadSpec& spec, const RunOptions& opts);

}  // namespace workloads
