#pragma once
// What an optimizer costs per parameter, with mixed precision as TPU
// training runs it: BF16 parameters and gradients, an FP32 master copy of
// the parameters that the update works on, FP32 optimizer moments.
#include <string>
#include <vector>

namespace workloads {

struct OptimizerCost {
  std::string name;              // the YAML spelling
  double state_bytes_per_param;  // kept between steps, besides BF16 params and grads
  double flops_per_param;        // of one update, on the vector unit
  double read_bytes_per_param;   // HBM traffic of one update
  double written_bytes_per_param;
};

// adam, sgd. The numbers and their sources are in train_optimizer.cpp.
const std::vector<OptimizerCost>& optimizer_costs();

}  // namespace workloads
